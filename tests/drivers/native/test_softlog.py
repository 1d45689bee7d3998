"""The software-log example driver, ``examples/drivers/softlog`` (issue 21 item 5b): its
``DxgkDdiBuildPagingBuffer`` logs fixed-size records and its own C executor replays them through the GPU services.
It is conformant, and ``check-driver`` judges its effects when the log executes (a variant that maps the aperture
while building is named); the default scenario and the tour verify every byte through it; it moves the same bytes
with the same paging traffic as the Python reference driver; ``check-driver --executor`` sends every submission to
the executor it names."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.conformance.rig import Build, Rig
from wddmsim.core.units import KiB
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE, DXGK_INITCONTEXTRESOURCE_DESTINATION
from wddmsim.drivers.native.cexec import CExecutor, ExecutorFailed
from wddmsim.drivers.native.package import native_package
from wddmsim.scenarios import catalog, runner
from wddmsim.scenarios.rig import PagingRig
from wddmsim.scenarios.tour import run_tour, tour_segments
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from . import executors
from .conftest import EXAMPLES, c_compiler

SURFACE = "check-driver: broken drivers"
SURFACE_EXECUTOR = "native driver: its own executor"
APERTURE_ID = 3
"""The aperture segment's id on the reference base (local, CPU-visible, aperture)."""
SOFTLOG = EXAMPLES / "softlog"
RECORD = 256
MAGIC = b"SLOG"
FORMAT_DEPENDENT = frozenset({"PagingBufferBytes", "SimulatedTimeNs"})
"""Traffic counters that depend on the paging buffer's format (a 256-byte record is not a packet) and on how
long its executor takes; every other counter must agree."""


