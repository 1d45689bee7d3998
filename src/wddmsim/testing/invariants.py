"""Invariant checkers that read the hardware model and report problems as prose (an empty list: all good).

``check_page_tables`` walks every table reachable from a root and checks what the documents require of GPU
page tables (reliability-plan I3, I5, I6; wddm-spec section 2.7): every table and every valid entry's page lies
inside a memory the driver reports (a memory segment of local memory, or system RAM); 64 KB entries map 64 KiB
aligned pages; entries of pages larger than 4 KiB are aligned to them; large pages are aligned to their
coverage; and in dual-PTE mode the 4 KB and 64 KB leaf entries of one 64 KiB range are never both valid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.drivers.package import SimulatedDriver
from wddmsim.hw.gpu import Gpu
from wddmsim.hw.mmu import PAGES_PER_64K, MmuLayout
from wddmsim.hw.pte import HW_PTE, PTE_SIZE, TablePointer, Target

U64 = npt.NDArray[np.uint64]
_VALID = np.uint64(HW_PTE["Valid"].shifted_mask)
_ZERO = np.uint64(HW_PTE["Zero"].shifted_mask)
_LARGE = np.uint64(HW_PTE["LargePage"].shifted_mask)
_LEAF64K = np.uint64(HW_PTE["Leaf64K"].shifted_mask)
_TARGET_SHIFT = np.uint64(HW_PTE["Target"].lsb)
_ADDRESS_SHIFT = np.uint64(HW_PTE["Address"].lsb)
_ADDRESS_MASK = np.uint64(HW_PTE["Address"].mask)


@dataclass(frozen=True, slots=True)
class MemoryRanges:
    """Where pages may live: ``local`` memory-segment ranges and the size of system RAM."""

    local: tuple[tuple[int, int], ...]
    system_size: int

    @staticmethod
    def of(driver: SimulatedDriver) -> MemoryRanges:
        """What ``driver`` reports (its ``statistics()``: the memory segments' local ranges, system RAM)."""
        reported = driver.statistics()
        return MemoryRanges(reported.local_ranges, reported.system_size)

    def contains(self, target: Target, address: int, size: int) -> bool:
        if target == Target.SYSTEM:
            return address >= 0 and address + size <= self.system_size
        return any(lo <= address and address + size <= hi for lo, hi in self.local)


def check_page_tables(
    gpu: Gpu, root: TablePointer, ranges: MemoryRanges, *, root_entries: int | None = None
) -> list[str]:
    """Every problem found in the tree under ``root`` (read from memory, not the TLB)."""
    checker = _Checker(gpu, ranges)
    top = gpu.mmu.layout.levels - 1
    checker.table(root, top, 0, root_entries)
    return checker.problems


class _Checker:
    def __init__(self, gpu: Gpu, ranges: MemoryRanges) -> None:
        self.gpu = gpu
        self.layout: MmuLayout = gpu.mmu.layout
        self.ranges = ranges
        self.problems: list[str] = []

    def words(self, table: TablePointer, count: int) -> U64 | None:
        if table.address % PAGE_SIZE or not self.ranges.contains(table.target, table.address, count * PTE_SIZE):
            self.problems.append(
                f"a table at {table.target.name} {table.address:#x} lies outside every reported memory"
            )
            return None
        memory = self.gpu.mmu.memory(table.target)
        start = table.address // PTE_SIZE
        return memory.u64[start : start + count].copy()

    def table(self, table: TablePointer, level: int, va_base: int, limit: int | None) -> None:
        layout = self.layout
        if level == 0:
            raise AssertionError("leaf tables are checked from their level-1 entry")
        width = layout.entry_size(level) // PTE_SIZE
        count = layout.entries(level) if limit is None else min(limit, layout.entries(level))
        raw = self.words(table, count * width)
        if raw is None:
            return
        coverage = 1 << layout.shift(level)
        for index in np.flatnonzero((raw[0::width] & _VALID) != 0).tolist():
            word = int(raw[index * width])
            va = va_base + index * coverage
            if word & int(_LARGE) or word & int(_ZERO):
                self.large(word, level, va)
            elif level > 1:
                self.table(_pointer(word), level - 1, va, None)
        if level == 1:
            for index in range(count):
                pair = [int(raw[index * width + k]) for k in range(width)]
                if pair[0] & int(_LARGE) or pair[0] & int(_ZERO):
                    continue
                self.leaves(pair, va_base + index * coverage)

    def large(self, word: int, level: int, va: int) -> None:
        if word & int(_ZERO):
            return
        coverage = 1 << self.layout.shift(level)
        address, target = _address(word), _target(word)
        if address % coverage:
            self.problems.append(
                f"VA {va:#x}: large page at {address:#x} is not aligned to its {coverage:#x}-byte coverage"
            )
        if not self.ranges.contains(target, address, coverage):
            self.problems.append(f"VA {va:#x}: large page at {target.name} {address:#x} leaves every reported memory")

    def leaves(self, level1: list[int], va: int) -> None:
        layout = self.layout
        small_ptr, big_ptr = 0, 0
        if layout.dual_pte:
            small_ptr, big_ptr = level1[0], level1[1]
        elif level1[0] & int(_LEAF64K):
            big_ptr = level1[0]
        else:
            small_ptr = level1[0]
        small = self.words(_pointer(small_ptr), layout.hw_leaf_entries) if small_ptr & 1 else None
        big = self.words(_pointer(big_ptr), layout.leaf64_entries) if big_ptr & 1 else None
        if small is not None:
            self.pages(small, 1 << layout.gpu_page_shift, va)
        if big is not None:
            self.pages(big, 1 << 16, va)
        if small is not None and big is not None:
            per_64k = PAGES_PER_64K // layout.gpu_page_ratio
            small_valid = ((small & _VALID) != 0).reshape(-1, max(per_64k, 1)).any(axis=1)
            both = np.flatnonzero(small_valid & ((big & _VALID) != 0))
            for index in both.tolist()[:4]:
                self.problems.append(f"VA {va + index * (1 << 16):#x}: its 4 KB and 64 KB leaf entries are both valid")

    def pages(self, words: U64, page: int, va: int) -> None:
        live = np.flatnonzero(((words & _VALID) != 0) & ((words & _ZERO) == 0))
        for index in live.tolist():
            word = int(words[index])
            address, target = _address(word), _target(word)
            where = va + index * page
            if address % page:
                self.problems.append(
                    f"VA {where:#x}: its {page >> 10} KiB page at {address:#x} is not {page >> 10} KiB aligned"
                )
            if not self.ranges.contains(target, address, page):
                self.problems.append(f"VA {where:#x}: page at {target.name} {address:#x} leaves every reported memory")


def _pointer(word: int) -> TablePointer:
    return TablePointer(_target(word), _address(word))


def _target(word: int) -> Target:
    return Target(HW_PTE["Target"].get(word) & 1)


def _address(word: int) -> int:
    return HW_PTE["Address"].get(word) << PAGE_SHIFT
