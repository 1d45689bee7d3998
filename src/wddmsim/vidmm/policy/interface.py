"""The policy seam: what an eviction policy and a placement policy may decide, and what they are told.

Decision 0065.  The residency manager keeps the mechanism -- who may be a victim at all (never pinned, never
an allocation the same request needs), what a move costs and how it is built, that offered content is dropped
before anything is evicted (``D3DKMTOfferAllocations``), that a range is aligned on a GPU page (decision 0011).
A policy decides only among what the mechanism allows:

* an :class:`EvictionPolicy` ranks the candidates (:meth:`~EvictionPolicy.order`), may veto one
  (:meth:`~EvictionPolicy.may_evict`, after TTM's ``eviction_valuable``), chooses where room is made
  (:meth:`~EvictionPolicy.scan`, after drm_mm's eviction scan: which victims free which hole), and is told of
  every use, placement, eviction and free, in the order they happen, so that it can keep state of its own
  (CLOCK's reference bits, frequencies, a scan-resistant history).
* an eviction policy may also say why it chose a victim (:meth:`BaseEviction.explain`: its score, or the rule
  that decided); the mechanism records it with the policy's name in the ``VidMmEvict`` event (decision 0140).
  It is not a member of the protocol: a policy from outside that gives none is told apart by
  :func:`explanation`, which falls back to the victim's rank.
* a :class:`PlacementPolicy` says which segments are tried for an allocation, in which order and with which
  victims (the placement ladder, as data), where in a segment its range is carved, and where a victim some
  residency list still needs goes (an aperture segment with free room).

:class:`BaseEviction` and :class:`BasePlacement` give every hook its neutral default, so a policy overrides only what it
changes.  Policies see allocations as :class:`~wddmsim.vidmm.allocation.VidMmAllocation` records and segments as
:class:`SegmentView` (read only): they never move anything themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.segments import Placement as Range  # a segment id and offset (not a range allocator)

__all__ = [
    "BaseEviction",
    "BasePlacement",
    "EvictionPolicy",
    "InsertMode",
    "MoveCause",
    "PlacementPolicy",
    "Range",
    "RoomPlan",
    "RoomRequest",
    "Rung",
    "SegmentView",
    "VictimClass",
    "VidMmAllocation",
    "explanation",
    "listed",
    "said_by",
]


class SegmentView(Protocol):
    """What a policy sees of a segment (:class:`~wddmsim.vidmm.segments.SegmentSpace` is one)."""

    @property
    def id(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def aperture(self) -> bool: ...

    @property
    def group(self) -> D3DKMT_MEMORY_SEGMENT_GROUP: ...

    def held(self) -> Iterator[tuple[int, int, object]]:
        """``(offset, size, owner)`` of every range, in address order; the rest of ``[0, size)`` is free."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class RoomRequest:
    """Room wanted in one segment: for an allocation, or for one of VidMm's own objects (a page table)."""

    segment: int
    size: int
    alignment: int
    """0: a page; else a power of two."""
    from_end: bool
    """Carved from the top of the segment (``FromEndOfSegment``, page tables)."""
    owner: object
    """What the room is for: a :class:`VidMmAllocation`, or VidMm's own object."""
    cause: MoveCause
    """The eviction cause a victim is reported with (``PRESSURE``, ``LOCK`` ...)."""


@dataclass(frozen=True, slots=True)
class RoomPlan:
    """Where room is made: the victims, in the order they leave, and the hole they free.

    ``hole`` None: the victims leave one by one until the range allocator finds room (today's default, "evict
    until it fits"); the rest of the list is then kept.  ``hole`` an offset: every listed victim leaves and the
    range is taken at that offset (a contiguous-hole scan); if it cannot be (the plan was wrong), the
    mechanism goes on with the rest of the roster, one by one.  Victims must come from the roster.
    """

    victims: Sequence[VidMmAllocation]
    hole: int | None = None


class VictimClass(Enum):
    """Which placed allocations one rung of the placement ladder may evict."""

    NONE = "none"
    """Free room only."""
    UNREFERENCED = "unreferenced"
    """Allocations no residency list holds."""
    ANYONE = "anyone"
    """Also allocations a residency list holds: they come back before their device runs."""


