"""``fifo``: what no residency list needs first, then the allocation paged in longest ago."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, VidMmAllocation, listed


@final
class Fifo(BaseEviction):
    """Unreferenced first, then the one paged in longest ago."""

    name = "fifo"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.placed_at))

    def explain(self, victim: VidMmAllocation) -> str:
        return f"{listed(victim)}; paged in at {victim.placed_at}"
