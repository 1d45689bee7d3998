"""``arc``: Adaptive Replacement Cache (Megiddo and Modha, FAST 2003) -- scan-resistant and self-tuning (decision
0141): what no residency list needs first, then lower priority, then ARC's choice.

Each segment is a cache of its own, of ``c`` bytes.  ARC keeps its placed allocations on two LRU lists -- ``T1``,
used once since they came in (recency), and ``T2``, used again (frequency) -- and remembers the handles of
recent victims of each on two ghost lists, ``B1`` and ``B2`` (no memory held).  A use of an allocation remembered
in ``B1`` means ``T1`` was too small: the target size ``p`` of ``T1`` grows (by the allocation's size, times
``|B2| / |B1|`` when ``B2`` is larger); a use of one in ``B2`` shrinks it likewise; either comes back into
``T2``.  A newcomer enters ``T1``.  The victim is ``T1``'s least recently used when ``T1`` holds more than ``p``
bytes (or exactly ``p`` and the allocation being brought in was remembered in ``B2``), else ``T2``'s.  Ghosts
are forgotten, least recent first, so that ``T1 + B1`` stays within ``c`` and all four lists within ``2c``.

A one-time scan passes through ``T1`` only and never displaces ``T2``: that is its scan resistance.  Sizes are
counted in bytes, so with equal sizes this is the paper's ARC counted in pages.  ``c`` is not told to a policy:
it is the most bytes of allocations the segment was seen to hold when room had to be made (at :meth:`Arc.scan`)
-- with equal sizes exactly ``k`` allocations, the paper's cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import final

from wddmsim.vidmm.policy.interface import (
    BaseEviction,
    MoveCause,
    Range,
    RoomPlan,
    RoomRequest,
    SegmentView,
    VidMmAllocation,
    listed,
)


@dataclass(slots=True)
class _Cache:
    """One segment's lists: handle -> size, least recently used first (a dict keeps insertion order)."""

    t1: dict[int, int] = field(default_factory=dict)
    t2: dict[int, int] = field(default_factory=dict)
    b1: dict[int, int] = field(default_factory=dict)
    b2: dict[int, int] = field(default_factory=dict)
    p: float = 0.0
    """The target bytes of ``T1``."""
    c: int = 0
    """The cache's bytes (0: not known yet)."""

    def trim(self) -> list[int]:
        """Forget the least recent ghosts until ``T1 + B1 <= c`` and ``T1 + T2 + B1 + B2 <= 2c``; the handles
        forgotten."""
        gone: list[int] = []
        if not self.c:
            return gone
        t1, b1 = sum(self.t1.values()), sum(self.b1.values())
        while self.b1 and t1 + b1 > self.c:
            gone.append(next(iter(self.b1)))
            b1 -= self.b1.pop(gone[-1])
        total = t1 + b1 + sum(self.t2.values()) + sum(self.b2.values())
        while self.b2 and total > 2 * self.c:
            gone.append(next(iter(self.b2)))
            total -= self.b2.pop(gone[-1])
        return gone


