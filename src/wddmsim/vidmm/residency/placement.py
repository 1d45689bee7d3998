"""Placement: where an allocation goes, and the room made for it (the mechanism; :mod:`~wddmsim.vidmm.policy`
ranks the victims).

What it models (wddm-spec sections 3.7-3.9, decisions D4, 0011, 0013, 0021):

- The candidates are the allocation's preferred segments, then the others it supports, that every move observer
  lets it enter (:meth:`Placer._candidates`).
- The placement ladder (the placement policy's data, decision 0065; the default: ``policy/ladder.py``): free room where the allocation wants to be, then
  room made there from what no residency list needs, then the same in the other segment group (an aperture:
  system memory), then victims some list needs -- they come back before their device runs.  A victim is never one
  the same request needs, nor a pinned one; offered content is dropped first.
- Room for VidMm's own objects (page tables, paging buffers): :meth:`Placer.make_room`.
- Every move -- in (:meth:`Placer.enter`) or out (:meth:`Placer.leave`) -- is told to the move observers
  (:class:`~wddmsim.vidmm.moves.causes.MoveObserver`) in the order they were handed in (decision 0060).  A victim some
  residency list still needs is demoted to an aperture segment when there is room there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import final

from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import SystemMemoryServices
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.allocation import Content, VidMmAllocation
from wddmsim.vidmm.events import (
    VidMmEvict,
    VidMmPageIn,
)
from wddmsim.vidmm.move_kinds import Destination, MoveCause
from wddmsim.vidmm.moves.causes import MoveObserver, demotes, merge
from wddmsim.vidmm.moves.mover import Mover
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.policy import (
    EvictionPolicy,
    InsertMode,
    Ladder,
    PlacementPolicy,
    RoomRequest,
    VictimClass,
    make_room,
)
from wddmsim.vidmm.residency.noroom import no_room
from wddmsim.vidmm.segments import IdleTables, Placement, Segments, SegmentSpace

Victims = Callable[[VidMmAllocation], bool]
"""Which placed allocations a placement pass may evict."""


def unreferenced(a: VidMmAllocation) -> bool:
    """No residency list needs it."""
    return a.residency_count == 0


def anyone(a: VidMmAllocation) -> bool:
    """Any allocation not protected (it comes back before its device runs)."""
    return True


def in_use(a: VidMmAllocation) -> bool:
    """Listed in its device's residency set and usable by its work: referenced and not offered."""
    return a.residency_count > 0 and a.offered is None


VICTIMS: dict[VictimClass, Victims | None] = {
    VictimClass.NONE: None,
    VictimClass.UNREFERENCED: unreferenced,
    VictimClass.ANYONE: anyone,
}
"""What a rung's victim class lets a pass evict."""

RULES: dict[MoveCause, str] = {
    MoveCause.PRESSURE: "room for another placement",
    MoveCause.EVICT: "Evict dropped its last residency reference",
    MoveCause.TRIM: "TrimResidencySet: its device's residency list no longer holds it",
    MoveCause.OFFER: "offered: its content is dropped",
    MoveCause.DESTROY: "destroyed",
    MoveCause.RESET: "an adapter reset lost the memory segments",
    MoveCause.POWER: "a power transition purges its range",
    MoveCause.LOCK: "a CPU lock needs its range, or it leaves for the lock",
    MoveCause.COMPACT: "its device's residency list is packed anew so that all of it fits",
}
"""Why an allocation leaves when no eviction policy chose it: the rule of its cause (decision 0140)."""

ROOM_LADDER: tuple[Victims | None, ...] = (None, unreferenced, anyone)
"""Room for one of VidMm's own objects, or for an allocation going into memory: free room, then room from what no
residency list needs, then from anyone not protected."""


