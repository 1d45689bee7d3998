"""``random``: the baseline a researcher compares against -- unreferenced first, otherwise a seeded shuffle.

(Not ``random.py``: a module named after the standard library's would shadow it when run as a script.)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import final

from wddmsim.vidmm.policy.interface import BaseEviction, VidMmAllocation, listed


@final
class RandomPolicy(BaseEviction):
    """Unreferenced first, otherwise a seeded shuffle."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        shuffled = list(candidates)
        self.rng.shuffle(shuffled)
        return sorted(shuffled, key=lambda a: a.residency_count > 0)

    def explain(self, victim: VidMmAllocation) -> str:
        return f"{listed(victim)}; drawn by the seeded shuffle"
