"""A small adapter over the simple driver (composed by name: driver package ``simple``), and direct ``DxgkDdiBuildPagingBuffer`` calls into a buffer of one's own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, MiB
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER, PagingPayload
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.simple import SimpleDriver, SimpleDriverConfig
from wddmsim.hw.gpu import GpuConfig
from wddmsim.system import Adapter, SystemConfig, build_adapter

GPU = GpuConfig(local_size=8 * MiB, bar_size=2 * MiB, aperture_size=4 * MiB, system_size=256 * MiB)
POISON = 0xEE
"""What a fresh DMA buffer holds: a byte the driver did not write is still this."""


@dataclass
class Built:
    status: NTSTATUS
    args: DXGKARG_BUILDPAGINGBUFFER
    buffer: bytes
    """The whole DMA buffer after the call."""

    @property
    def written(self) -> bytes:
        return self.buffer[: len(self.buffer) - self.args.DmaSize]


class Bench:
    def __init__(self, gpu: GpuConfig = GPU, config: SimpleDriverConfig | None = None) -> None:
        self.adapter: Adapter = build_adapter(
            SystemConfig(gpu=gpu, driver_package="simple", driver=config or SimpleDriverConfig())
        )
        self.driver: SimpleDriver = driver_of(self.adapter)
        self.gpu = self.adapter.gpu
        self.mm = self.adapter.mm

    def call(self, payload: PagingPayload, size: int = PAGE_SIZE, multipass: int = 0) -> Built:
        """One ``DxgkDdiBuildPagingBuffer`` into a fresh poisoned buffer of ``size`` bytes."""
        _, mapping = self.mm.allocate_contiguous(max(size, 1))
        mapping.pointer(0).bytes(mapping.size)[:] = bytes([POISON]) * mapping.size
        args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=mapping.pointer(0), DmaSize=size)
        args.MultipassOffset = multipass
        status = NTSTATUS(self.driver.build_paging_buffer(args))
        return Built(status, args, bytes(mapping.pointer(0).bytes(size)))

    def execute(self, payload: PagingPayload) -> None:
        """Build, submit, wait (VidMm's paging stream)."""
        self.adapter.vidmm.paging.execute(payload)

    def backing(self, pages: int) -> MDL:
        """System pages in reverse order: every page is an extent of its own."""
        mdl = self.mm.allocate_pages_for_mdl(pages * PAGE_SIZE)
        return MDL(mdl.pfns[::-1].copy(), mdl.ByteCount)

    def local(self, address: int, size: int) -> ByteArray:
        out: ByteArray = self.gpu.local.data[address : address + size].copy()
        return out

    def system_page(self, fill: int) -> int:
        mdl = self.mm.allocate_pages_for_mdl(PAGE_SIZE)
        self.mm.write(mdl, 0, bytes([fill]) * PAGE_SIZE)
        return int(mdl.pfns[0]) << PAGE_SHIFT


def driver_of(adapter: Adapter) -> SimpleDriver:
    """The adapter's driver, which the ``simple`` package composed (white-box tests of it only)."""
    driver = adapter.driver
    assert isinstance(driver, SimpleDriver), f"the adapter runs {type(driver).__name__}"
    return driver


def pattern(size: int, seed: int) -> ByteArray:
    out: ByteArray = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    return out