@final
class Placer:
    """Finds ranges, makes room, and moves allocations in and out of them, telling the move observers."""

    def __init__(
        self,
        segments: Segments,
        mover: Mover,
        policy: EvictionPolicy,
        paging: PagingStream,
        mm: SystemMemoryServices,
        events: EventLog,
        objects: ObjectTable,
        *,
        observers: tuple[MoveObserver, ...],
        idle_tables: IdleTables | None,
        system_chunk: int,
        placement: PlacementPolicy | None = None,
    ) -> None:
        self.segments = segments
        self.mover = mover
        self.policy = policy
        self.placement = placement or Ladder()
        """Which segments, in which order, with which victims; where in a segment (decision 0065)."""
        self.paging = paging
        self.mm = mm
        self.events = events
        self.objects = objects
        self.observers = observers
        """Told of every move, in this order (decision 0060): work submission (the device's work in flight
        completes), the GPU VA spaces (mappings follow their allocations), the CPU locks (views follow)."""
        self.idle_tables = idle_tables
        """Room from VidMm's own movable objects (page tables of idle processes), asked before allocations
        a residency list needs are evicted."""
        self.system_chunk = system_chunk
        """The GPU page (decision 0011): every allocation is whole GPU pages placed on one."""
        self.clock = 0
        """The use counter: every reference bumps it (the eviction policies' notion of time)."""
        self.moved = False
        """Whether the request in progress built any paging operation."""
        self._entering: set[HANDLE] = set()
        self._orders: dict[tuple[int, tuple[int, ...]], list[SegmentSpace]] = {}
        """(usable segment set, preferred segments) -> the segments in the order they are tried (the segments
        are fixed for the adapter's life)."""
        self.over_budget: Callable[[VidMmAllocation], bool] = lambda a: False
        """Whether ``a``'s process is over its budget: room that may take what residency lists hold is taken from
        those first (decision 0173; the budgets set it)."""
        self.short: VidMmAllocation | None = None
        """The first allocation :meth:`unplaceable` found no room for (None: it found room for all)."""

    def _candidates(self, a: VidMmAllocation) -> list[SegmentSpace]:
        """The segments ``a`` may enter now: its usable ones, preferred first then by id, less those an observer
        refuses (a budget, an evicted address space)."""
        key = (a.usable_set, a.preferred)
        spaces = self._orders.get(key)
        if spaces is None:
            usable = set(self.segments.ids_in(a.usable_set))
            order = [s for s in a.preferred if s in usable]
            order += [s for s in sorted(usable) if s not in order]
            spaces = self._orders[key] = [self.segments.get(s) for s in order]
        out: list[SegmentSpace] = []
        for s in spaces:  # a plain loop: this runs for every candidate of every request
            for o in self.observers:
                if not o.may_enter(a, s):
                    break
            else:
                out.append(s)
        return out

    def place(self, a: VidMmAllocation, protected: set[HANDLE], *, cause: MoveCause) -> bool:
        """Find ``a`` a range (evicting as the policy ranks) and page it in; False if nothing can hold it."""
        candidates = self._candidates(a)
        usable = {s.id: s for s in candidates}
        for rung in self.placement.rungs(a, candidates):  # the ladder is the placement policy's (decision 0065)
            for space in (usable[i] for i in rung.segments if i in usable):
                offset = self._room(space, a, protected, VICTIMS[rung.victims], cause)
                if offset is not None:
                    self.enter(a, Placement(space.id, offset))
                    return True
        return False

    def _room(
        self, space: SegmentSpace, a: VidMmAllocation, protected: set[HANDLE], victims: Victims | None, cause: MoveCause
    ) -> int | None:
        """A range of ``space`` for ``a``: free room, else (with ``victims``) room made by evicting them."""
        alignment = max(a.alignment, self.system_chunk)  # on a GPU page: PTEs map whole ones (decision 0011)
        alignment = alignment if alignment > PAGE_SIZE else 0
        from_end = self.placement.insert_mode(a, space) == InsertMode.HIGH
        return self._carve(space, a.size, a, alignment, from_end, protected, victims, cause)

    def _carve(
        self,
        space: SegmentSpace,
        size: int,
        owner: object,
        alignment: int,
        from_end: bool,
        protected: set[HANDLE],
        victims: Victims | None,
        cause: MoveCause,
    ) -> int | None:
        offset = space.allocate(size, owner, alignment=alignment, from_end=from_end)
        if offset is not None or victims is None:
            return offset
        protected = protected | self._entering
        candidates = [v for v in self.residents(space) if v.handle not in protected and v.pin_count == 0 and victims(v)]
        request = RoomRequest(
            segment=space.id, size=size, alignment=alignment, from_end=from_end, owner=owner, cause=cause
        )
        trees = self.idle_tables if victims is anyone else None
        if trees is not None:  # idle page-table trees first, when their leaving serves (decisions 0021, 0218)

            def allowed() -> list[int]:
                return _offsets([v for v in candidates if self.policy.may_evict(v, request)], space)

            offset, _ = trees(space, size, owner, alignment, from_end, allowed)
            if offset is not None:
                return offset
        offset = self._by_eviction(space, request, protected, candidates, victims)
        if offset is None and trees is not None:
            # What the allocations that left freed may now make the trees' own leaving enough.
            offset, _ = trees(space, size, owner, alignment, from_end, list)
        return offset

    def _by_eviction(
        self,
        space: SegmentSpace,
        request: RoomRequest,
        protected: set[HANDLE],
        candidates: list[VidMmAllocation],
        victims: Victims,
    ) -> int | None:
        """A range of ``space`` for ``request`` made by evicting some of ``candidates`` (the policy's choice), or
        None."""

        def evict(victim: VidMmAllocation, policy: str, reason: str) -> None:
            if victim.offered is not None:
                self.drop_offered(victim, reason=reason)
            else:
                self.leave(victim, cause=request.cause, protected=protected, chosen_by=(policy, reason))

        def allocate(hole: int | None) -> int | None:
            r = request
            return space.allocate(r.size, r.owner, alignment=r.alignment, from_end=r.from_end, at=hole)

        if victims is anyone:  # processes over their budget pay first (decision 0173)
            over = [v for v in candidates if v.residency_count and self.over_budget(v)]
            if over:
                free = space.ranges.free_bytes
                offset = make_room(space, request, over, self.policy, free_bytes=free, allocate=allocate, evict=evict)
                if offset is not None:
                    return offset
                candidates = [v for v in candidates if _in_segment(v, space)]
        free = space.ranges.free_bytes
        return make_room(space, request, candidates, self.policy, free_bytes=free, allocate=allocate, evict=evict)

    def make_room(self, space: SegmentSpace, size: int, owner: object, *, alignment: int = 0) -> int | None:
        """A range for one of VidMm's own objects (a page table): free room at the top of the segment, else room
        made by evicting -- what no residency list needs first, then anyone but the allocations being moved."""
        for victims in ROOM_LADDER:
            offset = self._carve(space, size, owner, alignment, True, set(), victims, MoveCause.PRESSURE)
            if offset is not None:
                return offset
        return None

    def residents(self, space: SegmentSpace) -> Iterator[VidMmAllocation]:
        for owner in list(space.owners.values()):
            if isinstance(owner, VidMmAllocation):
                yield owner

    def enter(self, a: VidMmAllocation, placement: Placement) -> None:
        a.placement = placement  # first: an adapter reset during the page-in finds the range and frees it
        how = self.mover.page_in(a, placement)
        self._entering.add(a.handle)  # page tables its mappings need never evict it
        try:
            for observer in self.observers:
                observer.after_enter(a)
        finally:
            self._entering.discard(a.handle)
        a.content = Content.DATA
        a.backing_current = False
        a.clean_start = True  # the placement equals the backing store; what the GPU writes next, NotWrittenTo says
        a.moves += 1
        self.clock += 1
        a.placed_at = self.clock
        self.moved = True
        self.policy.placed(a, placement)
        self.events.emit(
            VidMmPageIn(
                time=self.events.clock.now,
                allocation=a.handle,
                segment=placement.segment_id,
                offset=placement.offset,
                size=a.size,
                how=how,
            )
        )

    def leave(
        self,
        a: VidMmAllocation,
        *,
        cause: MoveCause,
        keep_content: bool = True,
        protected: set[HANDLE] | None = None,
        chosen_by: tuple[str, str] | None = None,
    ) -> None:
        """Take ``a`` out of its segment: to system memory, or -- for a victim a residency list still needs -- to
        an aperture segment with free room.  ``chosen_by`` is ``(policy, reason)`` when an eviction policy chose
        it; otherwise the event gives the rule of ``cause`` (decision 0140)."""
        placement = a.placement
        assert placement is not None
        # In order: the device's work in flight completes (its allocations are pinned meanwhile), no mapping reaches
        # the range once the next operation may reuse it, the CPU's swizzling ranges go back.
        how = merge([observer.before_leave(a, cause) for observer in self.observers])
        destination = self.mover.page_out(
            a, placement, keep_content=keep_content, unswizzle=how.unswizzle, special=how.special
        )
        self.segments.get(placement.segment_id).free(placement.offset)
        a.placement = None
        self.moved = True
        self.policy.evicted(a, placement, cause)
        if destination is Destination.DISCARDED:
            a.content = Content.DISCARDED
        for observer in self.observers:
            observer.after_leave(a)
        demoted = False
        if demotes(cause) and a.residency_count and not self.segments.get(placement.segment_id).aperture:
            demoted = self._demote(a)
        self.events.emit(
            VidMmEvict(
                time=self.events.clock.now,
                allocation=a.handle,
                segment=placement.segment_id,
                size=a.size,
                cause=cause.value,
                destination=(Destination.APERTURE if demoted else destination).value,
                policy=chosen_by[0] if chosen_by else "",
                reason=chosen_by[1] if chosen_by else RULES[cause],
            )
        )

    def _demote(self, a: VidMmAllocation) -> bool:
        candidates = self._candidates(a)
        usable = {s.id: s for s in candidates}
        for space in (usable[i] for i in self.placement.demotion(a, candidates) if i in usable):
            offset = space.allocate(a.size, a)
            if offset is not None:
                self.enter(a, Placement(space.id, offset))
                return True
        return False

    def drop_offered(self, a: VidMmAllocation, *, reason: str | None = None) -> None:
        """What pressure does to an offered allocation: its content goes, and with AllowDecommit its pages."""
        if a.placement is not None:
            chosen_by = None if reason is None else ("", reason)
            self.leave(a, cause=MoveCause.OFFER, keep_content=False, chosen_by=chosen_by)
        a.content = Content.DISCARDED
        if a.allow_decommit and a.backing is not None:
            self.paging.wait(self.paging.flush())
            self.mm.free_pages(a.backing)
            a.backing = None

    def segments_for(self, a: VidMmAllocation) -> set[int]:
        """The ids of the segments ``a`` may be placed in."""
        return {s.id for s in self._candidates(a)}

    def overflow(self, needed: list[VidMmAllocation]) -> int:
        """Bytes by which ``needed`` -- a residency list that must be resident at once -- exceeds the segments it
        may use, whatever is evicted (decision 0172): for each set of segments some member may use, the members
        confined to that set must fit its bytes.  A necessary condition only (fragmentation is the placement's
        to solve, by repacking the list); ``short`` names a member of the worst set."""
        usable = [(a, frozenset(self.segments_for(a))) for a in needed]  # once per member: this runs per request
        worst = 0
        for allowed in {segments for _, segments in usable}:
            confined = [a for a, segments in usable if segments <= allowed]
            over = sum(a.size for a in confined) - sum(self.segments.get(i).size for i in allowed)
            if over > worst:
                worst, self.short = over, max(confined, key=lambda a: a.size)
        return worst

    def unplaceable(self, wanted: list[VidMmAllocation]) -> int:
        """Bytes of ``wanted`` that no segment could hold even with every allocation it may evict gone: the
        request is refused at once (``E_OUTOFMEMORY``) rather than admitted to fail in the worker."""
        taken: dict[int, int] = {}
        missing = 0
        self.short = None
        keep = {a.handle for a in wanted}
        layouts: dict[int, list[tuple[int, int, VidMmAllocation | None]]] = {}
        for a in sorted((a for a in wanted if a.placement is None), key=lambda x: -x.size):
            room = {}
            for s in self._candidates(a):
                if s.id not in layouts:
                    layouts[s.id] = _open_layout(s, keep)
                room[s.id] = self._evictable_room(s, layouts[s.id], a) - taken.get(s.id, 0)
            best = max(room, key=room.__getitem__) if room else None
            short = a.size if best is None else max(0, a.size - max(room[best], 0))
            if short and self.short is None:
                self.short = a
            missing += short
            if best is not None:
                taken[best] = taken.get(best, 0) + a.size
        return missing

    def no_room(self, a: VidMmAllocation, protected: set[HANDLE], operation: str) -> str:
        """Record why ``a`` could not be placed (a ``VidMmNoRoom`` event, decision 0158) and return the
        diagnostic paragraph, for the error the caller raises or returns."""
        event = no_room(a, self._candidates(a), protected, self.policy, operation=operation, time=self.events.clock.now)
        self.events.emit(event)
        return event.diagnosis

    def _evictable_room(
        self, space: SegmentSpace, layout: list[tuple[int, int, VidMmAllocation | None]], a: VidMmAllocation
    ) -> int:
        """The largest range ``space`` could give ``a``: a run of free ranges and ranges of allocations the policy
        may evict (no veto) for ``a``, side by side (decision 0090).  Free plus movable bytes is not enough:
        ``a`` needs one range, and what the request already holds or is pinned splits the segment.  ``layout``:
        :func:`_open_layout` of ``space``."""
        request = RoomRequest(
            segment=space.id, size=a.size, alignment=a.alignment, from_end=False, owner=a, cause=MoveCause.PRESSURE
        )
        may_evict = self.policy.may_evict
        longest = start = end = 0
        for s, e, v in layout:  # in address order: a run goes on while each range starts where the last ended
            if v is not None and not may_evict(v, request):
                continue
            if s != end:
                start = s
            end = e
            longest = max(longest, end - start)
        return longest

    def into_memory(self, a: VidMmAllocation, *, cause: MoveCause) -> bool:
        """Put ``a`` in a memory segment (out of an aperture or system memory) (the move is built, not waited
        for); False -- with ``a`` where it was -- if no memory segment can take it, even by evicting what ``a`` does
        not need."""
        memory = [s for s in self._candidates(a) if not s.aperture]
        usable = {s.id: s for s in memory}
        for rung in self.placement.rungs(a, memory):  # the placement policy's ladder, over memory segments only
            for space in (usable[i] for i in rung.segments if i in usable):
                offset = self._room(space, a, {a.handle}, VICTIMS[rung.victims], cause)
                if offset is None:
                    continue
                if a.placement is not None:  # the range is held: now leave the aperture for it
                    self.leave(a, cause=cause, chosen_by=("", "moved into a memory segment"))
                self.enter(a, Placement(space.id, offset))
                return True
        return False

    def place_all(self, allocations: list[VidMmAllocation], *, protected: set[HANDLE]) -> bool:
        """Place every one of ``allocations`` (the allocation list of a segment-model submission), evicting only
        what ``protected`` does not name; False, with what could be placed left placed, if one does not fit."""
        self.moved = False
        for a in sorted(allocations, key=lambda x: -x.size):  # largest first: the fewest ranges left too small
            if a.placement is None and not self.place(a, protected, cause=MoveCause.PRESSURE):
                return False
        return True

    def hold(self, a: VidMmAllocation) -> None:
        """VidMm's own residency reference (a tile pool that queued updates map): resident until :meth:`unhold`."""
        a.residency_count += 1
        if a.placement is None and not self.place(a, {a.handle}, cause=MoveCause.PRESSURE):
            a.residency_count -= 1
            why = self.no_room(a, {a.handle}, "VidMm's own residency reference")
            raise DdiError(NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY, f"no segment can hold {a!r}: {why}")
        self.paging.flush()

    def unhold(self, a: VidMmAllocation) -> None:
        """Drop a reference :meth:`hold` took; the allocation stays where it is until pressure wants the room."""
        if a.handle in self.objects.allocations and a.residency_count > 0:
            a.residency_count -= 1

    def touch(self, allocations: Iterable[VidMmAllocation]) -> None:
        """Record a use (GPU work referencing them): the recency the eviction policies see."""
        for a in allocations:
            self.use(a)

    def use(self, a: VidMmAllocation) -> None:
        """One reference: stamped with the use counter, then told to the eviction policy (decision 0065)."""
        self.clock += 1
        a.last_use = self.clock
        self.policy.used(a)  # after the stamp: a policy may read last_use


def _open_layout(space: SegmentSpace, keep: set[HANDLE]) -> list[tuple[int, int, VidMmAllocation | None]]:
    """``space``'s free ranges (owner None) and the ranges of allocations a request could evict if the policy
    lets it -- not in ``keep`` (the request's own), not pinned -- as ``(start, end, allocation)`` in address
    order: what :meth:`Placer._evictable_room` walks for each allocation of one request."""
    layout: list[tuple[int, int, VidMmAllocation | None]] = [
        (e.start, e.end, None) for e in space.ranges.free_extents()
    ]
    layout += [
        (offset, offset + size, v)
        for offset, size, v in space.held()
        if isinstance(v, VidMmAllocation) and v.handle not in keep and v.pin_count == 0
    ]
    layout.sort(key=lambda r: r[0])
    return layout


def _in_segment(a: VidMmAllocation, space: SegmentSpace) -> bool:
    return a.placement is not None and a.placement.segment_id == space.id


def _offsets(allocations: list[VidMmAllocation], space: SegmentSpace) -> list[int]:
    """Where in ``space`` the ``allocations`` there lie: the ranges their leaving would free."""
    return [a.placement.offset for a in allocations if a.placement is not None and a.placement.segment_id == space.id]
