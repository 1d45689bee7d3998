"""The reference driver as one package: :class:`~wddmsim.kmd.driver.ReferenceDriver`, its
:class:`~wddmsim.kmd.config.DriverConfig`, its user-mode half and its capabilities.

The user-mode half encodes a :class:`~wddmsim.drivers.resources.ResourceDesc` in the reference driver's own
private-data format (:class:`~wddmsim.kmd.allocations.AllocationDesc`), and lays surfaces out as its kernel-mode
half will (each level padded to whole tiles).
"""

from __future__ import annotations

from typing import Final, final

from wddmsim.drivers.package import (
    DriverCapabilities,
    DriverModel,
    DriverPackage,
    DriverSettings,
    SimulatedDriver,
)
from wddmsim.drivers.resources import ResourceDesc, SurfaceLevel
from wddmsim.hw.gpu import Gpu
from wddmsim.kmd.allocations import AllocationDesc, surface_levels
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.driver import ReferenceDriver


@final
class ReferenceUserModeDriver:
    """The reference driver's user-mode half (``UserModeDriver``)."""

    def encode(self, desc: ResourceDesc) -> bytes:
        """``pPrivateDriverData``: this driver's 36-byte allocation format."""
        return AllocationDesc.of(desc).encode()

    def surface_levels(self, desc: ResourceDesc) -> tuple[SurfaceLevel, ...]:
        """Levels one after another, each padded to whole tiles in both directions."""
        levels = surface_levels(desc.width_bytes, desc.height, desc.mip_levels)
        return tuple(SurfaceLevel(level.offset, level.pitch, level.rows) for level in levels)


def _configure(settings: DriverSettings) -> DriverConfig:
    return DriverConfig(
        model=settings.model,
        paging_buffer_size=settings.paging_buffer_size,
        paging_buffers_in_aperture=settings.paging_buffers_in_aperture,
    )


def _create(gpu: Gpu, config: DriverConfig) -> SimulatedDriver:
    return ReferenceDriver(gpu, config)


def _capabilities(config: DriverConfig) -> DriverCapabilities:
    wddm1 = config.model == DriverModel.WDDM1
    return DriverCapabilities(
        driver_models=frozenset(DriverModel),
        gpummu=not wddm1,
        swizzling=True,
        special_lock_transfer=wddm1,
        alternate_va_locks=wddm1 and config.use_alternate_va,
        tiled_resources=not wddm1,
    )


REFERENCE: Final = DriverPackage(
    name="reference",
    description="The reference driver of the simulated GPU: WDDM 1.x segment model or WDDM 2.x GpuMmu, every "
    "paging operation, swizzling ranges, context allocations.",
    config_type=DriverConfig,
    default_config=DriverConfig,
    configure=_configure,
    create=_create,
    umd=ReferenceUserModeDriver(),
    capabilities=_capabilities,
)


def reference_driver(driver: object) -> ReferenceDriver:
    """``driver`` as the reference driver, for white-box tests of it (anything else is refused)."""
    if not isinstance(driver, ReferenceDriver):
        raise TypeError(f"{type(driver).__name__} is not the reference driver")
    return driver


__all__ = ["REFERENCE", "ReferenceUserModeDriver", "reference_driver"]
