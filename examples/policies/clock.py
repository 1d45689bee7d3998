"""CLOCK (second chance): an eviction policy written outside wddmsim, in one file.

    PYTHONPATH=. wddmsim run --policy examples.policies.clock:Clock     (from the repository's root)

Resident allocations sit on a ring in the order they were placed, each with a reference bit that every use
sets.  To rank victims the hand sweeps the ring: a referenced allocation loses its bit and is passed over (its
second chance), an unreferenced one is the next victim.  The state is kept from the seam's notifications.
"""

from __future__ import annotations

from collections.abc import Sequence

from wddmsim.vidmm.policy.interface import BaseEviction, MoveCause, Range, VidMmAllocation


class Clock(BaseEviction):
    name = "clock"

    def __init__(self) -> None:
        self.ring: list[int] = []  # handles, in placement order
        self.referenced: dict[int, bool] = {}
        self.hand = 0  # index into the ring of the next allocation the hand looks at

    def used(self, a: VidMmAllocation) -> None:
        if a.handle in self.referenced:
            self.referenced[a.handle] = True

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.ring.insert(self.hand, a.handle)  # in the slot the hand just emptied, behind the hand
        self.hand += 1
        self.referenced[a.handle] = True  # placed because it is about to be used

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.freed(a)  # off the ring: only what is placed is on it

    def freed(self, a: VidMmAllocation) -> None:
        if a.handle in self.referenced:
            i = self.ring.index(a.handle)
            del self.ring[i], self.referenced[a.handle]
            self.hand -= i < self.hand  # the hand keeps pointing at the same next allocation

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        waiting: dict[int, VidMmAllocation] = {a.handle: a for a in candidates if a.handle in self.referenced}
        ranked = [a for a in candidates if a.handle not in self.referenced]  # unknown to the ring: first
        n, swept = len(self.ring), False
        for step in range(2 * n):  # two turns: the first clears every bit it passes
            handle = self.ring[(self.hand + step) % n]
            if handle not in waiting:
                continue
            if self.referenced[handle]:
                self.referenced[handle] = False
                continue
            if not swept:
                swept, self.hand = True, (self.hand + step) % n  # the hand stops at the first victim
            ranked.append(waiting.pop(handle))
        return ranked
