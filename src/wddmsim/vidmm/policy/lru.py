"""``lru``: what no residency list needs first, then least recently used (priorities ignored)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, VidMmAllocation, listed


@final
class Lru(BaseEviction):
    """Unreferenced first, then least recently used."""

    name = "lru"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.last_use))

    def explain(self, victim: VidMmAllocation) -> str:
        return f"{listed(victim)}; last used at {victim.last_use}"
