"""``PagingRig``: an adapter and the helpers a paging story needs (allocations, backing pages, byte access).

It drives VidMm's paging stream directly with DDI payloads -- the placement decisions a residency manager would
make are the scenario's own -- and reads memory through the hardware model only to *verify*.
"""

from __future__ import annotations

from typing import final

import numpy as np

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO
from wddmsim.ddi.base import HANDLE, NULL
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_TRANSFER_LOCATION,
    PagingPayload,
)
from wddmsim.drivers.package import DriverProbe
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw import swizzle
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.system import Adapter, DriverWrapper, SystemConfig, build_adapter


@final
class PagingRig:
    def __init__(self, config: SystemConfig | None = None, *, wrap_driver: DriverWrapper | None = None) -> None:
        self.adapter: Adapter = build_adapter(config, wrap_driver=wrap_driver)
        self.vidmm = self.adapter.vidmm
        self.gpu = self.adapter.gpu
        self.mm = self.adapter.mm
        self.driver = self.adapter.driver
        self.umd = self.adapter.umd
        self.probe: DriverProbe | None = self.driver if isinstance(self.driver, DriverProbe) else None
        """The driver's read-only answers for verifiers, if it gives them (steps that need them skip without)."""
        self._surfaces: dict[int, ResourceDesc] = {}

    # --- allocations and backing store ---------------------------------------------------------------------

    def buffer(self, size: int, *, usage: int = 0) -> DXGK_ALLOCATIONINFO:
        return self.vidmm.create_allocation(self.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=size, usage=usage)))

    def surface(self, width_bytes: int, height: int, *, mips: int = 1, usage: int = 0) -> DXGK_ALLOCATIONINFO:
        desc = ResourceDesc(ResourceKind.SURFACE, usage=usage, width_bytes=width_bytes, height=height, mip_levels=mips)
        info = self.vidmm.create_allocation(self.umd.encode(desc))
        self._surfaces[info.hAllocation] = desc
        return info

    def context(self, size: int) -> DXGK_ALLOCATIONINFO:
        """A context image, made the driver's way (as ``DxgkDdiCreateContext`` does): ``DxgkDdiCreateAllocation``
        refuses the kind, which user mode may never ask for.  Needs a driver that is a ``DriverProbe``."""
        if self.probe is None:
            raise ConfigurationError(
                "driver_package", self.adapter.package.name, "makes no context image on request (no DriverProbe)"
            )
        return self.probe.context_image(size)

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
        """What a swizzled surface made by :meth:`surface` holds when its linear image is tiled level by level (an
        expectation, from the user-mode driver's layout of its levels)."""
        out = linear.copy()
        for level in self.umd.surface_levels(self._surfaces[allocation]):
            region = slice(level.offset, level.offset + level.size)
            out[region] = swizzle.tile(linear[region], level.pitch)
        return out


@final
class ScratchAddressSpace:
    """The system paging process's address space, for paging stories driven by hand.

    VidMm creates the paging process at start (:mod:`wddmsim.vidmm.paging_process`): its tables live in the
    CPU-visible segment, placed by VidMm, and are written through the forced CPU path.  This view adds what
    only a verifier may use: the hardware's name for the root, and the MMU layout.  VidMm keeps the top of the
    space for itself; stories map below ``process.region_base``.
    """

    def __init__(self, rig: PagingRig) -> None:
        process = rig.vidmm.paging_process
        if process is None:
            raise RuntimeError("the driver is not a GpuMmu driver: there is no paging process")
        self.rig = rig
        self.process = process
        self.layout = rig.gpu.mmu.layout
        self.segment_id = process.segment_id
        self.base = int(rig.vidmm.segment(self.segment_id).BaseAddress)
        self.root_address = process.root_address
        self.physical = process.physical
        self.table_offset = process.table_offset
        self.table_mapping = process.table_mapping
        self.new_table = process.new_table
        self.write_entries = process.write_entries
        self.map = process.map
        self.tables = process.tables

    @property
    def hw_root(self) -> TablePointer:
        """The root as the GPU's MMU names it (for verification walks)."""
        return TablePointer(Target.LOCAL, self.base + self.root_address.SegmentOffset)

    def table_page(self, level: int, va: int) -> int:
        """``DXGK_PTE.PageAddress`` (a page of the table's segment) of the table covering ``va``."""
        return self.process.table_offset(level, va) >> PAGE_SHIFT
