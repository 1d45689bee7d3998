"""A process's page-table tree: where each table is placed, how VidMm reaches it, how it is written, when it
goes away, and how it moves.

What it models (wddm-spec.md sections 2.3, 2.5-2.8; decisions 0011, 0016, 0021, 0022, 0023):

- Each table is a range of the segment the driver names for its level (``PageTableSegmentId``), created all
  invalid by ``UpdatePageTable`` with ``InitialUpdate``.  The root is programmed into the process's contexts
  with ``DxgkDdiSetRootPageTable``; a 2-level root is resizable (``DxgkDdiGetRootPageTableSize``): it grows with
  the VAs used and shrinks when VAs at the top are freed -- a new root, the entries kept written into it, every
  context re-pointed while idle, the old root flushed from the TLB and freed.
- Every table update is an ``UpdatePageTable`` in the driver's update mode: ``GPU_VIRTUAL`` names the table by
  its VA in the system paging process (each table is mapped into a window there when it is created),
  ``GPU_PHYSICAL`` by segment address, ``CPU_VIRTUAL`` by a CPU mapping through the BAR (after the paging
  engine went idle, since the CPU writes at once).
- A level-1 entry points at a 4 KB-page leaf table and, with dual PTEs, a 64 KB-page leaf table for the same
  2 MiB; without dual PTEs at one of them (``PageTablePageSize``), and a 64 KB-page range is converted to 4 KB
  pages -- once, never back -- when a 4 KB entry is needed there (single-PTE mode); or it maps a large page.
- A table no region needs any more is freed (its parent entry invalidated and flushed first; with
  ``ExplicitPageTableInvalidation`` every entry of it invalidated before).
- Tables move only while every context using them is idle: under memory pressure the tree of an idle process
  leaves its segment (``NotifyEviction``) and comes back -- at new places, parents and roots re-pointed -- before
  the process uses it again.  Its entries are rebuilt from VidMm's records (:mod:`.regions`), not copied.
- With ``PageTableUpdateRequireAddressSpaceIdle`` the contexts of a process are idle and held back while its
  tables are updated or its TLB entries invalidated, until that work has run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from wddmsim.ddi.pte import DXGK_PTE_PAGE_SIZE, PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.events import (
    AddressSpaceResumed,
    AddressSpaceSuspended,
    PageTableConverted,
    PageTablesEvicted,
    PageTablesRestored,
)
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_process import SystemPagingProcess
from wddmsim.vidmm.ports import VaResidency
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments, SegmentSpace
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device, Process

Mode = DXGK_PAGETABLEUPDATEMODE
VA_ALIGNMENT = 64 * 1024
"""Reservations and mappings without an explicit base are 64 KB aligned."""
SIZE_64K = 64 * 1024
WINDOW_SIZE = 1 * GiB
"""Paging-process VA below VidMm's region through which process tables are updated (``GPU_VIRTUAL``)."""
LEAF64 = -1
"""The level recorded for a 64 KB-page leaf table in :attr:`GpuVaSpace.saved`."""

Render = Callable[[GpuVaSpace, int, int], None]
"""Write every entry of ``[lo, hi)`` from the records (:meth:`.entries.Entries.render`)."""


