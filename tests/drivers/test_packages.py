"""The driver seam (decision 0070): packages by name, the adapter composed from one, the footprint and the
page-table checkers reading a driver only through ``statistics()``, workloads encoding through the package's
user-mode half, a shipped fake plugged by name, and the rule that only a driver package imports a concrete
driver."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grimp
import numpy as np
import pytest
from click.testing import CliRunner

import wddmsim.testing.fakes as fakes
from wddmsim.cli import main
from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import KiB
from wddmsim.drivers import (
    DriverModel,
    DriverProbe,
    DriverStatistics,
    ResourceDesc,
    ResourceKind,
    ResourceUsage,
    SimulatedDriver,
    driver_package,
    register,
)
from wddmsim.drivers.reference import REFERENCE, ReferenceUserModeDriver, reference_driver
from wddmsim.drivers.registry import names
from wddmsim.kmd.allocations import AllocationDesc, surface_levels
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.config import DriverModel as KmdDriverModel
from wddmsim.scenarios import catalog
from wddmsim.scenarios.replay import read_trace, replay
from wddmsim.scenarios.rig import PagingRig, ScratchAddressSpace
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.tour import run_tour
from wddmsim.scenarios.workload import resources
from wddmsim.system import SystemConfig, build_adapter
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.fakes import DelegatingDriver, RecordingDriver, wrapped
from wddmsim.testing.invariants import MemoryRanges, check_page_tables

SURFACE = "driver package names"
SMALL = {"adapter.vram": 16 * 1024 * 1024, "workload.frames": 2, "workload.processes": 2}


# --- the registry ----------------------------------------------------------------------------------------------


def test_the_reference_package_is_the_default_and_known_by_name() -> None:
    assert names()[0] == "reference"
    assert driver_package("reference") is REFERENCE
    assert driver_package(REFERENCE) is REFERENCE
    assert SystemConfig().driver_package == "reference"
    assert SystemConfig().driver == DriverConfig() == REFERENCE.default_config()
    assert KmdDriverModel is DriverModel, "the reference driver's configuration names the driver-neutral model"


def test_a_package_from_outside_is_named_module_colon_attribute() -> None:
    assert driver_package("wddmsim.drivers.reference:REFERENCE") is REFERENCE
    assert driver_package("wddmsim.testing.fakes:RECORDING") is fakes.RECORDING


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("nvidia", "must name a driver package: one of reference"),
        ("", "must name a driver package"),
        ("no.such.module:PACKAGE", "module no.such.module cannot be imported"),
        ("wddmsim.drivers.reference:NOTHING", "wddmsim.drivers.reference.NOTHING must be a DriverPackage"),
        ("wddmsim.drivers.reference:reference_driver", "must be a DriverPackage"),
        ("wddmsim.drivers.reference:", "needs both a module and an attribute"),
        (":REFERENCE", "needs both a module and an attribute"),
        (".relative:PACKAGE", "must be a dotted Python name (no relative import)"),
        ("a..b:PACKAGE", "must be a dotted Python name"),
        ("wddmsim.drivers.reference.REFERENCE:x", "module wddmsim.drivers.reference.REFERENCE cannot be imported"),
    ],
)
def test_an_unknown_package_is_refused_naming_the_setting_value_and_rule(value: str, rule: str) -> None:
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError) as raised:
            driver_package(value, setting="adapter.driver")
        assert (raised.value.setting, raised.value.value) == ("adapter.driver", value)
        assert rule in raised.value.rule, raised.value.rule
        box.append(Outcome.REFUSED)


def test_a_second_package_under_a_taken_name_is_refused() -> None:
    with campaign.case(SURFACE) as box:
        for name in ("reference", "recording"):
            clash = dataclasses.replace(REFERENCE, name=name)
            with pytest.raises(ConfigurationError, match=r"is already the name of another driver package"):
                register(clash)
        assert driver_package("recording") is fakes.RECORDING, "the registered one stays"
        assert register(fakes.RECORDING) is fakes.RECORDING, "registering the same package again is harmless"
        box.append(Outcome.REFUSED)


def test_the_composition_root_refuses_a_configuration_of_another_package() -> None:
    class OtherConfig:
        model = DriverModel.WDDM1

        def validate(self) -> None:
            pass

    with pytest.raises(ConfigurationError) as raised:
        build_adapter(SystemConfig(driver=OtherConfig()))
    assert (raised.value.setting, raised.value.value) == ("driver", "OtherConfig")
    assert "must be a DriverConfig, the configuration of driver package reference" in raised.value.rule
    with pytest.raises(ConfigurationError, match=r"driver_package='nope': must name a driver package"):
        SystemConfig(driver_package="nope")


# --- the user-mode half ----------------------------------------------------------------------------------------


def test_the_reference_user_mode_driver_encodes_the_reference_format() -> None:
    umd = REFERENCE.umd
    buffer = ResourceDesc(ResourceKind.BUFFER, size=64 * KiB, usage=ResourceUsage.CPU_VISIBLE)
    surface = ResourceDesc(
        ResourceKind.SURFACE, usage=ResourceUsage.SWIZZLED, width_bytes=1024, height=200, mip_levels=3
    )
    assert umd.encode(buffer) == AllocationDesc(ResourceKind.BUFFER, size=64 * KiB, usage=0x1).encode()
    assert len(umd.encode(surface)) == 36
    assert AllocationDesc.decode(umd.encode(surface)) == AllocationDesc.of(surface)
    levels = surface_levels(1024, 200, 3)
    assert [(v.offset, v.pitch, v.rows, v.size) for v in umd.surface_levels(surface)] == [
        (v.offset, v.pitch, v.rows, v.size) for v in levels
    ]


# --- statistics: the footprint and the invariant checkers --------------------------------------------------------


class _Overcounting(DelegatingDriver):
    """Reports one allocation and one context more than it holds, and no local memory at all."""

    def statistics(self) -> DriverStatistics:
        real = super().statistics()
        return dataclasses.replace(real, allocations=real.allocations + 1, contexts=real.contexts + 1, local_ranges=())


OVERCOUNTING = wrapped(REFERENCE, _Overcounting, name="test-overcounting", description="reports what it does not hold")


def test_the_footprint_reads_the_driver_through_statistics_only() -> None:
    real = build_adapter()
    counted = build_adapter(SystemConfig(driver_package=OVERCOUNTING))
    assert isinstance(counted.driver, _Overcounting)
    stats = reference_driver(real.driver).statistics()
    assert (real.footprint().driver_allocations, real.footprint().driver_contexts) == (
        stats.allocations,
        stats.contexts,
    )
    assert counted.footprint().driver_allocations == real.footprint().driver_allocations + 1
    assert counted.footprint().driver_contexts == real.footprint().driver_contexts + 1
    assert counted.footprint().leaks(real.footprint()) == [
        f"driver_allocations: {stats.allocations + 1} now, {stats.allocations} at the start",
        f"driver_contexts: {stats.contexts + 1} now, {stats.contexts} at the start",
    ]


def test_the_page_table_checker_trusts_only_the_memory_the_driver_reports() -> None:
    honest = PagingRig()
    space = ScratchAddressSpace(honest)
    reported = honest.driver.statistics()
    assert MemoryRanges.of(honest.driver) == MemoryRanges(reported.local_ranges, reported.system_size)
    assert reported.local_ranges and reported.system_size == honest.gpu.system.size
    assert check_page_tables(honest.gpu, space.hw_root, MemoryRanges.of(honest.driver)) == []

    hiding = PagingRig(SystemConfig(driver_package=OVERCOUNTING))
    problems = check_page_tables(hiding.gpu, ScratchAddressSpace(hiding).hw_root, MemoryRanges.of(hiding.driver))
    assert problems and "lies outside every reported memory" in problems[0], problems


# --- fakes plugged by name ---------------------------------------------------------------------------------------


def test_a_shipped_fake_runs_the_tour_by_name_with_the_steps_it_supports() -> None:
    rig, result = run_tour(SystemConfig(driver_package="recording"))
    assert isinstance(rig.driver, RecordingDriver) and isinstance(rig.driver, SimulatedDriver)
    assert rig.probe is None and not isinstance(rig.driver, DriverProbe), "a wrapper gives no probe"
    assert result.verified, [c for c in result.checks if not c.ok]
    operations = {c.operation for c in result.checks}
    assert "InitContextResource" not in operations and "NotifyResidency" not in operations, "skipped: no probe"
    assert {"Transfer(Swizzle)", "TransferVirtual"} <= operations
    assert rig.driver.recording.calls, "VidMm's BuildPagingBuffer calls went through the fake"

    _, full = run_tour(SystemConfig())
    assert {"InitContextResource", "NotifyResidency"} <= {c.operation for c in full.checks}


def test_a_scenario_file_names_its_driver_package() -> None:
    config = catalog.load("default", {**SMALL, "adapter.driver": "wddmsim.testing.fakes:PAYLOAD_RECORDER"})
    assert config.system_config().driver_package == "wddmsim.testing.fakes:PAYLOAD_RECORDER"
    assert config.to_dict()["adapter"]["driver"] == "wddmsim.testing.fakes:PAYLOAD_RECORDER"
    assert "driver" not in catalog.load("default", SMALL).to_dict()["adapter"], "older documents read back the same"
    result = run_scenario(config)
    assert result.verified, [c for c in result.checks if not c.ok]
    assert isinstance(result.adapter.driver, fakes.PayloadRecorder) and result.adapter.driver.payloads
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError) as raised:
            catalog.load("default", {"adapter.driver": "s3-virge"})
        assert (raised.value.setting, raised.value.value) == ("adapter.driver", "s3-virge")
        box.append(Outcome.REFUSED)


def test_the_cli_lists_and_takes_driver_packages() -> None:
    listed = CliRunner().invoke(main, ["run", "--list"])
    assert listed.exit_code == 0 and "driver packages" in listed.output and "reference" in listed.output
    tour = CliRunner().invoke(main, ["run", "tour", "--driver", "wddmsim.testing.fakes:RECORDING"])
    assert tour.exit_code == 0, tour.output
    with campaign.case(SURFACE) as box:
        for args in (["run", "--driver", "nope"], ["run", "tour", "--driver", "nope"]):
            refused = CliRunner().invoke(main, args)
            assert refused.exit_code == 2, refused.output
            assert "--driver='nope': must name a driver package" in " ".join(refused.output.split())
        box.append(Outcome.REFUSED)


OTHER_FORMAT = dataclasses.replace(REFERENCE, name="test-other-format", umd=ReferenceUserModeDriver())
"""The reference driver with a user-mode half of its own: private data of another format, for all replay knows."""


def test_a_trace_replays_only_on_the_user_mode_driver_it_was_recorded_with(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with path.open("w", encoding="utf-8") as trace:
        run_scenario(catalog.load("default", {**SMALL, "workload.frames": 1}), record=trace)
    again = replay(read_trace(path), {"adapter.driver": "wddmsim.testing.fakes:RECORDING"})
    assert again.identical_events and again.content_preserved, "a wrapping package shares the user-mode half"
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError) as raised:
            replay(read_trace(path), {"adapter.driver": "tests.drivers.test_packages:OTHER_FORMAT"})
        assert raised.value.setting == "adapter.driver"
        assert "in the format of the user-mode driver it was recorded with (driver package reference)" in str(
            raised.value
        )
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize("swizzling", [True, False])
def test_a_workload_swizzles_only_on_a_driver_that_swizzles(swizzling: bool) -> None:
    config = catalog.load(
        "default", {**SMALL, "adapter.driver_model": "wddm1", "workload.cpu_visible": 0.9, "workload.aperture": 0.1}
    )
    caps = dataclasses.replace(REFERENCE.capabilities(config.system_config().driver), swizzling=swizzling)
    specs = resources(config, 0, np.random.default_rng(1), REFERENCE.umd, caps)
    surfaces = [r for r in specs if r.kind == ResourceKind.SURFACE]
    assert surfaces, "the default workload makes textures"
    assert all(r.swizzled == swizzling for r in surfaces)


# --- the contract --------------------------------------------------------------------------------------------------


def test_only_driver_packages_import_the_concrete_driver() -> None:
    graph = grimp.build_graph("wddmsim")
    concrete = {m for m in graph.modules if m == "wddmsim.kmd" or m.startswith("wddmsim.kmd.")}
    importers = {i for m in concrete for i in graph.find_modules_that_directly_import(m)} - concrete
    neutral = {"wddmsim.drivers", "wddmsim.drivers.package", "wddmsim.drivers.resources", "wddmsim.drivers.registry"}
    assert "wddmsim.drivers.reference" in importers
    assert all(m.startswith("wddmsim.drivers.") and m not in neutral for m in importers), importers
    simple = {m for m in graph.modules if m.startswith("wddmsim.drivers.simple")}
    assert "wddmsim.drivers.simple.package" in simple and not simple & importers, "the simple driver is not kmd's"
    assert (
        not {i for m in simple for i in graph.find_modules_that_directly_import(m)}
        - simple
        - {"wddmsim.drivers.simple"}
    ), "nothing outside the package imports the simple driver (the registry names it as a string)"
