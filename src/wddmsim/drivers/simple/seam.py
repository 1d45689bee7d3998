"""The driver-package interface this driver is written against.

From the driver seam (D1): these names are those of ``wddmsim.drivers.resources`` and ``wddmsim.drivers.package``
(the shapes of D1's draft); they stand here until that package lands, and then this module re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, Protocol

from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.hw.gpu import Gpu


class ResourceKind(IntEnum):
    """From the driver seam (D1): what user mode asks for."""

    BUFFER = 0
    SURFACE = 1
    CONTEXT = 2
    """A context image: never from user mode (this driver has none at all)."""


class ResourceUsage(IntEnum):
    """From the driver seam (D1): bits of :attr:`ResourceDesc.usage` (the reference driver's usage word)."""

    CPU_VISIBLE = 0x1
    SWIZZLED = 0x2
    ACCESSED_PHYSICALLY = 0x4
    EXPLICIT_RESIDENCY = 0x8
    APERTURE_ONLY = 0x10
    NO_APERTURE = 0x20
    CACHED = 0x40
    NO_LARGE_PAGES = 0x80


@dataclass(frozen=True, slots=True)
class ResourceDesc:
    """From the driver seam (D1): a resource as a workload describes it, in no driver's format."""

    kind: ResourceKind
    size: int = 0
    usage: int = 0
    width_bytes: int = 0
    height: int = 0
    mip_levels: int = 1


@dataclass(frozen=True, slots=True)
class SurfaceLevel:
    """From the driver seam (D1): ``rows`` rows of ``pitch`` bytes at ``offset`` into the allocation."""

    offset: int
    pitch: int
    rows: int

    @property
    def size(self) -> int:
        return self.pitch * self.rows


class DriverModel(Enum):
    """From the driver seam (D1): how a driver presents the GPU to VidMm."""

    WDDM1 = "wddm1"
    WDDM2 = "wddm2"


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverStatistics:
    """From the driver seam (D1): what a driver holds, for the footprint and the invariant checkers."""

    allocations: int
    contexts: int
    local_ranges: tuple[tuple[int, int], ...]
    """``[start, end)`` of local memory the driver reports as memory segments."""
    system_size: int


class SimulatedDriver(KernelModeDriver, Protocol):
    """From the driver seam (D1): a kernel-mode driver that can also say what it holds."""

    def statistics(self) -> DriverStatistics: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverSettings:
    """From the driver seam (D1): the driver keys of a scenario file, mapped by each package into its config."""

    model: DriverModel = DriverModel.WDDM2
    paging_buffer_size: int = 64 * 1024
    paging_buffers_in_aperture: bool = False


class UserModeDriver(Protocol):
    """From the driver seam (D1): the user-mode half, as workloads use it."""

    def encode(self, desc: ResourceDesc) -> bytes: ...

    def surface_levels(self, desc: ResourceDesc) -> tuple[SurfaceLevel, ...]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverCapabilities:
    """From the driver seam (D1): what a configured driver can do."""

    driver_models: frozenset[DriverModel]
    gpummu: bool
    swizzling: bool
    special_lock_transfer: bool
    alternate_va_locks: bool
    tiled_resources: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverPackage:
    """From the driver seam (D1): one driver, as the composition root takes it."""

    name: str
    description: str
    config_type: type[Any]
    default_config: Callable[[], Any]
    configure: Callable[[DriverSettings], Any]
    create: Callable[[Gpu, Any], SimulatedDriver]
    umd: UserModeDriver
    capabilities: Callable[[Any], DriverCapabilities]
