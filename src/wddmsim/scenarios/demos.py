"""The demonstrations that are not workloads: ``wddmsim run tour`` (every paging operation driven directly) and
``wddmsim run residency`` (a small residency frame loop); ``disasm --scenario`` replays them too.

Each is a function ``(config, seed, on_adapter) -> ScenarioRun``; ``on_adapter`` sees the adapter before the
first step (to attach read-only observers such as a paging-buffer capture).  ``config`` None means the
scenario's own default GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from wddmsim.core.errors import ConfigurationError
from wddmsim.hw.gpu import GpuConfig
from wddmsim.scenarios.residency import DEMO_GPU, run_residency_demo
from wddmsim.scenarios.result import ScenarioRun
from wddmsim.scenarios.tour import run_tour
from wddmsim.system import Adapter, SystemConfig

OnAdapter = Callable[[Adapter], None]


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    summary: str
    gpu: GpuConfig
    """The GPU it runs on unless told otherwise."""
    run: Callable[[SystemConfig | None, int, OnAdapter | None], ScenarioRun]


def _tour(config: SystemConfig | None, seed: int, on_adapter: OnAdapter | None) -> ScenarioRun:
    rig, result = run_tour(config, on_rig=None if on_adapter is None else lambda rig: on_adapter(rig.adapter))
    return ScenarioRun("tour", seed, rig.adapter, result)


def _residency(config: SystemConfig | None, seed: int, on_adapter: OnAdapter | None) -> ScenarioRun:
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


def run_scenario(
    name: str, config: SystemConfig | None = None, *, seed: int = 0, on_adapter: OnAdapter | None = None
) -> ScenarioRun:
    """Run the demonstration ``name``."""
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise ConfigurationError("scenario", name, f"demonstrations are {sorted(SCENARIOS)}")
    return scenario.run(config, seed, on_adapter)


__all__ = ["SCENARIOS", "Scenario", "run_scenario"]