@final
class Arc(BaseEviction):
    """ARC over each segment (decision 0141), after the residency-list and priority rules."""

    name = "arc"

    def __init__(self) -> None:
        self.caches: dict[int, _Cache] = {}
        self.segment: dict[int, int] = {}
        """The segment whose ``T1`` or ``T2`` holds each placed allocation."""
        self.ghost: dict[int, int] = {}
        """The segment whose ``B1`` or ``B2`` remembers each ghost."""
        self.again: set[int] = set()
        """Allocations remembered in a ghost list and used again: they enter ``T2`` when placed."""
        self.from_b2 = False
        """The last use that missed was remembered in ``B2`` (REPLACE's tie rule)."""

    def used(self, a: VidMmAllocation) -> None:
        h = a.handle
        if h in self.segment:  # a hit: most recently used of T2
            cache = self.caches[self.segment[h]]
            size = cache.t1.pop(h, None) or cache.t2.pop(h)
            cache.t2[h] = size
            return
        self.from_b2 = False
        if h not in self.ghost:
            return  # a newcomer: T1 when placed
        cache = self.caches[self.ghost.pop(h)]
        b1, b2 = sum(cache.b1.values()), sum(cache.b2.values())
        if h in cache.b1:
            cache.p = min(float(cache.c or cache.p + a.size), cache.p + a.size * max(1.0, b2 / b1))
            del cache.b1[h]
        else:
            cache.p = max(0.0, cache.p - a.size * max(1.0, b1 / b2))
            del cache.b2[h]
            self.from_b2 = True
        self.again.add(h)

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        h = a.handle
        if h in self.ghost:  # placed without a use (a demotion): its ghost elsewhere is forgotten
            old = self.caches[self.ghost.pop(h)]
            old.b1.pop(h, None)
            old.b2.pop(h, None)
        cache = self.caches.setdefault(where.segment_id, _Cache())
        (cache.t2 if h in self.again else cache.t1)[h] = a.size
        self.again.discard(h)
        self.segment[h] = where.segment_id
        self._trim(cache)

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        h = a.handle
        segment = self.segment.pop(h, None)
        if segment is None:
            return
        cache = self.caches[segment]
        if h in cache.t1:
            cache.b1[h] = cache.t1.pop(h)
        else:
            cache.b2[h] = cache.t2.pop(h)
        self.ghost[h] = segment
        self._trim(cache)

    def _trim(self, cache: _Cache) -> None:
        for h in cache.trim():
            del self.ghost[h]

    def freed(self, a: VidMmAllocation) -> None:
        h = a.handle
        for table in (self.segment, self.ghost):
            segment = table.pop(h, None)
            if segment is not None:
                for side in (self.caches[segment].t1, self.caches[segment].t2):
                    side.pop(h, None)
                for side in (self.caches[segment].b1, self.caches[segment].b2):
                    side.pop(h, None)
        self.again.discard(h)

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        cache = self.caches.setdefault(space.id, _Cache())
        held = sum(size for _, size, owner in space.held() if isinstance(owner, VidMmAllocation))
        cache.c = max(cache.c, held)
        return RoomPlan(roster)

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        ranked = [a for a in candidates if a.handle not in self.segment]  # unknown to ARC: nothing keeps them
        known: dict[int, VidMmAllocation] = {a.handle: a for a in candidates if a.handle in self.segment}
        for segment in sorted({self.segment[h] for h in known}):
            ranked += [known[h] for h in self._replacements(self.caches[segment], known)]
        return sorted(ranked, key=lambda a: (a.residency_count > 0, a.priority))

    def _replacements(self, cache: _Cache, known: dict[int, VidMmAllocation]) -> list[int]:
        """The order repeated REPLACE steps would evict ``known``'s allocations in: from ``T1`` while it holds
        more than ``p`` bytes (or ``p`` exactly, after a ``B2`` hit), else from ``T2``."""
        t1 = [h for h in cache.t1 if h in known]
        t2 = [h for h in cache.t2 if h in known]
        size = sum(cache.t1.values())
        out: list[int] = []
        while t1 or t2:
            if t1 and (not t2 or size > cache.p or (self.from_b2 and size == cache.p)):
                out.append(t1.pop(0))
                size -= cache.t1[out[-1]]
            else:
                out.append(t2.pop(0))
        return out

    def explain(self, victim: VidMmAllocation) -> str:
        segment = self.segment.get(victim.handle)
        if segment is None:
            return f"{listed(victim)}; unknown to ARC"
        cache = self.caches[segment]
        side = "T1 (used once)" if victim.handle in cache.t1 else "T2 (used again)"
        t1 = sum(cache.t1.values())
        return (
            f"{listed(victim)}; priority {victim.priority:#x}; least recent of {side}; "
            f"T1 {t1} bytes, target p {cache.p:.0f} of c {cache.c}"
        )
