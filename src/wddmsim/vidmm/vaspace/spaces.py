"""``GpuVaSpaces``: the GPU VA services of every process, and mappings that follow their allocations.

What it models (wddm-spec.md sections 2.5-2.8 and 3.1-3.6; decisions D5 and 0016):

- Reserve, Map and Free with every documented rule; ``UpdateGpuVirtualAddress`` (:mod:`.update`).
- A mapping points its leaf entries at wherever its allocation is (:mod:`.entries`).  On every move the
  residency manager calls :meth:`GpuVaSpaces.before_leave` (entries invalidated and flushed from the TLB *before*
  the range can be reused by the next operation in the stream) and :meth:`GpuVaSpaces.after_enter` (entries
  re-pointed, and flushed unless the driver reports ``InvalidTlbEntriesNotCached``).
- The page-table trees themselves are :mod:`.tree` (built on :mod:`.tables`, :mod:`.placement`, :mod:`.links`);
  where a new region's VA goes is :mod:`.choosing`; installing and removing mappings :mod:`.mappings`; the
  privileged spaces and their fixed mappings :mod:`.privileged`.  This module keeps the DDI calls, the spaces'
  lifetime, and the hooks the residency core calls on every move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, final

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE, NO_FENCE
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.status import HRESULT
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
)
from wddmsim.ddi.va import D3DDDIGPUVIRTUALADDRESS_RESERVATION_TYPE as Reservation
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.moves.causes import STAY, LeaveHow
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.buffers import PagingBufferPool
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.ports import VaResidency
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments, SegmentSpace
from wddmsim.vidmm.vaspace.checks import bad, check_free_arguments, check_map_arguments, check_reserve_arguments
from wddmsim.vidmm.vaspace.choosing import VaChooser
from wddmsim.vidmm.vaspace.entries import Entries
from wddmsim.vidmm.vaspace.mappings import Mappings
from wddmsim.vidmm.vaspace.privileged import PrivilegedSpaces
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable, Region
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT
from wddmsim.vidmm.vaspace.tree import PageTables
from wddmsim.vidmm.vaspace.update import TiledUpdates

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device, FenceArea, PagingQueue, Process


@final
class GpuVaSpaces:
    """Every process's GPU VA space (decision 0091): creates them, serves ``pfnReserveGpuVirtualAddressCb``,
    ``pfnMapGpuVirtualAddressCb``, ``pfnFreeGpuVirtualAddressCb`` and ``pfnUpdateGpuVirtualAddressCb``, and keeps
    every mapping's PTEs pointing at its allocation's current place."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        paging: PagingStream,
        mmu: GpuMmuDescription,
        segments: Segments,
        process: SystemPagingProcess,
        objects: ObjectTable,
        fences: FenceArea,
        residency: VaResidency,
        *,
        create_companion: Callable[[HANDLE, Device], tuple[HANDLE, int]],
        new_pool: Callable[[int], PagingBufferPool] | None = None,
        use_64k_ptes: bool = True,
    ) -> None:
        self.driver = driver
        self.paging = paging
        self.mmu = mmu
        self.segments = segments
        self.objects = objects
        """Queues, allocations, contexts and sync objects, by handle."""
        self.fences = fences
        """The monitored-fence pages (mapped into every privileged VA space)."""
        self.residency = residency
        """Room in full segments, paging fences, tile pools held resident, quiescent devices."""
        self.va_size = 1 << mmu.caps.VirtualAddressBitCount
        # Built in dependency order.  The tree comes first and is given this manager as its TreeHooks: the parts
        # those calls reach (entries, privileged spaces, tiled updates) are built on the tree, and the tree makes
        # no call before it is used.
        self.tables = PageTables(driver, mm, paging, mmu, segments, process, objects, residency, self)
        self.entries = Entries(self.tables, use_64k_ptes=use_64k_ptes)
        self.chooser = VaChooser(self.va_size)
        self.mappings = Mappings(self.tables, self.entries, self.chooser)
        self.privileged_spaces = PrivilegedSpaces(self.tables, self.entries, self.mappings, fences, self.va_size)
        self.updates = TiledUpdates(self)
        self.create_companion = create_companion
        """``DxgkDdiCreateContext`` of a paging companion (``SystemContext``) for a context; returns it and its
        node."""
        self.new_pool = new_pool
        """A pool of ``count`` paging buffers where ``PagingBufferSegmentId`` says (a paging companion's); None:
        contiguous system memory."""
        self.spaces: dict[int, GpuVaSpace] = {}

    @property
    def root_moves(self) -> int:
        """How many times a resizable root was replaced (grown or shrunk)."""
        return self.tables.root_moves

    # --- spaces ------------------------------------------------------------------------------------------------

    def create_space(self, process: Process) -> GpuVaSpace:
        """The process's VA space (created on first use); its root is placed at once."""
        found = self.spaces.get(process.handle)
        if found is not None:
            return found
        space = GpuVaSpace(process, RangeAllocator(self.va_size))
        space.ranges.reserve(0, VA_ALIGNMENT)  # VA 0 is never handed out: a NULL GPU VA always faults
        self.spaces[process.handle] = space
        self.tables.create_root(space)
        self.paging.wait(self.paging.flush())
        return space

    def destroy_space(self, process: Process) -> int:
        """The process is gone, its contexts and allocations first: its VA spaces go.  What is left of them
        (reservations, the privileged space's fixed mappings) is dropped, and every page table freed -- the
        application space's first, as the privileged space maps them.  Returns the table bytes freed."""
        space = self.spaces.pop(process.handle, None)
        if space is None:
            return 0
        spaces = [space] if space.privileged is None else [space, space.privileged]
        for s in spaces:
            for region in s.regions.values():
                for mapping in region.mappings:
                    self.mappings.detach(mapping)
            s.regions.clear()
            s.pools.clear()
        return sum(self.tables.destroy_tree(s) for s in spaces)

    def root_address(self, space: GpuVaSpace) -> D3DGPU_PHYSICAL_ADDRESS:
        return self.tables.root_address(space)

    def set_root(self, space: GpuVaSpace, context: HANDLE) -> None:
        """``DxgkDdiSetRootPageTable`` for a context of the process (the context is idle)."""
        self.tables.ensure(space)
        self.tables.set_root(space, context)

    # --- the tree's calls (TreeHooks), to the parts built on it ---------------------------------------------

    def render(self, space: GpuVaSpace, lo: int, hi: int) -> None:
        """Write every entry of ``[lo, hi)`` from the records."""
        self.entries.render(space, lo, hi)

    def wait_companions(self, process: Process) -> None:
        """The process's paging companions finish what they were given."""
        self.updates.wait_companions(process)

    def table_created(self, table: ProcessTable) -> None:
        """A table was created: mapped into the privileged space that maps it (:mod:`.privileged`)."""
        self.privileged_spaces.table_created(table)

    def table_freed(self, table: ProcessTable) -> None:
        """A table is about to be freed: its privileged mapping goes first."""
        self.privileged_spaces.table_freed(table)

    # --- before a process's work runs -------------------------------------------------------------------------

    def bring_back(self, process: Process) -> None:
        """Before any context of the process runs: its page tables are in place (an evicted tree comes back,
        its contexts re-pointed at the new root)."""
        space = self.spaces.get(process.handle)
        if space is not None:
            self.tables.ensure(space)

    def resume(self, process: Process) -> None:
        """Before any context of the process runs: page-table work built while its contexts were suspended
        (``PageTableUpdateRequireAddressSpaceIdle``, a single-PTE conversion) has run."""
        space = self.spaces.get(process.handle)
        if space is not None:
            self.tables.resume(space)

    def evict_idle_tables(
        self,
        segment: SegmentSpace,
        size: int,
        owner: object,
        alignment: int,
        from_end: bool,
        others: Callable[[], Sequence[int]],
    ) -> tuple[int | None, bool]:
        """Memory pressure in ``segment`` that allocations alone cannot relieve: the page-table trees of other,
        idle processes leave it, least recently used first (decision 0021) -- but only when that serves the
        request (decision 0218).  ``others``: the offsets of the allocations that may still leave for it (asked only
        when needed).

        - The trees' leaving makes the room: they leave one by one until the request fits; returns where.
        - Only with the allocations of ``others`` does it: every idle tree leaves, and the caller evicts.
        - The allocations make the room without them, or nothing would: no tree leaves.

        Returns the offset taken (or None) and whether trees left.  The tree being changed and the process
        ``owner`` belongs to are spared."""
        spared = None
        if isinstance(owner, VidMmAllocation):
            spared = owner.device.process
        elif isinstance(owner, ProcessTable) and owner.space is not None:
            spared = owner.space.process
        trees = sorted(
            (
                s
                for s in self.spaces.values()
                if not s.evicted and not s.busy and s.process is not spared and _tables_in(s, segment.id)
            ),
            key=lambda s: s.last_use,
        )
        if not trees:
            return None, False
        leaving = self._leaving_with(trees)
        here = [t.offset for t in leaving if t.segment_id == segment.id]
        elsewhere = self._uncommitted(segment, leaving)
        room = segment.ranges.free_bytes + sum(t.size for t in leaving if t.segment_id == segment.id)
        if room >= size and segment.fits_after_freeing(size, here, alignment=alignment, uncommitted=elsewhere):
            for space in trees:
                self.tables.evict_tree(space)
                offset = segment.allocate(size, owner, alignment=alignment, from_end=from_end)
                if offset is not None:
                    return offset, True
            return None, True  # unreachable while the check is exact; the caller goes on evicting
        victims = others()
        if segment.fits_after_freeing(size, victims, alignment=alignment) or not segment.fits_after_freeing(
            size, [*here, *victims], alignment=alignment, uncommitted=elsewhere
        ):
            return None, False  # the allocations make the room without the trees, or nothing would: none leaves
        for space in trees:
            self.tables.evict_tree(space)
        return None, True

    def _leaving_with(self, trees: list[GpuVaSpace]) -> list[ProcessTable]:
        """Every table that would leave with ``trees``, in any segment (a tree's privileged space leaves with it,
        :meth:`PageTables.evict_tree`)."""
        spaces = {id(s): s for s in trees}
        for s in trees:
            if s.privileged is not None and not s.privileged.evicted:
                spaces[id(s.privileged)] = s.privileged
        return [t for s in spaces.values() for tables in (s.leaves64.values(), s.tables.values()) for t in tables]

    def _uncommitted(self, segment: SegmentSpace, tables: list[ProcessTable]) -> int:
        """The bytes ``tables`` outside ``segment`` give back to its commit limit (one limit shared by every
        aperture segment, ``ApertureCommit``)."""
        if segment.commit is None:
            return 0
        return sum(
            t.size
            for t in tables
            if t.segment_id != segment.id and self.segments.get(t.segment_id).commit is segment.commit
        )

    def on_adapter_reset(self, reason: str) -> None:
        """After ``DxgkDdiRestartFromTimeout`` (decision 0055): the memory segments' bytes are gone, page tables
        with them.  Every tree leaves as under pressure -- VidMm keeps its records -- and comes back, rebuilt, before
        its process next runs or changes its VAs (a process that survives the reset opens new devices)."""
        for space in list(self.spaces.values()):
            if space.evicted or space.busy:
                continue  # a busy tree is being changed by the call the reset interrupted; it rebuilds after
            try:
                self.tables.evict_tree(space)
            except DeviceRemoved:  # recovery failed (decision 0239): the adapter is removed, no tree comes back
                return

    def power_down(self, purged: Callable[[int, int, int], bool]) -> int:
        """Before the adapter powers down: the tree of every process with a table in a range the transition
        purges leaves, as under pressure (its privileged space's with it); each comes back before the process
        next runs or changes its VAs.  Returns how many trees left."""
        count = 0
        for space in list(self.spaces.values()):
            if space.evicted:
                continue
            tables = self.tables.all_tables(space)
            if space.privileged is not None and not space.privileged.evicted:
                tables += self.tables.all_tables(space.privileged)
            if any(purged(t.segment_id, t.offset, t.size) for t in tables):
                self.tables.evict_tree(space)
                count += 1
        return count

    # --- the user-mode calls: Reserve, Map, Free ---------------------------------------------------------------

    def reserve(self, args: D3DDDI_RESERVEGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnReserveGpuVirtualAddressCb``: a range of VA, no memory; ``ZERO`` reservations read zero."""
        queue, space = self._queue_space(args.hPagingQueue)
        check_reserve_arguments(args)
        base = self.chooser.place(
            space, args.BaseAddress, args.MinimumAddress, args.MaximumAddress, args.Size, VA_ALIGNMENT
        )
        zero = args.ReservationType == Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_ZERO
        self.tables.ensure(space)
        self.privileged_spaces.privileged(space)  # the first Reserve of a process creates its privileged VA space
        region = Region(base, args.Size, from_map=False, zero=zero, driver_protection=args.DriverProtection)
        space.regions[base] = region
        args.VirtualAddress = base
        moved = zero
        if zero:
            self.entries.write_state(space, base, args.Size // PAGE_SIZE, zero=True, protection=args.DriverProtection)
            self.tables.flush_range(space, base, args.Size)
        return self._complete(queue, moved, args)

    def map_gpu_va(self, args: D3DDDI_MAPGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnMapGpuVirtualAddressCb``: map pages of an allocation (or the Zero / Invalid state) at a VA.

        The steps, in the order their refusals take precedence: the arguments alone, the allocation, the range
        (named by ``BaseAddress`` or placed), then the mapping is installed and the paging fence returned."""
        queue, space = self._queue_space(args.hPagingQueue)
        check_map_arguments(args)
        allocation = self._mapped_allocation(args, queue)
        region = self.chooser.map_region(space, args, allocation)
        va = GpuVa(args.BaseAddress or region.base)
        self.mappings.install(self.mappings.new_mapping(space, region, va, args, allocation))
        args.VirtualAddress = va
        return self._complete(queue, True, args)

    def _mapped_allocation(self, args: D3DDDI_MAPGPUVIRTUALADDRESS, queue: PagingQueue) -> VidMmAllocation | None:
        """The allocation whose pages are mapped (None for the Zero / NoAccess states, which take no handle), its
        page range and driver protection checked."""
        p = args.Protection
        if p.Zero or p.NoAccess:
            if args.hAllocation:
                raise bad("hAllocation", args.hAllocation, "must be NULL with Protection.Zero or Protection.NoAccess")
            return None
        allocation = self._allocation(args.hAllocation, queue)
        total = allocation.size // PAGE_SIZE
        if args.OffsetInPages + args.SizeInPages > total:
            raise bad(
                "OffsetInPages",
                args.OffsetInPages,
                f"{args.SizeInPages} page(s) from it leave the {total}-page allocation",
            )
        self.mappings.check_unique_protection(allocation, args.OffsetInPages, args.SizeInPages, args.DriverProtection)
        return allocation

    def free_gpu_va(self, process: Process, args: D3DDDICB_FREEGPUVIRTUALADDRESS) -> None:
        """``pfnFreeGpuVirtualAddressCb``: release a range obtained from Reserve or Map, synchronously; its
        entries are invalid and flushed before the range can be handed out again."""
        space = self.spaces.get(process.handle)
        check_free_arguments(args)
        region = None if space is None else space.regions.get(args.BaseAddress)
        if space is None or region is None or region.size != args.Size:
            raise bad(
                "BaseAddress",
                args.BaseAddress,
                f"[{args.BaseAddress:#x}, +{args.Size:#x}) is not a range obtained from Reserve or Map",
            )
        self.tables.ensure(space)
        self.mappings.release(space, region)
        self.paging.wait(self.paging.flush())

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> None:
        """``pfnUpdateGpuVirtualAddressCb`` (:mod:`.update`)."""
        self.updates.update_gpu_va(args)

    # --- a move observer of the residency core (MoveObserver, decision 0060) -----------------------------------

    def may_enter(self, allocation: VidMmAllocation, space: SegmentSpace) -> bool:
        """Mappings follow an allocation anywhere."""
        return True

    def before_leave(self, allocation: VidMmAllocation, cause: MoveCause) -> LeaveHow:
        """The allocation is about to leave its range (for any cause, a reset's loss too): no mapping may reach
        that range any more."""
        for mapping in self.mappings.by_allocation.get(allocation.handle, []):
            self.entries.write_mapping(mapping, resident=False)
            self.tables.flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)
        return STAY

    def after_leave(self, allocation: VidMmAllocation) -> None:
        """Nothing more: the entries were invalidated before the move."""

    def may_forget(self, allocation: VidMmAllocation) -> None:
        """An allocation's VAs never keep it from being destroyed (they go with it)."""

    def forget(self, allocation: VidMmAllocation) -> None:
        """The allocation is destroyed: every VA mapped to it is freed (its whole region, as Windows does)."""
        self.mappings.forget(allocation)

    def after_enter(self, allocation: VidMmAllocation) -> None:
        """The allocation arrived in a new place: every mapping points there."""
        for mapping in self.mappings.by_allocation.get(allocation.handle, []):
            self.entries.write_mapping(mapping, resident=True)
            if self.tables.flush_new:
                self.tables.flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)

    # --- internals -----------------------------------------------------------------------------------------

    def _queue_space(self, handle: HANDLE) -> tuple[PagingQueue, GpuVaSpace]:
        queue = self.objects.queue(handle)
        space = self.create_space(queue.device.process)
        return queue, space

    def _allocation(self, handle: HANDLE, queue: PagingQueue) -> VidMmAllocation:
        a = self.objects.allocations.get(handle)
        if a is None or a.context:
            raise bad("hAllocation", handle, "is not an allocation of the process")
        if a.device.process is not queue.device.process:
            raise bad("hAllocation", handle, "belongs to another process")
        return a

    def _complete(
        self, queue: PagingQueue, moved: bool, args: D3DDDI_RESERVEGPUVIRTUALADDRESS | D3DDDI_MAPGPUVIRTUALADDRESS
    ) -> HRESULT:
        """Give the operations just built the queue's next paging fence (``E_PENDING``), or 0 (``S_OK``)."""
        if not moved:
            args.PagingFenceValue = NO_FENCE
            return HRESULT.S_OK
        args.PagingFenceValue = self.residency.signal(queue)
        return HRESULT.E_PENDING


def _tables_in(space: GpuVaSpace, segment_id: int) -> list[ProcessTable]:
    """The tables of ``space``'s tree that lie in segment ``segment_id``, in no particular order."""
    return [
        t for tables in (space.leaves64.values(), space.tables.values()) for t in tables if t.segment_id == segment_id
    ]
