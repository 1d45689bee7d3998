"""``PagingRig``: an adapter and the helpers a paging story needs (allocations, backing pages, byte access).

It drives VidMm's paging stream directly with DDI payloads -- the placement decisions a residency manager would
make are the scenario's own -- and reads memory through the hardware model only to *verify*.
"""

from __future__ import annotations

from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import ByteArray, CpuMapping
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE, NULL
from wddmsim.ddi.driver import DXGKARG_SETROOTPAGETABLE
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_TRANSFERFLAGS, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGK_TRANSFER_LOCATION,
    DXGKARG_BUILDPAGINGBUFFER,
    PagingPayload,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS
from wddmsim.hw import swizzle
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.kmd.allocations import AllocationDesc, ResourceKind
from wddmsim.system import Adapter, DriverWrapper, SystemConfig, build_adapter


@final
class PagingRig:
    def __init__(self, config: SystemConfig | None = None, *, wrap_driver: DriverWrapper | None = None) -> None:
        self.adapter: Adapter = build_adapter(config, wrap_driver=wrap_driver)
        self.vidmm = self.adapter.vidmm
        self.gpu = self.adapter.gpu
        self.mm = self.adapter.mm
        self.driver = self.adapter.driver

    # --- allocations and backing store ---------------------------------------------------------------------

    def buffer(self, size: int, *, usage: int = 0) -> DXGK_ALLOCATIONINFO:
        return self.vidmm.create_allocation(AllocationDesc(ResourceKind.BUFFER, size=size, usage=usage).encode())

    def surface(self, width_bytes: int, height: int, *, mips: int = 1, usage: int = 0) -> DXGK_ALLOCATIONINFO:
        desc = AllocationDesc(
            ResourceKind.SURFACE, usage=usage, width_bytes=width_bytes, height=height, mip_levels=mips
        )
        return self.vidmm.create_allocation(desc.encode())

    def context(self, size: int) -> DXGK_ALLOCATIONINFO:
        return self.vidmm.create_allocation(AllocationDesc(ResourceKind.CONTEXT, size=size).encode())

    def backing(self, size: int, *, scatter_seed: int | None = None) -> MDL:
        """System pages for ``size`` bytes; with ``scatter_seed`` the page order is shuffled (no two adjacent)."""
        mdl = self.mm.allocate_pages_for_mdl(size)
        if scatter_seed is None:
            return mdl
        pfns = np.random.default_rng(scatter_seed).permutation(mdl.pfns)
        return MDL(pfns.astype(np.uint64), mdl.ByteCount)

    # --- bytes ---------------------------------------------------------------------------------------------

    @staticmethod
    def pattern(size: int, seed: int) -> ByteArray:
        data: ByteArray = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
        return data

    def segment_address(self, segment_id: int, offset: int) -> int:
        """``SegmentAddress`` = ``BaseAddress`` + offset."""
        return int(self.vidmm.segment(segment_id).BaseAddress) + offset

    def read_segment(self, segment_id: int, offset: int, size: int) -> ByteArray:
        """Bytes at a memory segment offset, read from local memory (verification only)."""
        start = self.segment_address(segment_id, offset)
        out: ByteArray = self.gpu.local.data[start : start + size].copy()
        return out

    def write_segment(self, segment_id: int, offset: int, data: ByteArray) -> None:
        start = self.segment_address(segment_id, offset)
        self.gpu.local.data[start : start + data.shape[0]] = data

    def read_mdl(self, mdl: MDL, offset: int = 0, size: int | None = None) -> ByteArray:
        n = mdl.ByteCount - offset if size is None else size
        return np.frombuffer(self.mm.read(mdl, offset, n), dtype=np.uint8)

    def write_mdl(self, mdl: MDL, data: ByteArray, offset: int = 0) -> None:
        self.mm.write(mdl, offset, data.tobytes())

    def read_system(self, bus_address: int, size: int) -> ByteArray:
        out: ByteArray = self.gpu.system.data[bus_address : bus_address + size].copy()
        return out

    def dummy_page(self, fill: int = 0xD0) -> int:
        """A system page for ``UnmapApertureSegment.DummyPage``, filled with a recognisable byte."""
        mdl = self.mm.allocate_pages_for_mdl(PAGE_SIZE)
        self.mm.write(mdl, 0, bytes([fill]) * PAGE_SIZE)
        return int(mdl.pfns[0]) << PAGE_SHIFT

    # --- paging --------------------------------------------------------------------------------------------

    def execute(self, payload: PagingPayload) -> int:
        """Build, submit and wait: the operation has executed on the GPU when this returns."""
        return self.vidmm.paging.execute(payload)

    def transfer(
        self,
        source: DXGK_TRANSFER_LOCATION,
        destination: DXGK_TRANSFER_LOCATION,
        size: int,
        *,
        allocation: HANDLE = NULL,
        swizzle: bool = False,
        unswizzle: bool = False,
    ) -> int:
        """A single-shot ``DXGK_OPERATION_TRANSFER`` (``TransferStart`` and ``TransferEnd``), executed."""
        flags = DXGK_TRANSFERFLAGS(Swizzle=swizzle, Unswizzle=unswizzle, TransferStart=True, TransferEnd=True)
        return self.execute(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                hAllocation=allocation, TransferSize=size, Source=source, Destination=destination, Flags=flags
            )
        )

    def tiled_image(self, allocation: HANDLE, linear: ByteArray) -> ByteArray:
        """What a swizzled allocation holds when its linear image is tiled level by level (an expectation)."""
        record = self.driver.state.allocations.get(allocation, "hAllocation")
        out = linear.copy()
        for level in record.levels:
            region = slice(level.offset, level.offset + level.size)
            out[region] = swizzle.tile(linear[region], level.pitch)
        return out


