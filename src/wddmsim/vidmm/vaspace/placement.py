"""Where a page table lives: placed in the segment its level names, reachable, initialised, freed.

Each table is a range of the segment the driver names for its level (``PageTableSegmentId``), taken from the
top of the segment, created all invalid by ``UpdatePageTable`` with ``InitialUpdate`` (wddm-spec section 2.5;
decision 0016).  It is reached the way the driver's update mode names tables: with ``GPU_VIRTUAL`` each table is
mapped into a window of the system paging process's VA space when it is created (a window freed is handed out
again only after everything built before has run); with ``CPU_VIRTUAL`` through a CPU mapping of the BAR.  A
table no region needs any more is freed (with ``ExplicitPageTableInvalidation`` every entry invalidated first).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from wddmsim.core.addresses import SegmentId, SegmentOffset
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.driver import DXGKARG_GETROOTPAGETABLESIZE
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_FLUSHTLB
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT, Mode, TableBase

RETIRED_WINDOWS: Final = 256
"""Windows of freed tables kept retired before they are all handed out again (one wait for the paging engine per
this many): the windows in use stay below live tables + this many, and so do the paging process's own tables
that map them (decision 0202)."""


class TablePlacement(TableBase):
    """Places, reaches, initialises and frees single tables of a tree."""

    def root_size(self, entries: int) -> tuple[int, int]:
        """``DxgkDdiGetRootPageTableSize``: bytes for ``entries`` root entries, and how many that size holds."""
        args = DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=entries)
        size = self.driver.get_root_page_table_size(args)
        return size, args.NumberOfPte

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
        table = ProcessTable(
            level, key, SegmentId(segment.id), SegmentOffset(0), size, space=space, big=big, entries=count
        )
        with self.hold(space):
            table.offset = self.place(segment, size, table, alignment if alignment & (alignment - 1) == 0 else 0)
        self.reach(table)
        return table

    def _initialise(self, table: ProcessTable) -> None:
        """``UpdatePageTable`` with ``InitialUpdate``: every entry invalid."""
        self.invalidate_all(table, initial=True)
        self.hooks.table_created(table)

    def _unplace(self, table: ProcessTable) -> None:
        """A table placed but never used: its range and window go back."""
        self.segments.get(table.segment_id).free(table.offset)
        if table.window:
            self.retired.append(table.window - self.window_base)
            table.window = 0

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
        if len(self.retired) >= RETIRED_WINDOWS:
            self._reclaim_windows()  # else windows march up the region, and the paging process's tables with them
        start = self.windows.allocate(size, alignment=VA_ALIGNMENT)
        if start is None and self.retired:
            self._reclaim_windows()
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

    def _reclaim_windows(self) -> None:
        """The retired windows may be handed out again once everything built so far has run (nothing built before
        can still write through them)."""
        self.paging.wait(self.paging.flush())
        for retired in self.retired:
            self.windows.free(retired)
        self.retired.clear()

    def copy_address(self, table: ProcessTable) -> int:
        """The VA ``CopyPageTableEntries`` names ``table`` by (64 KB aligned): its privileged VA on a companion,
        else its paging-process window (given one on demand when tables are otherwise updated physically)."""
        if self.address is not None:
            return self.address(table)
        if not table.window:
            self.window(table)
        return table.window

    def free_table(self, table: ProcessTable) -> None:
        """Free a table nothing points at any more (its range was flushed from the TLB): with
        ``ExplicitPageTableInvalidation`` each of its entries is invalidated through ``UpdatePageTable`` first."""
        self.hooks.table_freed(table)
        if self.explicit_invalidation:
            self.invalidate_all(table)
        self.segments.get(table.segment_id).free(table.offset)
        if table.window:
            self.retired.append(table.window - self.window_base)
            table.window = 0
        table.cpu = None
