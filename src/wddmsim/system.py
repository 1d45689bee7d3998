"""The composition root: one adapter, wired -- hardware, OS services, a driver package, VidMm, and the user-mode
runtime over it.

Nothing else builds these objects together; tests, benchmarks and the command line all start here.  The driver
comes from a package (:mod:`wddmsim.drivers`, decision 0070): the reference driver unless the configuration
names another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import final

from wddmsim.api.runtime import Runtime
from wddmsim.core.clock import Clock
from wddmsim.core.errors import ConfigurationError
from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.drivers.package import (
    DriverCapabilities,
    DriverConfiguration,
    DriverModel,
    DriverPackage,
    SimulatedDriver,
)
from wddmsim.drivers.registry import DEFAULT, driver_package
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.ntos.mm import MemoryManager
from wddmsim.vidmm.config import VidMmConfig
from wddmsim.vidmm.manager import VideoMemoryManager
from wddmsim.vidmm.paging.process import PageTableTag


@final
class _PackageDefault:
    """Stands for "the package's default configuration" until :class:`SystemConfig` knows the package."""

    model = DriverModel.WDDM2

    def validate(self) -> None:
        raise AssertionError("SystemConfig replaces it with the package's default configuration")


_PACKAGE_DEFAULT: DriverConfiguration = _PackageDefault()


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemConfig:
    """Everything an adapter is built from: the GPU, the driver package and its configuration, VidMm."""

    gpu: GpuConfig = field(default_factory=GpuConfig)
    driver_package: str | DriverPackage = DEFAULT
    """The driver package, by name (``reference``, a registered one, ``module:attribute``) or itself."""
    driver: DriverConfiguration = _PACKAGE_DEFAULT
    """The package's configuration (not given: its ``default_config()``)."""
    vidmm: VidMmConfig = field(default_factory=VidMmConfig)

    def __post_init__(self) -> None:
        if self.driver is _PACKAGE_DEFAULT:
            package = driver_package(self.driver_package, setting="driver_package")
            object.__setattr__(self, "driver", package.default_config())


