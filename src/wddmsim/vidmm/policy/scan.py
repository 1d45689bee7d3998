"""``scan``: priority-LRU ranking, and room made where it is cheapest -- drm_mm's eviction scan.

"Evict until it fits" evicts down the ranking until the range allocator happens to find a hole; for a large
allocation in a fragmented segment that can empty most of the segment, since each victim frees a hole only as
large as itself.  The scan instead walks the ranking and, after each candidate, asks whether a contiguous hole
of the wanted size and alignment would appear if every candidate so far left (free ranges join them); at the
first such prefix it picks, among the holes it could carve, the one whose overlapping candidates are fewest
bytes (ties: fewest victims, then the low end -- the top for ``FromEndOfSegment``), and only those leave.  Ranges
the scan may not take (pinned, protected, vetoed allocations, VidMm's page tables) split the segment into runs.

Cost: O(k) per candidate to find its run, O(k^2) to choose in it (k: ranges in the run); only when room must
be made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.holes import cheapest_room
from wddmsim.vidmm.policy.interface import BaseEviction, RoomPlan, RoomRequest, SegmentView, VidMmAllocation, listed


@final
class ScanLru(BaseEviction):
    """Ranks as ``priority-lru``; makes room with the cheapest contiguous hole (drm_mm's eviction scan)."""

    name = "scan"

    def __init__(self) -> None:
        self.hole: tuple[int, int] | None = None
        """The hole of the last plan, ``(start, end)`` (for :meth:`explain`)."""

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.priority, a.last_use))

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        plan = cheapest_room(space, request, roster)
        self.hole = None if plan.hole is None else (plan.hole, plan.hole + request.size)
        return plan

    def explain(self, victim: VidMmAllocation) -> str:
        ranked = f"{listed(victim)}; priority {victim.priority:#x}; last used at {victim.last_use}"
        if self.hole is None:
            return ranked
        return f"{ranked}; overlaps the cheapest hole [{self.hole[0]:#x}, {self.hole[1]:#x})"
