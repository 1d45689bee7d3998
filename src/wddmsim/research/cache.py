"""A tiny demand-paging cache over a reference string: the schedules the bound is measured against, without
VidMm's mechanism (decision 0144).

One use at a time: an object in the cache is a hit; otherwise its bytes are paged in, after victims leave --
chosen by the policy -- until it fits.  No fragmentation, no page tables, no residency lists, no aperture: on
equal sizes it makes the choices VidMm's policies of the same name make on a frame loop that lists one
allocation per request (tests/research check this against the real path).  ``min`` is Belady's MIN (evict the
object used furthest ahead; never again is furthest): with equal sizes optimal in faults, with sizes that differ a
feasible clairvoyant schedule, the upper side of the optimum.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import numpy as np

from wddmsim.research.reference import ReferenceString, Use

NEVER: Final = 1 << 62


def next_uses(uses: list[Use]) -> list[int]:
    """Per position: the position of the next use of the same object (:data:`NEVER` if none)."""
    following = [NEVER] * len(uses)
    seen: dict[int, int] = {}
    for k in range(len(uses) - 1, -1, -1):
        following[k] = seen.get(uses[k].obj, NEVER)
        seen[uses[k].obj] = k
    return following


def _check_fits(refs: ReferenceString) -> list[Use]:
    uses = refs.uses()
    too_big = next((u for u in uses if u.size > refs.capacity), None)
    if too_big is not None:
        raise ValueError(f"object {too_big.obj}: {too_big.size} bytes exceed the capacity {refs.capacity}")
    return uses


def _recency(refs: ReferenceString, *, refresh: bool) -> int:
    """LRU (``refresh``: a hit moves the object to the back) or FIFO (insertion order only)."""
    cache: OrderedDict[int, int] = OrderedDict()
    held = paged = 0
    for u in _check_fits(refs):
        if u.obj in cache:
            if refresh:
                cache.move_to_end(u.obj)
            continue
        while held + u.size > refs.capacity:
            held -= cache.popitem(last=False)[1]
        cache[u.obj] = u.size
        held += u.size
        paged += u.size
    return paged


def lru(refs: ReferenceString) -> int:
    """Bytes paged in when the least recently used object leaves first."""
    return _recency(refs, refresh=True)


def fifo(refs: ReferenceString) -> int:
    """Bytes paged in when the first object paged in leaves first."""
    return _recency(refs, refresh=False)


def random_policy(refs: ReferenceString, seed: int = 0) -> int:
    """Bytes paged in when a victim is drawn uniformly from the cache (a seeded generator)."""
    rng = np.random.default_rng(seed)
    cache: dict[int, int] = {}
    members: list[int] = []
    held = paged = 0
    for u in _check_fits(refs):
        if u.obj in cache:
            continue
        while held + u.size > refs.capacity:
            i = int(rng.integers(len(members)))
            members[i], members[-1] = members[-1], members[i]
            victim = members.pop()
            held -= cache.pop(victim)
        cache[u.obj] = u.size
        members.append(u.obj)
        held += u.size
        paged += u.size
    return paged


def belady(refs: ReferenceString) -> int:
    """Bytes paged in by Belady's MIN: the object whose next use is furthest ahead leaves first."""
    uses = _check_fits(refs)
    following = next_uses(uses)
    sizes = refs.sizes()
    cache: dict[int, int] = {}
    """Cached object -> the position of its next use."""
    heap: list[tuple[int, int]] = []
    """``(-next use, object)``; entries whose next use changed are stale and skipped."""
    held = paged = 0
    for k, u in enumerate(uses):
        if u.obj not in cache:
            while held + u.size > refs.capacity:
                far, victim = heapq.heappop(heap)
                if cache.get(victim) == -far:
                    del cache[victim]
                    held -= sizes[victim]
            held += u.size
            paged += u.size
        cache[u.obj] = following[k]
        heapq.heappush(heap, (-following[k], u.obj))
    return paged


POLICIES: Final[dict[str, Callable[[ReferenceString], int]]] = {
    "lru": lru,
    "fifo": fifo,
    "random": random_policy,
    "min": belady,
}
"""The tiny model's policies, by the names of VidMm's policies they mirror."""


__all__ = ["NEVER", "POLICIES", "belady", "fifo", "lru", "next_uses", "random_policy"]
