"""The demonstrations that are not workloads: ``wddmsim run tour`` (every paging operation driven directly) and
``wddmsim run residency`` (a small residency frame loop); ``disasm --scenario`` replays them too.

Each is a function ``(config, seed, on_adapter) -> ScenarioRun``; ``on_adapter`` sees the adapter before the
first step (to attach read-only observers such as a paging-buffer capture).  ``config`` None means the
scenario's own default GPU.  The demonstrations' own modules are imported when one runs: the command line lists
them and checks their settings at every start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import GiB, KiB, MiB
from wddmsim.drivers.package import DriverModel, DriverSettings
from wddmsim.drivers.registry import DEFAULT as DEFAULT_DRIVER
from wddmsim.drivers.registry import driver_package
from wddmsim.hw.gpu import GpuConfig
from wddmsim.scenarios.config import PAGING_BUFFER_LIMIT, VRAM_LIMIT, VRAM_MINIMUM
from wddmsim.scenarios.result import ScenarioRun
from wddmsim.system import Adapter, SystemConfig
from wddmsim.vidmm.config import VidMmConfig

OnAdapter = Callable[[Adapter], None]

DEMO_GPU = GpuConfig(local_size=64 * MiB, bar_size=16 * MiB, aperture_size=16 * MiB, system_size=1 * GiB)
"""Local memory: a 16 MiB CPU-visible segment and a ~47 MiB one; a 16 MiB aperture segment."""
DEMO_VIDMM = VidMmConfig(eviction_policy="priority-lru", placement_policy="ladder")
"""The policies the residency demo shows (the defaults before decision 0165): the ladder, whose pressure demotes
victims still needed to the aperture, ranked by priority and recency."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One demonstration: its name, what it shows, its GPU and how to run it."""

    name: str
    summary: str
    gpu: GpuConfig
    """The GPU it runs on unless told otherwise."""
    run: Callable[[SystemConfig | None, int, OnAdapter | None], ScenarioRun]


def _tour(config: SystemConfig | None, seed: int, on_adapter: OnAdapter | None) -> ScenarioRun:
    from wddmsim.scenarios.tour import run_tour

    rig, result = run_tour(config, on_rig=None if on_adapter is None else lambda rig: on_adapter(rig.adapter))
    return ScenarioRun("tour", seed, rig.adapter, result)


def _residency(config: SystemConfig | None, seed: int, on_adapter: OnAdapter | None) -> ScenarioRun:
    from wddmsim.scenarios.residency import run_residency_demo

    adapter, result = run_residency_demo(config, seed=seed, on_adapter=on_adapter)
    return ScenarioRun("residency", seed, adapter, result)


SCENARIOS: dict[str, Scenario] = {
    "tour": Scenario(
        "tour",
        "every DxgkDdiBuildPagingBuffer operation end to end, each result checked (the seed is not used)",
        GpuConfig(),
        _tour,
    ),
    "residency": Scenario(
        "residency",
        "4 processes in a frame loop over 1.5x local memory: pressure, demotion; every byte verified",
        DEMO_GPU,
        _residency,
    ),
}


def demo_config(
    name: str,
    driver_model: str | None = None,
    vram: int | None = None,
    paging_buffer: int | None = None,
    driver: str = DEFAULT_DRIVER,
) -> SystemConfig:
    """The adapter demonstration ``name`` runs on, with local memory and ``PagingBufferSize`` overridden.

    Checked here, before anything is built, with the rules a scenario file's ``adapter.vram`` and
    ``adapter.paging_buffer`` follow; errors name ``vram``, ``paging_buffer`` or ``driver`` (the driver package).  The CPU-visible part (the
    BAR) scales with local memory -- a quarter of it, at most the demonstration's own -- so every size the
    rule accepts leaves local memory the CPU cannot see (decision 0049).  No ``driver_model``: the model of the
    package's default configuration (decision 0076: wddm2 on the reference driver, wddm1 on the simple one).
    """
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise ConfigurationError("scenario", name, f"demonstrations are {sorted(SCENARIOS)}")
    gpu = scenario.gpu
    if vram is not None:
        if not VRAM_MINIMUM <= vram <= VRAM_LIMIT or vram % (64 * KiB):
            raise ConfigurationError("vram", vram, "must be a multiple of 64 KiB between 4 MiB and 1 TiB")
        bar = min(gpu.bar_size, vram // 4 // (64 * KiB) * (64 * KiB))
        gpu = replace(gpu, local_size=vram, bar_size=bar)
    package = driver_package(driver, setting="driver")
    model = package.default_config().model if driver_model is None else DriverModel(driver_model)
    settings = DriverSettings(model=model)
    if paging_buffer is not None:
        if paging_buffer > PAGING_BUFFER_LIMIT:
            raise ConfigurationError(
                "paging_buffer", paging_buffer, f"must be positive and at most {PAGING_BUFFER_LIMIT // MiB} MiB"
            )
        settings = replace(settings, paging_buffer_size=paging_buffer)
    if settings.model not in package.capabilities(package.default_config()).driver_models:
        models = ", ".join(sorted(m.value for m in package.capabilities(package.default_config()).driver_models))
        raise ConfigurationError("driver_model", driver_model, f"driver package {package.name} presents only {models}")
    driver_config = package.configure(settings)
    config = SystemConfig(gpu=gpu, driver_package=driver, driver=driver_config, vidmm=DEMO_VIDMM)
    try:
        gpu.validate()
        driver_config.validate()
    except ConfigurationError as error:
        names = {"paging_buffer_size": "paging_buffer"}
        raise ConfigurationError(names.get(error.setting, "vram"), error.value, error.rule) from None
    return config


def run_scenario(
    name: str, config: SystemConfig | None = None, *, seed: int = 0, on_adapter: OnAdapter | None = None
) -> ScenarioRun:
    """Run the demonstration ``name``."""
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise ConfigurationError("scenario", name, f"demonstrations are {sorted(SCENARIOS)}")
    return scenario.run(config, seed, on_adapter)


__all__ = ["SCENARIOS", "Scenario", "demo_config", "run_scenario"]
