"""``mru``: what no residency list needs first, then lower priority, then *most* recently used.

MRU is the textbook answer to a cyclic reference string larger than memory, where LRU misses on every reference
(the LRU cliff): evicting the allocation just used keeps the rest of the loop resident.  It is a baseline for
loops, not a general policy -- on a working set with locality it evicts exactly what is needed next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, VidMmAllocation, listed


@final
class Mru(BaseEviction):
    """Unreferenced first, then ``AllocationPriority`` ascending (``pfnSetPriorityCb``), then most recently used."""

    name = "mru"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.priority, -a.last_use))

    def explain(self, victim: VidMmAllocation) -> str:
        return f"{listed(victim)}; priority {victim.priority:#x}; most recently used, at {victim.last_use}"
