"""``lfu``: least frequently used, with aging -- what no residency list needs first, then lower priority, then the
fewest uses (ties: least recently used).

Counts are kept for placed allocations only (in-memory LFU): a page-in starts at one use (the reference that
brought it in), each later use adds one, an eviction or a destroy forgets it.  **Aging**: every ``period`` uses
(all allocations together, default 1024) every count is halved, rounding down, so an allocation that was hot long
ago does not stay resident forever on its past count (pure LFU's weakness); halving keeps the ranking of recent
counts and decays old ones geometrically (a count from ``k`` periods ago weighs ``2**-k``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, MoveCause, Range, VidMmAllocation, listed

PERIOD = 1024
"""Uses between two agings (every count halved)."""


@final
class Lfu(BaseEviction):
    """Fewest uses first (aged every ``period`` uses), after the residency-list and priority rules."""

    name = "lfu"

    def __init__(self, period: int = PERIOD) -> None:
        if period < 1:
            raise ValueError(f"period={period}: must be at least 1 (uses between two agings)")
        self.period = period
        self.count: dict[int, int] = {}
        """Uses of each placed allocation, by handle (aged)."""
        self.uses = 0
        """Uses since the last aging."""

    def used(self, a: VidMmAllocation) -> None:
        if a.handle in self.count:
            self.count[a.handle] += 1
        self.uses += 1
        if self.uses == self.period:
            self.uses = 0
            self.count = {h: n >> 1 for h, n in self.count.items()}

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.count[a.handle] = 1  # the use that brought it in (told before the page-in) counts once

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.count.pop(a.handle, None)

    def freed(self, a: VidMmAllocation) -> None:
        self.count.pop(a.handle, None)

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(
            candidates, key=lambda a: (a.residency_count > 0, a.priority, self.count.get(a.handle, 0), a.last_use)
        )

    def explain(self, victim: VidMmAllocation) -> str:
        uses = self.count.get(victim.handle, 0)
        return f"{listed(victim)}; priority {victim.priority:#x}; {uses} use(s), aged; last used at {victim.last_use}"