@final
class Adapter:
    """Everything of one simulated adapter, on one clock and one event log."""

    def __init__(self, config: SystemConfig | None = None, *, wrap_driver: DriverWrapper | None = None) -> None:
        self.config = config or SystemConfig()
        self.clock = Clock()
        self.events = EventLog(self.clock)
        self.gpu = Gpu(self.config.gpu, clock=self.clock, events=self.events)
        self.mm = MemoryManager(self.gpu.system, self.gpu.bar)
        self.package = _package_of(self.config)
        self.capabilities: DriverCapabilities = self.package.capabilities(self.config.driver)
        """What this driver can do (the tour and the scenarios ask before using a feature)."""
        self.umd = self.package.umd
        """The user-mode half of the driver: workloads encode their allocations' private data with it."""
        self.driver: SimulatedDriver = self.package.create(self.gpu, self.config.driver)
        self.ddi: KernelModeDriver = self.driver if wrap_driver is None else wrap_driver(self.driver)
        """The driver as VidMm sees it: the package's driver, or a wrapper around it (test doubles)."""
        self.vidmm = VideoMemoryManager(self.ddi, self.mm, self.clock, self.events, self.config.vidmm)
        self.runtime = Runtime(self.vidmm)
        """The user-mode surface: processes open it, their devices call the runtime callbacks."""

    def footprint(self) -> Footprint:
        """What the adapter holds now, across the layers (reliability-plan I19: compared after a teardown with
        what it held at the start, it must not have grown by a byte, a table, a handle or a pending fence)."""
        vidmm = self.vidmm
        rm = vidmm.residency
        va_spaces = [] if vidmm.va is None else list(vidmm.va.spaces.values())
        va_spaces += [s.privileged for s in va_spaces if s.privileged is not None]
        driver = self.driver.statistics()
        return Footprint(
            system_bytes=(self.mm.frames.total_frames - self.mm.frames.free_frames) * PAGE_SIZE,
            segment_bytes=tuple(
                (s.id, sum(size for _, size, owner in s.held() if not isinstance(owner, PageTableTag)))
                for s in vidmm.spaces
            ),
            paging_process_tables=0 if vidmm.paging_process is None else len(vidmm.paging_process.tables),
            va_spaces=len(va_spaces),
            page_tables=sum(len(s.tables) + len(s.leaves64) + len(s.saved) for s in va_spaces),
            processes=len(rm.processes),
            devices=len(rm.devices),
            allocations=len(rm.allocations),
            contexts=len(rm.contexts),
            paging_queues=len(rm.queues),
            sync_objects=len(rm.sync_objects),
            fences=vidmm.fences.in_use,
            driver_allocations=driver.allocations,
            driver_contexts=driver.contexts,
            host_views=len(self.mm.locked_views),
            mdl_images=driver.mdl_images,
            bridge_views=driver.bridge_views,
            pending=len(rm.worker)
            + sum(len(q.pending) for q in rm.queues.values())
            + sum(len(s.waiting) for s in rm.sync_objects.values())
            + len(vidmm.work.in_flight),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Footprint:
    """Counts of everything an adapter holds (:meth:`Adapter.footprint`)."""

    system_bytes: int
    """System memory in use: backing stores, paging buffers, page tables in system memory, DMA buffers."""
    segment_bytes: tuple[tuple[int, int], ...]
    """``(segment id, bytes allocated)``: allocations, context images, the processes' page tables, paging-buffer
    ranges -- all but the paging process's tables."""
    paging_process_tables: int
    """The system paging process's tables: created as VidMm's own region of its space is first used, kept for
    good (bounded by that region), so never a leak."""
    va_spaces: int
    page_tables: int
    """Tables of the processes' VA spaces (placed, or recorded while their tree is evicted)."""
    processes: int
    devices: int
    allocations: int
    contexts: int
    paging_queues: int
    sync_objects: int
    fences: int
    """Monitored-fence slots in use."""
    driver_allocations: int
    """The driver's allocation handle table."""
    driver_contexts: int
    host_views: int
    """Live ``MmMapLockedPagesSpecifyCache`` mappings (host views of system pages a native driver holds)."""
    mdl_images: int = 0
    """C images of MDLs a native driver was handed and a pending paging buffer may still use."""
    bridge_views: int = 0
    """Host views a native driver mapped through them (``MmGetSystemAddressForMdlSafe``) and still holds."""
    pending: int
    """Paging requests not serviced, fence values not signalled, work waiting for a fence, DMA buffers in flight."""

    def leaks(self, start: Footprint) -> list[str]:
        """One line for each count that grew since ``start`` (empty: nothing leaked)."""
        found = []
        for name in self.__slots__:
            if name == "paging_process_tables":
                continue
            before, now = getattr(start, name), getattr(self, name)
            if name == "segment_bytes":
                for (segment, was), (_, bytes_now) in zip(before, now, strict=True):
                    if bytes_now > was:
                        found.append(f"segment {segment}: {bytes_now - was:#x} bytes more allocated than at the start")
            elif now > before:
                found.append(f"{name}: {now} now, {before} at the start")
        return found


def _package_of(config: SystemConfig) -> DriverPackage:
    """The configured package; its configuration must be of its own type."""
    package = driver_package(config.driver_package, setting="driver_package")
    if not package.accepts(config.driver):
        raise ConfigurationError(
            "driver",
            type(config.driver).__name__,
            f"must be a {package.config_type.__name__}, the configuration of driver package {package.name}",
        )
    return package


DriverWrapper = Callable[[SimulatedDriver], KernelModeDriver]
"""Wraps the package's driver in a test double that VidMm then sees (``Adapter.ddi``)."""


def build_adapter(config: SystemConfig | None = None, *, wrap_driver: DriverWrapper | None = None) -> Adapter:
    return Adapter(config, wrap_driver=wrap_driver)