@pytest.fixture(scope="module")
def softlog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped ``softlog.toml`` beside ``libsoftlog.so`` built from the shipped source, as its comment says."""
    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    where = tmp_path_factory.mktemp("softlog")
    source = (SOFTLOG / "softlog_paging.c").read_text(encoding="utf-8")
    compiler.shared_library(source, where / "libsoftlog.so", ("-O2",))
    compiler.shared_library(source, where / "libsoftlog-defect1.so", ("-O2", "-DSOFTLOG_DEFECT=1"))
    shutil.copy(SOFTLOG / "softlog.toml", where / "softlog.toml")
    return where / "softlog.toml"


def _check_driver(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check-driver", *args])
    return result.exit_code, result.output


def test_softlog_is_conformant(softlog: Path) -> None:
    code, output = _check_driver(str(softlog.parent / "libsoftlog.so"), "--adapter", str(softlog))
    assert code == 0, output
    assert "conformant: 7 operation(s)" in output and "FAIL" not in output


def test_a_map_applied_while_building_is_named_by_check_driver(softlog: Path) -> None:
    """SOFTLOG_DEFECT=1 writes the aperture table while building and logs an empty record: after execution the
    entries are right (bytes pass), but the change came first -- check-driver names it."""
    with campaign.case(SURFACE) as box:
        code, output = _check_driver(str(softlog.parent / "libsoftlog-defect1.so"), "--adapter", str(softlog))
        assert code == 1, output
        assert "build-time MapApertureSegment" in output, output
        assert "memory changed while the buffer was built, before it executed" in output
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize("paging_buffer", [None, "4KiB"])
def test_the_default_scenario_through_softlog_verifies_every_byte(
    softlog: Path, paging_buffer: str | None, tmp_path: Path
) -> None:
    """As shipped, and in 4 KiB paging buffers (as RosKmd's: 16 records a buffer, multipass all the time)."""
    extra = [] if paging_buffer is None else ["--set", f"adapter.paging_buffer={paging_buffer}"]
    result = CliRunner().invoke(main, ["run", "--driver", str(softlog), "--out", str(tmp_path), *extra])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["verified"] and (summary["ExtraPasses"] > 0) == (paging_buffer is not None)
    assert "verified" in result.output and "FAILED" not in result.output


def test_the_tour_through_softlog_verifies_every_step(softlog: Path) -> None:
    result = CliRunner().invoke(main, ["run", "tour", "--driver", str(softlog)])
    assert result.exit_code == 0, result.output
    assert "verified: 12/12 checks passed" in result.output, result.output
    _, checks = run_tour(SystemConfig(driver_package=native_package(str(softlog))))
    physical = [c.step for c in checks.checks if c.operation == "ReadPhysical"]
    assert physical == ["the driver's executor reads at a segment address"], "decision 0129"
    _, checks = run_tour(SystemConfig(driver_package="reference"))
    physical = [c.step for c in checks.checks if c.operation == "ReadPhysical"]
    assert physical == ["the GPU reads 8 bytes at a segment address"], "the GPU's decoder keeps the register check"


@pytest.mark.parametrize("destination", ["segment", "mdl"])
def test_init_context_resource_writes_the_reference_gpus_context_image(softlog: Path, destination: str) -> None:
    """The tour's context step needs a DriverProbe, which a native driver is not: the same check by hand, with
    the base's probe -- a 64-byte header (the base's format), then zeroes, over whatever was there."""
    rig = PagingRig(SystemConfig(driver_package=native_package(str(softlog))))
    base = rig.driver.base  # type: ignore[attr-defined]
    seg = tour_segments(rig.vidmm.segments)
    size = 16 * KiB
    info = base.context_image(size)
    if destination == "segment":
        offset = rig.vidmm.segment(seg.local).Size - 4 * size
        rig.write_segment(seg.local, offset, rig.pattern(size, seed=3))
        where = DXGK_INITCONTEXTRESOURCE_DESTINATION(
            SegmentId=seg.local, SegmentAddress=rig.segment_address(seg.local, offset), GpuVirtualAddress=0x30_0000
        )
    else:
        mdl = rig.backing(size, scatter_seed=4)
        rig.write_mdl(mdl, rig.pattern(size, seed=3))
        where = DXGK_INITCONTEXTRESOURCE_DESTINATION(SegmentId=0, pMdl=mdl, GpuVirtualAddress=0x30_0000)
    rig.execute(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(hAllocation=info.hAllocation, Destination=where))
    image = rig.read_segment(seg.local, offset, size) if destination == "segment" else rig.read_mdl(mdl)
    expected = base.context_header(info.hAllocation, 0x30_0000, size)
    assert image[: len(expected)].tobytes() == expected
    assert not image[len(expected) :].any()


def test_softlog_and_the_python_reference_driver_agree(softlog: Path) -> None:
    """The same scenario and seed: the same local memory at the end, byte for byte, and the same paging traffic
    (every counter but the format-dependent ones)."""
    runs = {}
    for name, driver in (
        ("softlog", str(softlog)),
        ("reference", "tests.drivers.native.packages:REFERENCE_LINEAR"),
    ):
        config = catalog.load("default", {"adapter.driver": driver, "adapter.driver_model": "wddm1", "seed": 11})
        runs[name] = runner.run_scenario(config)
        assert runs[name].verified, name
    soft, ref = runs["softlog"], runs["reference"]
    assert soft.adapter.gpu.config == ref.adapter.gpu.config
    assert np.array_equal(soft.adapter.gpu.local.data, ref.adapter.gpu.local.data), "the same bytes everywhere"
    mine = {k: v for k, v in soft.traffic.items() if k not in FORMAT_DEPENDENT}
    theirs = {k: v for k, v in ref.traffic.items() if k not in FORMAT_DEPENDENT}
    assert mine == theirs
    assert mine["BytesPagedIn"] > 0 and mine["BytesPagedOut"] > 0 and mine["PagingOp.PagingOpMapApertureSegment"] > 0


def test_check_driver_executor_routes_every_submission_to_the_executor_named(
    softlog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--executor python:...Counter`` replaces the description's C executor: the counter receives every buffer
    check-driver submits -- softlog records, never run by the GPU's decoder -- and, since it carries nothing out,
    the operations that must change memory fail their bytes check."""
    submitted: list[int] = []
    execute = Rig.execute

    def counting(rig: Rig, build: Build) -> str:
        submitted.append(len([b for b in build.buffers if b.used]))
        return execute(rig, build)

    monkeypatch.setattr(Rig, "execute", counting)
    executors.Counter.buffers.clear()
    code, output = _check_driver(
        str(softlog.parent / "libsoftlog.so"),
        "--adapter",
        str(softlog),
        "--executor",
        "python:tests.drivers.native.executors:Counter",
    )
    assert code == 1 and "bytes Transfer" in output, output
    assert sum(submitted) > 0 and len(executors.Counter.buffers) == sum(submitted)
    for buffer in executors.Counter.buffers:
        assert len(buffer) % RECORD == 0 and buffer[:4] == MAGIC


@pytest.fixture(scope="module")
def softlog_rig(softlog: Path) -> PagingRig:
    """One adapter over softlog, shared by tests that change nothing on it."""
    return PagingRig(SystemConfig(driver_package=native_package(str(softlog))))


def _record(
    operation: int,
    *,
    dst_segment: int = 0,
    destination: int = 0,
    size: int = 0,
    argument: int = 0,
    pfns: tuple[int, ...] = (),
    magic: bytes = MAGIC,
) -> bytes:
    """One ``SOFTLOG_RECORD`` (softlog_paging.c), packed as the C compiler lays it out."""
    head = magic + struct.pack("<III4QII", operation, 0, dst_segment, 0, destination, size, argument, len(pfns), 0)
    return (head + struct.pack(f"<{len(pfns)}Q", *pfns)).ljust(RECORD, b"\0")


@pytest.mark.parametrize(
    ("log", "named"),
    [
        (_record(1, magic=b"JUNK"), "returned STATUS_INVALID_PARAMETER"),
        (_record(1)[:100], "returned STATUS_INVALID_PARAMETER"),
        (_record(17), "returned STATUS_INVALID_PARAMETER"),
        (_record(5, dst_segment=APERTURE_ID, destination=1 << 40, pfns=(1,)), "SetAperturePage failed: PageIndex"),
        (_record(1, dst_segment=1, destination=1 << 45, size=64), "WriteLocal failed: SegmentAddress"),
        (_record(5, dst_segment=1, pfns=(1,)), "SetAperturePage failed: SegmentId=0x1"),
    ],
    ids=[
        "bad magic",
        "not whole records",
        "unknown operation",
        "map past the segment",
        "fill past memory",
        "map into a memory segment",
    ],
)
def test_a_corrupt_log_is_refused_by_the_executor_and_changes_nothing(
    softlog_rig: PagingRig, log: bytes, named: str
) -> None:
    """The executor replays only what it can: a record it cannot carry out fails the buffer, named, before it
    changes anything (each of these is its buffer's only record)."""
    rig = softlog_rig
    executor = rig.driver.base.paging_executor  # type: ignore[attr-defined]
    assert isinstance(executor, CExecutor)
    with campaign.case(SURFACE_EXECUTOR) as box:
        before = (bytes(rig.gpu.local.data), rig.adapter.footprint())
        with pytest.raises(ExecutorFailed, match=named):
            executor(log, None, rig.gpu.engines[0].services)
        assert (bytes(rig.gpu.local.data), rig.adapter.footprint()) == before
        box.append(Outcome.REFUSED)
