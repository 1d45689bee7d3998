"""The simple driver as a driver package (decision 0075)."""

from __future__ import annotations

from typing import Any, Final

from wddmsim.drivers.simple.allocations import SimpleUmd
from wddmsim.drivers.simple.config import SimpleDriverConfig, configure
from wddmsim.drivers.simple.driver import SimpleDriver
from wddmsim.drivers.simple.seam import DriverCapabilities, DriverModel, DriverPackage, SimulatedDriver
from wddmsim.hw.gpu import Gpu


def _create(gpu: Gpu, config: Any) -> SimulatedDriver:
    return SimpleDriver(gpu, config if isinstance(config, SimpleDriverConfig) else None)


def _capabilities(config: Any) -> DriverCapabilities:
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
    description="a minimal WDDM 1.x segment-model driver: no GpuMmu, no swizzling, linear surfaces",
    config_type=SimpleDriverConfig,
    default_config=SimpleDriverConfig,
    configure=configure,
    create=_create,
    umd=SimpleUmd(),
    capabilities=_capabilities,
)
