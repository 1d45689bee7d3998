"""The simple driver (decision 0075) under the workloads: ``wddmsim run`` (the default scenario, WDDM 1.x, and the
other built-in scenarios a segment-model driver can run) verifies every byte over it."""

from __future__ import annotations

from typing import Any

import pytest

from wddmsim.scenarios import catalog, runner
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.vidmm.events import CpuLockEvent, VidMmEvict, VidMmPageIn

from .compose import driver_of, simple, through_simple_umd


def _run_default(
    monkeypatch: pytest.MonkeyPatch, changes: dict[str, object], name: str = "default"
) -> runner.RunResult:
    """``wddmsim run NAME`` with ``changes``, the adapter composed over the simple driver."""
    through_simple_umd(monkeypatch)

    def compose(config: SystemConfig | None = None, **_: Any) -> Adapter:
        return build_adapter(config, wrap_driver=simple)

    monkeypatch.setattr(runner, "build_adapter", compose)
    return runner.run_scenario(catalog.load(name, {"adapter.driver_model": "wddm1", **changes}))


def test_the_default_scenario_verifies_every_byte_on_the_simple_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run_default(monkeypatch, {})
    assert result.verified, [c for c in result.checks if not c.ok]
    driver = driver_of(result.adapter)
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
def test_built_in_scenarios_verify_on_the_simple_driver(
    monkeypatch: pytest.MonkeyPatch, name: str, changes: dict[str, object]
) -> None:
    result = _run_default(monkeypatch, changes, name)
    assert result.verified, [c for c in result.checks if not c.ok]
    driver_of(result.adapter)
