"""GPU virtual address spaces: one per process, with a page-table tree VidMm places and keeps.

What it models (wddm-spec.md sections 2.5-2.8; decision D5):

- Each table of a process's tree is a range of the segment the driver names for its level
  (``PageTableSegmentId``), placed like an allocation but never a victim (tables are pinned), created all
  invalid by ``UpdatePageTable`` with ``InitialUpdate``.  The root is programmed into the process's contexts
  with ``DxgkDdiSetRootPageTable``.
- Every table update is an ``UpdatePageTable`` in the driver's update mode: ``GPU_VIRTUAL`` names the table by
  its VA in the system paging process (each table is mapped into a window there when it is created),
  ``GPU_PHYSICAL`` by segment address, ``CPU_VIRTUAL`` by a CPU mapping through the BAR (after the paging
  engine went idle, since the CPU writes at once).
- A mapping points 4 KB PTEs at wherever its allocation is: pages of a memory segment, or -- when the allocation
  is in an aperture segment -- its backing pages (segment 0, decision D4); invalid while it is not resident.
  On every move the residency manager calls :meth:`VaManager.before_leave` (entries invalidated and flushed from
  the TLB *before* the range can be reused by the next operation in the stream) and :meth:`VaManager.after_enter`
  (entries re-pointed, and flushed unless the driver reports ``InvalidTlbEntriesNotCached``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, GiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.driver import (
    DXGKARG_GETROOTPAGETABLESIZE,
    DXGKARG_SETROOTPAGETABLE,
    KernelModeDriver,
    SystemMemoryServices,
)
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DGPU_UNIQUE_DRIVER_PROTECTION,
)
from wddmsim.ddi.va import D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE as UpdateType
from wddmsim.ddi.va import D3DDDIGPUVIRTUALADDRESS_RESERVATION_TYPE as Reservation
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_process import SystemPagingProcess
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments, SegmentSpace

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device, PagingQueue, Process
    from wddmsim.vidmm.residency import ResidencyManager

Mode = DXGK_PAGETABLEUPDATEMODE
VA_ALIGNMENT = 64 * 1024
_64K = 64 * 1024
"""Reservations and mappings without an explicit base are 64 KB aligned."""
WINDOW_SIZE = 1 * GiB
"""Paging-process VA below VidMm's region through which process tables are updated (``GPU_VIRTUAL``)."""


@dataclass(slots=True, eq=False)
class ProcessTable:
    """One table of a process's tree, placed in its level's segment."""

    level: int
    key: int
    segment_id: int
    offset: int
    size: int
    window: int = 0
    """Its VA in the paging process (``GPU_VIRTUAL`` updates), 0 otherwise."""
    cpu: CpuMapping | None = None
    """Its CPU mapping (``CPU_VIRTUAL`` updates)."""

    def __repr__(self) -> str:
        return f"process level-{self.level} table #{self.key:#x}"


class Kind(Enum):
    """What a mapped run of pages shows."""

    ALLOCATION = "allocation"
    ZERO = "zero"
    NO_ACCESS = "no-access"


@dataclass(slots=True, eq=False)
class VaMapping:
    """A run of ``pages`` pages at ``va``: an allocation's pages from ``offset_pages``, or the Zero or Invalid
    state.  Created by Map (or what is left of an earlier mapping a later Map covered in part)."""

    space: GpuVaSpace
    region: Region
    va: int
    pages: int
    kind: Kind = Kind.ALLOCATION
    allocation: VidMmAllocation | None = None
    offset_pages: int = 0
    write: bool = False
    execute: bool = False
    driver_protection: int = 0

    @property
    def end(self) -> int:
        return self.va + self.pages * PAGE_SIZE


@dataclass(frozen=True, slots=True)
class UpdateStep:
    """One checked operation of ``UpdateGpuVirtualAddress``, ready to apply."""

    address: int
    apply: Callable[[], None]
    source: int | None = None
    pool: VidMmAllocation | None = None
    """The allocation a MAP maps (a tile pool)."""

    def __call__(self) -> None:
        self.apply()


@dataclass(slots=True, eq=False)
class Region:
    """A range obtained from Reserve or Map: the unit Free releases.  Pages no mapping covers show the
    reservation's state (Invalid for ``NO_ACCESS``, zero for ``ZERO``)."""

    base: int
    size: int
    from_map: bool
    zero: bool = False
    driver_protection: int = 0
    mappings: list[VaMapping] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass(slots=True, eq=False)
