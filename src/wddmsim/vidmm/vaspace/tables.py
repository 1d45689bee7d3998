"""A process's page-table tree: where each table is placed, how VidMm reaches it, how it is written.

What it models (wddm-spec.md sections 2.3, 2.5-2.7; decisions 0011, 0016):

- Each table is a range of the segment the driver names for its level (``PageTableSegmentId``), created all
  invalid by ``UpdatePageTable`` with ``InitialUpdate``.  The root is programmed into the process's contexts
  with ``DxgkDdiSetRootPageTable``; a 2-level root is resizable (``DxgkDdiGetRootPageTableSize``).
- Every table update is an ``UpdatePageTable`` in the driver's update mode: ``GPU_VIRTUAL`` names the table by
  its VA in the system paging process (each table is mapped into a window there when it is created),
  ``GPU_PHYSICAL`` by segment address, ``CPU_VIRTUAL`` by a CPU mapping through the BAR (after the paging
  engine went idle, since the CPU writes at once).
- With dual PTEs a level-1 entry points at a 4 KB-page and a 64 KB-page leaf table for the same 2 MiB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import numpy as np

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
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_process import SystemPagingProcess
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments, SegmentSpace
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable

if TYPE_CHECKING:
    from wddmsim.vidmm.residency import ResidencyManager

Mode = DXGK_PAGETABLEUPDATEMODE
VA_ALIGNMENT = 64 * 1024
"""Reservations and mappings without an explicit base are 64 KB aligned."""
SIZE_64K = 64 * 1024
WINDOW_SIZE = 1 * GiB
"""Paging-process VA below VidMm's region through which process tables are updated (``GPU_VIRTUAL``)."""


