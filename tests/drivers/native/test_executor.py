"""The driver's own executor (issue 21 item 3(b); decision 0111): paging buffers the C driver builds are carried
out by the executor the adapter description names, on the clock, with the submitted range and the buffer's
``pDmaBufferPrivateData``; a failing executor ends in the reset path naming it; a bad spec is refused naming
``executor.class``."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.status import DdiError
from wddmsim.drivers.native.cexec import CExecutor
from wddmsim.drivers.native.package import native_package
from wddmsim.hw.events import EngineFaulted
from wddmsim.scenarios import catalog, runner
from wddmsim.system import Adapter
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from . import executors
from .conftest import BuildDriver

SURFACE = "native driver: its own executor"
OPERATIONS = (
    '["Transfer", "Fill", "DiscardContent", "ReadPhysical", "WritePhysical", "MapApertureSegment",'
    ' "UnmapApertureSegment", "InitContextResource"]'
)
PRIVATE = 48
SMALL = {"workload.frames": 2, "workload.processes": 1, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}
SUCCESS_FOR_ALL = 3
"""refgpu_paging.c's variant that writes nothing for InitContextResource: these executors do not run packets,
so every operation, InitContextResource included, must be claimed (a base packet cannot run on them)."""


def _description(tmp_path: Path, library: Path | str, target: str) -> Path:
    toml = tmp_path / "driver.toml"
    toml.write_text(
        f'library = "{library}"\nmodel = "wddm1"\noperations = {OPERATIONS}\n'
        f"dma_buffer_private_data_size = {PRIVATE}\n"
        f'[executor]\nkind = "python"\nclass = "tests.drivers.native.executors:{target}"\n',
        encoding="utf-8",
    )
    return toml


def test_paging_buffers_reach_the_python_executor_with_their_private_data(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    """The executor, not the GPU's decoder, receives every paging buffer: its submitted bytes (non-empty) and
    the whole ``pDmaBufferPrivateData`` VidMm passed at build time."""
    executors.Recorder.seen.clear()
    toml = _description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), "Recorder")
    # Nothing is carried out, so the run fails -- cleanly, through the CLI's error path.
    result = CliRunner().invoke(main, ["run", "--driver", str(toml), "--frames", "2", "--processes", "1"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert executors.Recorder.seen, "the executor ran"
    for buffer, private, local_size in executors.Recorder.seen:
        assert buffer, "an empty range is never submitted"
        assert private is not None and len(private) == PRIVATE
        assert local_size > 0


def _reset_reason(toml: Path) -> str:
    """Run the default scenario through ``toml``; it must end in the reset path (a domain error, no traceback):
    the reason the GPU engine latched (its ``EngineFaulted`` event)."""
    seen: list[Adapter] = []
    config = catalog.load("default", {"adapter.driver": str(toml), **SMALL})
    with pytest.raises(DdiError, match="adapter reset"):
        runner.run_scenario(config, on_adapter=seen.append)
    faults = seen[0].events.of_type(EngineFaulted)
    assert faults, "the engine faulted"
    return faults[0].reason


def test_an_executor_that_raises_ends_in_the_reset_path_naming_it(build_driver: BuildDriver, tmp_path: Path) -> None:
    with campaign.case(SURFACE) as box:
        reason = _reset_reason(_description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), "Exploder"))
        assert "Exploder" in reason and "softlog record 0 is corrupt" in reason, reason
        box.append(Outcome.REFUSED)


def test_a_services_call_out_of_bounds_ends_in_the_reset_path_naming_it(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    with campaign.case(SURFACE) as box:
        reason = _reset_reason(_description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), "OutOfBounds"))
        assert "write_local" in reason, reason
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize(
    ("target", "rule"),
    [
        ("NoSuchClass", "has no class"),
        ("NOT_A_CLASS", "has no class"),
        ("NeedsArguments", "cannot be constructed"),
        ("NotCallable", "must be an executor"),
    ],
)
def test_a_bad_executor_class_is_refused_naming_the_key(tmp_path: Path, target: str, rule: str) -> None:
    library = tmp_path / "lib.so"
    library.write_bytes(b"")
    with campaign.case(SURFACE) as box:
        package = native_package(str(_description(tmp_path, library, target)))
        with pytest.raises(ConfigurationError, match=r"executor\.class") as caught:
            package.default_config().validate()
        assert rule in str(caught.value)
        box.append(Outcome.REFUSED)


def test_a_module_that_does_not_import_is_refused_naming_the_key(tmp_path: Path) -> None:
    library = tmp_path / "lib.so"
    library.write_bytes(b"")
    toml = tmp_path / "driver.toml"
    toml.write_text(
        f'library = "{library}"\n[executor]\nkind = "python"\nclass = "no_such_module_xyz:Executor"\n',
        encoding="utf-8",
    )
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError, match=r"executor\.class.*does not import"):
            native_package(str(toml)).default_config().validate()
        box.append(Outcome.REFUSED)


C_EXECUTOR = r"""
#include <wddmsim/ddk.h>

#ifndef MODE
#define MODE 0
#endif

