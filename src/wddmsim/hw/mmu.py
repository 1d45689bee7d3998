"""The GPU MMU: page-table walks in simulated memory, and a TLB that keeps what it read until told to forget.

Layout.  ``index_bits`` gives the index width of each level, leaf first, as the OS sees it: a leaf entry maps
4 KiB, so the VA is 12 offset bits, then ``index_bits[0]`` bits of leaf index, then each higher level's bits.
Entries are 8 bytes (:mod:`.pte`), except level-1 entries of a dual-PTE MMU, which are 16: a pointer to a
4 KB-page leaf table and a pointer to a 64 KB-page leaf table covering the same range.  Without dual PTEs a
level-1 entry points to one leaf table, whose kind its ``Leaf64K`` bit gives.  A 64 KB leaf table has one entry
per 64 KiB (``entries(0) / 16``).  ``gpu_page_shift`` is the hardware page of the 4 KB-kind leaf table: with
16 KiB GPU pages (shift 14) that table has ``entries(0) / 4`` entries, each mapping 16 KiB.

TLB.  Translations are cached per (root, level-1 region): a snapshot of the region's leaf tables, or the large
page covering it.  A page-table change is invisible to the GPU until a TLB_INVALIDATE covering it executes -- a
missing flush shows as a stale translation, as on hardware.  With ``caches_invalid`` off, an access that hits
an invalid entry in a cached snapshot re-walks before it faults (``DXGK_GPUMMUCAPS.InvalidTlbEntriesNotCached``).

Faults carry the VA, the access and the level where the walk failed.  Where a 4 KB and a 64 KB leaf entry of
the same 64 KiB are both valid -- which the documents forbid -- the access faults rather than pick one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.hw import leafpath
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.memory import LocalMemory, PhysicalMemory, SystemMemory
from wddmsim.hw.pte import HW_PTE, PTE_SIZE, TablePointer, Target

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

_VALID: Final = np.uint64(HW_PTE["Valid"].shifted_mask)
_ZERO: Final = np.uint64(HW_PTE["Zero"].shifted_mask)
_READ_ONLY: Final = np.uint64(HW_PTE["ReadOnly"].shifted_mask)
_NO_EXECUTE: Final = np.uint64(HW_PTE["NoExecute"].shifted_mask)
_TARGET_SHIFT: Final = np.uint64(HW_PTE["Target"].lsb)
_ADDRESS_SHIFT: Final = np.uint64(HW_PTE["Address"].lsb)
_ADDRESS_MASK: Final = np.uint64(HW_PTE["Address"].mask)
_ADDRESS_LSB: Final = HW_PTE["Address"].lsb
_ADDRESS_BITS: Final = HW_PTE["Address"].mask
_TARGET_LSB: Final = HW_PTE["Target"].lsb
_ZERO_BIT: Final = HW_PTE["Zero"].shifted_mask
_READ_ONLY_BIT: Final = HW_PTE["ReadOnly"].shifted_mask
_NO_EXECUTE_BIT: Final = HW_PTE["NoExecute"].shifted_mask
_LARGE_BIT: Final = HW_PTE["LargePage"].shifted_mask
_LEAF64_BIT: Final = HW_PTE["Leaf64K"].shifted_mask
PAGES_PER_64K: Final = 16
_PAGE_MASK: Final = PAGE_SIZE - 1
_WRITE: Final = AccessKind.WRITE  # enum members read once (class attribute access is slow)
_EXECUTE: Final = AccessKind.EXECUTE

Run = tuple[PhysicalMemory | None, int, int]
"""``(memory, offset, length)``; memory ``None`` is a Zero page: reads return zero, writes are dropped."""


@dataclass(frozen=True, slots=True)
class MmuLayout:
    """Index bits per level (leaf first, as the OS sees them) and the hardware's page-table options."""

    index_bits: tuple[int, ...]
    dual_pte: bool = False
    gpu_page_shift: int = PAGE_SHIFT
    _shifts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """:meth:`shift` of every level and one past the root, worked out once (every translation asks for them)."""
    levels: int = field(init=False, repr=False, compare=False)
    """How many levels (a field, not a property: the driver's page-table checks read it on every call)."""

    def __post_init__(self) -> None:
        shifts = [PAGE_SHIFT]
        for bits in self.index_bits:
            shifts.append(shifts[-1] + bits)
        object.__setattr__(self, "_shifts", tuple(shifts))
        object.__setattr__(self, "levels", len(self.index_bits))
        if not 2 <= len(self.index_bits) <= 6 or any(b <= 0 for b in self.index_bits):
            raise ValueError(f"index_bits={self.index_bits}: need 2 to 6 levels of at least one bit each")
        if self.index_bits[0] < 4:
            raise ValueError(f"index_bits={self.index_bits}: a leaf table must cover at least 64 KiB")
        if not PAGE_SHIFT <= self.gpu_page_shift <= PAGE_SHIFT + 4:
            raise ValueError(f"gpu_page_shift={self.gpu_page_shift}: GPU pages are 4 KiB to 64 KiB")

    @property
    def va_bits(self) -> int:
        return PAGE_SHIFT + sum(self.index_bits)

    def shift(self, level: int) -> int:
        """Bit position of the lowest index bit of ``level`` (= log2 of one entry's coverage)."""
        return self._shifts[level]

    def entries(self, level: int) -> int:
        return 1 << self.index_bits[level]

    def entry_size(self, level: int) -> int:
        return 2 * PTE_SIZE if self.dual_pte and level == 1 else PTE_SIZE

    def table_size(self, level: int) -> int:
        """Bytes of a table at ``level`` (the 4 KB-kind leaf table for level 0)."""
        if level == 0:
            return self.hw_leaf_entries * PTE_SIZE
        return self.entries(level) * self.entry_size(level)

    @property
    def gpu_page_ratio(self) -> int:
        """4 KiB OS pages per GPU page."""
        return 1 << (self.gpu_page_shift - PAGE_SHIFT)

    @property
    def hw_leaf_entries(self) -> int:
        return self.entries(0) // self.gpu_page_ratio

    @property
    def leaf64_entries(self) -> int:
        return self.entries(0) // PAGES_PER_64K

    @property
    def leaf64_table_size(self) -> int:
        return self.leaf64_entries * PTE_SIZE

    def index(self, va: int, level: int) -> int:
        return (va >> self.shift(level)) & (self.entries(level) - 1)