@final
class ScratchAddressSpace:
    """A minimal paging-process address space whose tables the CPU writes through the forced CPU path.

    The tables live in the CPU-visible segment (``PagingProcessPageTableSegmentId``), in a region the rig keeps
    for them at the top of that segment, and the CPU reaches them through the BAR.  Every table is initialised
    by ``DXGK_OPERATION_UPDATE_PAGE_TABLE`` with ``UpdateMode = CPU_VIRTUAL`` and ``pDmaBuffer = NULL``, as
    VidMm initialises the system paging process; the paging context's root is then set with
    ``DxgkDdiSetRootPageTable``.  (The full paging process, with its scratch area managed by VidMm, comes with
    the residency manager.)
    """

    REGION = 8 * 1024 * 1024
    """Bytes kept for tables at the top of the CPU-visible segment."""

    def __init__(self, rig: PagingRig) -> None:
        self.rig = rig
        self.layout = rig.gpu.mmu.layout
        self.segment_id = rig.driver.config.paging_process_page_table_segment
        segment = rig.vidmm.segment(self.segment_id)
        self.base = int(segment.BaseAddress)
        self.next = int(segment.Size) - self.REGION
        self.end = int(segment.Size)
        self.cpu_base = int(segment.CpuTranslatedAddress)
        self.tables: dict[tuple[int, int], tuple[int, CpuMapping]] = {}
        top = self.layout.levels - 1
        self.root_address = self.physical(top, 0)
        rig.driver.set_root_page_table(
            DXGKARG_SETROOTPAGETABLE(
                hContext=HANDLE(rig.vidmm.config.paging_context),
                Address=self.root_address,
                NumEntries=self.layout.entries(top),
            )
        )

    def _key(self, level: int, va: int) -> int:
        return 0 if level == self.layout.levels - 1 else va >> self.layout.shift(level + 1)

    def _table(self, level: int, key: int) -> tuple[int, CpuMapping]:
        """Segment offset and CPU mapping of the table at ``level`` with ``key``, created all-invalid."""
        if (level, key) not in self.tables:
            size = max(self.layout.table_size(level), PAGE_SIZE)
            offset = self.next
            if offset + size > self.end:
                raise RuntimeError("the rig's paging-process table region is full")
            self.next += size
            mapping = self.rig.mm.map_io_space(self.cpu_base + offset, size)
            self.tables[(level, key)] = (offset, mapping)
            count = self.layout.entries(level)
            self._update(
                level, mapping, 0, pte_array(count), initial=True, big=pte_array(count) if self._dual(level) else None
            )
        return self.tables[(level, key)]

    def _dual(self, level: int) -> bool:
        return self.layout.dual_pte and level == 1

    def physical(self, level: int, va: int) -> D3DGPU_PHYSICAL_ADDRESS:
        """The table covering ``va`` at ``level`` as (SegmentId, SegmentOffset)."""
        offset, _ = self._table(level, self._key(level, va))
        return D3DGPU_PHYSICAL_ADDRESS(SegmentId=self.segment_id, SegmentOffset=offset)

    @property
    def hw_root(self) -> TablePointer:
        """The root as the GPU's MMU names it (for verification walks)."""
        return TablePointer(Target.LOCAL, self.base + self.root_address.SegmentOffset)

    def table_page(self, level: int, va: int) -> int:
        """``DXGK_PTE.PageAddress`` (a page of the table's segment) of the table covering ``va``."""
        return self._table(level, self._key(level, va))[0] >> PAGE_SHIFT

    def table_mapping(self, level: int, va: int) -> CpuMapping:
        """The CPU mapping of the table covering ``va`` at ``level`` (created on first use)."""
        return self._table(level, self._key(level, va))[1]

    def table_offset(self, level: int, va: int) -> int:
        """The segment offset of the table covering ``va`` at ``level``."""
        return self._table(level, self._key(level, va))[0]

    def new_table(self, size: int = PAGE_SIZE) -> tuple[int, CpuMapping]:
        """A zeroed table of ``size`` bytes outside the tree (for 64 KB leaf tables): its offset and mapping."""
        offset = self.next
        self.next += max(size, PAGE_SIZE)
        mapping = self.rig.mm.map_io_space(self.cpu_base + offset, size)
        mapping.data[:] = 0
        return offset, mapping

    def write_entries(
        self,
        level: int,
        mapping: CpuMapping,
        start: int,
        entries: PteArray,
        *,
        big: PteArray | None = None,
        use_64k: bool = False,
    ) -> None:
        """``UpdatePageTable`` through the forced CPU path on any table of this space."""
        self._update(level, mapping, start, entries, big=big, use_64k=use_64k)

    def _update(
        self,
        level: int,
        mapping: CpuMapping,
        start: int,
        entries: PteArray,
        *,
        initial: bool = False,
        big: PteArray | None = None,
        use_64k: bool = False,
    ) -> None:
        payload = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
            PageTableLevel=level,
            PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=mapping.pointer(0)),
            pPageTableEntries=entries,
            StartIndex=start,
            NumPageTableEntries=int(entries.shape[0]),
            Flags=DXGK_UPDATEPAGETABLEFLAGS(InitialUpdate=initial, Use64KBPages=use_64k),
            UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL,
            pPageTableEntries64KB=big,
        )
        status = self.rig.driver.build_paging_buffer(DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=None, DmaSize=0))
        if status != NTSTATUS.STATUS_SUCCESS:
            raise RuntimeError(f"forced CPU_VIRTUAL UpdatePageTable returned {status!r}")

    def _ensure_path(self, va: int) -> None:
        """Make every level above the leaf point down towards ``va``."""
        for level in range(self.layout.levels - 1, 0, -1):
            child, _ = self._table(level - 1, self._key(level - 1, va))
            entry = pte_array(1)
            entry["Flags"] = pte_flags(Valid=1, Segment=self.segment_id)
            entry["PageAddress"] = child >> PAGE_SHIFT
            _, mapping = self._table(level, self._key(level, va))
            big = pte_array(1) if self._dual(level) else None
            self._update(level, mapping, self.layout.index(va, level), entry, big=big)

    def map(self, va: int, *, segment_id: int, page_numbers: npt.NDArray[np.uint64], read_only: bool = False) -> None:
        """Map consecutive 4 KiB pages from ``va`` onto pages of segment ``segment_id`` (0: system PFNs)."""
        leaf_span = 1 << self.layout.shift(1)
        done = 0
        total = int(page_numbers.shape[0])
        while done < total:
            address = va + done * PAGE_SIZE
            self._ensure_path(address)
            count = min(total - done, (leaf_span - address % leaf_span) // PAGE_SIZE)
            leaf = pte_array(count)
            leaf["Flags"] = pte_flags(Valid=1, Segment=segment_id, ReadOnly=int(read_only))
            leaf["PageAddress"] = page_numbers[done : done + count]
            _, mapping = self._table(0, self._key(0, address))
            self._update(0, mapping, self.layout.index(address, 0), leaf)
            done += count
