"""``priority-lru``, the default: what no residency list needs first, then lower priority, then least recently used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, VidMmAllocation, listed


@final
class PriorityLru(BaseEviction):
    """Unreferenced first, then ``AllocationPriority`` ascending (``pfnSetPriorityCb``), then least recently used."""

    name = "priority-lru"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.priority, a.last_use))

    def explain(self, victim: VidMmAllocation) -> str:
        return f"{listed(victim)}; priority {victim.priority:#x}; last used at {victim.last_use}"
