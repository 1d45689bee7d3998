"""The GPU MMU: page-table walks in simulated memory, and a TLB that keeps what it read until told to forget.

The layout is a list of index widths, leaf first: 12 offset bits, then ``index_bits[0]`` bits index the leaf
table, ``index_bits[1]`` the table above, and so on up to the root.  Entries are 8 bytes (:mod:`.pte`).

The TLB caches, per (root, leaf-table region), the translation of the whole region: a snapshot of the leaf
table's entries, or the large page that covers it.  A page-table change is therefore invisible to the GPU until
a ``TLB_INVALIDATE`` covering it executes -- a missing flush shows as a stale translation, as on hardware.
When ``caches_invalid`` is off, an access that hits an invalid entry in a cached snapshot re-walks before it
faults (the hardware behind ``DXGK_GPUMMUCAPS.InvalidTlbEntriesNotCached``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.memory import LocalMemory, PhysicalMemory, SystemMemory
from wddmsim.hw.pte import HW_PTE, PTE_SIZE, TablePointer, Target

_VALID: Final = np.uint64(HW_PTE["Valid"].shifted_mask)
_ZERO: Final = np.uint64(HW_PTE["Zero"].shifted_mask)
_READ_ONLY: Final = np.uint64(HW_PTE["ReadOnly"].shifted_mask)
_NO_EXECUTE: Final = np.uint64(HW_PTE["NoExecute"].shifted_mask)
_TARGET_SHIFT: Final = np.uint64(HW_PTE["Target"].lsb)
_ADDRESS_SHIFT: Final = np.uint64(HW_PTE["Address"].lsb)
_ADDRESS_MASK: Final = np.uint64(HW_PTE["Address"].mask)

Run = tuple[PhysicalMemory | None, int, int]
"""``(memory, offset, length)``; memory ``None`` is a Zero page: reads return zero, writes are dropped."""


@dataclass(frozen=True, slots=True)
class MmuLayout:
    """Index bits per level, leaf (level 0) first."""

    index_bits: tuple[int, ...]

    def __post_init__(self) -> None:
        if not 2 <= len(self.index_bits) <= 6 or any(b <= 0 for b in self.index_bits):
            raise ValueError(f"index_bits={self.index_bits}: need 2 to 6 levels of at least one bit each")

    @property
    def levels(self) -> int:
        return len(self.index_bits)

    @property
    def va_bits(self) -> int:
        return PAGE_SHIFT + sum(self.index_bits)

    def shift(self, level: int) -> int:
        """Bit position of the lowest index bit of ``level`` (= log2 of one entry's coverage)."""
        return PAGE_SHIFT + sum(self.index_bits[:level])

    def entries(self, level: int) -> int:
        return 1 << self.index_bits[level]

    def table_size(self, level: int) -> int:
        return self.entries(level) * PTE_SIZE

    def index(self, va: int, level: int) -> int:
        return (va >> self.shift(level)) & (self.entries(level) - 1)


@dataclass(frozen=True, slots=True)
class _Region:
    """A cached translation of one leaf-table region: a leaf snapshot, or a large page (``base`` >= 0)."""

    entries: npt.NDArray[np.uint64] | None
    large: int  # entry of the large page, or -1
    large_level: int = 0


@final
class Mmu:
    """Translates GPU VAs for any address space, given its root table."""

    __slots__ = ("caches_invalid", "layout", "local", "system", "tlb", "walks")

    def __init__(
        self, layout: MmuLayout, local: LocalMemory, system: SystemMemory, *, caches_invalid: bool = True
    ) -> None:
        self.layout = layout
        self.local = local
        self.system = system
        self.caches_invalid = caches_invalid
        self.tlb: dict[tuple[TablePointer, int], _Region] = {}
        self.walks = 0

    def memory(self, target: Target) -> PhysicalMemory:
        return self.local if target == Target.LOCAL else self.system

    def read_entry(self, table: TablePointer, index: int) -> int:
        mem = self.memory(table.target)
        offset = table.address + index * PTE_SIZE
        if not mem.contains(offset, PTE_SIZE):
            raise GpuFault(FaultKind.BUS_ERROR, offset, f"page table at {table} leaves {mem.name}")
        return int(mem.u64[offset // PTE_SIZE])

    # --- walking ------------------------------------------------------------------------------------------

    def _walk_region(self, root: TablePointer, va: int, access: AccessKind) -> _Region:
        """Walk from the root down to the leaf table covering ``va``."""
        self.walks += 1
        layout = self.layout
        table = root
        for level in range(layout.levels - 1, 0, -1):
            entry = self.read_entry(table, layout.index(va, level))
            if not entry & 1:
                raise GpuFault(FaultKind.PAGE_FAULT, va, f"level {level} entry is invalid", access=access, level=level)
            if HW_PTE["LargePage"].get(entry):
                return _Region(None, entry, level)
            table = TablePointer(Target(HW_PTE["Target"].get(entry) & 1), HW_PTE["Address"].get(entry) << PAGE_SHIFT)
        mem = self.memory(table.target)
        count = layout.entries(0)
        if table.address % PTE_SIZE or not mem.contains(table.address, count * PTE_SIZE):
            raise GpuFault(
                FaultKind.BUS_ERROR, table.address, f"leaf table at {table} leaves {mem.name}", access=access
            )
        start = table.address // PTE_SIZE
        return _Region(mem.u64[start : start + count].copy(), -1)

    def _region(self, root: TablePointer, va: int, access: AccessKind, *, refresh: bool = False) -> _Region:
        key = (root, va >> self.layout.shift(1))
        region = None if refresh else self.tlb.get(key)
        if region is None:
            region = self._walk_region(root, va, access)
            self.tlb[key] = region
        return region

    def invalidate(self, root: TablePointer, start: int, end: int) -> int:
        """Forget cached translations of ``root`` for VAs in [start, end]; ``start == end == 0`` means all."""
        shift = self.layout.shift(1)
        if start == 0 and end == 0:
            doomed = [k for k in self.tlb if k[0] == root]
        else:
            lo, hi = start >> shift, end >> shift
            doomed = [k for k in self.tlb if k[0] == root and lo <= k[1] <= hi]
        for key in doomed:
            del self.tlb[key]
        return len(doomed)

    def invalidate_all(self) -> None:
        self.tlb.clear()

    # --- translation ----------------------------------------------------------------------------------------

    def translate(self, root: TablePointer, va: int, size: int, access: AccessKind) -> list[Run]:
        """Physical runs behind VA bytes ``[va, va + size)``, checking every page's rights."""
        if size <= 0:
            return []
        if va < 0 or va + size > 1 << self.layout.va_bits:
            raise GpuFault(
                FaultKind.PAGE_FAULT, va, "address beyond the VA width", access=access, level=self.layout.levels - 1
            )
        runs: list[Run] = []
        region_size = 1 << self.layout.shift(1)
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
        assert region.entries is not None
        first = (va >> PAGE_SHIFT) & (self.layout.entries(0) - 1)
        last = ((va + size - 1) >> PAGE_SHIFT) & (self.layout.entries(0) - 1)
        entries = region.entries[first : last + 1]
        if not self.caches_invalid and ((entries & _VALID) == 0).any():
            region = self._region(root, va, access, refresh=True)
            assert region.entries is not None
            entries = region.entries[first : last + 1]
        self._check_rights(entries, va, access)
        self._leaf_runs(entries, va, size, runs)

    def _check_rights(self, entries: npt.NDArray[np.uint64], va: int, access: AccessKind) -> None:
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

    def _leaf_runs(self, entries: npt.NDArray[np.uint64], va: int, size: int, runs: list[Run]) -> None:
        offset_in_page = va & (PAGE_SIZE - 1)
        addresses = ((entries >> _ADDRESS_SHIFT) & _ADDRESS_MASK).astype(np.int64) << PAGE_SHIFT
        targets = ((entries >> _TARGET_SHIFT) & np.uint64(1)).astype(np.int64)
        zero = ((entries & _ZERO) != 0).astype(np.int64)
        # A run continues while the next page is the physically next page of the same memory.
        key = targets * 2 + zero
        breaks = np.flatnonzero((np.diff(addresses) != PAGE_SIZE) | (np.diff(key) != 0) | (zero[1:] != 0)) + 1
        starts = np.concatenate(([0], breaks)).tolist()
        stops = [*starts[1:], int(entries.shape[0])]
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
        word = np.array([entry], dtype=np.uint64)
        self._check_rights(word, va, access)
        coverage = 1 << self.layout.shift(level)
        if entry & int(_ZERO):
            runs.append((None, 0, size))
            return
        mem = self.memory(Target(HW_PTE["Target"].get(entry) & 1))
        base = (HW_PTE["Address"].get(entry) << PAGE_SHIFT) + (va & (coverage - 1))
        if not mem.contains(base, size):
            raise GpuFault(FaultKind.BUS_ERROR, base, f"large page at {base:#x} is outside {mem.name}")
        runs.append((mem, base, size))
