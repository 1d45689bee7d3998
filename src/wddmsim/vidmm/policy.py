"""Eviction policies: which allocations leave a segment when room is needed (decision D7).

Microsoft does not document how VidMm picks victims.  A policy here is a small object with a name and one
method, :meth:`EvictionPolicy.order`, that ranks the candidates (the mechanism -- who is a candidate at all,
and what evicting costs -- stays in the residency manager).  Candidates are never pinned and never among the
allocations being made resident by the same request.

The default, ``priority-lru``, ranks first what no residency list needs, then lower priority, then least
recently used.  ``lru`` ignores priority; ``fifo`` evicts in the order allocations were placed; ``random``
(seeded) is the baseline a researcher compares against.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol, final

from wddmsim.core.errors import ConfigurationError
from wddmsim.vidmm.allocation import VidMmAllocation


class EvictionPolicy(Protocol):
    name: str

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        """The candidates, first victim first."""
        ...


@final
class PriorityLru:
    """Unreferenced first, then ``AllocationPriority`` ascending, then least recently used."""

    name = "priority-lru"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.priority, a.last_use))


@final
class Lru:
    """Unreferenced first, then least recently used."""

    name = "lru"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.last_use))


@final
class Fifo:
    """Unreferenced first, then the one paged in longest ago."""

    name = "fifo"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=lambda a: (a.residency_count > 0, a.placed_at))


@final
class RandomPolicy:
    """Unreferenced first, otherwise a seeded shuffle."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        shuffled = list(candidates)
        self.rng.shuffle(shuffled)
        return sorted(shuffled, key=lambda a: a.residency_count > 0)


POLICIES: dict[str, Callable[[], EvictionPolicy]] = {
    PriorityLru.name: PriorityLru,
    Lru.name: Lru,
    Fifo.name: Fifo,
    RandomPolicy.name: RandomPolicy,
}
"""Policies by name (``wddmsim run --policy NAME``)."""


def policy_named(name: str) -> EvictionPolicy:
    factory = POLICIES.get(name)
    if factory is None:
        raise ConfigurationError("eviction_policy", name, f"known policies: {', '.join(sorted(POLICIES))}")
    return factory()
