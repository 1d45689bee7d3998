"""``VaManager``: the GPU VA services of every process, and mappings that follow their allocations.

What it models (wddm-spec.md sections 2.5-2.8 and 3.1-3.6; decisions D5 and 0016):

- Reserve, Map and Free with every documented rule; ``UpdateGpuVirtualAddress`` (:mod:`.update`).
- A mapping points its leaf entries at wherever its allocation is (:mod:`.entries`).  On every move the
  residency manager calls :meth:`VaManager.before_leave` (entries invalidated and flushed from the TLB *before*
  the range can be reused by the next operation in the stream) and :meth:`VaManager.after_enter` (entries
  re-pointed, and flushed unless the driver reports ``InvalidTlbEntriesNotCached``).
- The page-table trees themselves are :mod:`.tree` (built on :mod:`.tables`, :mod:`.placement`, :mod:`.links`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.status import HRESULT, NTSTATUS, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DGPU_UNIQUE_DRIVER_PROTECTION,
)
from wddmsim.ddi.va import D3DDDIGPUVIRTUALADDRESS_RESERVATION_TYPE as Reservation
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.errors import DeviceRemoved, VidMmError
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.moves.causes import STAY, LeaveHow, MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.buffers import PagingBufferPool
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.ports import VaResidency
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments, SegmentSpace
from wddmsim.vidmm.vaspace.checks import bad, check_free_arguments, check_map_arguments, check_reserve_arguments
from wddmsim.vidmm.vaspace.entries import Entries
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, ProcessTable, Region, VaMapping
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT
from wddmsim.vidmm.vaspace.tree import PageTables
from wddmsim.vidmm.vaspace.update import TiledUpdates

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device, FenceArea, PagingQueue, Process

POOL_AREA: Final = 1
TABLE_AREA: Final = 2
"""Quarters of a privileged VA space: tile pools in the second, page tables and fences in the third."""


def _area(va_size: int, quarter: int) -> tuple[int, int]:
    return quarter * va_size // 4, (quarter + 1) * va_size // 4


@final
class VaManager:
    """Creates VA spaces and keeps every mapping's PTEs pointing at its allocation's current place."""

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
        # The tree is built first and given this manager as its TreeHooks: the parts those calls reach (the
        # entries, the tiled updates) are built on the tree, and the tree makes no call before it is used.
        self.tables = PageTables(driver, mm, paging, mmu, segments, process, objects, residency, self)
        self.entries = Entries(self.tables, use_64k_ptes=use_64k_ptes)
        self.updates = TiledUpdates(self)
        self.create_companion = create_companion
        """``DxgkDdiCreateContext`` of a paging companion (``SystemContext``) for a context; returns it and its
        node."""
        self.new_pool = new_pool
        """A pool of ``count`` paging buffers where ``PagingBufferSegmentId`` says (a paging companion's); None:
        contiguous system memory."""
        self.spaces: dict[int, GpuVaSpace] = {}
        self.by_allocation: dict[int, list[VaMapping]] = {}
        self.va_size = 1 << mmu.caps.VirtualAddressBitCount

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
                    self._detach(mapping)
            s.regions.clear()
            s.pools.clear()
        return sum(self.tables.destroy_tree(s) for s in spaces)

    def root_address(self, space: GpuVaSpace) -> D3DGPU_PHYSICAL_ADDRESS:
        return self.tables.root_address(space)

    def set_root(self, space: GpuVaSpace, context: HANDLE) -> None:
        """``DxgkDdiSetRootPageTable`` for a context of the process (the context is idle)."""
        self.tables.ensure(space)
        self.tables.set_root(space, context)

    # --- the privileged VA space (tiled resources) ---------------------------------------------------------

    def privileged(self, space: GpuVaSpace) -> GpuVaSpace:
        """The process's privileged VA space (DOC:per-process-gpu-virtual-address-spaces.md; wddm-spec 2.6),
        created with the first ``ReserveGpuVirtualAddress``: every page table of the application space, every
        tile pool and the monitored-fence pages are mapped there for good; only the paging companions' buffers
        (kernel-generated) run in it (decision 0024)."""
        if space.privileged is not None:
            return space.privileged
        priv = GpuVaSpace(space.process, RangeAllocator(self.va_size), owner=space)
        priv.ranges.reserve(0, VA_ALIGNMENT)
        space.privileged = priv
        with self.tables.hold(priv):
            self.tables.create_root(priv)
            fences = self.fences
            priv.fence_base = self._map_pages(priv, TABLE_AREA, 0, fences.pfns).base
            for table in self.tables.all_tables(space):
                self.table_created(table)
        return priv

    def map_pool(self, space: GpuVaSpace, pool: VidMmAllocation) -> GpuVa:
        """The tile pool's VA in the privileged space (mapped on first use, for as long as it lives: it follows
        the pool's moves like any mapping; 4 KB entries, the copy source of ``CopyPageTableEntries``)."""
        priv = self.privileged(space)
        found = priv.pools.get(pool.handle)
        if found is not None:
            return found
        region = self._fixed_region(priv, POOL_AREA, pool.size, "tile pools")
        priv.pools[pool.handle] = region.base
        self.install(
            VaMapping(priv, region, region.base, pool.size // PAGE_SIZE, Kind.ALLOCATION, pool, 0, True, False)
        )
        return region.base

    def _fixed_region(self, priv: GpuVaSpace, area: int, size: int, what: str) -> Region:
        """A new region of ``size`` bytes in ``area`` of a privileged space, 64 KB aligned."""
        lo, hi = _area(self.va_size, area)
        base = priv.ranges.allocate_in(size, alignment=VA_ALIGNMENT, lo=lo, hi=hi)
        if base is None:
            raise VidMmError(f"the privileged VA space has no room left for {what}")
        region = Region(GpuVa(base), size, from_map=True)
        priv.regions[base] = region
        return region

    def _map_pages(self, priv: GpuVaSpace, area: int, segment_id: int, numbers: npt.NDArray[np.uint64]) -> Region:
        """Fixed pages VidMm maps into a privileged space (read-write), in ``area``, 64 KB aligned."""
        pages = int(numbers.shape[0])
        region = self._fixed_region(priv, area, pages * PAGE_SIZE, "page tables")
        mapping = VaMapping(
            priv, region, region.base, pages, Kind.PAGES, write=True, segment_id=segment_id, page_numbers=numbers
        )
        region.mappings.append(mapping)
        self.entries.write_mapping(mapping, resident=None)
        if self.tables.flush_new:
            self.tables.flush_range(priv, region.base, region.size)
        return region

    # --- the tree's calls (TreeHooks) ------------------------------------------------------------------------

    def render(self, space: GpuVaSpace, lo: int, hi: int) -> None:
        """Write every entry of ``[lo, hi)`` from the records."""
        self.entries.render(space, lo, hi)

    def wait_companions(self, process: Process) -> None:
        """The process's paging companions finish what they were given."""
        self.updates.wait_companions(process)

    def table_created(self, table: ProcessTable) -> None:
        """Every table of an application space with a privileged space is mapped there; so is every leaf table
        of the privileged space that holds tile-pool entries (the companion copies them)."""
        space = table.space
        if space is None:
            return
        if space.owner is None:
            target = space.privileged
        else:
            lo, hi = _area(self.va_size, POOL_AREA)
            first, end = self.tables.coverage(table.level, table.key)
            target = space if table.level == 0 and not table.big and first < hi and lo < end else None
        if target is None or table.privileged is not None:
            return
        numbers = np.arange(table.size // PAGE_SIZE, dtype=np.uint64) + (table.offset >> PAGE_SHIFT)
        table.privileged = self._map_pages(target, TABLE_AREA, table.segment_id, numbers)

    def table_freed(self, table: ProcessTable) -> None:
        """Before a table's range is freed: its privileged mapping goes (invalidated and flushed first)."""
        region, table.privileged = table.privileged, None
        space = table.space
        if region is None or space is None:
            return
        target = space.privileged if space.owner is None else space
        if target is not None and region.base in target.regions:
            self._release(target, region)

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
        self, segment: SegmentSpace, size: int, owner: object, alignment: int, from_end: bool
    ) -> int | None:
        """Memory pressure in ``segment`` that allocations alone cannot relieve: the page-table trees of other,
        idle processes leave it, least recently used first, until ``size`` bytes fit (decision 0021).  The
        tree being changed and the process ``owner`` belongs to are spared."""
        spared = None
        if isinstance(owner, VidMmAllocation):
            spared = owner.device.process
        elif isinstance(owner, ProcessTable) and owner.space is not None:
            spared = owner.space.process
        trees = [
            s
            for s in self.spaces.values()
            if not s.evicted
            and not s.busy
            and s.process is not spared
            and any(t.segment_id == segment.id for t in self.tables.all_tables(s))
        ]
        for space in sorted(trees, key=lambda s: s.last_use):
            self.tables.evict_tree(space)
            offset = segment.allocate(size, owner, alignment=alignment, from_end=from_end)
            if offset is not None:
                return offset
        return None

    def on_adapter_reset(self, reason: str) -> None:
        """After ``DxgkDdiRestartFromTimeout`` (decision 0055): the memory segments' bytes are gone, page tables
        with them.  Every tree leaves as under pressure -- VidMm keeps its records -- and comes back, rebuilt, before
        its process next runs or changes its VAs (a process that survives the reset opens new devices)."""
        for space in list(self.spaces.values()):
            if space.evicted or space.busy:
                continue  # a busy tree is being changed by the call the reset interrupted; it rebuilds after
            with contextlib.suppress(DeviceRemoved):  # the engine failed again: that reset does the rest
                self.tables.evict_tree(space)

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
        base = self._place_range(
            space, args.BaseAddress, args.MinimumAddress, args.MaximumAddress, args.Size, VA_ALIGNMENT
        )
        zero = args.ReservationType == Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_ZERO
        self.tables.ensure(space)
        self.privileged(space)  # the first Reserve of a process creates its privileged VA space
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
        region = self._map_region(space, args, allocation)
        va = GpuVa(args.BaseAddress or region.base)
        self.install(self._new_mapping(space, region, va, args, allocation))
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
        self._check_unique_protection(allocation, args.OffsetInPages, args.SizeInPages, args.DriverProtection)
        return allocation

    def _map_region(
        self, space: GpuVaSpace, args: D3DDDI_MAPGPUVIRTUALADDRESS, allocation: VidMmAllocation | None
    ) -> Region:
        """The region the mapping lands in: the reserved or mapped one ``BaseAddress`` falls in, else a new one
        (at ``BaseAddress`` when that range is free, or placed between Minimum and MaximumAddress)."""
        size = args.SizeInPages * PAGE_SIZE
        region = self._named_region(space, args, size) if args.BaseAddress else None
        if region is not None:
            return region
        base = self._place_range(
            space,
            args.BaseAddress,
            args.MinimumAddress,
            args.MaximumAddress,
            size,
            PAGE_SIZE,
            phase=None if allocation is None else (args.OffsetInPages * PAGE_SIZE) % VA_ALIGNMENT,
        )
        region = Region(base, size, from_map=True)
        space.regions[base] = region
        return region

    def _named_region(self, space: GpuVaSpace, args: D3DDDI_MAPGPUVIRTUALADDRESS, size: int) -> Region | None:
        """``BaseAddress`` given: the one reserved or mapped region the range lies in, or None if the range is
        free; refused when it leaves the VA space or straddles regions."""
        base = args.BaseAddress
        if base + size > self.va_size:
            raise bad("BaseAddress", base, f"{size:#x} bytes from it leave the {self.va_size:#x}-byte VA space")
        region = space.region_at(base, size)
        if region is None and not self._free(space, base, size):
            raise bad(
                "BaseAddress",
                base,
                f"[{base:#x}, {base + size:#x}) is neither free nor inside one reserved or mapped range",
            )
        p = args.Protection
        if region is not None and region.from_map and (p.Zero or p.NoAccess):
            raise bad("Protection", p.Value, "Zero and NoAccess may not be placed on a range obtained by Map")
        return region

    @staticmethod
    def _new_mapping(
        space: GpuVaSpace,
        region: Region,
        va: GpuVa,
        args: D3DDDI_MAPGPUVIRTUALADDRESS,
        allocation: VidMmAllocation | None,
    ) -> VaMapping:
        """What VidMm records of the mapping ``args`` asks for at ``va``."""
        p = args.Protection
        kind = Kind.ZERO if p.Zero else (Kind.NO_ACCESS if p.NoAccess else Kind.ALLOCATION)
        return VaMapping(
            space,
            region,
            va,
            args.SizeInPages,
            kind,
            allocation,
            args.OffsetInPages,
            bool(p.Write),
            bool(p.Execute),
            args.DriverProtection,
        )

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
        self._release(space, region)
        self.paging.wait(self.paging.flush())

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> None:
        """``pfnUpdateGpuVirtualAddressCb`` (:mod:`.update`)."""
        self.updates.update_gpu_va(args)

    # --- internal mapping API (VidMm's own users, tests) ----------------------------------------------------

    def map(
        self,
        space: GpuVaSpace,
        allocation: VidMmAllocation,
        *,
        offset_pages: int = 0,
        pages: int | None = None,
        write: bool = True,
        execute: bool = False,
        base: int | None = None,
    ) -> VaMapping:
        """Map ``pages`` pages of ``allocation`` (default: all from ``offset_pages``) in a region of its own."""
        total = allocation.size // PAGE_SIZE
        count = total - offset_pages if pages is None else pages
        if not 0 <= offset_pages < total or not 0 < count <= total - offset_pages:
            raise bad("OffsetInPages", offset_pages, f"{count} page(s) from it leave the {total}-page allocation")
        size = count * PAGE_SIZE
        if base is not None and not self._free(space, base, size):
            raise bad("BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free")
        self.tables.ensure(space)
        va = self._place_range(
            space,
            base or 0,
            0,
            0,
            size,
            PAGE_SIZE if base else VA_ALIGNMENT,
            phase=(offset_pages * PAGE_SIZE) % VA_ALIGNMENT,
        )
        region = Region(va, size, from_map=True)
        space.regions[va] = region
        mapping = VaMapping(space, region, va, count, Kind.ALLOCATION, allocation, offset_pages, write, execute)
        self.install(mapping)
        return mapping

    def unmap(self, space: GpuVaSpace, va: int) -> None:
        """Free the region that starts at ``va``."""
        region = space.regions.get(va)
        if region is None:
            raise bad("BaseAddress", va, "is not a mapped range of the process")
        self.tables.ensure(space)
        self._release(space, region)

    def forget(self, allocation: VidMmAllocation) -> None:
        """The allocation is destroyed: every VA mapped to it is freed (its whole region, as Windows does)."""
        for mapping in list(self.by_allocation.get(allocation.handle, [])):
            mapping.space.pools.pop(allocation.handle, None)
            if mapping.region.base in mapping.space.regions:
                self._release(mapping.space, mapping.region)
        self.by_allocation.pop(allocation.handle, None)

    def unique_protections(self, allocation: VidMmAllocation) -> list[tuple[int, int, int]]:
        """``(first page, pages, DriverProtection)`` runs covering the allocation for its paging-process mappings:
        pages a GPU VA maps with a unique driver protection (``D3DGPU_UNIQUE_DRIVER_PROTECTION``) carry it, every
        other page 0 (DOC:driver-protection.md; decision 0025)."""
        total = allocation.size // PAGE_SIZE
        values = np.zeros(total, dtype=np.uint64)
        for m in self.by_allocation.get(allocation.handle, []):
            if m.space.owner is None and m.driver_protection & D3DGPU_UNIQUE_DRIVER_PROTECTION:
                values[m.offset_pages : m.offset_pages + m.pages] = m.driver_protection
        edges = (np.flatnonzero(np.diff(values)) + 1).tolist()
        starts, ends = [0, *edges], [*edges, total]
        return [(s, e - s, int(values[s])) for s, e in zip(starts, ends, strict=True)]

    # --- following the allocation --------------------------------------------------------------------------

    # --- a move observer of the residency core (MoveObserver, decision 0060) -----------------------------------

    def may_enter(self, allocation: VidMmAllocation, space: SegmentSpace) -> bool:
        """Mappings follow an allocation anywhere."""
        return True

    def before_leave(self, allocation: VidMmAllocation, cause: MoveCause) -> LeaveHow:
        """The allocation is about to leave its range (for any cause, a reset's loss too): no mapping may reach
        that range any more."""
        for mapping in self.by_allocation.get(allocation.handle, []):
            self.entries.write_mapping(mapping, resident=False)
            self.tables.flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)
        return STAY

    def after_leave(self, allocation: VidMmAllocation) -> None:
        """Nothing more: the entries were invalidated before the move."""

    def may_forget(self, allocation: VidMmAllocation) -> None:
        """An allocation's VAs never keep it from being destroyed (they go with it)."""

    def after_enter(self, allocation: VidMmAllocation) -> None:
        """The allocation arrived in a new place: every mapping points there."""
        for mapping in self.by_allocation.get(allocation.handle, []):
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

    def _check_unique_protection(self, a: VidMmAllocation, offset: int, pages: int, protection: int) -> None:
        """``D3DGPU_UNIQUE_DRIVER_PROTECTION``: every mapping of the same pages uses the same value."""
        for other in self.by_allocation.get(a.handle, []):
            if other.space.owner is not None:  # VidMm's own mapping of a tile pool (driver protection 0)
                continue
            overlap = other.offset_pages < offset + pages and offset < other.offset_pages + other.pages
            unique = (protection | other.driver_protection) & D3DGPU_UNIQUE_DRIVER_PROTECTION
            if overlap and unique and other.driver_protection != protection:
                raise InvalidArgument(
                    "DriverProtection",
                    protection,
                    f"pages of the allocation are mapped with unique driver protection {other.driver_protection:#x}",
                    NTSTATUS.STATUS_INVALID_PARAMETER,
                )

    def _free(self, space: GpuVaSpace, va: int, size: int) -> bool:
        return (
            va + size <= self.va_size
            and all(r.end <= va or va + size <= r.base for r in space.regions.values())
            and not (va < VA_ALIGNMENT)
        )

    def _place_range(
        self, space: GpuVaSpace, base: int, lo: int, hi: int, size: int, alignment: int, *, phase: int | None = None
    ) -> GpuVa:
        """The start of a new region: ``base`` if given (and free), else a free range in ``[lo, hi)``.

        ``phase`` (bytes, below 64 KB; for a mapping of an allocation): a VidMm-chosen start is wanted at ``phase``
        past a 64 KB boundary, so that the mapped pages keep the low 16 bits of their place in the allocation
        (decision 0040); when no such range is free, any ``alignment``-aligned one does.
        """
        if not base and phase is not None:
            phased = self._place_phased(space, lo, hi or self.va_size, size, phase)
            if phased is not None:
                return phased
        if base:
            if base + size > self.va_size or not self._free(space, base, size):
                raise bad("BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free")
            space.ranges.reserve(base, size)
            return GpuVa(base)
        top = hi or self.va_size
        if lo >= top or size > top - lo:
            raise bad("MaximumAddress", hi, f"no {size:#x}-byte range fits in [{lo:#x}, {top:#x})")
        start = space.ranges.allocate_in(size, alignment=alignment, lo=lo, hi=top)
        if start is None:
            raise InvalidArgument(
                "Size",
                size,
                f"no free range of the VA space in [{lo:#x}, {top:#x}) is that large",
                HRESULT.E_OUTOFMEMORY,
            )
        return GpuVa(start)

    def _place_phased(self, space: GpuVaSpace, lo: int, top: int, size: int, phase: int) -> GpuVa | None:
        if lo >= top or size + phase > top - lo:
            return None
        start = space.ranges.allocate_in(size + phase, alignment=VA_ALIGNMENT, lo=lo, hi=top)
        if start is None:
            return None
        if phase:
            space.ranges.free(start)
            space.ranges.reserve(start + phase, size)
        return GpuVa(start + phase)

    def install(self, mapping: VaMapping, *, write_entries: bool = True, flush: bool = True) -> None:
        """Put ``mapping`` in its region (cutting what it covers out of earlier mappings) and write its entries
        (``write_entries`` False: they come from a copy the caller builds next, and no 64 KB entry or large page
        may cover them meanwhile)."""
        self.tables.ensure(mapping.space)
        region = mapping.region
        kept: list[VaMapping] = []
        replaced = region.zero  # Zero entries are valid: replacing them changes a translation
        pieces: list[VaMapping] = []
        for old in region.mappings:
            if old.end <= mapping.va or mapping.end <= old.va:
                kept.append(old)
                continue
            replaced = True
            self._detach(old)
            for lo, hi in ((old.va, mapping.va), (mapping.end, old.end)):
                if lo < hi:
                    piece = VaMapping(
                        old.space,
                        region,
                        GpuVa(lo),
                        (hi - lo) // PAGE_SIZE,
                        old.kind,
                        old.allocation,
                        old.offset_pages + (lo - old.va) // PAGE_SIZE,
                        old.write,
                        old.execute,
                        old.driver_protection,
                    )
                    kept.append(piece)
                    pieces.append(piece)
                    self._attach(piece)
        kept.append(mapping)
        region.mappings = kept
        self._attach(mapping)
        if write_entries:
            self.entries.write_mapping(mapping, resident=None)
        else:
            self.entries.clear_big(mapping.space, mapping.va, mapping.pages)
        for piece in pieces:  # a 64 KB entry the cut invalidated covered their pages too
            self.entries.write_mapping(piece, resident=None)
        if flush and (replaced or self.tables.flush_new or not write_entries):
            # decision D5: invalid -> valid alone needs no flush if the GPU does not cache invalid entries
            self.tables.flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)

    def _attach(self, mapping: VaMapping) -> None:
        if mapping.allocation is not None:
            self.by_allocation.setdefault(mapping.allocation.handle, []).append(mapping)

    def _detach(self, mapping: VaMapping) -> None:
        if mapping.allocation is not None:
            self.by_allocation[mapping.allocation.handle].remove(mapping)

    def _release(self, space: GpuVaSpace, region: Region) -> None:
        """The region goes: entries in leaf tables that stay (another region shares them) are invalidated; a
        table no region needs any more is freed after its parent entry is invalidated and flushed -- its own
        entries untouched unless the driver reports ``ExplicitPageTableInvalidation`` (wddm-spec 2.2, 2.6)."""
        for mapping in region.mappings:
            self._detach(mapping)
        region.mappings = []
        del space.regions[region.base]
        space.ranges.free(region.base)
        span = self.tables.span1
        at: int = region.base
        while at < region.end:
            end = min(region.end, (at // span + 1) * span)
            if self.tables.needed(space, at - at % span, at - at % span + span):
                self.entries.write_state(space, at, (end - at) // PAGE_SIZE, zero=False, protection=0)
            at = end
        self.tables.flush_range(space, region.base, region.size)
        self.tables.prune(space, region.base, region.end)

    def _complete(
        self, queue: PagingQueue, moved: bool, args: D3DDDI_RESERVEGPUVIRTUALADDRESS | D3DDDI_MAPGPUVIRTUALADDRESS
    ) -> HRESULT:
        """Give the operations just built the queue's next paging fence (``E_PENDING``), or 0 (``S_OK``)."""
        if not moved:
            args.PagingFenceValue = 0
            return HRESULT.S_OK
        args.PagingFenceValue = self.residency.signal(queue)
        return HRESULT.E_PENDING
