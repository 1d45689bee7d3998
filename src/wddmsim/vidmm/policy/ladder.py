"""Placement policies: ``free-first`` (the default), ``ladder`` and ``near-first``, each a table of rungs.

``free-first`` takes free room wherever the allocation may be -- where it wants to be, then the other segment
group (an aperture: system memory the GPU reaches) -- before it evicts anything: memory the GPU can reach is
not left empty while allocations are paged out (decision 0165).  ``ladder`` tries free room where the
allocation wants to be, then room made there from what no residency list needs, then the same in the other
group, and only then evicts what some list needs.  ``near-first`` keeps allocations in their preferred group at the price of
evicting listed allocations before it falls back to the other group (a policy for a researcher to compare).

A rung names segments by reach: ``near`` are the candidates in the budget group of the first (most preferred)
one, ``far`` the others, ``all`` every candidate, in the order the mechanism gives them (preferred segments
first, then the others by id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, final

from wddmsim.vidmm.policy.interface import BasePlacement, Rung, SegmentView, VictimClass, VidMmAllocation

Reach = Literal["near", "far", "all"]

LADDER: Final[tuple[tuple[Reach, VictimClass], ...]] = (
    ("near", VictimClass.NONE),  # free room where the allocation wants to be
    ("near", VictimClass.UNREFERENCED),  # room made there from what no residency list needs
    ("far", VictimClass.NONE),  # free room in the other group (an aperture: system memory)
    ("far", VictimClass.UNREFERENCED),
    ("all", VictimClass.ANYONE),  # victims some list needs: they come back before their device runs
)
"""The ladder of decision D7 (the default until decision 0165)."""

FREE_FIRST: Final[tuple[tuple[Reach, VictimClass], ...]] = (
    ("near", VictimClass.NONE),  # free room where the allocation wants to be
    ("far", VictimClass.NONE),  # free room in the other group, before anyone is evicted
    ("near", VictimClass.UNREFERENCED),
    ("far", VictimClass.UNREFERENCED),
    ("all", VictimClass.ANYONE),
)
"""The default (decision 0165): every free byte the allocation may use, then victims as the ladder takes them."""

NEAR_FIRST: Final[tuple[tuple[Reach, VictimClass], ...]] = (
    ("near", VictimClass.NONE),
    ("near", VictimClass.UNREFERENCED),
    ("near", VictimClass.ANYONE),
    ("far", VictimClass.NONE),
    ("far", VictimClass.UNREFERENCED),
    ("far", VictimClass.ANYONE),
)


def rungs_of(table: Sequence[tuple[Reach, VictimClass]], candidates: Sequence[SegmentView]) -> list[Rung]:
    """The rungs of ``table`` for these candidate segments."""
    if not candidates:
        return []
    group = candidates[0].group
    reach: dict[Reach, tuple[int, ...]] = {
        "near": tuple(s.id for s in candidates if s.group == group),
        "far": tuple(s.id for s in candidates if s.group != group),
        "all": tuple(s.id for s in candidates),
    }
    return [Rung(reach[where], victims) for where, victims in table]


@final
class FreeFirst(BasePlacement):
    """Free room in every candidate segment before any victim (:data:`FREE_FIRST`), the default."""

    name = "free-first"

    def rungs(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[Rung]:
        return rungs_of(FREE_FIRST, candidates)


@final
class Ladder(BasePlacement):
    """The ladder of decision D7, as data (:data:`LADDER`)."""

    name = "ladder"

    def rungs(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[Rung]:
        return rungs_of(LADDER, candidates)


@final
class NearFirst(BasePlacement):
    """Evict anyone in the preferred group before using the other (:data:`NEAR_FIRST`)."""

    name = "near-first"

    def rungs(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[Rung]:
        return rungs_of(NEAR_FIRST, candidates)
