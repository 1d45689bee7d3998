"""The simple driver (decision 0075) under the workloads, composed by name (driver package ``simple``): ``wddmsim
run`` (the default scenario, WDDM 1.x, and the other built-in scenarios a segment-model driver can run) verifies
every byte over it; the workloads encode their private data with its user-mode half (``adapter.umd``)."""

from __future__ import annotations

import pytest

from wddmsim.drivers.simple import SimpleUmd
from wddmsim.scenarios import catalog, runner
from wddmsim.vidmm.events import CpuLockEvent, VidMmEvict, VidMmPageIn

from .bench import driver_of


def _run(changes: dict[str, object], name: str = "default") -> runner.RunResult:
    """``wddmsim run NAME --driver simple --driver-model wddm1`` with ``changes``."""
    return runner.run_scenario(
        catalog.load(name, {"adapter.driver": "simple", "adapter.driver_model": "wddm1", **changes})
    )


def test_the_default_scenario_verifies_every_byte_on_the_simple_driver() -> None:
    result = _run({})
    assert result.verified, [c for c in result.checks if not c.ok]
    driver = driver_of(result.adapter)
    assert isinstance(result.adapter.umd, SimpleUmd), "the workloads encoded with the simple driver's user-mode half"
    events = result.adapter.events
    assert {e.how for e in events.of_type(VidMmPageIn)} >= {"fill", "transfer", "map"}, "zero-fill, page back, aperture"
    assert {e.cause for e in events.of_type(VidMmEvict)} >= {"pressure"}
    assert any(e.action == "lock" for e in events.of_type(CpuLockEvent))
    assert result.summary()["workload"]["bytes"] > result.config.adapter.vram, "oversubscribed"
    stats = driver.statistics()
    assert (stats.allocations, stats.contexts) == (0, 1), "every process exited: only the paging context is left"


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        (
            "default",
            {"workload.frames": 4, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"},
        ),
        (
            "default",
            {
                "workload.frames": 4,
                "workload.power": "hibernate",
                "adapter.vram": "32MiB",
                "adapter.cpu_visible": "8MiB",
            },
        ),
        (
            "default",
            {"workload.frames": 4, "adapter.policy": "random", "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"},
        ),
        ("stress", {"workload.frames": 3}),
        ("uploads", {"workload.frames": 3}),
    ],
    ids=["small", "hibernate-halfway", "random-policy", "stress", "uploads"],
)
def test_built_in_scenarios_verify_on_the_simple_driver(name: str, changes: dict[str, object]) -> None:
    result = _run(changes, name)
    assert result.verified, [c for c in result.checks if not c.ok]
    driver_of(result.adapter)
