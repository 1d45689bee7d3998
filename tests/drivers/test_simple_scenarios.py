"""The simple driver (decision 0075) under the workloads, composed by name (driver package ``simple``): ``wddmsim
run`` (the default scenario, WDDM 1.x, and the other built-in scenarios a segment-model driver can run) verifies
every byte over it; the workloads encode their private data with its user-mode half (``adapter.umd``)."""

from __future__ import annotations

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.simple import SimpleUmd
from wddmsim.scenarios import catalog, runner
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.events import CpuLockEvent, VidMmEvict, VidMmPageIn

from .bench import driver_of


def _run(changes: dict[str, object], name: str = "default") -> runner.RunResult:
    """``wddmsim run NAME --driver simple`` with ``changes`` (no model named: the package's own, decision 0076)."""
    config = catalog.load(name, {"adapter.driver": "simple", **changes})
    assert config.adapter.driver_model == "wddm1", "the simple driver's only model, taken since none was named"
    return runner.run_scenario(config)


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


def test_a_scenario_file_without_a_model_takes_the_package_s_own_and_refuses_one_it_cannot_present() -> None:
    """Decision 0076: no ``adapter.driver_model``: the package's default configuration's model."""
    assert catalog.load("default").adapter.driver_model == "wddm2", "the reference driver's own, as before"
    assert catalog.load("default", {"adapter.driver": "simple"}).adapter.driver_model == "wddm1"
    named = catalog.load("default", {"adapter.driver": "simple", "adapter.driver_model": "wddm1"})
    assert named.to_dict()["adapter"]["driver_model"] == "wddm1", "written out, the model is always there"
    with campaign.case("simple driver: the command line") as box:
        with pytest.raises(ConfigurationError) as raised:
            catalog.load("default", {"adapter.driver": "simple", "adapter.driver_model": "wddm2"})
        assert (raised.value.setting, raised.value.value) == ("adapter.driver_model", "wddm2")
        assert raised.value.rule == "driver package simple presents only wddm1"
        box.append(Outcome.REFUSED)
        with pytest.raises(ConfigurationError) as raised:
            catalog.load("tiles", {"adapter.driver": "simple"})
        assert raised.value.setting == "workload.tiles" and "driver package simple has no tiled resources" in str(
            raised.value
        )
        box.append(Outcome.REFUSED)
