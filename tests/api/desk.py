"""A small adapter seen from user mode: one process, one device, one paging queue, and helpers that speak the
runtime callbacks (``pfnAllocateCb``, ``pfnMakeResidentCb``, ``pfnLockCb`` ...) with the private data of the
adapter's own user-mode driver (``adapter.umd``).

The desk runs on any driver package (``Desk(package=...)``; by default :attr:`Desk.default_package`, which the
``any_driver`` marker of ``tests/api/conftest.py`` sets per run).  It finds its segments by the roles of the
descriptors the driver reported (:func:`~wddmsim.scenarios.tour.tour_segments`, decision 0076):
``desk.cpu_segment``, ``desk.local_segment`` and ``desk.aperture_segment`` -- 1, 2, 3 on the reference driver, 3,
2, 1 on the simple one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pytest

from wddmsim.api import UserDevice, UserProcess
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCKFLAGS, D3DDDICB_UNLOCK
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDICB_EVICT,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.drivers import DriverModel, DriverSettings, driver_package
from wddmsim.drivers.reference import reference_driver
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.allocations import AllocationDesc
from wddmsim.kmd.config import DriverConfig
from wddmsim.scenarios.tour import tour_segments
from wddmsim.system import Adapter, DriverWrapper, SystemConfig, build_adapter
from wddmsim.testing.residency import backing_bytes, check_residency, gpu_view
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.config import VidMmConfig

SMALL_GPU = GpuConfig(local_size=8 * MiB, bar_size=2 * MiB, aperture_size=4 * MiB, system_size=256 * MiB)
"""Local memory: a 2 MiB CPU-visible segment and a ~6 MiB one; a 4 MiB aperture segment; 4 swizzling ranges."""

CPU = ResourceUsage.CPU_VISIBLE
SWIZZLED = ResourceUsage.SWIZZLED
APERTURE_ONLY = ResourceUsage.APERTURE_ONLY


class Desk:
    """One process with one device and one paging queue on a small adapter."""

    default_package: ClassVar[str] = "reference"
    """The driver package of a desk that names none (the ``any_driver`` marker sets it per run)."""

    def __init__(
        self,
        *,
        model: DriverModel | None = None,
        gpu: GpuConfig = SMALL_GPU,
        wrap: DriverWrapper | None = None,
        policy: str = "priority-lru",
        placement: str = "ladder",
        driver: dict[str, Any] | None = None,
        package: str | None = None,
        budgets: str = "capacity",
    ) -> None:
        """``model`` None: the package's own (wddm2 on the reference driver); a model the package cannot present
        skips the test (its capabilities do not allow it).  ``driver``: fields of the package's configuration.
        ``policy`` and ``placement`` default to the former defaults (decision 0165): these tests were written
        against the ladder of D7 and pin it."""
        name = package or self.default_package
        config = SystemConfig(
            gpu=gpu,
            driver_package=name,
            driver=_driver_config(name, model, driver or {}),
            vidmm=VidMmConfig(eviction_policy=policy, placement_policy=placement, budgets=budgets),
        )
        self.package = name
        self.adapter: Adapter = build_adapter(config, wrap_driver=wrap)
        roles = tour_segments(self.adapter.vidmm.segments)
        self.cpu_segment, self.local_segment, self.aperture_segment = roles.cpu_visible, roles.local, roles.aperture
        """The segments by role, as the driver reported them."""
        self.start = self.adapter.footprint()
        """What the adapter held before any process opened it (a teardown must come back to it)."""
        self.vidmm = self.adapter.vidmm
        self.process = self.adapter.runtime.open_process()
        self.device = self.process.create_device()
        self.queue = self.new_queue(self.device)

    @property
    def wddm1(self) -> bool:
        return self.vidmm.gpummu is None

    def new_queue(self, device: UserDevice) -> HANDLE:
        args = D3DDDI_CREATEPAGINGQUEUE()
        device.create_paging_queue(args)
        return args.hPagingQueue

    def other(self) -> tuple[UserProcess, UserDevice, HANDLE]:
        """A second process with its device and queue."""
        process = self.adapter.runtime.open_process()
        device = process.create_device()
        return process, device, self.new_queue(device)

    # --- allocations -----------------------------------------------------------------------------------------

    def allocate(self, *descs: ResourceDesc | AllocationDesc, device: UserDevice | None = None) -> list[HANDLE]:
        """``pfnAllocateCb``: a ``ResourceDesc`` encoded by the adapter's user-mode driver (``adapter.umd``); an
        ``AllocationDesc`` is the reference driver's own format, as a white-box test writes it."""
        datas = [d.encode() if isinstance(d, AllocationDesc) else self.adapter.umd.encode(d) for d in descs]
        infos = [D3DDDI_ALLOCATIONINFO(pPrivateDriverData=data, PrivateDriverDataSize=len(data)) for data in datas]
        args = D3DDDICB_ALLOCATE(NumAllocations=len(infos), pAllocationInfo=infos)
        assert (device or self.device).allocate(args) == HRESULT.S_OK
        return [info.hAllocation for info in infos]

    def buffer(self, size: int, usage: int = CPU, device: UserDevice | None = None) -> HANDLE:
        return self.allocate(ResourceDesc(ResourceKind.BUFFER, size=size, usage=usage), device=device)[0]

    def surface(self, width: int = 512, height: int = 256, mips: int = 2, usage: int = CPU | SWIZZLED) -> HANDLE:
        return self.allocate(
            ResourceDesc(ResourceKind.SURFACE, usage=usage, width_bytes=width, height=height, mip_levels=mips)
        )[0]

    def a(self, handle: HANDLE) -> VidMmAllocation:
        return self.vidmm.residency.objects.allocation(handle)

    # --- residency -------------------------------------------------------------------------------------------

    def resident(self, *handles: HANDLE, device: UserDevice | None = None, queue: HANDLE | None = None) -> HRESULT:
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=queue or self.queue, NumAllocations=len(handles), AllocationList=tuple(handles)
        )
        result = (device or self.device).make_resident(args)
        if result == HRESULT.E_PENDING:
            (device or self.device).wait_for_paging_fence(args.hPagingQueue, args.PagingFenceValue)
        return result

    def evict(self, *handles: HANDLE, device: UserDevice | None = None, **flags: bool) -> None:
        (device or self.device).evict(
            D3DDDICB_EVICT(
                NumAllocations=len(handles), AllocationList=tuple(handles), Flags=D3DDDI_EVICT_FLAGS(**flags)
            )
        )
        self.settle()

    def settle(self) -> None:
        self.vidmm.residency.settle()

    def where(self, handle: HANDLE) -> int:
        """The segment id the allocation is in (0: system memory)."""
        return self.vidmm.residency.where(handle).segment_id

    def crowd(self, segment: int | None = None) -> list[HANDLE]:
        """Fill ``segment`` (the CPU-visible one by default) with another device's allocations that want it
        (pressure: ours are evicted)."""
        segment = self.cpu_segment if segment is None else segment
        _, device, queue = self.other()
        size = self.vidmm.spaces.get(segment).size
        usage = CPU if segment == self.cpu_segment else 0
        hogs = [self.buffer(size // 4, usage=usage, device=device) for _ in range(4)]
        for hog in hogs:
            self.resident(hog, device=device, queue=queue)
        return hogs

    # --- CPU access ------------------------------------------------------------------------------------------

    def lock(
        self, handle: HANDLE, *, private: int = 0, device: UserDevice | None = None, **flags: bool
    ) -> D3DDDICB_LOCK:
        """Lock (``LockEntire`` unless pages are given); the caller checks the result."""
        flags.setdefault("LockEntire", True)
        args = D3DDDICB_LOCK(hAllocation=handle, PrivateDriverData=private, Flags=D3DDDICB_LOCKFLAGS(**flags))
        result = (device or self.device).lock(args)
        assert result == HRESULT.S_OK, result
        return args

    def unlock(self, *handles: HANDLE, device: UserDevice | None = None) -> None:
        (device or self.device).unlock(D3DDDICB_UNLOCK(NumAllocations=len(handles), phAllocations=tuple(handles)))

    def cpu_write(self, address: int, data: ByteArray) -> None:
        self.process.cpu_write(address, data.tobytes())

    def cpu_read(self, address: int, size: int) -> ByteArray:
        """What the CPU reads there -- by ``cpu_read`` and by ``cpu_read_into``, which must agree."""
        data = np.frombuffer(self.process.cpu_read(address, size), dtype=np.uint8)
        into = np.full(size, 0xA5, dtype=np.uint8)
        self.process.cpu_read_into(address, into.data)
        assert np.array_equal(into, data), "cpu_read_into read other bytes than cpu_read"
        return data

    # --- what the GPU and the backing store hold -----------------------------------------------------------

    def gpu_bytes(self, handle: HANDLE) -> ByteArray:
        a = self.a(handle)
        return gpu_view(self.adapter, a, 0, a.size)

    def backing(self, handle: HANDLE) -> ByteArray:
        return backing_bytes(self.adapter, self.a(handle))

    def tiled(self, handle: HANDLE, linear: ByteArray) -> ByteArray:
        """``linear`` as the reference GPU stores the surface (every level tiled)."""
        from wddmsim.hw.swizzle import tile

        kmd = reference_driver(self.adapter.driver).state.allocations.get(handle, "hAllocation")
        out = linear.copy()
        for level in kmd.levels:
            out[level.offset : level.offset + level.size] = tile(
                linear[level.offset : level.offset + level.size], level.pitch
            )
        return out

    def check(self) -> None:
        self.settle()
        problems = check_residency(self.adapter)
        assert not problems, "\n".join(problems)


def _driver_config(package: str, model: DriverModel | None, fields: dict[str, Any]) -> Any:
    """The package's configuration for ``model`` with ``fields`` set; the test is skipped when the package cannot
    present the model (decision 0076: the same rule a scenario file follows)."""
    found = driver_package(package)
    default = found.default_config()
    chosen = default.model if model is None else model
    if chosen not in found.capabilities(default).driver_models:
        pytest.skip(f"driver package {package} presents no {chosen.value}")
    if found.name == "reference":  # as the reference driver's white-box tests have always built it
        return DriverConfig(model=chosen, **fields)
    configured: Any = found.configure(DriverSettings(model=chosen))  # a dataclass of the package's own
    return replace(configured, **fields)


def pattern(size: int, seed: int) -> ByteArray:
    out: ByteArray = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    return out


__all__ = ["APERTURE_ONLY", "CPU", "SWIZZLED", "Desk", "KiB", "MiB", "pattern"]
