"""The example C driver in the GpuMmu (WDDM 2.x) model: it builds TransferVirtual, FillVirtual, FlushTlb and
SignalMonitoredFence itself (the reference package's driver builds UpdatePageTable), and the default scenario
verifies every byte; a FlushTlb that invalidates the wrong range does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.scenarios import catalog, runner
from wddmsim.vidmm.errors import DeviceRemoved

from .conftest import BuildDriver

SMALL = {"workload.frames": 4, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}
CLAIMED = ["Transfer", "Fill", "DiscardContent", "TransferVirtual", "FillVirtual", "FlushTlb", "SignalMonitoredFence"]


def _description(library: Path, tmp_path: Path) -> Path:
    toml = tmp_path / "wddm2.toml"
    names = ", ".join(f'"{name}"' for name in CLAIMED)
    toml.write_text(
        f'library = "{library}"\nbase = "reference"\nmodel = "wddm2"\noperations = [{names}]\n', encoding="utf-8"
    )
    return toml


def _run(toml: Path) -> runner.RunResult:
    return runner.run_scenario(catalog.load("default", {"adapter.driver": str(toml), **SMALL}))


def test_the_c_driver_builds_the_virtual_operations_and_every_byte_verifies(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    result = _run(_description(build_driver(), tmp_path))
    assert result.config.adapter.driver_model == "wddm2"
    assert result.verified, [c for c in result.checks if not c.ok]
    driver = result.adapter.driver
    assert isinstance(driver, NativeDriver)
    assert driver.call.calls > 0
    built_by_base = set(driver.served_by_base)
    for op in ("DXGK_OPERATION_VIRTUAL_TRANSFER", "DXGK_OPERATION_VIRTUAL_FILL", "DXGK_OPERATION_FLUSH_TLB"):
        assert op not in built_by_base, f"{op} was claimed: the library built it"
    assert driver.services.breaches == []


def test_a_flush_tlb_that_flushes_the_wrong_range_is_caught(build_driver: BuildDriver, tmp_path: Path) -> None:
    with pytest.raises(DeviceRemoved, match="reported a fault"):
        _run(_description(build_driver(REFGPU_DEFECT=10), tmp_path))


def test_the_shipped_wddm2_description_runs_beside_its_library(build_driver: BuildDriver, tmp_path: Path) -> None:
    shipped = Path(__file__).parents[3] / "examples" / "drivers" / "refgpu" / "refgpu-wddm2.toml"
    (tmp_path / "librefgpu.so").symlink_to(build_driver())
    toml = tmp_path / shipped.name
    toml.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    result = _run(toml)
    assert result.config.adapter.driver_model == "wddm2"
    assert result.verified, [c for c in result.checks if not c.ok]