class GpuVaSpace:
    """A process's GPU VA space: its regions, its tables."""

    process: Process
    ranges: RangeAllocator
    tables: dict[tuple[int, int], ProcessTable] = field(default_factory=dict)
    leaves64: dict[int, ProcessTable] = field(default_factory=dict)
    root_entries: int = 0
    """``NumEntries`` of the root (all of them, except for a 2-level root that grows with use)."""
    """64 KB-page leaf tables (dual PTEs), by the 2 MiB region they cover."""
    regions: dict[int, Region] = field(default_factory=dict)

    @property
    def mappings(self) -> dict[int, VaMapping]:
        return {m.va: m for r in self.regions.values() for m in r.mappings}

    def region_at(self, va: int, size: int) -> Region | None:
        """The region holding all of ``[va, va + size)``, if one does."""
        for region in self.regions.values():
            if region.base <= va and va + size <= region.end:
                return region
        return None


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
        *,
        use_64k_ptes: bool = True,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.paging = paging
        self.mmu = mmu
        self.segments = segments
        self.paging_process = process
        self.mode = mmu.caps.PageTableUpdateMode
        self.flush_new = not mmu.caps.Flags.InvalidTlbEntriesNotCached
        self.dual = bool(mmu.caps.Flags.DualPteSupported)
        self.use_64k = use_64k_ptes
        """Map whole, aligned, physically contiguous 64 KiB with one 64 KB PTE (dual-PTE GPUs)."""
        self.spaces: dict[int, GpuVaSpace] = {}
        self.by_allocation: dict[int, list[VaMapping]] = {}
        window_base = process.region_base - WINDOW_SIZE
        self.windows = RangeAllocator(WINDOW_SIZE)
        self.window_high = 0
        """Window VAs below this were handed out before (their paging-process entries were valid)."""
        self.window_base = window_base
        self.va_size = 1 << mmu.caps.VirtualAddressBitCount
        self.root_moves = 0
        """How many times a resizable root grew (and moved)."""
        self.residency: ResidencyManager | None = None
        """Set by the composition: paging queues, allocations and fences live there."""

    # --- spaces and tables -------------------------------------------------------------------------------------

    def create_space(self, process: Process) -> GpuVaSpace:
        """The process's VA space (created on first use); its root is placed at once."""
        found = self.spaces.get(process.handle)
        if found is not None:
            return found
        size = 1 << self.mmu.caps.VirtualAddressBitCount
        space = GpuVaSpace(process, RangeAllocator(size))
        space.ranges.reserve(0, VA_ALIGNMENT)  # VA 0 is never handed out: a NULL GPU VA always faults
        self.spaces[process.handle] = space
        top = self.mmu.level_count - 1
        if self.mmu.resizable_root:  # a 2-level root starts small and grows with the VAs used
            space.root_entries = self._root_size(1)[1]
        else:
            space.root_entries = self._entries(top)
        self._table(space, top, 0)
        self.paging.wait(self.paging.flush())
        return space

    def _root_size(self, entries: int) -> tuple[int, int]:
        """``DxgkDdiGetRootPageTableSize``: bytes for ``entries`` root entries, and how many that size holds."""
        args = DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=entries)
        size = self.driver.get_root_page_table_size(args)
        return size, args.NumberOfPte

    def _grow_root(self, space: GpuVaSpace, needed: int) -> None:
        """A resizable root too small for index ``needed - 1``: a new, larger root is placed and initialised,
        every existing entry re-written into it, every context of the process re-pointed
        (``DxgkDdiSetRootPageTable``, each context idle), then the old root is freed (wddm-spec section 2.6)."""
        top = self.mmu.level_count - 1
        _, entries = self._root_size(min(max(needed, 2 * space.root_entries), self._entries(top)))
        old = space.tables.pop((top, 0))
        space.root_entries = entries
        self._table(space, top, 0)
        for key in sorted({k for (level, k) in space.tables if level == 0} | set(space.leaves64)):
            self._point_down(space, key << self.mmu.shift(1))
        self.paging.wait(self.paging.flush())  # the new root is written before any context uses it
        assert self.residency is not None
        for context, device in self.residency.contexts.items():
            if device.process is space.process:
                if self.residency.before_move is not None:
                    self.residency.before_move(device)  # the context is idle during SetRootPageTable
                self.set_root(space, HANDLE(context))
        self.segments.get(old.segment_id).free(old.offset)
        if old.window:
            self.windows.free(old.window - self.window_base)
        self.root_moves += 1

    def root_address(self, space: GpuVaSpace) -> D3DGPU_PHYSICAL_ADDRESS:
        root = space.tables[(self.mmu.level_count - 1, 0)]
        return D3DGPU_PHYSICAL_ADDRESS(SegmentId=root.segment_id, SegmentOffset=root.offset)

    def set_root(self, space: GpuVaSpace, context: HANDLE) -> None:
        """``DxgkDdiSetRootPageTable`` for a context of the process (the context is idle)."""
        top = self.mmu.level_count - 1
        self.driver.set_root_page_table(
            DXGKARG_SETROOTPAGETABLE(
                hContext=context,
                Address=self.root_address(space),
                NumEntries=space.root_entries or 1 << self.mmu.levels[top].PageTableIndexBitCount,
            )
        )

    def _key(self, level: int, va: int) -> int:
        return 0 if level == self.mmu.level_count - 1 else va >> self.mmu.shift(level + 1)

    def _entries(self, level: int) -> int:
        return 1 << self.mmu.levels[level].PageTableIndexBitCount

    def _table(self, space: GpuVaSpace, level: int, key: int) -> ProcessTable:
        found = space.tables.get((level, key))
        if found is not None:
            return found
        desc = self.mmu.levels[level]
        segment = self.segments.get(desc.PageTableSegmentId, "PageTableSegmentId")
        size = -(-desc.PageTableSizeInBytes // PAGE_SIZE) * PAGE_SIZE
        top = level == self.mmu.level_count - 1
        if top and self.mmu.resizable_root:
            size = self._root_size(space.root_entries)[0]
        alignment = max(desc.PageTableAlignmentInBytes, PAGE_SIZE)
        table = ProcessTable(level, key, segment.id, 0, size)
        offset = self._place_table(segment, size, table, alignment if alignment & (alignment - 1) == 0 else 0)
        table.offset = offset
        self._reach(table)
        space.tables[(level, key)] = table
        count = space.root_entries if top else self._entries(level)
        self._update(
            table, 0, pte_array(count), big=pte_array(count) if self.dual and level == 1 else None, initial=True
        )
        return table

    def _place_table(self, segment: SegmentSpace, size: int, table: ProcessTable, alignment: int) -> int:
        """A range for a table, from the top of the segment (pinned tables do not cut the space allocations
        share into pieces); when the segment is full, allocations make room for it (tables come first)."""
        offset = segment.allocate(size, table, alignment=alignment, from_end=True)
        if offset is None and self.residency is not None:
            offset = self.residency.make_room(segment, size, table, alignment=alignment)
        if offset is None:
            raise DdiError(
                NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                f"segment {segment.id} cannot hold a {size:#x}-byte level-{table.level} page table",
            )
        return offset

    def _reach(self, table: ProcessTable) -> None:
        """Make the table addressable the way the driver's update mode names tables."""
        segment = self.segments.get(table.segment_id)
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
            self._window(table)
        elif self.mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            table.cpu = self.mm.map_io_space(int(segment.descriptor.CpuTranslatedAddress) + table.offset, table.size)

    def _window(self, table: ProcessTable) -> None:
        """Map the table into the paging process (64 KB aligned: ``CopyPageTableEntries`` names tables so)."""
        start = self.windows.allocate(max(table.size, VA_ALIGNMENT), alignment=VA_ALIGNMENT)
        if start is None:
            raise VidMmError("the paging process's window onto process page tables is full")
        table.window = self.window_base + start
        reused = start < self.window_high  # its entries were valid before: D5 wants a flush whatever the caps say
        self.window_high = max(self.window_high, start + max(table.size, VA_ALIGNMENT))
        pages = np.arange(table.size // PAGE_SIZE, dtype=np.uint64) + (table.offset >> PAGE_SHIFT)
        self.paging_process.map(table.window, segment_id=table.segment_id, page_numbers=pages)
        if reused or self.flush_new:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                    RootPageTableAddress=self.paging_process.root_address,
                    StartVirtualAddress=table.window,
                    EndVirtualAddress=table.window + table.size - 1,
                )
            )

    def _update(
        self,
        table: ProcessTable,
        start: int,
        entries: PteArray,
        *,
        big: PteArray | None = None,
        initial: bool = False,
        protection: int = 0,
        use_64k: bool = False,
    ) -> None:
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
            where = DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=table.window)
        elif self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
            where = DXGK_PAGETABLEUPDATEADDRESS(
                GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=table.segment_id, SegmentOffset=table.offset)
            )
        else:
            assert table.cpu is not None
            self.paging.wait(self.paging.flush())  # the CPU writes now: nothing in flight may still read it
            where = DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=table.cpu.pointer(0))
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
                PageTableLevel=table.level,
                PageTableAddress=where,
                pPageTableEntries=entries,
                StartIndex=start,
                NumPageTableEntries=int(entries.shape[0]),
                Flags=DXGK_UPDATEPAGETABLEFLAGS(InitialUpdate=initial, Use64KBPages=use_64k),
                UpdateMode=self.mode,
                pPageTableEntries64KB=big,
                DriverProtection=protection if table.level == 0 else 0,
            )
        )

    def _leaf(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The leaf table covering ``va``, with every level above pointing down to it."""
        top = self.mmu.level_count - 1
        if self.mmu.index(va, top) >= space.root_entries:
            self._grow_root(space, self.mmu.index(va, top) + 1)
        child = None
        for level in range(self.mmu.level_count):
            key = self._key(level, va)
            fresh = (level, key) not in space.tables
            table = self._table(space, level, key)
            if child is not None and child[1]:
                if level == 1:
                    self._point_down(space, va)
                else:
                    entry = pte_array(1)
                    entry["Flags"] = pte_flags(Valid=1, Segment=child[0].segment_id)
                    entry["PageAddress"] = child[0].offset >> PAGE_SHIFT
                    self._update(table, self.mmu.index(va, level), entry)
            child = (table, fresh)
            if not fresh and level > 0:
                break
        return space.tables[(0, self._key(0, va))]

    def _point_down(self, space: GpuVaSpace, va: int) -> None:
        """The level-1 entry for ``va``: its 4 KB leaf table and, with dual PTEs, its 64 KB leaf table if any."""
        key = self._key(0, va)
        small_table = space.tables.get((0, key))
        big_table = space.leaves64.get(key)
        entry = pte_array(1)
        if small_table is not None:
            entry["Flags"] = pte_flags(Valid=1, Segment=small_table.segment_id)
            entry["PageAddress"] = small_table.offset >> PAGE_SHIFT
        big = None
        if self.dual:
            big = pte_array(1)
            if big_table is not None:
                big["Flags"] = pte_flags(Valid=1, Segment=big_table.segment_id)
                big["PageAddress"] = big_table.offset >> PAGE_SHIFT
        parent = space.tables[(1, self._key(1, va))]
        self._update(parent, self.mmu.index(va, 1), entry, big=big)

    def _leaf64(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The 64 KB-page leaf table of ``va``'s 2 MiB (dual PTEs), created invalid and pointed at."""
        key = self._key(0, va)
        found = space.leaves64.get(key)
        if found is not None:
            return found
        self._leaf(space, va)  # the path down to level 1 exists first
        desc = self.mmu.levels[0]
        segment = self.segments.get(desc.PageTableSegmentId, "PageTableSegmentId")
        size = -(-self.mmu.caps.LeafPageTableSizeFor64KPagesInBytes // PAGE_SIZE) * PAGE_SIZE
        table = ProcessTable(0, key, segment.id, 0, size)
        offset = self._place_table(segment, size, table, 0)
        table.offset = offset
        self._reach(table)
        space.leaves64[key] = table
        self._update(table, 0, pte_array(self._entries64()), initial=True, use_64k=True)
        self._point_down(space, va)
        return table

    def _entries64(self) -> int:
        return (1 << self.mmu.shift(1)) // _64K

    # --- the user-mode calls: Reserve, Map, Free ---------------------------------------------------------------

    def reserve(self, args: D3DDDI_RESERVEGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnReserveGpuVirtualAddressCb``: a range of VA, no memory; ``ZERO`` reservations read zero."""
        queue, space = self._queue_space(args.hPagingQueue)
        for name in ("BaseAddress", "MinimumAddress", "MaximumAddress", "Size", "DriverProtection"):
            _u64(name, getattr(args, name))
        for name in ("BaseAddress", "MinimumAddress", "MaximumAddress", "Size"):
            if getattr(args, name) % VA_ALIGNMENT:
                raise _bad(name, getattr(args, name), "must be a multiple of 64 KB")
        if args.Size == 0:
            raise _bad("Size", 0, "must not be zero")
        if args.ReservationType not in (
            Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_NO_ACCESS,
            Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_ZERO,
        ):
            raise _bad(
                "ReservationType",
                args.ReservationType,
                "must be RESERVE_NO_ACCESS (0) or RESERVE_ZERO (1); NO_COMMIT is for the system",
            )
        base = self._place_range(
            space, args.BaseAddress, args.MinimumAddress, args.MaximumAddress, args.Size, VA_ALIGNMENT
        )
        zero = args.ReservationType == Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_ZERO
        region = Region(base, args.Size, from_map=False, zero=zero, driver_protection=args.DriverProtection)
        space.regions[base] = region
        args.VirtualAddress = base
        moved = zero
        if zero:
            self._write_state(space, base, args.Size // PAGE_SIZE, zero=True, protection=args.DriverProtection)
            self._flush_range(space, base, args.Size)
        return self._complete(queue, moved, args)

    def map_gpu_va(self, args: D3DDDI_MAPGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnMapGpuVirtualAddressCb``: map pages of an allocation (or the Zero / Invalid state) at a VA."""
        queue, space = self._queue_space(args.hPagingQueue)
        for name in (
            "BaseAddress",
            "MinimumAddress",
            "MaximumAddress",
            "OffsetInPages",
            "SizeInPages",
            "DriverProtection",
            "Reserved1",
        ):
            _u64(name, getattr(args, name))
        if args.Reserved0 or args.Reserved1:
            raise _bad("Reserved0" if args.Reserved0 else "Reserved1", args.Reserved0 or args.Reserved1, "must be zero")
        p = args.Protection
        if p.Reserved:
            raise _bad("Protection", p.Value, "reserved bits must be zero")
        if p.SystemUseOnly:
            raise _bad("Protection.SystemUseOnly", 1, "is not for user mode")
        if p.Zero and p.NoAccess:
            raise _bad("Protection", p.Value, "Zero and NoAccess exclude each other")
        if (p.Zero or p.NoAccess) and (p.Write or p.Execute):
            raise _bad("Protection", p.Value, "Zero and NoAccess take no Write or Execute")
        for name in ("BaseAddress", "MinimumAddress", "MaximumAddress"):
            if getattr(args, name) % PAGE_SIZE:
                raise _bad(name, getattr(args, name), "must be 4 KB aligned")
        if args.SizeInPages == 0:
            raise _bad("SizeInPages", 0, "must not be zero")
        size = args.SizeInPages * PAGE_SIZE
        allocation: VidMmAllocation | None = None
        if p.Zero or p.NoAccess:
            if args.hAllocation:
                raise _bad("hAllocation", args.hAllocation, "must be NULL with Protection.Zero or Protection.NoAccess")
        else:
            allocation = self._allocation(args.hAllocation, queue)
            total = allocation.size // PAGE_SIZE
            if args.OffsetInPages + args.SizeInPages > total:
                raise _bad(
                    "OffsetInPages",
                    args.OffsetInPages,
                    f"{args.SizeInPages} page(s) from it leave the {total}-page allocation",
                )
            self._check_unique_protection(allocation, args.OffsetInPages, args.SizeInPages, args.DriverProtection)
        region = None
        if args.BaseAddress:
            if args.BaseAddress + size > self.va_size:
                raise _bad(
                    "BaseAddress",
                    args.BaseAddress,
                    f"{size:#x} bytes from it leave the {self.va_size:#x}-byte VA space",
                )
            region = space.region_at(args.BaseAddress, size)
            if region is None and not self._free(space, args.BaseAddress, size):
                raise _bad(
                    "BaseAddress",
                    args.BaseAddress,
                    f"[{args.BaseAddress:#x}, {args.BaseAddress + size:#x}) is neither free nor inside one reserved or mapped range",
                )
            if region is not None and region.from_map and (p.Zero or p.NoAccess):
                raise _bad("Protection", p.Value, "Zero and NoAccess may not be placed on a range obtained by Map")
        if region is None:
            base = self._place_range(space, args.BaseAddress, args.MinimumAddress, args.MaximumAddress, size, PAGE_SIZE)
            region = Region(base, size, from_map=True)
            space.regions[base] = region
        va = args.BaseAddress or region.base
        kind = Kind.ZERO if p.Zero else (Kind.NO_ACCESS if p.NoAccess else Kind.ALLOCATION)
        mapping = VaMapping(
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
        self._install(mapping)
        args.VirtualAddress = va
        return self._complete(queue, True, args)

    def free_gpu_va(self, process: Process, args: D3DDDICB_FREEGPUVIRTUALADDRESS) -> None:
        """``pfnFreeGpuVirtualAddressCb``: release a range obtained from Reserve or Map, synchronously; its
        entries are invalid and flushed before the range can be handed out again."""
        space = self.spaces.get(process.handle)
        _u64("BaseAddress", args.BaseAddress)
        _u64("Size", args.Size)
        if args.BaseAddress % PAGE_SIZE or args.Size % PAGE_SIZE:
            raise _bad(
                "BaseAddress" if args.BaseAddress % PAGE_SIZE else "Size",
                args.BaseAddress if args.BaseAddress % PAGE_SIZE else args.Size,
                "must be 4 KB aligned",
            )
        region = None if space is None else space.regions.get(args.BaseAddress)
        if space is None or region is None or region.size != args.Size:
            raise _bad(
                "BaseAddress",
                args.BaseAddress,
                f"[{args.BaseAddress:#x}, +{args.Size:#x}) is not a range obtained from Reserve or Map",
            )
        self._release(space, region)
        self.paging.wait(self.paging.flush())

    # --- UpdateGpuVirtualAddress (tiled resources) ------------------------------------------------------------

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> None:
        """``pfnUpdateGpuVirtualAddressCb``: checked whole now; applied in order once ``hFenceObject`` reaches
        ``FenceValue`` (at once with ``DoNotWait``), on the paging engine; then ``FenceValue + 1`` is signalled."""
        assert self.residency is not None
        device = self.residency.context_device(args.hContext)
        sync = self.residency.sync_object(args.hFenceObject)
        if sync.device.process is not device.process:
            raise _bad("hFenceObject", args.hFenceObject, "belongs to another process")
        space = self.create_space(device.process)
        if args.Reserved0 or args.Reserved1 or args.Flags.Reserved:
            raise _bad(
                "Reserved0", args.Reserved0 or args.Reserved1 or args.Flags.Value, "reserved fields must be zero"
            )
        _u64("FenceValue", args.FenceValue)
        if args.FenceValue + 1 >= 1 << 64:
            raise _bad("FenceValue", args.FenceValue, "FenceValue + 1 must still be a UINT64")
        if args.NumOperations != len(args.Operations) or not args.Operations:
            raise _bad(
                "NumOperations", args.NumOperations, f"must be positive and match Operations ({len(args.Operations)})"
            )
        steps = [self._check_update(space, device, i, op) for i, op in enumerate(args.Operations)]
        self._check_one_region(space, steps)

        def apply() -> None:
            for step in steps:
                step()
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
                    MonitoredFenceGpuVa=sync.fence.gpu_va, MonitoredFenceValue=args.FenceValue + 1
                )
            )
            self.paging.flush()
            sync.promised = max(sync.promised, args.FenceValue + 1)
            assert self.residency is not None
            self.residency.release(sync)

        if args.Flags.DoNotWait or sync.reached >= args.FenceValue:
            apply()
            return
        # Queued: the tile pools it maps stay resident until it has run, whatever the application asks.
        pools = list({id(step.pool): step.pool for step in steps if step.pool is not None}.values())
        for pool in pools:
            self.residency.hold(pool)

        def apply_and_release() -> None:
            apply()
            assert self.residency is not None
            for pool in pools:
                self.residency.unhold(pool)

        sync.waiting.append((args.FenceValue, apply_and_release))

    def _check_update(
        self, space: GpuVaSpace, device: Device, i: int, op: D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION
    ) -> UpdateStep:
        """Every rule of one operation, before anything changes; returns the work that applies it."""
        name = f"Operations[{i}]"
        kind, p = op.OperationType, op.payload
        expected = {
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP: D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY: D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
        }.get(kind)  # type: ignore[call-overload]
        if expected is None or not isinstance(p, expected):
            raise _bad(
                f"{name}.OperationType",
                kind,
                "must be MAP (0), UNMAP (1), COPY (2) or MAP_PROTECT (3), with its union member",
            )
        for field_name in (
            "BaseAddress",
            "SizeInBytes",
            "SourceAddress",
            "DestAddress",
            "AllocationOffsetInBytes",
            "AllocationSizeInBytes",
        ):
            if hasattr(p, field_name):
                value = getattr(p, field_name)
                _u64(f"{name}.{field_name}", value)
                if value % PAGE_SIZE:
                    raise _bad(f"{name}.{field_name}", value, "must be 4 KB aligned")
        if p.SizeInBytes == 0:
            raise _bad(f"{name}.SizeInBytes", 0, "must not be zero")
        pages = p.SizeInBytes // PAGE_SIZE
        if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY):
            for field_name in ("SourceAddress", "DestAddress"):
                at = getattr(p, field_name)
                region = space.region_at(at, p.SizeInBytes)
                if region is None or region.from_map:
                    raise _bad(f"{name}.{field_name}", at, "the range must lie in one range obtained from Reserve")
            return UpdateStep(
                p.DestAddress,
                lambda: self._copy(space, p.SourceAddress, p.DestAddress, pages),
                p.SourceAddress,
            )
        region = space.region_at(p.BaseAddress, p.SizeInBytes)
        if region is None or region.from_map:
            raise _bad(f"{name}.BaseAddress", p.BaseAddress, "the range must lie in one range obtained from Reserve")
        if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP):
            if p.Protection.Zero == p.Protection.NoAccess or p.Protection.Write or p.Protection.Execute:
                raise _bad(f"{name}.Protection", p.Protection.Value, "UNMAP takes exactly one of Zero and NoAccess")
            state = Kind.ZERO if p.Protection.Zero else Kind.NO_ACCESS
            piece = VaMapping(space, region, p.BaseAddress, pages, state, driver_protection=region.driver_protection)
            return UpdateStep(p.BaseAddress, lambda: self._install(piece))
        a = self._allocation_of(p.hAllocation, device, f"{name}.hAllocation")
        unit = p.AllocationSizeInBytes or p.SizeInBytes
        if p.AllocationSizeInBytes and p.SizeInBytes % p.AllocationSizeInBytes:
            raise _bad(
                f"{name}.SizeInBytes",
                p.SizeInBytes,
                f"must be a multiple of AllocationSizeInBytes={p.AllocationSizeInBytes:#x}",
            )
        if p.AllocationOffsetInBytes + unit > a.size:
            raise _bad(
                f"{name}.AllocationOffsetInBytes",
                p.AllocationOffsetInBytes,
                f"{unit:#x} bytes from it leave the {a.size:#x}-byte allocation",
            )
        if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT):
            prot = p.Protection
            if prot.Reserved or prot.SystemUseOnly or prot.Zero or prot.NoAccess:
                raise _bad(f"{name}.Protection", prot.Value, "MAP_PROTECT takes Write and Execute only")
            write, execute, driver = bool(prot.Write), bool(prot.Execute), p.DriverProtection
            _u64(f"{name}.DriverProtection", driver)
        else:
            # Decision 0016: a plain MAP is read-write and inherits the reservation's driver protection.
            write, execute, driver = True, False, region.driver_protection
        pieces = [
            VaMapping(
                space,
                region,
                p.BaseAddress + k * unit,
                unit // PAGE_SIZE,
                Kind.ALLOCATION,
                a,
                p.AllocationOffsetInBytes // PAGE_SIZE,
                write,
                execute,
                driver,
            )
            for k in range(p.SizeInBytes // unit)
        ]

        def install() -> None:
            for piece in pieces:
                self._install(piece)

        return UpdateStep(p.BaseAddress, install, pool=a)

    def _check_one_region(self, space: GpuVaSpace, steps: list[UpdateStep]) -> None:
        """Per call: every mapped range and copy destination in one reserved range; copy sources in one."""
        for label, addresses in (
            ("BaseAddress", [s.address for s in steps]),
            ("SourceAddress", [s.source for s in steps if s.source is not None]),
        ):
            regions = {id(space.region_at(a, PAGE_SIZE)) for a in addresses}
            if len(regions) > 1:
                raise _bad(
                    f"Operations[*].{label}", addresses[0], "all ranges of one call must lie in one reserved range"
                )

    def _allocation_of(self, handle: HANDLE, device: Device, argument: str) -> VidMmAllocation:
        assert self.residency is not None
        a = self.residency.allocations.get(handle)
        if a is None or a.context or a.device.process is not device.process:
            raise _bad(argument, handle, "is not an allocation of the process")
        return a

    def _copy(self, space: GpuVaSpace, source: int, dest: int, pages: int) -> None:
        """COPY: the destination takes the source's mappings (and their entries: ``CopyPageTableEntries`` when
        the GPU updates tables, rewritten entries when the CPU does)."""
        src_region = space.region_at(source, pages * PAGE_SIZE)
        dst_region = space.region_at(dest, pages * PAGE_SIZE)
        assert src_region is not None
        assert dst_region is not None
        end = source + pages * PAGE_SIZE
        runs: list[VaMapping] = []
        covered = source
        for m in sorted(src_region.mappings, key=lambda m: m.va):
            lo, hi = max(m.va, source), min(m.end, end)
            if lo >= hi:
                continue
            if covered < lo:  # a gap shows the reservation's own state
                runs.append(
                    self._state_piece(
                        space, dst_region, src_region, dest + covered - source, (lo - covered) // PAGE_SIZE
                    )
                )
            runs.append(
                VaMapping(
                    space,
                    dst_region,
                    dest + lo - source,
                    (hi - lo) // PAGE_SIZE,
                    m.kind,
                    m.allocation,
                    m.offset_pages + (lo - m.va) // PAGE_SIZE,
                    m.write,
                    m.execute,
                    m.driver_protection,
                )
            )
            covered = hi
        if covered < end:
            runs.append(
                self._state_piece(space, dst_region, src_region, dest + covered - source, (end - covered) // PAGE_SIZE)
            )
        # CopyPageTableEntries copies 4 KB entries; a source with 64 KB entries is rewritten entry by entry.
        big = any(k in space.leaves64 for k in range(self._key(0, source), self._key(0, end - 1) + 1))
        use_gpu = self.mode != Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL and not big
        if use_gpu:
            self._copy_entries(space, source, dest, pages)
        for run in runs:
            self._install(run, write_entries=not use_gpu)

    def _state_piece(self, space: GpuVaSpace, region: Region, src_region: Region, va: int, pages: int) -> VaMapping:
        kind = Kind.ZERO if src_region.zero else Kind.NO_ACCESS
        return VaMapping(space, region, va, pages, kind, driver_protection=src_region.driver_protection)

    def _copy_entries(self, space: GpuVaSpace, source: int, dest: int, pages: int) -> None:
        """``CopyPageTableEntries``: one range per pair of leaf-table pieces, by the tables' paging-process VAs."""
        span = 1 << self.mmu.shift(1)
        ranges = []
        done = 0
        while done < pages:
            s_va, d_va = source + done * PAGE_SIZE, dest + done * PAGE_SIZE
            count = min(pages - done, (span - s_va % span) // PAGE_SIZE, (span - d_va % span) // PAGE_SIZE)
            src_leaf, dst_leaf = self._leaf(space, s_va), self._leaf(space, d_va)
            if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
                # The operation names tables by paging-process VA: give physical-mode tables a window too.
                for leaf in (src_leaf, dst_leaf):
                    if not leaf.window:
                        self._window(leaf)
            ranges.append(
                DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                    NumPageTableEntries=count,
                    SrcPageTableAddress=src_leaf.window,
                    DstPageTableAddress=dst_leaf.window,
                    SrcStartPteIndex=self.mmu.index(s_va, 0),
                    DstStartPteIndex=self.mmu.index(d_va, 0),
                )
            )
            done += count
        self.paging.build(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=len(ranges), pRanges=tuple(ranges)))

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
            raise _bad("OffsetInPages", offset_pages, f"{count} page(s) from it leave the {total}-page allocation")
        size = count * PAGE_SIZE
        if base is not None and not self._free(space, base, size):
            raise _bad("BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free")
        va = self._place_range(space, base or 0, 0, 0, size, PAGE_SIZE if base else VA_ALIGNMENT)
        region = Region(va, size, from_map=True)
        space.regions[va] = region
        mapping = VaMapping(space, region, va, count, Kind.ALLOCATION, allocation, offset_pages, write, execute)
        self._install(mapping)
        return mapping

    def unmap(self, space: GpuVaSpace, va: int) -> None:
        """Free the region that starts at ``va``."""
        region = space.regions.get(va)
        if region is None:
            raise _bad("BaseAddress", va, "is not a mapped range of the process")
        self._release(space, region)

    def forget(self, allocation: VidMmAllocation) -> None:
        """The allocation is destroyed: every VA mapped to it is freed (its whole region, as Windows does)."""
        for mapping in list(self.by_allocation.get(allocation.handle, [])):
            if mapping.region.base in mapping.space.regions:
                self._release(mapping.space, mapping.region)
        self.by_allocation.pop(allocation.handle, None)

    # --- following the allocation --------------------------------------------------------------------------

    def before_leave(self, allocation: VidMmAllocation) -> None:
        """The allocation is about to leave its range: no mapping may reach that range any more."""
        for mapping in self.by_allocation.get(allocation.handle, []):
            self._write_mapping(mapping, resident=False)
            self._flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)

    def after_enter(self, allocation: VidMmAllocation) -> None:
        """The allocation arrived in a new place: every mapping points there."""
        for mapping in self.by_allocation.get(allocation.handle, []):
            self._write_mapping(mapping, resident=True)
            if self.flush_new:
                self._flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)

    # --- internals -----------------------------------------------------------------------------------------

    def _queue_space(self, handle: HANDLE) -> tuple[PagingQueue, GpuVaSpace]:
        if self.residency is None:
            raise VidMmError("the VA services are not wired to a residency manager")
        queue = self.residency.queue(handle)
        return queue, self.create_space(queue.device.process)

    def _allocation(self, handle: HANDLE, queue: PagingQueue) -> VidMmAllocation:
        assert self.residency is not None
        a = self.residency.allocations.get(handle)
        if a is None or a.context:
            raise _bad("hAllocation", handle, "is not an allocation of the process")
        if a.device.process is not queue.device.process:
            raise _bad("hAllocation", handle, "belongs to another process")
        return a

    def _check_unique_protection(self, a: VidMmAllocation, offset: int, pages: int, protection: int) -> None:
        """``D3DGPU_UNIQUE_DRIVER_PROTECTION``: every mapping of the same pages uses the same value."""
        for other in self.by_allocation.get(a.handle, []):
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

    def _place_range(self, space: GpuVaSpace, base: int, lo: int, hi: int, size: int, alignment: int) -> int:
        """The start of a new region: ``base`` if given (and free), else a free range in ``[lo, hi)``."""
        if base:
            if base + size > self.va_size or not self._free(space, base, size):
                raise _bad("BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free")
            space.ranges.reserve(base, size)
            return base
        top = hi or self.va_size
        if lo >= top or size > top - lo:
            raise _bad("MaximumAddress", hi, f"no {size:#x}-byte range fits in [{lo:#x}, {top:#x})")
        start = space.ranges.allocate_in(size, alignment=alignment, lo=lo, hi=top)
        if start is None:
            raise InvalidArgument(
                "Size",
                size,
                f"no free range of the VA space in [{lo:#x}, {top:#x}) is that large",
                HRESULT.E_OUTOFMEMORY,
            )
        return start

    def _install(self, mapping: VaMapping, *, write_entries: bool = True) -> None:
        """Put ``mapping`` in its region (cutting what it covers out of earlier mappings) and write its entries."""
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
                        lo,
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
            self._write_mapping(mapping, resident=None)
            for piece in pieces:  # a 64 KB entry the cut invalidated covered their pages too
                self._write_mapping(piece, resident=None)
        if (
            replaced or self.flush_new or not write_entries
        ):  # decision D5: invalid -> valid alone needs no flush if not cached
            self._flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)

    def _attach(self, mapping: VaMapping) -> None:
        if mapping.allocation is not None:
            self.by_allocation.setdefault(mapping.allocation.handle, []).append(mapping)

    def _detach(self, mapping: VaMapping) -> None:
        if mapping.allocation is not None:
            self.by_allocation[mapping.allocation.handle].remove(mapping)

    def _release(self, space: GpuVaSpace, region: Region) -> None:
        for mapping in region.mappings:
            self._detach(mapping)
        region.mappings = []
        self._write_state(space, region.base, region.size // PAGE_SIZE, zero=False, protection=0)
        self._flush_range(space, region.base, region.size)
        del space.regions[region.base]
        space.ranges.free(region.base)

    def _complete(
        self, queue: PagingQueue, moved: bool, args: D3DDDI_RESERVEGPUVIRTUALADDRESS | D3DDDI_MAPGPUVIRTUALADDRESS
    ) -> HRESULT:
        """Give the operations just built the queue's next paging fence (``E_PENDING``), or 0 (``S_OK``)."""
        assert self.residency is not None
        if not moved:
            args.PagingFenceValue = 0
            return HRESULT.S_OK
        args.PagingFenceValue = self.residency.signal(queue)
        return HRESULT.E_PENDING

    def _write_mapping(self, mapping: VaMapping, *, resident: bool | None) -> None:
        """Entries of ``mapping``: its allocation's pages where they are (``resident`` None: as they are now)."""
        if mapping.kind != Kind.ALLOCATION:
            self._write_state(
                mapping.space,
                mapping.va,
                mapping.pages,
                zero=mapping.kind == Kind.ZERO,
                protection=mapping.driver_protection,
            )
            return
        a = mapping.allocation
        assert a is not None
        placed = a.placement is not None if resident is None else resident
        entries = pte_array(mapping.pages)
        big: dict[int, PteArray] = {}
        if placed:
            segment_id, numbers = self._targets(mapping)
            flags = pte_flags(
                Valid=1, Segment=segment_id, ReadOnly=int(not mapping.write), NoExecute=int(not mapping.execute)
            )
            entries["Flags"] = flags
            entries["PageAddress"] = numbers
            if self.dual and segment_id and self.use_64k:
                big = self._big_pages(mapping.va, numbers, flags, entries)
        self._write(mapping.space, mapping.va, entries, mapping.driver_protection, big=big)

    def _big_pages(
        self, va: int, numbers: npt.NDArray[np.uint64], flags: int, entries: PteArray
    ) -> dict[int, PteArray]:
        """64 KB entries for every whole 64 KiB of the range whose pages are one aligned 64 KiB of a segment;
        their 4 KB entries become invalid (the two kinds of one range are never both valid)."""
        out: dict[int, PteArray] = {}
        per = _64K // PAGE_SIZE
        first = -(-va // _64K) * _64K
        for chunk in range(first, va + numbers.shape[0] * PAGE_SIZE - _64K + 1, _64K):
            i = (chunk - va) // PAGE_SIZE
            run = numbers[i : i + per]
            if int(run[0]) % per or int(run[-1]) - int(run[0]) != per - 1:
                continue
            entry = pte_array(1)
            entry["Flags"] = flags
            entry["PageAddress"] = run[0]
            out[chunk] = entry
            entries[i : i + per] = pte_array(per)
        return out

    def _write_state(self, space: GpuVaSpace, va: int, pages: int, *, zero: bool, protection: int) -> None:
        entries = pte_array(pages)
        if zero:
            entries["Flags"] = pte_flags(Zero=1)
        self._write(space, va, entries, protection)

    def _targets(self, mapping: VaMapping) -> tuple[int, npt.NDArray[np.uint64]]:
        """``(Segment, PageAddress per page)`` of the mapping's pages where the allocation is now."""
        a = mapping.allocation
        assert a is not None
        placement = a.placement
        assert placement is not None
        space = self.segments.get(placement.segment_id)
        if space.aperture:  # the GPU reaches the backing pages directly (segment 0)
            assert a.backing is not None
            return 0, a.backing.pfns[mapping.offset_pages : mapping.offset_pages + mapping.pages]
        first = (placement.offset >> PAGE_SHIFT) + mapping.offset_pages
        return placement.segment_id, np.arange(first, first + mapping.pages, dtype=np.uint64)

    def _write(
        self, space: GpuVaSpace, va: int, entries: PteArray, protection: int, *, big: dict[int, PteArray] | None = None
    ) -> None:
        """``UpdatePageTable`` of the leaf entries from ``va``, one call per leaf table; 64 KB entries for the
        chunks in ``big``.  Order keeps the two kinds of one 64 KiB never both valid: 64 KB entries that no
        longer apply are invalidated first, then the 4 KB entries are written, then the new 64 KB entries."""
        big = big or {}
        span = 1 << self.mmu.shift(1)
        total = int(entries.shape[0])
        end = va + total * PAGE_SIZE
        if space.leaves64:
            stale = [c for c in range(va - va % _64K, end, _64K) if c not in big]
            self._write64(space, stale, None, protection)
        done = 0
        while done < total:
            at = va + done * PAGE_SIZE
            count = min(total - done, (span - at % span) // PAGE_SIZE)
            leaf = self._leaf(space, at)
            self._update(leaf, self.mmu.index(at, 0), entries[done : done + count], protection=protection)
            done += count
        if big:
            self._write64(space, sorted(big), big, protection)

    def _write64(
        self, space: GpuVaSpace, chunks: list[int], values: dict[int, PteArray] | None, protection: int
    ) -> None:
        """64 KB leaf entries of ``chunks`` (64 KiB-aligned VAs): ``values`` or invalid; one call per run."""
        i = 0
        while i < len(chunks):
            key = self._key(0, chunks[i])
            if values is None and key not in space.leaves64:
                i += 1
                continue
            j = i
            while j + 1 < len(chunks) and chunks[j + 1] == chunks[j] + _64K and self._key(0, chunks[j + 1]) == key:
                j += 1
            table = self._leaf64(space, chunks[i])
            run = pte_array(j - i + 1)
            if values is not None:
                for k in range(i, j + 1):
                    run[k - i] = values[chunks[k]][0]
            start = (chunks[i] >> 16) % self._entries64()
            self._update(table, start, run, protection=protection, use_64k=True)
            i = j + 1

    def _flush_range(self, space: GpuVaSpace, va: int, size: int) -> None:
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                RootPageTableAddress=self.root_address(space), StartVirtualAddress=va, EndVirtualAddress=va + size - 1
            )
        )


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def _u64(argument: str, value: int) -> None:
    """Python integers do not wrap: a value outside [0, 2^64) is refused, never masked."""
    if not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise _bad(argument, value, "must be a UINT64 (0 <= value < 2^64)")