@dataclass(frozen=True, slots=True)
class _Region:
    """A cached translation of one level-1 region: its leaf tables (4 KB kind, 64 KB kind), or a large page.

    ``pages`` remembers, per (4 KiB page, access kind), what an access inside one page resolved to --
    ``(memory, page address)`` -- so a repeated access is a lookup; it lives and dies with the snapshot it was
    derived from."""

    small: U64 | None = None
    big: U64 | None = None
    large: int = -1
    large_level: int = 0
    pages: dict[int, tuple[PhysicalMemory | None, int]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class WalkStep:
    """One level of a walk, for introspection (``wddmsim vm-decode``)."""

    level: int
    table: TablePointer
    index: int
    words: tuple[int, ...]
    kind: str
    """``"table"`` (points down), ``"leaf"``, ``"leaf64k"``, ``"large"``, ``"zero"`` or ``"invalid"``."""


@dataclass(frozen=True, slots=True)
class Walk:
    """One VA walked (``wddmsim vm-decode``): the levels read, and where the VA leads or why it faults."""

    va: GpuVa
    steps: tuple[WalkStep, ...]
    target: Target | None = None
    address: int | None = None
    zero: bool = False
    fault: str = ""
    extra: dict[str, int] = field(default_factory=dict)


@final
class Mmu:
    """Translates GPU VAs for any address space, given its root table."""

    __slots__ = (
        "_last_regions",
        "_last_root",
        "_leaf_mask",
        "_level1",
        "_memories",
        "_ratio",
        "_region_shift",
        "_top_level",
        "_top_shift",
        "_upper",
        "_va_limit",
        "_write_pages",
        "caches_invalid",
        "layout",
        "local",
        "system",
        "tlb",
        "walks",
    )

    def __init__(
        self, layout: MmuLayout, local: LocalMemory, system: SystemMemory, *, caches_invalid: bool = True
    ) -> None:
        self.layout = layout
        self.local = local
        self.system = system
        self.caches_invalid = caches_invalid
        self.tlb: dict[TablePointer, dict[int, _Region]] = {}
        """Per root: level-1 region number -> its cached translation."""
        self.walks = 0
        # The layout's numbers, computed once for the translation hot path.
        self._memories: tuple[PhysicalMemory, PhysicalMemory] = (local, system)  # indexed by Target
        self._region_shift = layout.shift(1)
        self._top_level = layout.levels - 1  # read on every translation: a property call saved
        self._top_shift = layout.shift(layout.levels - 1)
        self._va_limit = 1 << layout.va_bits
        self._leaf_mask = layout.entries(0) - 1
        self._last_root: TablePointer | None = None
        self._ratio = layout.gpu_page_ratio
        self._level1 = (layout.shift(1), layout.entries(1) - 1)
        self._upper = tuple(
            (level, layout.shift(level), layout.entries(level) - 1) for level in range(layout.levels - 1, 1, -1)
        )
        """``(level, shift, index mask)`` of each level above level 1, root first: what a walk steps through."""
        self._last_regions: dict[int, _Region] = {}
        self._write_pages: dict[TablePointer, dict[int, tuple[PhysicalMemory | None, int]]] = {}
        """Per root: the one-page WRITE translations its regions' ``pages`` hold, by VA page number, in one
        dictionary (:meth:`write_pages`); an entry goes exactly when its region does."""

    def memory(self, target: Target) -> PhysicalMemory:
        return self._memories[target]

    def _words(self, table: TablePointer, first: int, count: int, access: AccessKind) -> U64:
        mem = self.memory(table.target)
        if table.address % PTE_SIZE or not mem.contains(table.address + first * PTE_SIZE, count * PTE_SIZE):
            raise GpuFault(
                FaultKind.BUS_ERROR, table.address, f"page table at {table} leaves {mem.name}", access=access
            )
        start = table.address // PTE_SIZE + first
        words: U64 = mem.u64[start : start + count]
        return words

    def read_entry(self, table: TablePointer, index: int, level: int) -> tuple[int, ...]:
        """The word(s) of entry ``index`` of a table at ``level`` (two for dual level-1 entries)."""
        width = self.layout.entry_size(level) // PTE_SIZE
        return tuple(int(w) for w in self._words(table, index * width, width, AccessKind.READ))

    # --- walking ------------------------------------------------------------------------------------------

    def _walk_region(self, root: TablePointer, va: int, access: AccessKind) -> _Region:
        """Walk from the root down to the leaf tables covering ``va``'s level-1 region.

        Entries are read as plain integers (bit masks worked out once): a walk follows every flush, so its
        per-level cost is on the hot path."""
        self.walks += 1
        layout = self.layout
        target, address = int(root.target), root.address
        for level, shift, mask in self._upper:
            entry = self._entry(target, address, (va >> shift) & mask)
            if not entry & 1:
                raise GpuFault(FaultKind.PAGE_FAULT, va, f"level {level} entry is invalid", access=access, level=level)
            if entry & _LARGE_BIT or entry & _ZERO_BIT:
                return _Region(large=entry, large_level=level)  # a large page, or a Zero range
            target, address = (entry >> _TARGET_LSB) & 1, ((entry >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT
        shift, mask = self._level1
        index = (va >> shift) & mask
        if layout.dual_pte:
            first = self._entry(target, address, 2 * index)
            second = self._entry(target, address, 2 * index + 1)
        else:
            first = self._entry(target, address, index)
            second = 0
        if first & 1 and (first & _LARGE_BIT or first & _ZERO_BIT):
            return _Region(large=first, large_level=1)
        small = big = None
        if layout.dual_pte:
            if first & 1:
                small = self._leaf(first, layout.hw_leaf_entries, access)
            if second & 1:
                big = self._leaf(second, layout.leaf64_entries, access)
        elif first & 1:
            if first & _LEAF64_BIT:
                big = self._leaf(first, layout.leaf64_entries, access)
            else:
                small = self._leaf(first, layout.hw_leaf_entries, access)
        if small is None and big is None:
            raise GpuFault(FaultKind.PAGE_FAULT, va, "level 1 entry is invalid", access=access, level=1)
        return _Region(small=small, big=big)

    def _entry(self, target: int, address: int, index: int) -> int:
        """Word ``index`` of the table at ``address`` in ``target`` memory (a bus error if it leaves memory: the
        walk's own read of a table entry, so a ``READ`` whatever access the walk is for, as :meth:`read_entry`)."""
        mem = self._memories[target]
        at = address + index * PTE_SIZE
        if address % PTE_SIZE or at < 0 or at + PTE_SIZE > mem.size:
            table = TablePointer(Target(target), address)
            raise GpuFault(
                FaultKind.BUS_ERROR, address, f"page table at {table} leaves {mem.name}", access=AccessKind.READ
            )
        return int(mem.u64[at >> 3])

    def _leaf(self, pointer: int, count: int, access: AccessKind) -> U64:
        """A snapshot of the ``count`` entries of the leaf table ``pointer`` points to."""
        target, address = (pointer >> _TARGET_LSB) & 1, ((pointer >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT
        mem = self._memories[target]
        if address + count * PTE_SIZE > mem.size:  # an address from the field is whole pages: aligned, >= 0
            table = TablePointer(Target(target), address)
            raise GpuFault(FaultKind.BUS_ERROR, address, f"page table at {table} leaves {mem.name}", access=access)
        start = address >> 3
        words: U64 = mem.u64[start : start + count].copy()
        return words

    def _regions(self, root: TablePointer) -> dict[int, _Region]:
        """The TLB entries of ``root`` (the engine's root is one object for many accesses: found by identity)."""
        if root is self._last_root:
            return self._last_regions
        regions = self.tlb.get(root)
        if regions is None:
            regions = self.tlb[root] = {}
        self._last_root, self._last_regions = root, regions
        return regions

    def _region(self, root: TablePointer, va: int, access: AccessKind, *, refresh: bool = False) -> _Region:
        regions = self._regions(root)
        key = va >> self._region_shift
        region = regions.get(key)
        if region is None or refresh:
            fresh = self._walk_region(root, va, access)
            if region is not None:  # a re-walk replaces the snapshot: what it cached goes with it
                self._forget_writes(root, (region,))
            regions[key] = region = fresh
        return region

    def write_pages(
        self, root: TablePointer, root_entries: int | None
    ) -> tuple[dict[int, tuple[PhysicalMemory | None, int]], int]:
        """The cached one-page WRITE translations of ``root`` -- VA page number -> ``(memory, page address)``,
        memory ``None`` for a Zero page -- and the end of the VAs :meth:`translate` takes under ``root_entries``.

        A write of ``size`` bytes at ``va`` inside one page, below that end, whose page is in the dictionary,
        lands where :meth:`translate` would put it (the same cached answer, one lookup instead of a call): the
        engine's run of WRITE_QWORDS packets (decision 0232).  The dictionary is live -- filled as
        :meth:`translate` caches, emptied in place as the TLB forgets -- and any other write is for
        :meth:`translate`."""
        pages = self._write_pages.get(root)
        if pages is None:
            pages = self._write_pages[root] = {}
        end = self._va_limit
        if root_entries is not None:
            end = min(end, root_entries << self._top_shift)
        return pages, end

    def _forget_writes(self, root: TablePointer, regions: Iterable[_Region]) -> None:
        """Drop ``regions``' WRITE translations from :meth:`write_pages` (the regions are leaving the TLB)."""
        pages = self._write_pages.get(root)
        if not pages:
            return
        for region in regions:
            for key in region.pages:
                if key & 3 == _WRITE:
                    pages.pop(key >> 2, None)

    def invalidate(self, root: TablePointer, start: int, end: int) -> int:
        """Forget cached translations of ``root`` for VAs in [start, end]; ``start == end == 0`` means all."""
        regions = self.tlb.get(root)
        if not regions:
            return 0
        if start == 0 and end == 0:
            doomed = list(regions)
        else:
            lo, hi = start >> self._region_shift, end >> self._region_shift
            if hi - lo < len(regions):  # a flush of a few regions: look those up rather than scan the TLB
                doomed = [k for k in range(lo, hi + 1) if k in regions]
            else:
                doomed = [k for k in regions if lo <= k <= hi]
        self._forget_writes(root, [regions[key] for key in doomed])
        for key in doomed:
            del regions[key]
        if not regions:  # a root flushed whole (a freed root is): its TLB entry goes, the TLB does not grow
            del self.tlb[root]
            self._write_pages.pop(root, None)  # empty now
            if self._last_regions is regions:
                self._last_root, self._last_regions = None, {}
        return len(doomed)

    def stale_translations(self, root: TablePointer | None = None) -> list[tuple[TablePointer, int, str]]:
        """A coherence audit (not hardware behaviour): every valid translation the TLB holds -- for ``root``, or
        for every root -- that the page tables in memory no longer give, as ``(root, region VA, what differs)``.

        After a page-table change the TLB may keep the old translation until a TLB_INVALIDATE covering it runs;
        a stale translation still cached when work runs, or once the engines are idle, is a missing or late flush
        (reliability-plan I4).  Invalid cached entries are not stale: they re-walk before they fault."""
        out: list[tuple[TablePointer, int, str]] = []
        walks = self.walks
        roots = [root] if root is not None else list(self.tlb)
        for r in roots:
            for key, region in list(self.tlb.get(r, {}).items()):
                va = key << self._region_shift
                try:
                    fresh: _Region | None = self._walk_region(r, va, AccessKind.READ)
                except GpuFault:
                    fresh = None
                problem = _stale(region, fresh)
                if problem:
                    out.append((r, va, problem))
        self.walks = walks  # the audit is not traffic
        return out

    def invalidate_all(self) -> None:
        for pages in self._write_pages.values():
            pages.clear()  # in place: a holder of the dictionary sees it forget
        self._write_pages.clear()
        self.tlb.clear()
        self._last_root, self._last_regions = None, {}

    # --- translation ----------------------------------------------------------------------------------------

    def translate(
        self, root: TablePointer, va: int, size: int, access: AccessKind, *, root_entries: int | None = None
    ) -> list[Run]:
        """Physical runs behind VA bytes ``[va, va + size)``, checking every page's rights.

        ``root_entries`` is the root's ``NumEntries`` (``DxgkDdiSetRootPageTable``): a VA whose top-level index
        is at or beyond it faults.
        """
        if size <= 0:
            return []
        if va < 0 or va + size > self._va_limit:
            raise GpuFault(
                FaultKind.PAGE_FAULT, va, "address beyond the VA width", access=access, level=self._top_level
            )
        if root_entries is not None and (va + size - 1) >> self._top_shift >= root_entries:
            fault_va = max(va, root_entries << self._top_shift)
            raise GpuFault(
                FaultKind.PAGE_FAULT, fault_va, "beyond the root's NumEntries", access=access, level=self._top_level
            )
        offset = va & _PAGE_MASK
        if offset + size <= PAGE_SIZE:  # inside one page: a hit needs no walk and no vector work
            regions = self._last_regions if root is self._last_root else self._regions(root)
            region = regions.get(va >> self._region_shift)
            if region is not None:
                hit = region.pages.get((va >> PAGE_SHIFT) << 2 | access)
                if hit is not None:
                    mem, page = hit
                    return [(mem, page + offset if mem is not None else 0, size)]
        runs: list[Run] = []
        region_size = 1 << self._region_shift
        if va >> self._region_shift == (va + size - 1) >> self._region_shift:  # one region: the common case
            self._translate_in_region(root, va, size, access, runs)
            return runs
        cursor, end = va, va + size
        while cursor < end:
            region_end = min(end, (cursor // region_size + 1) * region_size)
            self._translate_in_region(root, cursor, region_end - cursor, access, runs)
            cursor = region_end
        return runs

    def _translate_in_region(self, root: TablePointer, va: int, size: int, access: AccessKind, runs: list[Run]) -> None:
        region = self._region(root, va, access)
        if region.large >= 0:
            self._large_page_run(region.large, region.large_level, va, size, access, runs)
            return
        if (va & (PAGE_SIZE - 1)) + size <= PAGE_SIZE and self._one_page(region, va, size, access, runs):
            if access == _WRITE:  # what _one_page cached, in the root's WRITE pages too
                page = va >> PAGE_SHIFT
                self.write_pages(root, None)[0][page] = region.pages[page << 2 | access]
            return
        first = (va >> PAGE_SHIFT) & self._leaf_mask
        last = ((va + size - 1) >> PAGE_SHIFT) & self._leaf_mask
        if self._uniform_run(region, first, last, va, size, access, runs):
            return
        if last - first < leafpath.SHORT_PAGES:
            self._short_runs(root, region, first, last, va, size, access, runs)
        else:
            self._vector_runs(root, region, first, last, va, size, access, runs)

    def _uniform_run(
        self, region: _Region, first: int, last: int, va: int, size: int, access: AccessKind, runs: list[Run]
    ) -> bool:
        """One physically contiguous stretch of 4 KB-kind or of 64 KB-kind entries (:func:`.leafpath.uniform`,
        :func:`.leafpath.uniform64`): one run, checked once; ``False``: the range is not one, nothing done."""
        ratio = self._ratio
        word = leafpath.uniform(region.small, region.big, ratio, first, last)
        if word >= 0:
            within = first % ratio
        else:
            word = leafpath.uniform64(region.small, region.big, ratio, first, last)
            if word < 0:
                return False
            within = first % PAGES_PER_64K
        leafpath.check_rights([word], va, access)
        mem = self._memories[(word >> _TARGET_LSB) & 1]
        base = (((word >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT) + (within << PAGE_SHIFT)
        base += va & _PAGE_MASK
        if base + size > mem.size:
            raise GpuFault(FaultKind.BUS_ERROR, base, f"page at {base:#x} is outside {mem.name}")
        runs.append((mem, base, size))
        return True

    def _short_runs(
        self,
        root: TablePointer,
        region: _Region,
        first: int,
        last: int,
        va: int,
        size: int,
        access: AccessKind,
        runs: list[Run],
    ) -> None:
        """A few pages: the entries as integers (:mod:`.leafpath`), the same answer as :meth:`_vector_runs`."""
        ratio = self._ratio
        words, addresses = leafpath.effective(region.small, region.big, ratio, first, last, va, access)
        if not self.caches_invalid and leafpath.any_invalid(words):
            region = self._region(root, va, access, refresh=True)
            words, addresses = leafpath.effective(region.small, region.big, ratio, first, last, va, access)
        leafpath.check_rights(words, va, access)
        leafpath.runs(words, addresses, va, size, self._memories, runs)

    def _vector_runs(
        self,
        root: TablePointer,
        region: _Region,
        first: int,
        last: int,
        va: int,
        size: int,
        access: AccessKind,
        runs: list[Run],
    ) -> None:
        """Many pages: numpy over the range's entries."""
        words, addresses = self._effective(region, first, last, va, access)
        if not self.caches_invalid and ((words & _VALID) == 0).any():
            region = self._region(root, va, access, refresh=True)
            words, addresses = self._effective(region, first, last, va, access)
        self._check_rights(words, va, access)
        self._runs(words, addresses, va, size, runs)

    def _one_page(self, region: _Region, va: int, size: int, access: AccessKind, runs: list[Run]) -> bool:
        """The common case of an access inside one 4 KiB page, without vector work; ``False``: take the long way."""
        page = (va >> PAGE_SHIFT) & self._leaf_mask
        word = 0
        address = 0
        if region.small is not None:
            ratio = self._ratio
            word = int(region.small[page // ratio])
            address = (((word >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT) + ((page % ratio) << PAGE_SHIFT)
        if region.big is not None:
            big = int(region.big[page // PAGES_PER_64K])
            if big & 1:
                if word & 1:
                    return False  # both kinds valid: the long way raises the documented fault
                word = big
                address = (((big >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT) + (
                    (page % PAGES_PER_64K) << PAGE_SHIFT
                )
        if not word & 1 or (access == _WRITE and word & _READ_ONLY_BIT and not word & _ZERO_BIT):
            return False
        if access == _EXECUTE and word & _NO_EXECUTE_BIT:
            return False
        key = (va >> PAGE_SHIFT) << 2 | access
        if word & _ZERO_BIT:
            region.pages[key] = (None, 0)
            runs.append((None, 0, size))
            return True
        mem = self._memories[(word >> _TARGET_LSB) & 1]
        start = address + (va & _PAGE_MASK)
        if start < 0 or start + size > mem.size:
            return False
        region.pages[key] = (mem, address)  # the whole page is in ``mem``: sizes are whole pages
        runs.append((mem, start, size))
        return True

    def _effective(self, region: _Region, first: int, last: int, va: int, access: AccessKind) -> tuple[U64, I64]:
        """Per 4 KiB page in [first, last]: the entry that maps it and the page's byte address."""
        pages = np.arange(first, last + 1, dtype=np.int64)
        words = np.zeros(pages.shape[0], dtype=np.uint64)
        addresses = np.zeros(pages.shape[0], dtype=np.int64)
        small_valid = big_valid = np.zeros(pages.shape[0], dtype=bool)
        if region.small is not None:
            ratio = self.layout.gpu_page_ratio
            small = region.small[pages // ratio]
            small_valid = (small & _VALID) != 0
            words = small
            addresses = _addresses(small) + ((pages % ratio) << PAGE_SHIFT)
        if region.big is not None:
            big = region.big[pages // PAGES_PER_64K]
            big_valid = (big & _VALID) != 0
            both = np.flatnonzero(small_valid & big_valid)
            if both.shape[0]:
                page_va = (va & ~(PAGE_SIZE - 1)) + int(both[0]) * PAGE_SIZE
                raise GpuFault(
                    FaultKind.PAGE_FAULT,
                    page_va,
                    "the 4 KB and 64 KB entries of one 64 KiB range are both valid",
                    access=access,
                    level=0,
                )
            words = np.where(big_valid, big, words)
            addresses = np.where(big_valid, _addresses(big) + ((pages % PAGES_PER_64K) << PAGE_SHIFT), addresses)
        return words, addresses

    def _check_rights(self, entries: U64, va: int, access: AccessKind) -> None:
        page_va = va & ~(PAGE_SIZE - 1)
        bad = (entries & _VALID) == 0
        if access == AccessKind.WRITE:
            bad |= ((entries & _READ_ONLY) != 0) & ((entries & _ZERO) == 0)
        elif access == AccessKind.EXECUTE:
            bad |= (entries & _NO_EXECUTE) != 0
        hits = np.flatnonzero(bad)
        if hits.shape[0]:
            index = int(hits[0])
            entry = int(entries[index])
            fault_va = page_va + index * PAGE_SIZE if index else va
            what = "invalid" if not entry & 1 else ("read-only" if access == AccessKind.WRITE else "no-execute")
            raise GpuFault(FaultKind.PAGE_FAULT, fault_va, f"leaf entry is {what}", access=access, level=0)

    def _runs(self, words: U64, addresses: I64, va: int, size: int, runs: list[Run]) -> None:
        offset_in_page = va & (PAGE_SIZE - 1)
        targets = ((words >> _TARGET_SHIFT) & np.uint64(1)).astype(np.int64)
        zero = ((words & _ZERO) != 0).astype(np.int64)
        # A run continues while the next page is the physically next page of the same memory.
        key = targets * 2 + zero
        breaks = np.flatnonzero((np.diff(addresses) != PAGE_SIZE) | (np.diff(key) != 0) | (zero[1:] != 0)) + 1
        starts = np.concatenate(([0], breaks)).tolist()
        stops = [*starts[1:], int(words.shape[0])]
        remaining = size
        for start, stop in zip(starts, stops, strict=True):
            skip = offset_in_page if start == 0 else 0
            length = min((stop - start) * PAGE_SIZE - skip, remaining)
            if zero[start]:
                runs.append((None, 0, length))
            else:
                mem = self.memory(Target(int(targets[start])))
                base = int(addresses[start]) + skip
                if not mem.contains(base, length):
                    raise GpuFault(FaultKind.BUS_ERROR, base, f"page at {base:#x} is outside {mem.name}")
                runs.append((mem, base, length))
            remaining -= length

    def _large_page_run(self, entry: int, level: int, va: int, size: int, access: AccessKind, runs: list[Run]) -> None:
        leafpath.check_rights([entry], va, access)
        coverage = 1 << self.layout.shift(level)
        if entry & _ZERO_BIT:
            runs.append((None, 0, size))
            return
        mem = self._memories[(entry >> _TARGET_LSB) & 1]
        base = (((entry >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT) + (va & (coverage - 1))
        if not mem.contains(base, size):
            raise GpuFault(FaultKind.BUS_ERROR, base, f"large page at {base:#x} is outside {mem.name}")
        runs.append((mem, base, size))

    # --- introspection ---------------------------------------------------------------------------------------

    def walk(self, root: TablePointer, va: int, *, root_entries: int | None = None) -> Walk:
        """Walk ``va`` level by level, reading memory now (no TLB); never raises for a fault, reports it."""
        layout = self.layout
        steps: list[WalkStep] = []
        table = root
        top = layout.levels - 1
        if root_entries is not None and layout.index(va, top) >= root_entries:
            return Walk(
                GpuVa(va), (), fault=f"index {layout.index(va, top)} is beyond the root's {root_entries} entries"
            )
        try:
            for level in range(top, 0, -1):
                index = layout.index(va, level)
                words = self.read_entry(table, index, level)
                first = words[0]
                if first & 1 and (HW_PTE["LargePage"].get(first) or first & int(_ZERO)):
                    steps.append(WalkStep(level, table, index, words, "zero" if first & int(_ZERO) else "large"))
                    coverage = 1 << layout.shift(level)
                    address = (HW_PTE["Address"].get(first) << PAGE_SHIFT) + (va & (coverage - 1))
                    return Walk(GpuVa(va), tuple(steps), _target(first), address, bool(first & int(_ZERO)))
                if level == 1:
                    steps.append(
                        WalkStep(level, table, index, words, "table" if any(w & 1 for w in words) else "invalid")
                    )
                    return self._walk_leaf(va, steps, words)
                if not first & 1:
                    steps.append(WalkStep(level, table, index, words, "invalid"))
                    return Walk(GpuVa(va), tuple(steps), fault=f"level {level} entry is invalid")
                steps.append(WalkStep(level, table, index, words, "table"))
                table = _pointer(first)
        except GpuFault as fault:
            return Walk(GpuVa(va), tuple(steps), fault=fault.reason)
        raise AssertionError("unreachable: level 1 ends every walk")

    def _walk_leaf(self, va: int, steps: list[WalkStep], level1: tuple[int, ...]) -> Walk:
        layout = self.layout
        pointers: list[tuple[str, int]] = []
        if layout.dual_pte:
            pointers = [("leaf", level1[0]), ("leaf64k", level1[1])]
        else:
            pointers = [("leaf64k" if HW_PTE["Leaf64K"].get(level1[0]) else "leaf", level1[0])]
        found: list[Walk] = []
        for kind, pointer in pointers:
            if not pointer & 1:
                continue
            table = _pointer(pointer)
            if kind == "leaf":
                index = ((va >> PAGE_SHIFT) & (layout.entries(0) - 1)) // layout.gpu_page_ratio
                page = 1 << layout.gpu_page_shift
            else:
                index = (va >> 16) & (layout.leaf64_entries - 1)
                page = 1 << 16
            (word,) = (int(w) for w in self._words(table, index, 1, AccessKind.READ))
            steps.append(WalkStep(0, table, index, (word,), kind))
            if word & 1:
                address = (HW_PTE["Address"].get(word) << PAGE_SHIFT) + (va & (page - 1))
                found.append(Walk(GpuVa(va), (), _target(word), address, bool(word & int(_ZERO))))
        if len(found) > 1:
            return Walk(GpuVa(va), tuple(steps), fault="the 4 KB and 64 KB entries of one 64 KiB range are both valid")
        if not found:
            return Walk(GpuVa(va), tuple(steps), fault="no valid leaf entry")
        hit = found[0]
        return Walk(GpuVa(va), tuple(steps), hit.target, hit.address, hit.zero)


def _stale(cached: _Region, fresh: _Region | None) -> str:
    """What a cached region translates that ``fresh`` (memory now; None: the walk faults) does not."""
    if cached.large >= 0:
        if cached.large & 1 and (fresh is None or fresh.large != cached.large):
            return f"a level-{cached.large_level} large page {cached.large:#x} no longer in the tables"
        return ""
    pairs = (
        ("4 KB", cached.small, None if fresh is None else fresh.small),
        ("64 KB", cached.big, None if fresh is None else fresh.big),
    )
    for kind, old, new in pairs:
        if old is None:
            continue
        valid = np.flatnonzero(old & np.uint64(1))
        if not valid.size:
            continue
        if new is None:
            return f"{valid.size} valid {kind} entries whose leaf table is gone"
        changed = valid[old[valid] != new[valid]]
        if changed.size:
            i = int(changed[0])
            return f"{changed.size} {kind} entries changed, first #{i}: cached {int(old[i]):#x}, now {int(new[i]):#x}"
    return ""


def _pointer(entry: int) -> TablePointer:
    return TablePointer(_target(entry), HW_PTE["Address"].get(entry) << PAGE_SHIFT)


def _target(entry: int) -> Target:
    return Target(HW_PTE["Target"].get(entry) & 1)


def _addresses(words: U64) -> I64:
    out: I64 = ((words >> _ADDRESS_SHIFT) & _ADDRESS_MASK).astype(np.int64) << PAGE_SHIFT
    return out
