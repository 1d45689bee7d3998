"""The driver seam: what a driver package gives the composition root, and what the rest may ask of a driver.

A :class:`DriverPackage` is one driver as a unit, the way a vendor ships one: the kernel-mode driver's factory
(``DriverEntry`` and ``DxgkDdiAddDevice`` in one call), the type of its configuration, its user-mode half (which
encodes the private driver data of ``D3DDDI_ALLOCATIONINFO``) and what it can do.  The adapter is composed
from one (:mod:`wddmsim.system`); nothing else names a concrete driver (decision 0070).

VidMm sees the kernel-mode driver only through :class:`~wddmsim.ddi.driver.KernelModeDriver`.  The footprint
and the invariant checkers see it through :meth:`SimulatedDriver.statistics` -- counts and the memory it
reports -- never through its private state.  A verifier that checks a driver's own formats (the paging tour)
asks for a :class:`DriverProbe`, which a driver may implement or not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.drivers.resources import ResourceDesc, SurfaceLevel
from wddmsim.hw.gpu import Gpu


class DriverModel(Enum):
    """How a driver presents the GPU to VidMm (design decision D1)."""

    WDDM1 = "wddm1"
    """Segment model: physical Transfer/Fill/Discard, swizzling ranges, SpecialLockTransfer."""
    WDDM2 = "wddm2"
    """GpuMmu model: page tables, TransferVirtual/FillVirtual, paging fences."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverStatistics:
    """What a driver holds and reports, for the footprint and the invariant checkers (never its private state)."""

    allocations: int
    """Entries of the driver's allocation handle table (``DxgkDdiCreateAllocation`` and context images)."""
    contexts: int
    """Contexts the driver knows (``DxgkDdiCreateContext``), its own system context included."""
    local_ranges: tuple[tuple[int, int], ...]
    """``[start, end)`` of local memory covered by the memory segments it reports (``DXGK_SEGMENTDESCRIPTOR``):
    where a page table or a mapped page in local memory may lie."""
    system_size: int
    """Bytes of system memory the GPU can address."""
    mdl_images: int = 0
    """C images of MDLs a native driver may still read (the bridge's; decision 0131)."""
    bridge_views: int = 0
    """Live ``MmMapLockedPagesSpecifyCache`` host views the bridge gave a native driver (decision 0131)."""


@runtime_checkable
class SimulatedDriver(KernelModeDriver, Protocol):
    """A kernel-mode driver a package creates: the DDI entry points, and its statistics."""

    def statistics(self) -> DriverStatistics:
        """Counts and reported memory, read now (cheap: the footprint asks after every teardown)."""
        ...


class DriverConfiguration(Protocol):
    """What every package's configuration says: the model it presents, and whether it is sound."""

    @property
    def model(self) -> DriverModel: ...

    def validate(self) -> None:
        """Raise :class:`~wddmsim.core.errors.ConfigurationError` naming the setting, its value and the rule."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverSettings:
    """The driver keys of a scenario file (``[adapter]``), which every package maps into its own configuration."""

    model: DriverModel = DriverModel.WDDM2
    paging_buffer_size: int = 64 * 1024
    """``PagingBufferSize`` to report."""
    paging_buffers_in_aperture: bool = False
    """Report the aperture segment as ``PagingBufferSegmentId``."""


class UserModeDriver(Protocol):
    """The user-mode half of a driver package, as workloads use it."""

    def encode(self, desc: ResourceDesc) -> bytes:
        """The private driver data of ``D3DDDI_ALLOCATIONINFO.pPrivateDriverData`` describing ``desc``."""
        ...

    def surface_levels(self, desc: ResourceDesc) -> tuple[SurfaceLevel, ...]:
        """The layout of a surface's MIP levels in its allocation (what a lock of one level shows)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverCapabilities:
    """What a configured driver can do: what a tour step or a scenario asks before using a feature."""

    driver_models: frozenset[DriverModel]
    """The models the package can present (any configuration)."""
    gpummu: bool
    """This configuration presents a GpuMmu (``DXGK_VIDMMCAPS``/``DXGK_GPUMMUCAPS``): GPU VAs, page tables."""
    swizzling: bool
    """Swizzled surfaces: ``Swizzle``/``Unswizzle`` transfers and ``DxgkDdiAcquireSwizzlingRange``."""
    special_lock_transfer: bool
    """It builds ``DXGK_OPERATION_SPECIAL_LOCK_TRANSFER`` (WDDM 1.x)."""
    alternate_va_locks: bool
    """It reports ``UseAlternateVA`` for CPU-visible swizzled surfaces (WDDM 1.x)."""
    tiled_resources: bool
    """Tiled resources: tiles mapped by ``UpdateGpuVirtualAddress`` (needs a GpuMmu)."""


@runtime_checkable
class DriverProbe(Protocol):
    """What a verifier may ask a driver beyond the DDI: its own records and formats, read only.  Optional: the
    paging tour skips the checks that need it."""

    def context_image(self, size: int) -> DXGK_ALLOCATIONINFO:
        """A context image made the driver's way (as ``DxgkDdiCreateContext`` does), for a story that
        initialises one by hand (``InitContextResource``)."""
        ...

    def context_header(self, allocation: int, gpu_va: int, size: int) -> bytes:
        """The header ``InitContextResource`` writes at the start of a context image (the rest it zeroes;
        ``UpdateContextAllocation`` writes the driver's state after the header)."""
        ...

    def notified_residency(self, allocation: int) -> tuple[int, int] | None:
        """The last ``(SegmentId, SegmentOffset)`` the driver learned by ``NotifyResidency`` (None: none)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverPackage:
    """One driver as a unit: what the composition root needs to build it, and what a workload needs to use it.

    ``config_type`` is the class of its configuration (a :class:`DriverConfiguration`); ``create`` plays
    ``DriverEntry``/``DxgkDdiAddDevice`` for ``gpu``; ``capabilities`` answers for one configuration.
    """

    name: str
    description: str
    config_type: type[Any]
    default_config: Callable[[], DriverConfiguration]
    configure: Callable[[DriverSettings], DriverConfiguration]
    """The configuration a scenario file's driver keys ask for (a ConfigurationError if it cannot present it)."""
    create: Callable[[Gpu, Any], SimulatedDriver]
    umd: UserModeDriver
    capabilities: Callable[[Any], DriverCapabilities]

    def accepts(self, config: object) -> bool:
        """``config`` is this package's configuration type."""
        return isinstance(config, self.config_type)


__all__ = [
    "DriverCapabilities",
    "DriverConfiguration",
    "DriverModel",
    "DriverPackage",
    "DriverProbe",
    "DriverSettings",
    "DriverStatistics",
    "SimulatedDriver",
    "UserModeDriver",
]
