"""The shape of a tree: each level pointing at the one below, the resizable root, and tables no region needs.

A level-1 entry points at a 4 KB-page leaf table and, with dual PTEs, a 64 KB-page leaf table for the same
2 MiB; without dual PTEs at one of them (``PageTablePageSize``), and a 64 KB-page range is converted to 4 KB
pages -- once, never back -- when a 4 KB entry is needed there (single-PTE mode); or it maps a large page
(decisions 0011, 0022).  The root is programmed into the process's contexts with ``DxgkDdiSetRootPageTable``;
a 2-level root is resizable (``DxgkDdiGetRootPageTableSize``, wddm-spec section 2.6): it grows with the VAs used
and shrinks when VAs at the top are freed (decision 0021) -- a new root, the entries kept written into it,
every context re-pointed while idle, the old root flushed from the TLB and freed.  A table no region needs any
more is freed, its parent entry invalidated and flushed first.
"""

from __future__ import annotations

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.pte import DXGK_PTE_PAGE_SIZE, PteArray, pte_array, pte_flags
from wddmsim.vidmm.events import PageTableConverted
from wddmsim.vidmm.vaspace.placement import TablePlacement
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable


class TableLinks(TablePlacement):
    """Links tables into a tree: paths from the root to the leaves, large pages, root size, pruning."""

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

    # --- the root ----------------------------------------------------------------------------------------------

    def create_root(self, space: GpuVaSpace) -> None:
        if self.mmu.resizable_root:  # a 2-level root starts small and grows with the VAs used
            space.root_entries = self.root_size(1)[1]
        else:
            space.root_entries = self.entries(self.top)
        self.table(space, self.top, 0)

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
                self.flush_range(space, GpuVa(key * span), span)
            for table in doomed:
                self.free_table(table)
        self.shrink_root(space)

    # --- single-PTE mode: 64 KB -> 4 KB --------------------------------------------------------------------

    def convert_to_4k(self, space: GpuVaSpace, key: int) -> None:
        """Single-PTE mode, a 4 KB entry is needed in a range with a 64 KB-page table (DOC:support-for-64kb-pages):
        (1) every context of the process is suspended, (2) the range's entries are written as 4 KB pages into a
        new 4 KB-page table, (3) the level-1 entry points at it with ``PageTablePageSize`` 4KB, (4) the contexts
        resume once that ran.  The old table is then flushed from the TLB and freed.  Never the other way."""
        with self.hold(space):
            self.suspend(space, "64KB->4KB")
            lo = key * self.span1
            self.table(space, 0, key)  # (2) a 4 KB-page table, written before anything points at it
            old = space.leaves64.pop(key, None)
            if old is None:  # making room for it moved an allocation mapped here, which converted the range
                return
            self.hooks.render(space, lo, lo + self.span1)
            self.point_down(space, lo)  # (3)
            self.flush_range(space, GpuVa(lo), self.span1)
            self.free_table(old)
            self.conversions += 1
            self.events.emit(PageTableConverted(time=self.events.clock.now, process=int(space.process.handle), va=lo))
            self.resume(space)  # (4)