NTSTATUS WddmsimExecutePagingBuffer(const WDDMSIM_GPU_SERVICES *Services, const WDDMSIM_PAGING_SUBMISSION *Sub)
{
    UCHAR bytes[8] = {0};
    if (MODE == 1)
        return STATUS_UNSUCCESSFUL;
    if (MODE == 2) /* far past the end of every segment */
        return Services->WriteLocal(Services->Context, 1, 0xFFFFFFFFF000ull, bytes, sizeof(bytes));
    if (MODE == 3) /* a failing services call whose status the executor ignores */
        (void)Services->ReadSystem(Services->Context, 0xFFFFFFFFF000ull, bytes, sizeof(bytes));
    return Sub->EndOffset > Sub->StartOffset ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}
"""


def _c_executor(tmp_path: Path, mode: int) -> Path:
    from .conftest import c_compiler

    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    return compiler.shared_library(C_EXECUTOR, tmp_path / f"libexec{mode}.so", ("-O2", f"-DMODE={mode}"))


def _c_description(tmp_path: Path, library: Path, executor: Path) -> Path:
    toml = tmp_path / "driver.toml"
    toml.write_text(
        f'library = "{library}"\nmodel = "wddm1"\noperations = {OPERATIONS}\n'
        f"dma_buffer_private_data_size = {PRIVATE}\n"
        f'[executor]\nkind = "c"\nlibrary = "{executor}"\n',
        encoding="utf-8",
    )
    return toml


@pytest.mark.parametrize(
    ("mode", "named"),
    [
        (1, "WddmsimExecutePagingBuffer returned STATUS_UNSUCCESSFUL"),
        (2, "services call WriteLocal failed: SegmentAddress=0xfffffffff000"),
        (3, "services call ReadSystem failed"),
    ],
)
def test_a_failing_c_executor_ends_in_the_reset_path_naming_it(
    build_driver: BuildDriver, tmp_path: Path, mode: int, named: str
) -> None:
    with campaign.case(SURFACE) as box:
        toml = _c_description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), _c_executor(tmp_path, mode))
        reason = _reset_reason(toml)
        assert named in reason, reason
        box.append(Outcome.REFUSED)


def test_a_c_executor_runs_each_paging_buffer(build_driver: BuildDriver, tmp_path: Path) -> None:
    """A C executor that carries out nothing is still called for every paging buffer, with a non-empty range;
    the run then fails its checks cleanly (nothing moved)."""
    seen: list[Adapter] = []
    toml = _c_description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), _c_executor(tmp_path, 0))
    config = catalog.load("default", {"adapter.driver": str(toml), **SMALL})
    with contextlib.suppress(DdiError):  # the moves never happened: what needed them may fail, as a domain error
        runner.run_scenario(config, on_adapter=seen.append)
    driver = seen[0].driver
    executor = getattr(getattr(driver, "base"), "paging_executor")  # noqa: B009 - the base's attribute
    assert isinstance(executor, CExecutor)
    assert executor.calls > 0
    paging_faults = [f for f in seen[0].events.of_type(EngineFaulted) if f.engine == 0]
    assert not paging_faults, "every range was non-empty and returned STATUS_SUCCESS"


def test_a_c_executor_symbol_missing_is_refused_naming_the_key(build_driver: BuildDriver, tmp_path: Path) -> None:
    toml = _c_description(tmp_path, build_driver(), build_driver())  # refgpu exports no executor
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError, match=r"executor\.library.*must export WddmsimExecutePagingBuffer"):
            runner.run_scenario(catalog.load("default", {"adapter.driver": str(toml), **SMALL}))
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize(
    ("mode", "named"),
    [
        (1, "WddmsimExecutePagingBuffer returned STATUS_UNSUCCESSFUL"),
        (2, "services call WriteLocal failed: SegmentAddress=0xfffffffff000"),
    ],
)
def test_the_reset_message_names_the_executor_s_reason(
    build_driver: BuildDriver, tmp_path: Path, mode: int, named: str
) -> None:
    """What the user sees -- the ``DeviceRemoved`` message, the ``AdapterReset`` event -- says why the executor
    failed, through the bridge's ``DxgkDdiCollectDbgInfo`` (decision 0133), not only that the paging node faulted."""
    seen: list[Adapter] = []
    toml = _c_description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), _c_executor(tmp_path, mode))
    config = catalog.load("default", {"adapter.driver": str(toml), **SMALL})
    with campaign.case(SURFACE) as box:
        with pytest.raises(DdiError, match="adapter reset") as caught:
            runner.run_scenario(config, on_adapter=seen.append)
        assert "the driver reports: engine 0: executor CExecutor raised ExecutorFailed" in str(caught.value)
        assert named in str(caught.value), caught.value
        assert named in seen[0].vidmm.reset.reasons[0]
        box.append(Outcome.REFUSED)


def test_the_reset_message_names_a_python_executor_s_error(build_driver: BuildDriver, tmp_path: Path) -> None:
    toml = _description(tmp_path, build_driver(REFGPU_DEFECT=SUCCESS_FOR_ALL), "Exploder")
    config = catalog.load("default", {"adapter.driver": str(toml), **SMALL})
    with campaign.case(SURFACE) as box:
        with pytest.raises(DdiError, match="softlog record 0 is corrupt"):
            runner.run_scenario(config)
        box.append(Outcome.REFUSED)
