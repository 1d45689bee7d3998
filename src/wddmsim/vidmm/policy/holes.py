"""The contiguous-hole scan (drm_mm's eviction scan), a rule policies share: ``scan`` and ``stable`` make room
with it (decisions 0065, 0165).

Walk the ranking and, after each candidate, ask whether a contiguous hole of the wanted size and alignment
would appear if every candidate so far left (free ranges join them); at the first such prefix, pick among the
holes it could carve the one whose overlapping candidates are fewest bytes (ties: fewest victims, then the low
end -- the top for ``FromEndOfSegment``), and only those leave.  Ranges the scan may not take (pinned,
protected, vetoed allocations, VidMm's page tables) split the segment into runs.

Cost: O(k) per candidate to find its run, O(k log k) to choose in it (k: ranges in the run); only when room
must be made.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from wddmsim.vidmm.policy.interface import RoomPlan, RoomRequest, SegmentView, VidMmAllocation

_PAGE = 4096
"""The granule of every segment's ranges (alignment 0 means it)."""


def cheapest_room(space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
    """The scan: walk ``roster`` (ranked) until a contiguous hole for ``request`` could appear, then evict only
    the candidates overlapping the cheapest such hole.  No hole can appear: an empty plan (evicting would only
    empty the segment for nothing)."""
    layout = _Layout(space)
    for a in roster:
        index = layout.mark(a)
        if index is None:
            continue
        hole = layout.cheapest_hole(index, request)
        if hole is not None:
            start, end = hole, hole + request.size
            return RoomPlan([v for v in roster if layout.overlaps(v, start, end)], hole)
    return RoomPlan(())


class _Layout:
    """The segment's ranges in address order, and which of them the scan has added (may leave)."""

    def __init__(self, space: SegmentView) -> None:
        self.size = space.size
        held = list(space.held())
        self.starts = [start for start, _, _ in held]
        self.ends = [start + size for start, size, _ in held]
        self.index = {start: i for i, start in enumerate(self.starts)}
        self.marked = [False] * len(held)
        self.segment = space.id

    def mark(self, a: VidMmAllocation) -> int | None:
        where = a.placement
        if where is None or where.segment_id != self.segment or where.offset not in self.index:
            return None
        i = self.index[where.offset]
        self.marked[i] = True
        return i

    def overlaps(self, a: VidMmAllocation, start: int, end: int) -> bool:
        i = None if a.placement is None else self.index.get(a.placement.offset)
        return i is not None and self.marked[i] and self.starts[i] < end and start < self.ends[i]

    def _run(self, i: int) -> tuple[int, int, range]:
        """The free-or-marked stretch around range ``i``: ``(lo, hi, ranges in it)``."""
        first = i
        while first > 0 and self.marked[first - 1]:
            first -= 1
        last = i
        while last + 1 < len(self.marked) and self.marked[last + 1]:
            last += 1
        lo = 0 if first == 0 else self.ends[first - 1]
        hi = self.size if last + 1 == len(self.marked) else self.starts[last + 1]
        return lo, hi, range(first, last + 1)

    def cheapest_hole(self, i: int, request: RoomRequest) -> int | None:
        """The start of the cheapest hole for ``request`` in range ``i``'s run, or None if none fits there."""
        lo, hi, inside = self._run(i)
        size, align = request.size, max(request.alignment, _PAGE)
        if hi - lo < size:
            return None  # the run is too short for any hole yet (the common case early in the ranking)
        starts = self.starts[inside.start : inside.stop]
        ends = self.ends[inside.start : inside.stop]
        # The ranges a hole [s, s + size) overlaps are consecutive (the run's ranges are disjoint, in address
        # order): found by bisection, their bytes by prefix sums.
        prefix = [0, *accumulate(e - b for b, e in zip(starts, ends, strict=True))]
        edges = [lo, hi, *starts, *ends]
        candidates = {-(-e // align) * align for e in edges} | {(e - size) // align * align for e in edges}
        best: tuple[int, int, int] | None = None
        for s in candidates:
            if s < lo or s + size > hi:
                continue
            first = bisect_right(ends, s)  # the first range ending after s
            stop = bisect_left(starts, s + size)  # the first range starting at or after the hole's end
            count = max(stop - first, 0)
            key = (prefix[first + count] - prefix[first], count, -s if request.from_end else s)
            if best is None or key < best:
                best = key
        if best is None:
            return None
        return -best[2] if request.from_end else best[2]
