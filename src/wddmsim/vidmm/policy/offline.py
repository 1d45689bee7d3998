"""``min``: Belady's MIN, the offline policy -- given the future, evict what is used furthest ahead.

An offline policy is given the sequence of uses of a recorded run (the allocation handles that
:meth:`~wddmsim.vidmm.policy.interface.EvictionPolicy.used` reported, in order): :class:`UseRecorder` takes it
from one run, and ``wddmsim replay TRACE --policy min`` replays the trace twice -- once to record the uses,
once under MIN.  Handles repeat across replays of one trace (VidMm hands them out in call order), so the
recorded uses name this run's allocations.

As every shipped policy, MIN ranks what no residency list needs first (VidMm pages a listed allocation back in
before its device runs, whether the work names it or not).  Within each class the candidate whose next use is
furthest ahead goes first; never used again is furthest.  With equal sizes and demand paging that is optimal
in faults (Belady, 1966); with sizes that differ it is a feasible schedule, not the optimum
(policies-and-clients.md).  If the run diverges from the recording, MIN keeps its cursor on the recorded
sequence and counts the uses that did not match (:attr:`Belady.diverged`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import (
    BaseEviction,
    EvictionPolicy,
    MoveCause,
    Range,
    RoomPlan,
    RoomRequest,
    SegmentView,
    VidMmAllocation,
    listed,
    said_by,
)

NEVER = 1 << 62
"""The next use of an allocation the recording never uses again."""


@final
class Belady(BaseEviction):
    """Belady's MIN over the recorded uses ``future`` (allocation handles, in use order)."""

    name = "min"

    def __init__(self, future: Sequence[int]) -> None:
        self.future = tuple(int(h) for h in future)
        self.positions: dict[int, list[int]] = {}
        for t, handle in enumerate(self.future):
            self.positions.setdefault(handle, []).append(t)
        self.now = 0
        """Uses seen so far: the position in the recording."""
        self.diverged = 0
        """Uses that were not the recorded one at their position."""

    def next_use(self, a: VidMmAllocation) -> int:
        times = self.positions.get(int(a.handle), ())
        i = bisect_right(times, self.now - 1)
        return times[i] if i < len(times) else NEVER

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, -self.next_use(a)))

    def explain(self, victim: VidMmAllocation) -> str:
        use = self.next_use(victim)
        ahead = "never used again" if use == NEVER else f"next used at recorded use {use}"
        return f"{listed(victim)}; {ahead}"

    def used(self, a: VidMmAllocation) -> None:
        if self.now >= len(self.future) or self.future[self.now] != int(a.handle):
            self.diverged += 1
        self.now += 1


@final
class UseRecorder(BaseEviction):
    """Another policy, unchanged, that also records every use (the future an offline policy is given)."""

    def __init__(self, inner: EvictionPolicy, uses: list[int] | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.uses: list[int] = [] if uses is None else uses
        """Allocation handles, in use order (appended to the list given, if one was)."""

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return self.inner.order(candidates)

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return self.inner.may_evict(victim, request)

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        return self.inner.scan(space, request, roster)

    def explain(self, victim: VidMmAllocation) -> str | None:
        return said_by(self.inner, victim)

    def used(self, a: VidMmAllocation) -> None:
        self.uses.append(int(a.handle))
        self.inner.used(a)

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.inner.placed(a, where)

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.inner.evicted(a, where, cause)

    def freed(self, a: VidMmAllocation) -> None:
        self.inner.freed(a)