@final
class PageTables:
    """Places, reaches, writes, frees and moves the tables of every process's tree."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        paging: PagingStream,
        mmu: GpuMmuDescription,
        segments: Segments,
        process: SystemPagingProcess,
        objects: ObjectTable,
        residency: VaResidency,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.paging = paging
        self.mmu = mmu
        self.segments = segments
        self.paging_process = process
        self.objects = objects
        """Devices and contexts, by handle: who runs in a space."""
        self.events = paging.events
        flags = mmu.caps.Flags
        self.mode = mmu.caps.PageTableUpdateMode
        self.flush_new = not flags.InvalidTlbEntriesNotCached
        self.dual = bool(flags.DualPteSupported)
        self.large_pages = bool(flags.LargePageSupported)
        self.explicit_invalidation = bool(flags.ExplicitPageTableInvalidation)
        """``ExplicitPageTableInvalidation``: every entry of a table is invalidated before the table is freed."""
        self.require_idle = bool(flags.PageTableUpdateRequireAddressSpaceIdle)
        """``PageTableUpdateRequireAddressSpaceIdle``: contexts are suspended around PTE updates and flushes."""
        window_base = process.region_base - WINDOW_SIZE
        self.windows = RangeAllocator(WINDOW_SIZE)
        self.window_high = 0
        """Window VAs below this were handed out before (their paging-process entries were valid)."""
        self.retired: list[int] = []
        """Windows of freed tables.  Operations already built may still name them, and the CPU maps a window at
        once: one is handed out again only after everything built so far has run."""
        self.window_base = window_base
        self.root_moves = 0
        """How many times a resizable root was replaced (grown or shrunk)."""
        self.conversions = 0
        """Single-PTE mode: how many 2 MiB ranges went from 64 KB to 4 KB pages."""
        self.residency = residency
        """Room in full segments (tables come first), and quiescent devices."""
        self.render: Render | None = None
        """Set by :class:`.manager.VaManager`: rebuilds entries from the records."""
        self.on_created: Callable[[ProcessTable], None] | None = None
        """Set by :class:`.manager.VaManager`: a table was created (it maps it into the privileged VA space)."""
        self.on_freed: Callable[[ProcessTable], None] | None = None
        """Set by :class:`.manager.VaManager`: a table is about to be freed."""
        self.wait_companions: Callable[[Process], None] | None = None
        """Set by :class:`.manager.VaManager`: the process's paging companions finish what they were given."""
        self.stream = paging
        """Where table updates, TLB flushes and entry copies are built: the system paging stream, or -- while
        :meth:`redirect` holds -- a paging companion's."""
        self.address: Callable[[ProcessTable], int] | None = None
        """While redirected (``GPU_VIRTUAL``): the VA the companion names a table by (its privileged VA)."""
        self._stamp = 0

    # --- geometry ----------------------------------------------------------------------------------------------

    @property
    def top(self) -> int:
        return self.mmu.level_count - 1

    @property
    def span1(self) -> int:
        """Bytes one level-1 entry covers (one leaf table; a large page)."""
        return 1 << self.mmu.shift(1)

    def key(self, level: int, va: int) -> int:
        """Which table of ``level`` covers ``va`` (the root is 0)."""
        return 0 if level == self.top else va >> self.mmu.shift(level + 1)

    def coverage(self, level: int, key: int) -> tuple[int, int]:
        """The VA range a table of ``level`` with ``key`` covers."""
        if level == self.top:
            return 0, 1 << self.mmu.caps.VirtualAddressBitCount
        span = 1 << self.mmu.shift(level + 1)
        return key * span, (key + 1) * span

    def entries(self, level: int) -> int:
        return 1 << self.mmu.levels[level].PageTableIndexBitCount

    def entries64(self) -> int:
        """Entries of a 64 KB-page leaf table: one per 64 KiB of the 2 MiB (or so) a leaf covers."""
        return self.span1 // SIZE_64K

    def count(self, table: ProcessTable) -> int:
        """Entries of ``table``."""
        return table.entries

    def all_tables(self, space: GpuVaSpace) -> list[ProcessTable]:
        """Every table of the tree, leaves first, the root last."""
        tables = sorted(space.tables.values(), key=lambda t: (t.level, t.key))
        return list(space.leaves64.values()) + tables

    # --- who uses a space ------------------------------------------------------------------------------------

    def devices(self, process: Process) -> list[Device]:
        return self.objects.devices_of(process)

    def contexts(self, space: GpuVaSpace) -> list[HANDLE]:
        """The contexts that run in ``space``: its process's, or -- a privileged space -- the paging companions."""
        if space.owner is not None:
            return list(space.companions)
        return self.objects.contexts_of(space.process)

    def quiesce(self, process: Process) -> None:
        """Every context of the process is idle: the work it has in flight completes, and so do the page-table
        updates its paging companions were given."""
        if self.wait_companions is not None:
            self.wait_companions(process)
        for device in self.devices(process):
            self.residency.quiesce(device)

    def suspend(self, space: GpuVaSpace, reason: str) -> None:
        """The process's contexts are idle and held back until the page-table work built from now on has run
        (:meth:`resume`, called before any of them runs again)."""
        if space.suspended:
            return
        self.quiesce(space.process)
        space.suspended = True
        self.events.emit(
            AddressSpaceSuspended(time=self.events.clock.now, process=int(space.process.handle), reason=reason)
        )

    def resume(self, space: GpuVaSpace) -> None:
        """The page-table work built while the contexts were suspended has run: they may run again."""
        if not space.suspended:
            return
        self.paging.wait(self.paging.flush())
        space.suspended = False
        self.events.emit(AddressSpaceResumed(time=self.events.clock.now, process=int(space.process.handle)))

    def _changing(self, space: GpuVaSpace | None) -> None:
        """Before a PTE update or a TLB invalidation of ``space`` (``PageTableUpdateRequireAddressSpaceIdle``)."""
        if space is not None and self.require_idle:
            self.suspend(space, "PageTableUpdateRequireAddressSpaceIdle")

    @contextmanager
    def hold(self, space: GpuVaSpace) -> Iterator[None]:
        """VidMm is changing the tree: memory pressure may not evict it meanwhile."""
        partner = space.owner or space.privileged  # an application space and its privileged one go together
        space.busy += 1
        if partner is not None:
            partner.busy += 1
        try:
            yield
        finally:
            space.busy -= 1
            if partner is not None:
                partner.busy -= 1

    @contextmanager
    def redirect(self, stream: PagingStream, address: Callable[[ProcessTable], int]) -> Iterator[None]:
        """Build table updates, flushes and entry copies into ``stream`` (a paging companion), naming tables by
        ``address`` (their privileged VA).  Tables created meanwhile are still created by the system paging
        stream (which the caller submits first: both run on the paging engine, in submission order)."""
        kept = self.stream, self.address
        self.stream, self.address = stream, address
        try:
            yield
        finally:
            self.stream, self.address = kept

    @contextmanager
    def _system(self) -> Iterator[None]:
        kept = self.stream, self.address
        self.stream, self.address = self.paging, None
        try:
            yield
        finally:
            self.stream, self.address = kept

    def stamp(self, space: GpuVaSpace) -> None:
        self._stamp += 1
        space.last_use = self._stamp

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
        """A resizable root too small for index ``needed - 1``: a larger one (wddm-spec section 2.6)."""
        _, entries = self.root_size(min(max(needed, 2 * space.root_entries), self.entries(self.top)))
        self.replace_root(space, entries)

    def shrink_root(self, space: GpuVaSpace) -> None:
        """A resizable root four times larger than the VAs in use need: a smaller one, keeping twice what is
        used (decision 0021: the hysteresis keeps a grow-shrink cycle from repeating at every Map and Free)."""
        if not self.mmu.resizable_root or space.evicted:
            return
        shift = self.mmu.shift(self.top)
        needed = max((((r.end - 1) >> shift) + 1 for r in space.regions.values()), default=1)
        initial = self.root_size(1)[1]
        if space.root_entries <= initial or needed * 4 > space.root_entries:
            return
        _, entries = self.root_size(max(2 * needed, initial))
        if entries < space.root_entries:
            self.replace_root(space, entries)

    def replace_root(self, space: GpuVaSpace, entries: int) -> None:
        """A new root of ``entries`` entries: placed and initialised, the entries kept written into it (all of
        them when it grows, those below ``entries`` when it shrinks), every context of the process re-pointed
        (``DxgkDdiSetRootPageTable``, each context idle), then the old root flushed from the TLB and freed."""
        with self.hold(space):
            before = space.tables[(self.top, 0)]
            fresh = self._create(space, self.top, 0, entries=entries)  # writes made meanwhile go to the old root
            old = space.tables[(self.top, 0)]
            below = {k for (level, k) in space.tables if level == 0} | set(space.leaves64) | set(space.large)
            if max(below, default=0) >= entries or (old is not before and space.root_entries >= entries):
                # Making room moved an allocation whose mapping needed the root to grow meanwhile: keep that one.
                self._unplace(fresh)
                return
            old_address = D3DGPU_PHYSICAL_ADDRESS(SegmentId=old.segment_id, SegmentOffset=old.offset)
            space.root_entries = entries
            space.tables[(self.top, 0)] = fresh
            self._initialise(fresh)
            for key in sorted(below):
                self.point_down(space, key << self.mmu.shift(1))
            self.paging.wait(self.paging.flush())  # the new root is written before any context uses it
            self.quiesce(space.process)  # each context is idle during SetRootPageTable
            self.set_roots(space)
            self._flush_root(old_address)  # D5: no translation cached under the old root outlives it
            self.free_table(old)
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

    def set_roots(self, space: GpuVaSpace) -> None:
        for context in self.contexts(space):
            self.set_root(space, context)

    # --- tables ------------------------------------------------------------------------------------------------

    def table(self, space: GpuVaSpace, level: int, key: int, *, big: bool = False) -> ProcessTable:
        """The table at ``level`` with ``key`` (a 64 KB-page leaf table with ``big``), created all invalid if it
        does not exist yet (not yet pointed at: :meth:`leaf`, :meth:`leaf64` and :meth:`path` do that)."""
        found = space.leaves64.get(key) if big else space.tables.get((level, key))
        if found is not None:
            return found
        with self._system():
            table = self._create(space, level, key, big=big)
        # Making room may have moved allocations mapped here, whose entries may have needed this very table.
        found = space.leaves64.get(key) if big else space.tables.get((level, key))
        if found is not None:
            self._unplace(table)
            return found
        if big:
            space.leaves64[key] = table
        else:
            space.tables[(level, key)] = table
        with self._system():
            self._initialise(table)
        return table

    def _create(
        self, space: GpuVaSpace, level: int, key: int, *, big: bool = False, entries: int | None = None
    ) -> ProcessTable:
        """A table placed in its level's segment and reachable, not yet recorded nor initialised (a resizable
        root of ``entries`` entries, default the space's ``root_entries``)."""
        desc = self.mmu.levels[level]
        segment = self.segments.get(desc.PageTableSegmentId, "PageTableSegmentId")
        if big:
            size = -(-self.mmu.caps.LeafPageTableSizeFor64KPagesInBytes // PAGE_SIZE) * PAGE_SIZE
            count = self.entries64()
        elif level == self.top:
            count = space.root_entries if entries is None else entries
            size = (
                self.root_size(count)[0]
                if self.mmu.resizable_root
                else -(-desc.PageTableSizeInBytes // PAGE_SIZE) * PAGE_SIZE
            )
        else:
            size = -(-desc.PageTableSizeInBytes // PAGE_SIZE) * PAGE_SIZE
            count = self.entries(level)
        alignment = max(desc.PageTableAlignmentInBytes, PAGE_SIZE)
        table = ProcessTable(level, key, segment.id, 0, size, space=space, big=big, entries=count)
        with self.hold(space):
            table.offset = self.place(segment, size, table, alignment if alignment & (alignment - 1) == 0 else 0)
        self.reach(table)
        return table

    def _initialise(self, table: ProcessTable) -> None:
        """``UpdatePageTable`` with ``InitialUpdate``: every entry invalid."""
        self.invalidate_all(table, initial=True)
        if self.on_created is not None:
            self.on_created(table)

    def _unplace(self, table: ProcessTable) -> None:
        """A table placed but never used: its range and window go back."""
        self.segments.get(table.segment_id).free(table.offset)
        if table.window:
            self.retired.append(table.window - self.window_base)
            table.window = 0

    def place(self, segment: SegmentSpace, size: int, table: ProcessTable, alignment: int) -> int:
        """A range for a table, from the top of the segment (tables do not cut the space allocations share
        into pieces); when the segment is full, room is made for it (tables come first)."""
        offset = segment.allocate(size, table, alignment=alignment, from_end=True)
        if offset is None:
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
        size = max(table.size, VA_ALIGNMENT)
        start = self.windows.allocate(size, alignment=VA_ALIGNMENT)
        if start is None and self.retired:
            self.paging.wait(self.paging.flush())  # nothing built before can still write through them
            for retired in self.retired:
                self.windows.free(retired)
            self.retired.clear()
            start = self.windows.allocate(size, alignment=VA_ALIGNMENT)
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
        notify_eviction: bool = False,
        source: tuple[int, int] | None = None,
    ) -> None:
        """``UpdatePageTable`` of ``entries`` from ``start`` in ``table``, in the driver's update mode; ``source``:
        the allocation whose pages the entries map and the byte offset of the first (``hAllocation``,
        ``AllocationOffsetInBytes``; NULL for tables and for entries of no allocation)."""
        self._changing(table.space)
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
            va = table.window if self.address is None else self.address(table)
            where = DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=va)
        elif self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
            where = DXGK_PAGETABLEUPDATEADDRESS(
                GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=table.segment_id, SegmentOffset=table.offset)
            )
        else:
            assert table.cpu is not None
            self.paging.wait_within(self.paging.flush())  # the CPU writes now: nothing in flight may read it
            where = DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=table.cpu.pointer(0))
        self.stream.build(
            DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
                PageTableLevel=table.level,
                PageTableAddress=where,
                pPageTableEntries=entries,
                StartIndex=start,
                NumPageTableEntries=int(entries.shape[0]),
                Flags=DXGK_UPDATEPAGETABLEFLAGS(
                    InitialUpdate=initial, Use64KBPages=use_64k, NotifyEviction=notify_eviction
                ),
                UpdateMode=self.mode,
                pPageTableEntries64KB=big,
                DriverProtection=protection if table.level == 0 else 0,
                hAllocation=HANDLE(0 if source is None else source[0]),
                AllocationOffsetInBytes=0 if source is None else source[1],
            )
        )

    def path(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The level-1 table covering ``va``, with every level above pointing down to it."""
        if self.mmu.index(va, self.top) >= space.root_entries:
            self.grow_root(space, self.mmu.index(va, self.top) + 1)
        parent = space.tables[(self.top, 0)]
        for level in range(self.top - 1, 0, -1):
            key = self.key(level, va)
            fresh = (level, key) not in space.tables
            table = self.table(space, level, key)
            if fresh:
                entry = pte_array(1)
                entry["Flags"] = pte_flags(Valid=1, Segment=table.segment_id)
                entry["PageAddress"] = table.offset >> PAGE_SHIFT
                self.update(parent, self.mmu.index(va, level + 1), entry)
            parent = table
        return parent

    def _attach(self, space: GpuVaSpace, level: int, key: int) -> None:
        """Bring back one table above the leaves (its parent is back already) and point the parent at it."""
        first = self.coverage(level, key)[0]
        table = self.table(space, level, key)
        parent = space.tables[(level + 1, self.key(level + 1, first))]
        entry = pte_array(1)
        entry["Flags"] = pte_flags(Valid=1, Segment=table.segment_id)
        entry["PageAddress"] = table.offset >> PAGE_SHIFT
        self.update(parent, self.mmu.index(first, level + 1), entry)

    def leaf(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The 4 KB-page leaf table covering ``va``, with every level above pointing down to it.  In single-PTE
        mode a range with a 64 KB-page table is converted first (a 4 KB entry is needed there)."""
        key = self.key(0, va)
        found = space.tables.get((0, key))
        if found is not None:
            return found
        if not self.dual and key in space.leaves64:
            self.convert_to_4k(space, key)
            return space.tables[(0, key)]
        with self.hold(space):
            self.path(space, va)
            table = self.table(space, 0, key)
            self.point_down(space, va)
        return table

    def leaf64(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The 64 KB-page leaf table of ``va``'s 2 MiB, created invalid and pointed at."""
        key = self.key(0, va)
        found = space.leaves64.get(key)
        if found is not None:
            return found
        with self.hold(space):
            self.path(space, va)
            table = self.table(space, 0, key, big=True)
            self.point_down(space, va)
        return table

    def kind64(self, space: GpuVaSpace, va: int) -> bool | None:
        """Single-PTE mode: whether ``va``'s range has a 64 KB-page table (True), a 4 KB one (False), or none."""
        key = self.key(0, va)
        if key in space.leaves64:
            return True
        return False if (0, key) in space.tables else None

    def point_down(self, space: GpuVaSpace, va: int) -> None:
        """The level-1 entry for ``va``: a large page, or its leaf tables -- with dual PTEs the 4 KB and the
        64 KB one; without, the one there is, its kind in ``PageTablePageSize``."""
        key = self.key(0, va)
        small_table = space.tables.get((0, key))
        big_table = space.leaves64.get(key)
        entry = pte_array(1)
        big = pte_array(1) if self.dual else None
        use_64k = False
        large = space.large.get(key)
        if large is not None:
            entry[0] = large[0]
        elif self.dual:
            assert big is not None
            if small_table is not None:
                entry["Flags"] = pte_flags(Valid=1, Segment=small_table.segment_id)
                entry["PageAddress"] = small_table.offset >> PAGE_SHIFT
            if big_table is not None:
                big["Flags"] = pte_flags(Valid=1, Segment=big_table.segment_id)
                big["PageAddress"] = big_table.offset >> PAGE_SHIFT
        elif big_table is not None:
            entry["Flags"] = pte_flags(
                Valid=1,
                Segment=big_table.segment_id,
                PageTablePageSize=DXGK_PTE_PAGE_SIZE.DXGK_PTE_PAGE_TABLE_PAGE_64KB,
            )
            entry["PageAddress"] = big_table.offset >> PAGE_SHIFT
            use_64k = True
        elif small_table is not None:
            entry["Flags"] = pte_flags(
                Valid=1,
                Segment=small_table.segment_id,
                PageTablePageSize=DXGK_PTE_PAGE_SIZE.DXGK_PTE_PAGE_TABLE_PAGE_4KB,
            )
            entry["PageAddress"] = small_table.offset >> PAGE_SHIFT
        parent = space.tables[(1, self.key(1, va))]
        self.update(parent, self.mmu.index(va, 1), entry, big=big, use_64k=use_64k)

    def set_large(self, space: GpuVaSpace, key: int, entry: PteArray) -> None:
        """The level-1 entry of ``key``'s 2 MiB maps a large page (its leaf entries are already invalid)."""
        current = space.large.get(key)
        if current is not None and bytes(current.tobytes()) == bytes(entry.tobytes()):
            return
        with self.hold(space):
            self.path(space, key * self.span1)
            space.large[key] = entry
            self.point_down(space, key * self.span1)

    def clear_large(self, space: GpuVaSpace, key: int) -> None:
        """Back to the leaf tables (their entries are already written)."""
        if space.large.pop(key, None) is not None:
            self.point_down(space, key << self.mmu.shift(1))

    def free_table(self, table: ProcessTable) -> None:
        """Free a table nothing points at any more (its range was flushed from the TLB): with
        ``ExplicitPageTableInvalidation`` each of its entries is invalidated through ``UpdatePageTable`` first."""
        if self.on_freed is not None:
            self.on_freed(table)
        if self.explicit_invalidation:
            self.invalidate_all(table)
        self.segments.get(table.segment_id).free(table.offset)
        if table.window:
            self.retired.append(table.window - self.window_base)
            table.window = 0
        table.cpu = None

    # --- tables no region needs --------------------------------------------------------------------------------

    def needed(self, space: GpuVaSpace, lo: int, hi: int) -> bool:
        return any(r.base < hi and lo < r.end for r in space.regions.values())

    def prune(self, space: GpuVaSpace, lo: int, hi: int) -> None:
        """After ``[lo, hi)`` was released: free the tables under it that no region needs any more, leaves
        first -- each parent entry invalidated and the range flushed from the TLB before the table is freed --
        then shrink a resizable root the remaining VAs no longer need."""
        if space.evicted:
            space.saved = {k for k in space.saved if self.needed(space, *self.coverage(max(k[0], 0), k[1]))}
            return
        for level in range(self.top):
            span = 1 << self.mmu.shift(level + 1)
            doomed: list[ProcessTable] = []
            entries_gone: list[int] = []
            for key in range(lo // span, (hi - 1) // span + 1):
                if self.needed(space, key * span, (key + 1) * span):
                    continue
                candidates = [space.tables.pop((level, key), None)]
                had_large = False
                if level == 0:
                    candidates.append(space.leaves64.pop(key, None))
                    had_large = space.large.pop(key, None) is not None
                found = [t for t in candidates if t is not None]
                doomed += found
                if found or had_large:
                    entries_gone.append(key)
            for key in entries_gone:  # the parent entries first
                first = key * span
                if level == 0:
                    if (1, self.key(1, first)) in space.tables:
                        self.point_down(space, first)
                else:
                    parent = space.tables.get((level + 1, self.key(level + 1, first)))
                    if parent is not None:
                        self.update(parent, self.mmu.index(first, level + 1), pte_array(1))
            for key in entries_gone:  # then no translation through them survives in the TLB
                self.flush_range(space, key * span, span)
            for table in doomed:
                self.free_table(table)
        self.shrink_root(space)

    # --- single-PTE mode: 64 KB -> 4 KB --------------------------------------------------------------------

    def convert_to_4k(self, space: GpuVaSpace, key: int) -> None:
        """Single-PTE mode, a 4 KB entry is needed in a range with a 64 KB-page table (DOC:support-for-64kb-pages):
        (1) every context of the process is suspended, (2) the range's entries are written as 4 KB pages into a
        new 4 KB-page table, (3) the level-1 entry points at it with ``PageTablePageSize`` 4KB, (4) the contexts
        resume once that ran.  The old table is then flushed from the TLB and freed.  Never the other way."""
        assert self.render is not None
        with self.hold(space):
            self.suspend(space, "64KB->4KB")
            lo = key * self.span1
            self.table(space, 0, key)  # (2) a 4 KB-page table, written before anything points at it
            old = space.leaves64.pop(key, None)
            if old is None:  # making room for it moved an allocation mapped here, which converted the range
                return
            self.render(space, lo, lo + self.span1)
            self.point_down(space, lo)  # (3)
            self.flush_range(space, lo, self.span1)
            self.free_table(old)
            self.conversions += 1
            self.events.emit(PageTableConverted(time=self.events.clock.now, process=int(space.process.handle), va=lo))
            self.resume(space)  # (4)

    # --- moving a whole tree ---------------------------------------------------------------------------------

    def invalidate_all(self, table: ProcessTable, *, initial: bool = False, notify_eviction: bool = False) -> None:
        """``UpdatePageTable`` of every entry of ``table`` to invalid (both kinds for a dual level-1 table)."""
        count = self.count(table)
        dual_level1 = self.dual and table.level == 1 and not table.big
        self.update(
            table,
            0,
            pte_array(count),
            big=pte_array(count) if dual_level1 else None,
            use_64k=table.big,
            initial=initial,
            notify_eviction=notify_eviction,
        )

    def _free_tree(self, space: GpuVaSpace, tables: list[ProcessTable]) -> int:
        """Flush every translation under the root, then free ``tables`` (their entries already invalid where they
        had to be) and forget the tree's tables; returns the bytes freed."""
        self._flush_root(self.root_address(space))
        explicit, self.explicit_invalidation = self.explicit_invalidation, False  # invalidated by the caller
        try:
            for table in tables:
                self.free_table(table)
        finally:
            self.explicit_invalidation = explicit
        space.tables.clear()
        space.leaves64.clear()
        space.large.clear()
        return sum(t.size for t in tables)

    def destroy_tree(self, space: GpuVaSpace) -> int:
        """The process is gone (no context runs in ``space`` any more): every table of the tree is freed, after
        a flush of every translation under its root -- each table's entries invalidated first only when the
        driver asks for ``ExplicitPageTableInvalidation``.  An evicted tree has only records left.  Returns the
        bytes freed."""
        if space.evicted:
            space.saved.clear()
            return 0
        tables = self.all_tables(space)
        if self.explicit_invalidation:
            for table in tables:
                self.invalidate_all(table)
        freed = self._free_tree(space, tables)
        self.paging.wait(self.paging.flush())
        return freed

    def evict_tree(self, space: GpuVaSpace) -> int:
        """Memory pressure: the tree of an idle process leaves its segment; returns the bytes freed.

        Every context of the process is idle first (its work in flight completes).  Each table gets an
        ``UpdatePageTable`` with ``NotifyEviction`` that invalidates all its entries (which also satisfies
        ``ExplicitPageTableInvalidation``), the process's translations are flushed from the TLB, and the
        ranges are freed.  VidMm keeps its records; :meth:`ensure` rebuilds the tree from them.
        """
        assert not space.evicted
        assert not space.busy
        self.quiesce(space.process)
        if space.privileged is not None and not space.privileged.evicted:
            self.evict_tree(space.privileged)  # it maps these tables: it goes first, and comes back after
        tables = self.all_tables(space)
        for table in tables:
            self.invalidate_all(table, notify_eviction=True)
        saved = {k for k in space.tables if k[0] != self.top} | {(LEAF64, k) for k in space.leaves64}
        freed = self._free_tree(space, tables)
        space.saved = saved
        space.evicted = True
        space.suspended = False
        self.events.emit(
            PageTablesEvicted(
                time=self.events.clock.now, process=int(space.process.handle), tables=len(tables), bytes=freed
            )
        )
        return freed

    def ensure(self, space: GpuVaSpace) -> None:
        """The tree is in place: an evicted one comes back -- the root and every table it had placed again and
        initialised, every entry written from the records, the parents pointing at the new places -- and every
        context of the process is re-pointed at the new root (the contexts could not run meanwhile)."""
        self.stamp(space)
        if not space.evicted:
            return
        assert self.render is not None
        with self.hold(space):
            root = self._create(space, self.top, 0)  # still evicted: writes made meanwhile go to the records only
            space.evicted = False
            saved, space.saved = space.saved, set()
            space.tables[(self.top, 0)] = root
            self._initialise(root)
            for level, key in sorted(saved, key=lambda k: (-k[0], k[1])):
                if level == LEAF64:
                    self.leaf64(space, key * self.span1)
                elif level == 0:
                    self.leaf(space, key * self.span1)
                else:
                    self._attach(space, level, key)
            for region in sorted(space.regions.values(), key=lambda r: r.base):
                self.render(space, region.base, region.end)
            self.paging.wait(self.paging.flush())  # the tree is written before a context can walk it
            self.set_roots(space)
            if space.privileged is not None:
                self.ensure(space.privileged)
            self.events.emit(
                PageTablesRestored(
                    time=self.events.clock.now,
                    process=int(space.process.handle),
                    tables=len(space.tables) + len(space.leaves64),
                )
            )

    def copy_address(self, table: ProcessTable) -> int:
        """The VA ``CopyPageTableEntries`` names ``table`` by (64 KB aligned): its privileged VA on a companion,
        else its paging-process window (given one on demand when tables are otherwise updated physically)."""
        if self.address is not None:
            return self.address(table)
        if not table.window:
            self.window(table)
        return table.window

    # --- the TLB -----------------------------------------------------------------------------------------------

    def flush_range(self, space: GpuVaSpace, va: int, size: int) -> None:
        """``FlushTlb`` of ``[va, va + size)`` for the process's root."""
        if space.evicted:
            return
        self._changing(space)
        self.stream.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                RootPageTableAddress=self.root_address(space), StartVirtualAddress=va, EndVirtualAddress=va + size - 1
            )
        )

    def _flush_root(self, root: D3DGPU_PHYSICAL_ADDRESS) -> None:
        """``FlushTlb`` of every translation under ``root`` (Start = End = 0)."""
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=root, StartVirtualAddress=0, EndVirtualAddress=0)
        )
