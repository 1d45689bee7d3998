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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, GiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.driver import DXGKARG_SETROOTPAGETABLE, KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_process import SystemPagingProcess
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Process

Mode = DXGK_PAGETABLEUPDATEMODE
VA_ALIGNMENT = 64 * 1024
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


@dataclass(slots=True, eq=False)
class VaMapping:
    """``MapGpuVirtualAddress``'s result: ``pages`` pages of ``allocation`` from ``offset_pages`` at ``va``."""

    space: GpuVaSpace
    va: int
    pages: int
    allocation: VidMmAllocation
    offset_pages: int
    write: bool
    execute: bool


@dataclass(slots=True, eq=False)
class GpuVaSpace:
    """A process's GPU VA space: its ranges, its tables, its mappings."""

    process: Process
    ranges: RangeAllocator
    tables: dict[tuple[int, int], ProcessTable] = field(default_factory=dict)
    mappings: dict[int, VaMapping] = field(default_factory=dict)


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
        self.spaces: dict[int, GpuVaSpace] = {}
        self.by_allocation: dict[int, list[VaMapping]] = {}
        window_base = process.region_base - WINDOW_SIZE
        self.windows = RangeAllocator(WINDOW_SIZE)
        self.window_base = window_base

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
        self._table(space, self.mmu.level_count - 1, 0)
        self.paging.wait(self.paging.flush())
        return space

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
                NumEntries=1 << self.mmu.levels[top].PageTableIndexBitCount,
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
        alignment = max(desc.PageTableAlignmentInBytes, PAGE_SIZE)
        table = ProcessTable(level, key, segment.id, 0, size)
        # From the top of the segment: pinned tables do not cut the space allocations share into pieces.
        offset = segment.allocate(
            size, table, alignment=alignment if alignment & (alignment - 1) == 0 else 0, from_end=True
        )
        if offset is None:
            raise VidMmError(f"segment {segment.id} has no room for a {size:#x}-byte level-{level} page table")
        table.offset = offset
        self._reach(table)
        space.tables[(level, key)] = table
        count = self._entries(level)
        self._update(
            table, 0, pte_array(count), big=pte_array(count) if self.dual and level == 1 else None, initial=True
        )
        return table

    def _reach(self, table: ProcessTable) -> None:
        """Make the table addressable the way the driver's update mode names tables."""
        segment = self.segments.get(table.segment_id)
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
            start = self.windows.allocate(table.size)
            if start is None:
                raise VidMmError("the paging process's window onto process page tables is full")
            table.window = self.window_base + start
            pages = np.arange(table.size // PAGE_SIZE, dtype=np.uint64) + (table.offset >> PAGE_SHIFT)
            self.paging_process.map(table.window, segment_id=table.segment_id, page_numbers=pages)
            # The window's entries were invalid and may be cached as such: flush before the GPU uses them.
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                    RootPageTableAddress=self.paging_process.root_address,
                    StartVirtualAddress=table.window,
                    EndVirtualAddress=table.window + table.size - 1,
                )
            )
        elif self.mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            table.cpu = self.mm.map_io_space(int(segment.descriptor.CpuTranslatedAddress) + table.offset, table.size)

    def _update(
        self, table: ProcessTable, start: int, entries: PteArray, *, big: PteArray | None = None, initial: bool = False
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
                Flags=DXGK_UPDATEPAGETABLEFLAGS(InitialUpdate=initial),
                UpdateMode=self.mode,
                pPageTableEntries64KB=big,
            )
        )

    def _leaf(self, space: GpuVaSpace, va: int) -> ProcessTable:
        """The leaf table covering ``va``, with every level above pointing down to it."""
        child = None
        for level in range(self.mmu.level_count):
            key = self._key(level, va)
            fresh = (level, key) not in space.tables
            table = self._table(space, level, key)
            if child is not None and child[1]:
                entry = pte_array(1)
                entry["Flags"] = pte_flags(Valid=1, Segment=child[0].segment_id)
                entry["PageAddress"] = child[0].offset >> PAGE_SHIFT
                big = pte_array(1) if self.dual and level == 1 else None
                self._update(table, self.mmu.index(va, level), entry, big=big)
            child = (table, fresh)
            if not fresh and level > 0:
                break
        return space.tables[(0, self._key(0, va))]

    # --- mappings ----------------------------------------------------------------------------------------------

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
        """Map ``pages`` pages of ``allocation`` (default: all from ``offset_pages``) at ``base`` or a free range."""
        total = allocation.size // PAGE_SIZE
        count = total - offset_pages if pages is None else pages
        if not 0 <= offset_pages < total or not 0 < count <= total - offset_pages:
            raise InvalidArgument(
                "OffsetInPages",
                offset_pages,
                f"{count} page(s) from it leave the {total}-page allocation",
                HRESULT.E_INVALIDARG,
            )
        size = count * PAGE_SIZE
        if base is None:
            va = space.ranges.allocate(size, alignment=VA_ALIGNMENT)
            if va is None:
                raise InvalidArgument(
                    "SizeInPages", count, "no free range of the VA space is that large", HRESULT.E_OUTOFMEMORY
                )
        else:
            if base % PAGE_SIZE:
                raise InvalidArgument("BaseAddress", base, "must be 4 KB aligned", HRESULT.E_INVALIDARG)
            try:
                space.ranges.reserve(base, size)
            except ValueError:
                raise InvalidArgument(
                    "BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free", HRESULT.E_INVALIDARG
                ) from None
            va = base
        mapping = VaMapping(space, va, count, allocation, offset_pages, write, execute)
        space.mappings[va] = mapping
        self.by_allocation.setdefault(allocation.handle, []).append(mapping)
        if allocation.placement is not None:
            self._write(mapping, self._targets(mapping))
            if self.flush_new:
                self._flush(mapping)
        return mapping

    def unmap(self, space: GpuVaSpace, va: int) -> None:
        """``FreeGpuVirtualAddress`` of a mapping: entries invalid, TLB flushed, the range free again."""
        mapping = space.mappings.pop(va, None)
        if mapping is None:
            raise InvalidArgument("BaseAddress", va, "is not a mapped range of the process", HRESULT.E_INVALIDARG)
        self._write(mapping, None)
        self._flush(mapping)
        self.by_allocation[mapping.allocation.handle].remove(mapping)
        space.ranges.free(va)

    def forget(self, allocation: VidMmAllocation) -> None:
        """The allocation is destroyed: every VA mapped to it is freed."""
        for mapping in list(self.by_allocation.get(allocation.handle, [])):
            self.unmap(mapping.space, mapping.va)
        self.by_allocation.pop(allocation.handle, None)

    # --- following the allocation --------------------------------------------------------------------------

    def before_leave(self, allocation: VidMmAllocation) -> None:
        """The allocation is about to leave its range: no mapping may reach that range any more."""
        for mapping in self.by_allocation.get(allocation.handle, []):
            self._write(mapping, None)
            self._flush(mapping)

    def after_enter(self, allocation: VidMmAllocation) -> None:
        """The allocation arrived in a new place: every mapping points there."""
        for mapping in self.by_allocation.get(allocation.handle, []):
            self._write(mapping, self._targets(mapping))
            if self.flush_new:
                self._flush(mapping)

    def _targets(self, mapping: VaMapping) -> tuple[int, npt.NDArray[np.uint64]]:
        """``(Segment, PageAddress per page)`` of the mapping's pages where the allocation is now."""
        a = mapping.allocation
        placement = a.placement
        assert placement is not None
        space = self.segments.get(placement.segment_id)
        if space.aperture:  # the GPU reaches the backing pages directly (segment 0)
            assert a.backing is not None
            return 0, a.backing.pfns[mapping.offset_pages : mapping.offset_pages + mapping.pages]
        first = (placement.offset >> PAGE_SHIFT) + mapping.offset_pages
        return placement.segment_id, np.arange(first, first + mapping.pages, dtype=np.uint64)

    def _write(self, mapping: VaMapping, target: tuple[int, npt.NDArray[np.uint64]] | None) -> None:
        span = 1 << self.mmu.shift(1)
        done = 0
        while done < mapping.pages:
            va = mapping.va + done * PAGE_SIZE
            count = min(mapping.pages - done, (span - va % span) // PAGE_SIZE)
            entries = pte_array(count)
            if target is not None:
                segment_id, numbers = target
                entries["Flags"] = pte_flags(
                    Valid=1, Segment=segment_id, ReadOnly=int(not mapping.write), NoExecute=int(not mapping.execute)
                )
                entries["PageAddress"] = numbers[done : done + count]
            leaf = self._leaf(mapping.space, va)
            self._update(leaf, self.mmu.index(va, 0), entries)
            done += count

    def _flush(self, mapping: VaMapping) -> None:
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                RootPageTableAddress=self.root_address(mapping.space),
                StartVirtualAddress=mapping.va,
                EndVirtualAddress=mapping.va + mapping.pages * PAGE_SIZE - 1,
            )
        )
