"""A small adapter with one process, one device and one paging queue, for residency tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDI_MAKERESIDENT_FLAGS,
    D3DDDI_OFFER_PRIORITY,
    D3DDDICB_EVICT,
    D3DKMT_OFFER_FLAGS,
    D3DKMT_OFFERALLOCATIONS,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.drivers.package import DriverConfiguration, DriverSettings, DriverStatistics
from wddmsim.drivers.reference import REFERENCE
from wddmsim.drivers.registry import driver_package
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.system import Adapter, DriverWrapper, SystemConfig, build_adapter
from wddmsim.testing.residency import check_residency, gpu_view
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.config import VidMmConfig
from wddmsim.vidmm.device import Device, PagingQueue
from wddmsim.vidmm.policy import EvictionPolicy

SMALL_GPU = GpuConfig(local_size=8 * MiB, bar_size=2 * MiB, aperture_size=4 * MiB, system_size=256 * MiB)
"""Local memory: a 2 MiB CPU-visible segment and a ~6 MiB one; a 4 MiB aperture segment."""


def _driver_config(package: str, model: DriverModel | None, options: dict[str, Any]) -> DriverConfiguration:
    """The reference driver's configuration from ``options``; another package's own for ``model``."""
    if package == REFERENCE.name:
        return DriverConfig(model=model or DriverModel.WDDM2, **options)
    assert not options["map_aperture2"] and len(options) == 1, f"reference-driver options on {package}: {options}"
    chosen = driver_package(package)
    return chosen.configure(DriverSettings(model=model or chosen.default_config().model))


class World:
    def __init__(
        self,
        *,
        gpu: GpuConfig = SMALL_GPU,
        model: DriverModel | None = None,
        policy: str | EvictionPolicy = "priority-lru",
        placement: str = "ladder",
        map_aperture2: bool = False,
        physical: bool = False,
        scratch_size: int = 16 * MiB,
        update_mode: DXGK_PAGETABLEUPDATEMODE | None = None,
        driver_options: dict[str, Any] | None = None,
        wrap_driver: DriverWrapper | None = None,
        deferred: bool = True,
        package: str = "reference",
    ) -> None:
        """``policy`` and ``placement`` default to the former defaults (decision 0165): the mechanism's tests were
        written against the ladder of D7 and pin it.  ``package`` names the driver package (``reference``, ``simple``, ...); ``model`` (default: the package's
        own), ``map_aperture2``, ``update_mode`` and ``driver_options`` configure the reference driver only."""
        options: dict[str, Any] = {"map_aperture2": map_aperture2, **(driver_options or {})}
        if update_mode is not None:  # CPU_VIRTUAL needs page tables the CPU can reach: the CPU-visible segment
            segment = 1 if update_mode == DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL else 2
            options.update(page_table_update_mode=update_mode, page_table_segment=segment)
        self.adapter: Adapter = build_adapter(
            SystemConfig(
                gpu=gpu,
                driver_package=package,
                driver=_driver_config(package, model, options),
                vidmm=VidMmConfig(
                    eviction_policy=policy,
                    placement_policy=placement,
                    physical_moves=physical,
                    scratch_size=scratch_size,
                    deferred_paging=deferred,
                ),
            ),
            wrap_driver=wrap_driver,
        )
        self.start = self.adapter.footprint()
        self.start_statistics = self.driver_statistics()
        """What the adapter held before any process (a teardown must come back to it)."""
        self.vidmm = self.adapter.vidmm
        self.rm = self.vidmm.residency
        self.process = self.rm.create_process()
        self.device = self.new_device()
        self.queue = self.new_queue(self.device)

    def driver_statistics(self) -> DriverStatistics:
        """What the driver holds and reports (``statistics()``, the driver seam)."""
        return self.adapter.driver.statistics()

    @property
    def virtual(self) -> bool:
        """Content moves by GPU VA through the paging process's scratch area."""
        return self.vidmm.mover.scratch is not None

    @property
    def copy_op(self) -> str:
        return "DXGK_OPERATION_VIRTUAL_TRANSFER" if self.virtual else "DXGK_OPERATION_TRANSFER"

    @property
    def fill_op(self) -> str:
        return "DXGK_OPERATION_VIRTUAL_FILL" if self.virtual else "DXGK_OPERATION_FILL"

    def new_device(self) -> Device:
        return self.rm.create_device(self.process)

    def new_queue(self, device: Device, priority: int = 0) -> PagingQueue:
        args = D3DDDI_CREATEPAGINGQUEUE(hDevice=device.handle, Priority=priority)  # type: ignore[arg-type]
        self.rm.create_paging_queue(args)
        return self.rm.objects.queue(args.hPagingQueue)

    def buffer(self, size: int, *, usage: int = 0, device: Device | None = None) -> VidMmAllocation:
        data = self.adapter.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=size, usage=usage))
        return self.rm.lifetimes.create_allocation(device or self.device, data)

    def make_resident(
        self, *allocations: VidMmAllocation, queue: PagingQueue | None = None, **flags: bool
    ) -> tuple[HRESULT, D3DDDI_MAKERESIDENT]:
        q = queue or self.queue
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=q.handle,
            NumAllocations=len(allocations),
            AllocationList=tuple(a.handle for a in allocations),
            Flags=D3DDDI_MAKERESIDENT_FLAGS(**flags),
        )
        result = self.rm.make_resident(args)
        if result == HRESULT.E_PENDING:
            self.rm.wait(q, args.PagingFenceValue)
        return result, args

    def evict(self, *allocations: VidMmAllocation, **flags: bool) -> D3DDDICB_EVICT:
        device = allocations[0].device
        args = D3DDDICB_EVICT(
            hDevice=device.handle,
            NumAllocations=len(allocations),
            AllocationList=tuple(a.handle for a in allocations),
            Flags=D3DDDI_EVICT_FLAGS(**flags),
        )
        self.rm.evict(args)
        self.settle()
        return args

    def offer(self, a: VidMmAllocation, **flags: bool) -> None:
        """``D3DKMTOfferAllocations`` of one allocation at low priority."""
        self.rm.offer(
            D3DKMT_OFFERALLOCATIONS(
                hDevice=a.device.handle,
                HandleList=(a.handle,),
                NumAllocations=1,
                Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
                Flags=D3DKMT_OFFER_FLAGS(**flags),
            )
        )

    def settle(self) -> None:
        """Let the paging engine finish everything built so far."""
        self.vidmm.paging.wait(self.vidmm.paging.flush())

    def write(self, a: VidMmAllocation, data: ByteArray, offset: int = 0) -> None:
        gpu_view(self.adapter, a, offset, data.shape[0], write=data)

    def read(self, a: VidMmAllocation, offset: int = 0, size: int | None = None) -> ByteArray:
        return gpu_view(self.adapter, a, offset, a.size - offset if size is None else size)

    def check(self) -> None:
        self.settle()
        problems = check_residency(self.adapter)
        assert not problems, "\n".join(problems)


def pattern(size: int, seed: int) -> ByteArray:
    out: ByteArray = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    return out


__all__ = ["KiB", "MiB", "World", "pattern"]