@final
class PageTables:
    """Places, reaches and writes the tables of every process's tree."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        paging: PagingStream,
        mmu: GpuMmuDescription,
        segments: Segments,
        process: SystemPagingProcess,
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
        window_base = process.region_base - WINDOW_SIZE
        self.windows = RangeAllocator(WINDOW_SIZE)
        self.window_high = 0
        """Window VAs below this were handed out before (their paging-process entries were valid)."""
        self.window_base = window_base
        self.root_moves = 0
        """How many times a resizable root grew (and moved)."""
        self.residency: ResidencyManager | None = None
        """Set by the composition: contexts, and room in full segments, come from there."""

    # --- geometry ----------------------------------------------------------------------------------------------

    @property
    def top(self) -> int:
        return self.mmu.level_count - 1

    def key(self, level: int, va: int) -> int:
        """Which table of ``level`` covers ``va`` (the root is 0)."""
        return 0 if level == self.top else va >> self.mmu.shift(level + 1)

    def entries(self, level: int) -> int:
        return 1 << self.mmu.levels[level].PageTableIndexBitCount

    def entries64(self) -> int:
        """Entries of a 64 KB-page leaf table: one per 64 KiB of the 2 MiB (or so) a leaf covers."""
        return (1 << self.mmu.shift(1)) // SIZE_64K

    # --- the root ----------------------------------------------------------------------------------------------

    def create_root(self, space: GpuVaSpace) -> None:
        if self.mmu.resizable_root:  # a 2-level root starts small and grows with the VAs used
            space.root_entries = self.root_size(1)[1]
        else:
            space.root_entries = self.entries(self.top)
        self.table(space, self.top, 0)

    def root_size(self, entries: int) -> tuple[int, int]:
        """``DxgkDdiGetRootPageTableSize``: bytes for ``entries`` root entries, and how many that size holds."""
        args = DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=entries)
        size = self.driver.get_root_page_table_size(args)
        return size, args.NumberOfPte

    def grow_root(self, space: GpuVaSpace, needed: int) -> None:
        """A resizable root too small for index ``needed - 1``: a new, larger root is placed and initialised,
        every existing entry re-written into it, every context of the process re-pointed
        (``DxgkDdiSetRootPageTable``, each context idle), then the old root is freed (wddm-spec section 2.6)."""
        _, entries = self.root_size(min(max(needed, 2 * space.root_entries), self.entries(self.top)))
        old = space.tables.pop((self.top, 0))
        space.root_entries = entries
        self.table(space, self.top, 0)
        for key in sorted({k for (level, k) in space.tables if level == 0} | set(space.leaves64)):
            self.point_down(space, key << self.mmu.shift(1))
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
        root = space.tables[(self.top, 0)]
        return D3DGPU_PHYSICAL_ADDRESS(SegmentId=root.segment_id, SegmentOffset=root.offset)

    def set_root(self, space: GpuVaSpace, context: HANDLE) -> None:
        """``DxgkDdiSetRootPageTable`` for a context of the process (the context is idle)."""
        self.driver.set_root_page_table(
            DXGKARG_SETROOTPAGETABLE(
                hContext=context,
                Address=self.root_address(space),
                NumEntries=space.root_entries or self.entries(self.top),
            )
        )

    # --- tables ------------------------------------------------------------------------------------------------

    def table(self, space: GpuVaSpace, level: int, key: int) -> ProcessTable:
        """The table at ``level`` with ``key``, created all invalid if it does not exist yet."""
        found = space.tables.get((level, key))
        if found is not None:
            return found
        desc = self.mmu.levels[level]
        segment = self.segments.get(desc.PageTableSegmentId, "PageTableSegmentId")
        size = -(-desc.PageTableSizeInBytes // PAGE_SIZE) * PAGE_SIZE
        top = level == self.top
        if top and self.mmu.resizable_root:
            size = self.root_size(space.root_entries)[0]
        alignment = max(desc.PageTableAlignmentInBytes, PAGE_SIZE)
        table = ProcessTable(level, key, segment.id, 0, size)
        offset = self.place(segment, size, table, alignment if alignment & (alignment - 1) == 0 else 0)
        table.offset = offset
        self.reach(table)
        space.tables[(level, key)] = table
        count = space.root_entries if top else self.entries(level)
        self.update(
            table, 0, pte_array(count), big=pte_array(count) if self.dual and level == 1 else None, initial=True
        )
        return table

    def place(self, segment: SegmentSpace, size: int, table: ProcessTable, alignment: int) -> int:
        """A range for a table, from the top of the segment (tables do not cut the space allocations share
        into pieces); when the segment is full, allocations make room for it (tables come first)."""
        offset = segment.allocate(size, table, alignment=alignment, from_end=True)
        if offset is None and self.residency is not None:
            offset = self.residency.make_room(segment, size, table, alignment=alignment)
        if offset is None:
            raise DdiError(
                NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                f"segment {segment.id} cannot hold a {size:#x}-byte level-{table.level} page table",
            )
        return offset

    def reach(self, table: ProcessTable) -> None:
        """Make the table addressable the way the driver's update mode names tables."""
        segment = self.segments.get(table.segment_id)
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
            self.window(table)
        elif self.mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            table.cpu = self.mm.map_io_space(int(segment.descriptor.CpuTranslatedAddress) + table.offset, table.size)

    def window(self, table: ProcessTable) -> None:
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

    def update(
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
        """``UpdatePageTable`` of ``entries`` from ``start`` in ``table``, in the driver's update mode."""
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

    def leaf(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The leaf table covering ``va``, with every level above pointing down to it."""
        if self.mmu.index(va, self.top) >= space.root_entries:
            self.grow_root(space, self.mmu.index(va, self.top) + 1)
        child = None
        for level in range(self.mmu.level_count):
            key = self.key(level, va)
            fresh = (level, key) not in space.tables
            table = self.table(space, level, key)
            if child is not None and child[1]:
                if level == 1:
                    self.point_down(space, va)
                else:
                    entry = pte_array(1)
                    entry["Flags"] = pte_flags(Valid=1, Segment=child[0].segment_id)
                    entry["PageAddress"] = child[0].offset >> PAGE_SHIFT
                    self.update(table, self.mmu.index(va, level), entry)
            child = (table, fresh)
            if not fresh and level > 0:
                break
        return space.tables[(0, self.key(0, va))]

    def point_down(self, space: GpuVaSpace, va: int) -> None:
        """The level-1 entry for ``va``: its 4 KB leaf table and, with dual PTEs, its 64 KB leaf table if any."""
        key = self.key(0, va)
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
        parent = space.tables[(1, self.key(1, va))]
        self.update(parent, self.mmu.index(va, 1), entry, big=big)

    def leaf64(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The 64 KB-page leaf table of ``va``'s 2 MiB (dual PTEs), created invalid and pointed at."""
        key = self.key(0, va)
        found = space.leaves64.get(key)
        if found is not None:
            return found
        self.leaf(space, va)  # the path down to level 1 exists first
        desc = self.mmu.levels[0]
        segment = self.segments.get(desc.PageTableSegmentId, "PageTableSegmentId")
        size = -(-self.mmu.caps.LeafPageTableSizeFor64KPagesInBytes // PAGE_SIZE) * PAGE_SIZE
        table = ProcessTable(0, key, segment.id, 0, size)
        offset = self.place(segment, size, table, 0)
        table.offset = offset
        self.reach(table)
        space.leaves64[key] = table
        self.update(table, 0, pte_array(self.entries64()), initial=True, use_64k=True)
        self.point_down(space, va)
        return table

    # --- the TLB -----------------------------------------------------------------------------------------------

    def flush_range(self, space: GpuVaSpace, va: int, size: int) -> None:
        """``FlushTlb`` of ``[va, va + size)`` for the process's root."""
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                RootPageTableAddress=self.root_address(space), StartVirtualAddress=va, EndVirtualAddress=va + size - 1
            )
        )
