"""``stable``, the default: what no residency list needs first, then lower priority, then -- among allocations
still in use -- the one placed most recently; anything long unused leaves before them (decision 0165).

LRU falls off a cliff on a loop: when a frame loop's allocations cycle through more bytes than memory holds,
each allocation comes back just after LRU evicted it, and LRU misses on every use however little the loop
exceeds memory.  Belady's MIN misses only the excess: it keeps a fixed part of the loop resident and cycles the
rest through the remaining room.  ``stable`` does the same without knowing the future: the allocations VidMm
placed longest ago stay, the most recently placed leaves first (last in, first out), so a loop settles into a
resident set that does not move and an excess that streams.  What stopped being used goes first, least
recently used first, so that a phase change (a new level's allocations) is not locked out for ever: an
allocation is *still in use* while it is among the most recently used :data:`REACH` x ``c`` bytes (a shadow
list of handles and sizes, O(1) per use; ``c`` is the most bytes of allocations VidMm was seen to hold when it
had to make room), which covers a loop up to :data:`REACH` times larger than memory.

Room is made at the cheapest contiguous hole the ranking opens (the ``scan`` policy's rule): with sizes that
differ, "evict down the ranking until it fits" frees more than it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

from wddmsim.vidmm.policy.holes import cheapest_room
from wddmsim.vidmm.policy.interface import (
    BaseEviction,
    MoveCause,
    Range,
    RoomPlan,
    RoomRequest,
    SegmentView,
    VidMmAllocation,
    listed,
)

REACH: Final = 4
"""How many memories' worth of recent uses keep an allocation "in use"."""


@final
class Stable(BaseEviction):
    """Unreferenced first, then ``AllocationPriority`` ascending, then the long unused (least recently used
    first), then the rest, most recently placed first."""

    name = "stable"

    def __init__(self) -> None:
        self.recent: dict[int, int] = {}
        """The most recently used allocations, ``handle -> size``, least recent first, at most ``REACH x c``
        bytes (every use while ``c`` is not known yet)."""
        self.recent_bytes = 0
        self.arrival: dict[int, int] = {}
        """When each placed allocation was placed (a counter)."""
        self.arrivals = 0
        self.held: dict[int, int] = {}
        """Allocations VidMm holds in some segment, ``handle -> size``."""
        self.held_bytes = 0
        self.capacity = 0
        """``c``: the most bytes of allocations VidMm was seen to hold when it had to make room (0: not yet)."""

    def used(self, a: VidMmAllocation) -> None:
        self.recent_bytes -= self.recent.pop(a.handle, 0)
        self.recent[a.handle] = a.size
        self.recent_bytes += a.size
        self._forget()

    def _forget(self) -> None:
        reach = REACH * self.capacity
        while reach and self.recent_bytes > reach and len(self.recent) > 1:
            self.recent_bytes -= self.recent.pop(next(iter(self.recent)))

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.arrivals += 1
        self.arrival[a.handle] = self.arrivals
        self.held_bytes += a.size - self.held.get(a.handle, 0)
        self.held[a.handle] = a.size

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.held_bytes -= self.held.pop(a.handle, 0)
        self.arrival.pop(a.handle, None)

    def freed(self, a: VidMmAllocation) -> None:
        self.held_bytes -= self.held.pop(a.handle, 0)
        self.recent_bytes -= self.recent.pop(a.handle, 0)
        self.arrival.pop(a.handle, None)

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        if self.held_bytes > self.capacity:
            self.capacity = self.held_bytes
            self._forget()
        return cheapest_room(space, request, roster)

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=self._rank)

    def _rank(self, a: VidMmAllocation) -> tuple[bool, int, bool, int]:
        in_use = a.handle in self.recent
        return (a.residency_count > 0, a.priority, in_use, -self.arrival.get(a.handle, 0) if in_use else a.last_use)

    def explain(self, victim: VidMmAllocation) -> str:
        head = f"{listed(victim)}; priority {victim.priority:#x}"
        if victim.handle not in self.recent:
            reach = f"{REACH} x {self.capacity} bytes" if self.capacity else "every use so far"
            return f"{head}; not used within the last {reach}: least recently used first, at {victim.last_use}"
        return f"{head}; still in use: placed most recently first, placement {self.arrival.get(victim.handle, 0)}"