@dataclass(frozen=True, slots=True)
class Rung:
    """One step of the placement ladder: these segments, in this order, with these victims."""

    segments: tuple[int, ...]
    victims: VictimClass


class InsertMode(Enum):
    """Where in a segment a range is carved (drm_mm's ``DRM_MM_INSERT_*``)."""

    BEST = "best"
    """The range allocator's own choice (the smallest class of free blocks that fits)."""
    HIGH = "high"
    """From the top of the segment."""


@runtime_checkable
class EvictionPolicy(Protocol):
    """Which allocations leave a segment when room is needed, and where the room is made."""

    name: str

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        """The candidates, first victim first (every one of them, each once)."""
        ...

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        """False vetoes ``victim`` for this request (TTM's ``eviction_valuable``): it is never evicted for it."""
        ...

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        """Where room is made in ``space``: ``roster`` is every allowed victim, offered ones first, then as ranked."""
        ...

    def used(self, a: VidMmAllocation) -> None:
        """``a`` was referenced: listed by a ``MakeResident``, or by GPU work (``Render``, ``SubmitCommand``)."""
        ...

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        """``a`` was paged in (a memory segment) or mapped (an aperture segment) at ``where``."""
        ...

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        """``a`` left ``where``, for ``cause`` (pressure, evict, trim, lock, offer, power, destroy, reset)."""
        ...

    def freed(self, a: VidMmAllocation) -> None:
        """``a`` was destroyed: forget it."""
        ...


@runtime_checkable
class PlacementPolicy(Protocol):
    """Which segment, which offset."""

    name: str

    def rungs(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[Rung]:
        """The ladder for ``a``: ``candidates`` are the segments it may use, preferred ones first."""
        ...

    def insert_mode(self, a: VidMmAllocation, space: SegmentView) -> InsertMode: ...

    def demotion(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[int]:
        """Segments a victim some residency list still needs may go to (free room only), in order."""
        ...


class BaseEviction:
    """An eviction policy's neutral defaults: rank as given, veto nothing, evict in rank order until it fits,
    keep no state.  Subclass it and override what the policy changes."""

    name = "unnamed"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return list(candidates)

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return True

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        return RoomPlan(roster)

    def used(self, a: VidMmAllocation) -> None:
        return None

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        return None

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        return None

    def freed(self, a: VidMmAllocation) -> None:
        return None

    def explain(self, victim: VidMmAllocation) -> str | None:
        """Why ``victim`` is evicted, asked just before it leaves (after :meth:`order` and :meth:`scan`): its
        score, or the rule that decided.  None: the mechanism records its rank in the roster instead."""
        return None


def listed(a: VidMmAllocation) -> str:
    """The rule every shipped policy applies first, as an explanation reads it."""
    return "in a residency list" if a.residency_count > 0 else "in no residency list"


def said_by(policy: EvictionPolicy, victim: VidMmAllocation) -> str | None:
    """What ``policy``'s ``explain`` says of ``victim``; None if it has none (one from outside the package need
    not) or gives none."""
    explain = getattr(policy, "explain", None)
    said = explain(victim) if callable(explain) else None
    return said if isinstance(said, str) and said else None


def explanation(policy: EvictionPolicy, victim: VidMmAllocation, rank: int, count: int) -> str:
    """Why ``policy`` chose ``victim`` (decision 0140): what it says, or else the victim's place in its ranking."""
    return said_by(policy, victim) or f"ranked {rank} of {count} by {policy.name}"


class BasePlacement:
    """A placement policy's defaults: no rung (subclasses say the ladder), the allocator's choice of offset
    unless the driver asked for the top (``FromEndOfSegment``), demotion to the aperture segments in order."""

    name = "unnamed"

    def rungs(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[Rung]:
        return []

    def insert_mode(self, a: VidMmAllocation, space: SegmentView) -> InsertMode:
        return InsertMode.HIGH if a.flags.FromEndOfSegment else InsertMode.BEST

    def demotion(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[int]:
        return [s.id for s in candidates if s.aperture]
