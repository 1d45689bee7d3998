"""Moving content by GPU VA through the system paging process's scratch area (GpuMmu, WDDM 2.x).

A move of ``n`` pages is cut into chunks of at most half the scratch area.  For each chunk: the source pages
are mapped at the scratch area's base and the destination pages right after them (``UpdatePageTable`` on the
scratch leaf tables, in the update mode the driver reported: by GPU VA through the window onto those tables,
by physical address, or -- ``CPU_VIRTUAL`` -- written by the CPU, which first waits for the paging engine to
finish with the previous mapping); the scratch range is flushed from the TLB (``FlushTlb``, decision D5:
valid entries changed); then ``TransferVirtual`` (or ``FillVirtual``) moves the bytes.  Everything is in the
paging stream in that order, so the GPU never uses a mapping before it is written (checklist item 24).

The scratch mappings are left in place after the move: only the paging process sees them, and the next move
overwrites them and flushes before using them.

Driver protection (DOC:driver-protection.md, wddm-spec section 3.6): paging mappings use ``DriverProtection`` 0,
except for pages some GPU VA maps with a unique protection (``D3DGPU_UNIQUE_DRIVER_PROTECTION``): those are
mapped with that value, and the move is cut into chunks at every boundary between protections (decision 0025).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.flags import DXGK_MEMORY_TRANSFER_DIRECTION as Direction
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    make_page_table_address,
    make_update_page_table,
)
from wddmsim.ddi.pte import pte_array, pte_flags
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream

__all__ = ["Direction", "Pages", "Protections", "Scratch"]

Mode = DXGK_PAGETABLEUPDATEMODE
Protections = Callable[[VidMmAllocation], list[tuple[int, int, int]]]
"""``(first page, pages, DriverProtection)`` runs covering an allocation, for its paging mappings."""


@dataclass(frozen=True, slots=True)
class Pages:
    """One side of a move: pages of a segment (``DXGK_PTE.PageAddress`` numbering; 0: system PFNs)."""

    segment_id: int
    numbers: npt.NDArray[np.uint64]


@final
class Scratch:
    """Builds chunked, mapped, flushed virtual moves into the paging stream."""

    def __init__(
        self,
        paging: PagingStream,
        process: SystemPagingProcess,
        mode: DXGK_PAGETABLEUPDATEMODE,
        *,
        page_table_vas: bool = False,
        protections: Protections | None = None,
    ) -> None:
        self.paging = paging
        self.process = process
        self.mode = mode
        self.page_table_vas = page_table_vas
        """``LegacyBehaviors.SourcePageTableVaInTransfer``: name the leaf tables of both sides in each transfer."""
        self.chunk_pages = process.scratch_size // 2 // PAGE_SIZE
        self.moves = 0
        self.protections = protections
        """The VA services know the unique protections; None: all 0."""

    def _runs(self, a: VidMmAllocation, total: int, chunk: int) -> list[tuple[int, int, int]]:
        """``(first page, pages, DriverProtection)`` chunks of at most ``chunk`` pages, cut at protection changes."""
        runs = [(0, total, 0)] if self.protections is None else self.protections(a)
        out = []
        for first, count, protection in runs:
            for start in range(first, first + count, chunk):
                out.append((start, min(chunk, first + count - start), protection))
        return out

    def transfer(self, a: VidMmAllocation, source: Pages, destination: Pages, direction: Direction) -> None:
        total = a.size >> PAGE_SHIFT
        base = self.process.scratch_base
        for first, n, protection in self._runs(a, total, self.chunk_pages):
            src_va, dst_va = base, base + self.chunk_pages * PAGE_SIZE
            of = (int(a.handle), first)
            self.map_pages(src_va, source.segment_id, source.numbers[first : first + n], protection, source=of)
            self.map_pages(
                dst_va, destination.segment_id, destination.numbers[first : first + n], protection, source=of
            )
            self.flush_range(src_va, dst_va + n * PAGE_SIZE)
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
                    hAllocation=a.handle,
                    AllocationOffsetInBytes=first * PAGE_SIZE,
                    TransferSizeInBytes=n * PAGE_SIZE,
                    SourceVirtualAddress=src_va,
                    DestinationVirtualAddress=dst_va,
                    TransferDirection=direction,
                    SourcePageTable=self.process.scratch_leaf(src_va)[3] if self.page_table_vas else 0,
                    DestinationPageTable=self.process.scratch_leaf(dst_va)[3] if self.page_table_vas else 0,
                )
            )
        self.moves += 1

    def fill(self, a: VidMmAllocation, destination: Pages, pattern: int) -> None:
        total = a.size >> PAGE_SHIFT
        va = self.process.scratch_base
        for first, n, protection in self._runs(a, total, 2 * self.chunk_pages):
            numbers = destination.numbers[first : first + n]
            self.map_pages(va, destination.segment_id, numbers, protection, source=(int(a.handle), first))
            self.flush_range(va, va + n * PAGE_SIZE)
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
                    hAllocation=a.handle,
                    AllocationOffsetInBytes=first * PAGE_SIZE,
                    FillSizeInBytes=n * PAGE_SIZE,
                    FillPattern=pattern,
                    DestinationVirtualAddress=va,
                )
            )
        self.moves += 1

    def map_pages(
        self,
        va: int,
        segment_id: int,
        numbers: npt.NDArray[np.uint64],
        protection: int = 0,
        *,
        source: tuple[int, int] | None = None,
    ) -> None:
        """``UpdatePageTable`` of the scratch leaf entries from ``va``, one call per leaf table, with
        ``DriverProtection`` ``protection``; ``source``: the allocation and the page in it that ``numbers``
        starts at (``hAllocation``, ``AllocationOffsetInBytes``)."""
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            # The CPU writes at build time: the paging engine must be done with the previous mapping.
            self.paging.wait_within(self.paging.flush())
        span = 1 << self.process.mmu.shift(1)
        done = 0
        while done < numbers.shape[0]:
            address = va + done * PAGE_SIZE
            count = min(numbers.shape[0] - done, (span - address % span) // PAGE_SIZE)
            entries = pte_array(count)
            entries["Flags"] = pte_flags(Valid=1, Segment=segment_id)
            entries["PageAddress"] = numbers[done : done + count]
            _, offset, mapping, window = self.process.scratch_leaf(address)
            if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
                where = make_page_table_address(GpuVirtual=window)
            elif self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
                where = make_page_table_address(
                    GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=self.process.segment_id, SegmentOffset=offset)
                )
            else:
                where = make_page_table_address(CpuVirtual=mapping.pointer(0))
            self.paging.build(
                make_update_page_table(
                    PageTableLevel=0,
                    PageTableAddress=where,
                    pPageTableEntries=entries,
                    StartIndex=self.process.index(address, 0),
                    NumPageTableEntries=count,
                    UpdateMode=self.mode,
                    DriverProtection=protection,
                    hAllocation=HANDLE(0 if source is None else source[0]),
                    AllocationOffsetInBytes=0 if source is None else (source[1] + done) * PAGE_SIZE,
                )
            )
            done += count

    def flush_range(self, start: int, end: int) -> None:
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                RootPageTableAddress=self.process.root_address, StartVirtualAddress=start, EndVirtualAddress=end - 1
            )
        )
