"""The native-driver bridge (decision 0110): a C ``DxgkDdiBuildPagingBuffer`` composed with a base package runs
the built-in scenarios with every byte verified; each adapter has its own instance of the library; what the
library or its description gets wrong is refused naming the setting, or ends in the reset path naming the
breach -- never a Python traceback."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.package import native_package
from wddmsim.drivers.reference import REFERENCE
from wddmsim.drivers.registry import driver_package, register
from wddmsim.scenarios import catalog, runner
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .conftest import BuildDriver

SURFACE = "native driver: composition and loading"
SMALL = {"workload.frames": 4, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}


def _run(library: Path, name: str = "default", **changes: int | str) -> runner.RunResult:
    config = catalog.load(name, {"adapter.driver": str(library), **SMALL, **changes})
    return runner.run_scenario(config)


def _native(result: runner.RunResult) -> NativeDriver:
    driver = result.adapter.driver
    assert isinstance(driver, NativeDriver)
    return driver


def test_the_default_scenario_verifies_every_byte_through_the_c_driver(build_driver: BuildDriver) -> None:
    result = _run(build_driver())
    assert result.verified, [c for c in result.checks if not c.ok]
    driver = _native(result)
    assert driver.call.calls > 0, "the library built paging buffers"
    assert result.config.adapter.driver_model == "wddm1", "a library named alone is a segment-model driver"
    assert set(driver.served_by_base) <= {"DXGK_OPERATION_INIT_CONTEXT_RESOURCE"}, driver.served_by_base
    assert driver.services.breaches == []


def test_the_tour_verifies_through_the_c_driver(build_driver: BuildDriver) -> None:
    result = CliRunner().invoke(main, ["run", "tour", "--driver", str(build_driver()), "--driver-model", "wddm1"])
    assert result.exit_code == 0, result.output
    assert "checks passed" in result.output


def test_two_adapters_each_load_their_own_instance(build_driver: BuildDriver) -> None:
    """A driver's globals are per adapter: two adapters built from one library never share them."""
    library = build_driver()
    first = _run(library, "default", **{"workload.frames": 2})
    second = _run(library, "default", **{"workload.frames": 2})
    a, b = _native(first), _native(second)
    assert a.library.handle._handle != b.library.handle._handle
    assert first.verified and second.verified


def test_an_illegal_status_ends_in_the_reset_path_naming_it(build_driver: BuildDriver) -> None:
    with campaign.case(SURFACE) as box:
        library = build_driver(REFGPU_DEFECT=5)
        result = CliRunner().invoke(main, ["run", "--driver", str(library), "--frames", "2", "--processes", "1"])
        assert result.exit_code != 0
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert "STATUS_INVALID_PARAMETER" in result.output and "adapter reset" in result.output, result.output
        box.append(Outcome.REFUSED)


def test_a_pointer_left_where_it_was_fails_the_run_cleanly(build_driver: BuildDriver) -> None:
    """Packets written but ``pDmaBuffer`` not advanced: VidMm sees an empty buffer, the moves never happen and the
    work that needed them faults -- a clean failure of the run (check-driver names the cause)."""
    with campaign.case(SURFACE) as box:
        library = build_driver(REFGPU_DEFECT=7)
        result = CliRunner().invoke(main, ["run", "--driver", str(library), "--frames", "2", "--processes", "1"])
        assert result.exit_code == 1, result.output
        assert isinstance(result.exception, SystemExit), result.exception
        assert "error:" in result.output, result.output
        box.append(Outcome.REFUSED)


