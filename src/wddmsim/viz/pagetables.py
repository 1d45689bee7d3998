"""A read-only snapshot of GPU page-table trees, read from memory as the MMU would walk them.

For each address space (the system paging process's, each process's) the tree under its root: every table
with its level, where it lives, how many of its entries are valid; leaf tables summarised as runs of
consecutive valid pages that map physically contiguous memory (``VA range -> LOCAL/SYSTEM address``).  Large
pages and Zero entries are noted where they are.  The event log does not carry page-table contents, so the
report takes this snapshot at the end of a run (decision 0029); nothing here writes anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.hw.gpu import Gpu
from wddmsim.hw.mmu import MmuLayout
from wddmsim.hw.pte import HW_PTE, PTE_SIZE, TablePointer, Target
from wddmsim.system import Adapter

U64 = npt.NDArray[np.uint64]
_VALID = int(HW_PTE["Valid"].shifted_mask)
_ZERO = int(HW_PTE["Zero"].shifted_mask)
_LARGE = int(HW_PTE["LargePage"].shifted_mask)
_LEAF64K = int(HW_PTE["Leaf64K"].shifted_mask)


@dataclass(frozen=True, slots=True)
class LeafRun:
    """``pages`` consecutive valid leaf entries from ``va``, mapping contiguous memory from ``address``."""

    va: int
    pages: int
    page_size: int
    target: str
    address: int
    zero: bool = False


@dataclass(frozen=True, slots=True)
class TableNode:
    """One table: its level (0 = leaf), where it is, its entries, and what they point at."""

    level: int
    kind: str
    """``table``, ``leaf`` (4 KB-kind pages) or ``leaf64k``."""
    target: str
    address: int
    va: int
    """First VA the table covers."""
    coverage: int
    """Bytes of VA one entry covers."""
    entries: int
    valid: int
    children: tuple[TableNode, ...] = ()
    runs: tuple[LeafRun, ...] = ()
    large: tuple[LeafRun, ...] = ()
    """Large pages and Zero ranges of this (non-leaf) table."""
    truncated: bool = False
    """More children or runs than the snapshot kept."""


@dataclass(frozen=True, slots=True)
class AddressSpaceTree:
    name: str
    root: TableNode | None
    """``None`` while the space's tables are away (decision 0021: an idle process's tree left under pressure)."""
    tables: int
    valid_leaf_entries: int


def _address(word: int) -> int:
    return int(HW_PTE["Address"].get(word)) << PAGE_SHIFT


def _target(word: int) -> Target:
    return Target(HW_PTE["Target"].get(word) & 1)


class _Reader:
    def __init__(self, gpu: Gpu, *, max_tables: int, max_runs: int) -> None:
        self.gpu = gpu
        self.layout: MmuLayout = gpu.mmu.layout
        self.max_tables = max_tables
        self.max_runs = max_runs
        self.tables = 0
        self.leaf_entries = 0

    def words(self, table: TablePointer, count: int) -> U64 | None:
        memory = self.gpu.mmu.memory(table.target)
        if table.address % PTE_SIZE or not memory.contains(table.address, count * PTE_SIZE):
            return None
        start = table.address // PTE_SIZE
        out: U64 = memory.u64[start : start + count].copy()
        return out

    def table(self, pointer: TablePointer, level: int, va: int, limit: int | None) -> TableNode:
        self.tables += 1
        layout = self.layout
        width = layout.entry_size(level) // PTE_SIZE
        count = layout.entries(level) if limit is None else min(limit, layout.entries(level))
        coverage = 1 << layout.shift(level)
        raw = self.words(pointer, count * width)
        if raw is None:
            return TableNode(level, "table", pointer.target.name, pointer.address, va, coverage, count, 0)
        first = raw[0::width]
        valid_idx = np.flatnonzero((first & np.uint64(_VALID)) != 0).tolist()
        children: list[TableNode] = []
        large: list[LeafRun] = []
        truncated = False
        for index in valid_idx:
            word = int(first[index])
            at = va + index * coverage
            if word & (_LARGE | _ZERO):
                large.append(LeafRun(at, 1, coverage, _target(word).name, _address(word), bool(word & _ZERO)))
                continue
            if self.tables >= self.max_tables:
                truncated = True
                continue
            if level > 1:
                children.append(self.table(TablePointer(_target(word), _address(word)), level - 1, at, None))
            else:
                children += self.leaves([int(raw[index * width + k]) for k in range(width)], at)
        return TableNode(
            level,
            "table",
            pointer.target.name,
            pointer.address,
            va,
            coverage,
            count,
            len(valid_idx),
            tuple(children),
            large=tuple(large),
            truncated=truncated,
        )

    def leaves(self, level1: list[int], va: int) -> list[TableNode]:
        layout = self.layout
        if layout.dual_pte:
            small_ptr, big_ptr = level1[0], level1[1]
        elif level1[0] & _LEAF64K:
            small_ptr, big_ptr = 0, level1[0]
        else:
            small_ptr, big_ptr = level1[0], 0
        out = []
        if small_ptr & _VALID:
            out.append(self.leaf(small_ptr, va, layout.hw_leaf_entries, 1 << layout.gpu_page_shift, "leaf"))
        if big_ptr & _VALID:
            out.append(self.leaf(big_ptr, va, layout.leaf64_entries, 1 << 16, "leaf64k"))
        return out

    def leaf(self, word: int, va: int, count: int, page: int, kind: str) -> TableNode:
        self.tables += 1
        pointer = TablePointer(_target(word), _address(word))
        raw = self.words(pointer, count)
        if raw is None:
            return TableNode(0, kind, pointer.target.name, pointer.address, va, page, count, 0)
        valid = (raw & np.uint64(_VALID)) != 0
        self.leaf_entries += int(valid.sum())
        runs: list[LeafRun] = []
        truncated = False
        indices = np.flatnonzero(valid).tolist()
        first = 0
        while first < len(indices):
            last = first
            while last + 1 < len(indices) and self._continues(
                raw, indices[first], indices[last], indices[last + 1], page
            ):
                last += 1
            if len(runs) >= self.max_runs:
                truncated = True
                break
            w, at = int(raw[indices[first]]), indices[first]
            runs.append(LeafRun(va + at * page, last - first + 1, page, _target(w).name, _address(w), bool(w & _ZERO)))
            first = last + 1
        return TableNode(
            0,
            kind,
            pointer.target.name,
            pointer.address,
            va,
            page,
            count,
            int(valid.sum()),
            runs=tuple(runs),
            truncated=truncated,
        )

    @staticmethod
    def _continues(raw: U64, start: int, prev: int, index: int, page: int) -> bool:
        if index != prev + 1:
            return False
        a, b, s = int(raw[prev]), int(raw[index]), int(raw[start])
        if (a & _ZERO) != (b & _ZERO) or _target(a) != _target(b):
            return False
        return bool(b & _ZERO) or _address(b) == _address(s) + (index - start) * page


def read_tree(
    gpu: Gpu,
    root: TablePointer,
    name: str,
    *,
    root_entries: int | None = None,
    max_tables: int = 256,
    max_runs: int = 64,
) -> AddressSpaceTree:
    """The tree under ``root`` (read from memory, never the TLB), at most ``max_tables`` tables."""
    reader = _Reader(gpu, max_tables=max_tables, max_runs=max_runs)
    node = reader.table(root, gpu.mmu.layout.levels - 1, 0, root_entries)
    return AddressSpaceTree(name, node, reader.tables, reader.leaf_entries)


def address_spaces(adapter: Adapter, *, max_tables: int = 256) -> list[AddressSpaceTree]:
    """Every GPU address space of the adapter: the system paging process's, then each process's (GpuMmu only)."""
    vidmm = adapter.vidmm
    out: list[AddressSpaceTree] = []
    process = vidmm.paging_process
    if process is None:
        return out
    gpu = adapter.gpu
    root = process.root_address
    base = vidmm.spaces.get(root.SegmentId).base
    out.append(
        read_tree(
            gpu, TablePointer(Target.LOCAL, base + root.SegmentOffset), "system paging process", max_tables=max_tables
        )
    )
    if vidmm.va is None:
        return out
    top = gpu.mmu.layout.levels - 1
    for handle, space in sorted(vidmm.va.spaces.items()):
        if space.evicted:
            out.append(AddressSpaceTree(f"process {handle:#x} (tables evicted)", None, 0, 0))
            continue
        table = space.tables.get((top, 0))
        if table is None:
            continue
        pointer = TablePointer(Target.LOCAL, vidmm.spaces.get(table.segment_id).base + table.offset)
        out.append(
            read_tree(
                gpu, pointer, f"process {handle:#x}", root_entries=space.root_entries or None, max_tables=max_tables
            )
        )
    return out


__all__ = ["AddressSpaceTree", "LeafRun", "TableNode", "address_spaces", "read_tree"]
