"""``gds``: GreedyDual-Size (Cao and Irani, 1997) -- size-aware: what no residency list needs first, then lower
priority, then the lowest credit ``H``.

Each placed allocation holds a credit ``H = L + cost / size``, set when it is paged in and again at every use;
the victim is the one with the lowest ``H`` (ties: least recently used), and evicting it under pressure raises
the segment's inflation value ``L`` to its ``H``, so whatever stays resident without being used ages relative
to newcomers.  Here ``cost`` is 1 (one fault): large allocations get little credit and go first, which keeps
more allocations resident and so minimises faults; with equal sizes GDS ranks as LRU.  ``L`` is kept per
segment (each is a memory of its own); only evictions a policy chose (``pressure``, ``lock``) raise it, not
``Evict`` or ``TrimResidencySet``, which say nothing of what memory should keep.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, MoveCause, Range, VidMmAllocation, listed

COST = 1.0
"""The cost of fetching an allocation again: one fault, whatever its size."""


@final
class GreedyDualSize(BaseEviction):
    """Lowest credit ``H = L + cost / size`` first, after the residency-list and priority rules."""

    name = "gds"

    def __init__(self) -> None:
        self.credit: dict[int, float] = {}
        """``H`` of each placed allocation, by handle."""
        self.segment: dict[int, int] = {}
        """The segment each placed allocation is in."""
        self.inflation: dict[int, float] = {}
        """``L`` of each segment."""

    def _credit(self, a: VidMmAllocation, segment: int) -> None:
        self.credit[a.handle] = self.inflation.get(segment, 0.0) + COST / a.size

    def used(self, a: VidMmAllocation) -> None:
        if a.handle in self.segment:
            self._credit(a, self.segment[a.handle])

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.segment[a.handle] = where.segment_id
        self._credit(a, where.segment_id)

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        credit = self.credit.pop(a.handle, None)
        self.segment.pop(a.handle, None)
        if credit is not None and cause in (MoveCause.PRESSURE, MoveCause.LOCK):
            segment = where.segment_id
            self.inflation[segment] = max(self.inflation.get(segment, 0.0), credit)

    def freed(self, a: VidMmAllocation) -> None:
        self.credit.pop(a.handle, None)
        self.segment.pop(a.handle, None)

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(
            candidates,
            key=lambda a: (a.residency_count > 0, a.priority, self.credit.get(a.handle, 0.0), a.last_use),
        )

    def explain(self, victim: VidMmAllocation) -> str:
        credit = self.credit.get(victim.handle, 0.0)
        return f"{listed(victim)}; priority {victim.priority:#x}; lowest credit H={credit:.6g} (size {victim.size})"
