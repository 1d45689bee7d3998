"""The simple driver as a driver package (decisions 0070, 0075): registered as ``simple`` in
:data:`wddmsim.drivers.registry.BUILTIN`, so ``SystemConfig(driver_package="simple")`` and ``wddmsim run --driver
simple`` compose an adapter over it."""

from __future__ import annotations

from typing import Final

from wddmsim.drivers.package import DriverCapabilities, DriverModel, DriverPackage, SimulatedDriver
from wddmsim.drivers.simple.allocations import SimpleUmd
from wddmsim.drivers.simple.config import SimpleDriverConfig, configure
from wddmsim.drivers.simple.driver import SimpleDriver
from wddmsim.hw.gpu import Gpu


def _create(gpu: Gpu, config: SimpleDriverConfig) -> SimulatedDriver:
    """``DriverEntry`` and ``DxgkDdiAddDevice`` for ``gpu`` (the composition root checked the config's type)."""
    return SimpleDriver(gpu, config)


def _capabilities(config: SimpleDriverConfig) -> DriverCapabilities:
    """The same for every configuration: the segment model only, no GpuMmu, linear surfaces only, none of the
    WDDM 1.x extras (SpecialLockTransfer, alternate-VA locks), no context images to probe."""
    return DriverCapabilities(
        driver_models=frozenset({DriverModel.WDDM1}),
        gpummu=False,
        swizzling=False,
        special_lock_transfer=False,
        alternate_va_locks=False,
        tiled_resources=False,
    )


SIMPLE: Final = DriverPackage(
    name="simple",
    description="A minimal WDDM 1.x segment-model driver for the simulated GPU: no GpuMmu, no swizzling, linear "
    "surfaces, seven paging operations.",
    config_type=SimpleDriverConfig,
    default_config=SimpleDriverConfig,
    configure=configure,
    create=_create,
    umd=SimpleUmd(),
    capabilities=_capabilities,
)
"""The package the registry hands out for ``simple``."""

__all__ = ["SIMPLE"]
