"""``clock``: CLOCK, second chance -- what no residency list needs first, then lower priority, then the order in
which a clock hand finds allocations whose reference bit is clear.

Each segment is a memory of its own with its own ring: placed allocations in the order they came in, each with a
reference bit that every use sets (a page-in sets it too: it is placed because it is about to be used).  To find
a victim the hand sweeps from where it stopped: an allocation whose bit is set loses it and is passed over (its
second chance), the first one whose bit is clear is the victim, and the hand stops on its slot, where the
allocation paged in next is put -- so it is looked at last.  The ranking :meth:`Clock.order` returns is the
order repeated sweeps would evict in; the bits are cleared and the hand moved only when a victim actually
leaves (:meth:`Clock.evicted`), as far as that victim's sweep went.  With priorities or listed candidates the
hand serves each class in turn; an allocation the sweep may not evict keeps its bit.

(``examples/policies/clock.py`` is the same policy written from outside the package, by ``module:Class``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, MoveCause, Range, VidMmAllocation, listed


@dataclass(slots=True)
class _Ring:
    """One segment's ring: handles in placement order, and the index of the slot the hand looks at next."""

    handles: list[int] = field(default_factory=list)
    hand: int = 0

    def from_hand(self) -> list[int]:
        """The handles in the order the hand meets them."""
        n = len(self.handles)
        return [self.handles[(self.hand + i) % n] for i in range(n)]


@final
class Clock(BaseEviction):
    """Second chance over one ring per segment, after the residency-list and priority rules."""

    name = "clock"

    def __init__(self) -> None:
        self.rings: dict[int, _Ring] = {}
        self.segment: dict[int, int] = {}
        """The segment (ring) each placed allocation is on."""
        self.bit: dict[int, bool] = {}
        """The reference bit of each placed allocation."""
        self.sweep: set[int] = set()
        """The candidates of the last ranking: the ones a sweep may clear."""
        self.known: dict[int, VidMmAllocation] = {}
        """The candidates of the last ranking, by handle."""

    def used(self, a: VidMmAllocation) -> None:
        if a.handle in self.bit:
            self.bit[a.handle] = True

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        ring = self.rings.setdefault(where.segment_id, _Ring())
        ring.handles.insert(ring.hand, a.handle)  # behind the hand: the slot a victim left
        ring.hand = (ring.hand + 1) % len(ring.handles)
        self.segment[a.handle] = where.segment_id
        self.bit[a.handle] = True

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        if a.handle in self.sweep and cause in (MoveCause.PRESSURE, MoveCause.LOCK):  # a victim of the ranking
            self._advance(a)
        self.freed(a)

    def freed(self, a: VidMmAllocation) -> None:
        segment = self.segment.pop(a.handle, None)
        if segment is None:
            return
        del self.bit[a.handle]
        ring = self.rings[segment]
        i = ring.handles.index(a.handle)
        del ring.handles[i]
        if i < ring.hand:
            ring.hand -= 1  # the hand keeps looking at the same allocation
        if ring.hand >= len(ring.handles):
            ring.hand = 0

    def _advance(self, victim: VidMmAllocation) -> None:
        """The hand's sweep up to ``victim``: the candidates of its class it passes lose their bit (all of them if
        the victim's own bit was set: the hand went round once clearing them), and it stops on the victim."""
        ring = self.rings[self.segment[victim.handle]]
        same = {h for h in self.sweep if self._class(h) == self._class(victim.handle)}
        ahead = ring.from_hand()
        passed = ahead if self.bit[victim.handle] else ahead[: ahead.index(victim.handle)]
        for h in passed:
            if h in same:
                self.bit[h] = False
        ring.hand = ring.handles.index(victim.handle)

    def _class(self, handle: int) -> tuple[bool, int]:
        a = self.known[handle]
        return a.residency_count > 0, a.priority

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        self.known = {a.handle: a for a in candidates}
        self.sweep = {a.handle for a in candidates if a.handle in self.segment}
        ranked = [a for a in candidates if a.handle not in self.segment]  # on no ring: nothing to keep them
        segments = {self.segment[h] for h in self.sweep}
        for segment in sorted(segments):
            ahead = [h for h in self.rings[segment].from_hand() if h in self.sweep]
            ranked += [self.known[h] for h in ahead if not self.bit[h]]  # found on the first turn
            ranked += [self.known[h] for h in ahead if self.bit[h]]  # second chances used: the second turn
        return sorted(ranked, key=lambda a: (a.residency_count > 0, a.priority))

    def explain(self, victim: VidMmAllocation) -> str:
        second = "its second chance used" if self.bit.get(victim.handle) else "reference bit clear"
        return f"{listed(victim)}; priority {victim.priority:#x}; the clock hand found it, {second}"