def test_the_description_names_the_library_base_operations_and_executor(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    library = build_driver()
    toml = tmp_path / "driver.toml"
    toml.write_text(
        f'library = "{library}"\nbase = "reference"\nmodel = "wddm1"\n'
        'operations = ["Transfer", "Fill", "DiscardContent", "ReadPhysical", "WritePhysical",'
        ' "MapApertureSegment", "UnmapApertureSegment"]\n'
        "dma_buffer_private_data_size = 32\n",
        encoding="utf-8",
    )
    package = driver_package(str(toml))
    assert package.default_config().model.value == "wddm1"
    result = _run(toml)
    assert result.verified
    driver = _native(result)
    assert set(driver.served_by_base) == {"DXGK_OPERATION_INIT_CONTEXT_RESOURCE"}, "not claimed: the base built it"
    assert result.adapter.vidmm.private_data_size == 32, "the description's DmaBufferPrivateDataSize reached VidMm"


def test_claiming_an_operation_the_library_refuses_ends_in_the_reset_path(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    toml = tmp_path / "driver.toml"
    toml.write_text(
        f'library = "{build_driver()}"\nmodel = "wddm1"\n'
        'operations = ["Transfer", "Fill", "DiscardContent", "InitContextResource"]\n',
        encoding="utf-8",
    )
    with campaign.case(SURFACE) as box:
        result = CliRunner().invoke(main, ["run", "--driver", str(toml), "--frames", "2", "--processes", "1"])
        assert result.exit_code == 1, result.output
        assert "DXGK_OPERATION_INIT_CONTEXT_RESOURCE: returned STATUS_NOT_SUPPORTED" in result.output, result.output
        box.append(Outcome.REFUSED)


BAD_DESCRIPTIONS = [
    ("library = 3\n", "library"),
    ('library = "x.so"\nmodel = "wddm9"\n', "model"),
    ('library = "x.so"\noperations = ["Teleport"]\n', "operations"),
    ('library = "x.so"\noperations = []\n', "operations"),
    ('library = "x.so"\ncolour = "blue"\n', "colour"),
    ('library = "x.so"\nbase = "nonesuch"\n', "base"),
    ('library = "x.so"\ndma_buffer_private_data_size = -1\n', "dma_buffer_private_data_size"),
    ('library = "x.so"\n[executor]\nkind = "fpga"\n', "executor.kind"),
    ('library = "x.so"\n[executor]\nkind = "python"\n', "executor.class"),
    ("library = \n", "driver"),
]


@pytest.mark.parametrize(("text", "setting"), BAD_DESCRIPTIONS)
def test_a_bad_description_is_refused_naming_the_setting(tmp_path: Path, text: str, setting: str) -> None:
    toml = tmp_path / "driver.toml"
    toml.write_text(text, encoding="utf-8")
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError) as raised:
            native_package(str(toml))
        assert raised.value.setting == setting, raised.value
        box.append(Outcome.REFUSED)


def test_a_file_that_is_no_library_or_lacks_the_entry_point_is_refused(
    tmp_path: Path, build_driver: BuildDriver
) -> None:
    junk = tmp_path / "libjunk.so"
    junk.write_bytes(b"not an ELF file")
    stub = tmp_path / "stub.c"
    stub.write_text("int wddmsim_stub_export(void) { return 1; }\n", encoding="utf-8")
    without = build_driver(stub)
    with campaign.case(SURFACE) as box:
        for path, rule in (
            (junk, "cannot be loaded"),
            (without, "must export DxgkDdiBuildPagingBuffer"),
            (tmp_path / "missing.so", "no such file"),
        ):
            with pytest.raises(ConfigurationError) as raised:
                runner.run_scenario(catalog.load("default", {"adapter.driver": str(path), **SMALL}))
            assert rule in str(raised.value), raised.value
            box.append(Outcome.REFUSED)


def test_the_cli_refuses_a_missing_library_with_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--driver", str(tmp_path / "libnone.so")])
    assert result.exit_code == 2, result.output
    assert "libnone.so" in result.output


NO_SWIZZLING = register(
    dataclasses.replace(
        REFERENCE,
        name="reference-without-swizzling",
        capabilities=lambda config: dataclasses.replace(REFERENCE.capabilities(config), swizzling=False),
    )
)
"""The reference driver with the C example's capabilities: the workload then makes the same resources."""

ENCODING_COUNTERS = {"PagingBufferBytes", "PagingBuffers", "SimulatedTimeNs", "BuildPagingBufferCalls"}
"""Counters of how the bytes were encoded (packet sizes, buffers filled): each driver's own."""


def test_the_c_driver_and_the_python_driver_move_the_same_bytes(build_driver: BuildDriver) -> None:
    """Same scenario and seed, same workload (swizzled surfaces off on both: the C driver does not claim them):
    the same paging traffic, every byte verified on both."""
    changes = {**SMALL, "adapter.driver_model": "wddm1"}
    python = runner.run_scenario(catalog.load("default", {**changes, "adapter.driver": NO_SWIZZLING.name}))
    native = runner.run_scenario(catalog.load("default", {**changes, "adapter.driver": str(build_driver())}))
    assert python.verified and native.verified
    assert [(c.step, c.operation, c.ok) for c in python.checks] == [(c.step, c.operation, c.ok) for c in native.checks]
    moved = {k: v for k, v in python.traffic.items() if k not in ENCODING_COUNTERS}
    assert moved == {k: v for k, v in native.traffic.items() if k not in ENCODING_COUNTERS}
    assert moved["BytesPagedIn"] > 0 and moved["BytesMappedIntoAperture"] > 0
