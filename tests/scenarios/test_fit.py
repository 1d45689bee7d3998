"""A workload never runs GPU work on an allocation it could not make resident (decisions 0166, 0167).

The reproduction: seed 1 on a 16 MiB card (segments of 4 MiB, 11.9 MiB and an 8 MiB aperture) with sizes up to
16 MiB draws p0.r1, a 13.5 MiB surface no segment can hold.  Its readback used to copy from it anyway, after a
refused ``MakeResident``: a GPU page fault at its VA 0x440000 and a removed device.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.errors import ConfigurationError
from wddmsim.hw.events import DmaBufferStarted, EngineFaulted
from wddmsim.scenarios import catalog
from wddmsim.scenarios.app import App
from wddmsim.scenarios.model import Model
from wddmsim.scenarios.record import TracedRuntime
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.verify import verify
from wddmsim.scenarios.workload import frames
from wddmsim.system import Adapter, build_adapter
from wddmsim.vidmm.events import GpuFaultReported, VidMmMakeResident

REPRO = {
    "seed": 1,
    "adapter.vram": "16MiB",
    "workload.processes": 1,
    "workload.frames": 1,
    "workload.oversubscription": 1.1,
    "workload.sizes.min": "1MiB",
    "workload.sizes.max": "16MiB",
}
REPRO_ARGS = ["run", "--seed", "1", "--vram", "16MiB"] + [
    arg for key in list(REPRO)[2:] for arg in ("--set", f"{key}={REPRO[key]}")
]


def test_a_resource_larger_than_every_segment_it_may_use_is_refused_before_the_first_frame() -> None:
    adapters: list[Adapter] = []
    with pytest.raises(ConfigurationError) as caught:
        run_scenario(catalog.load(None, REPRO), on_adapter=adapters.append)
    error = caught.value
    assert error.setting == "workload.sizes.max"
    assert error.value == "16MiB"
    assert error.rule.startswith("drew p0.r1, a 13824 KiB local surface")
    assert "(segment 2: 12224 KiB, segment 3: 8 MiB, segment 1: 4 MiB)" in error.rule
    assert error.rule.endswith("lower workload.sizes.max or raise adapter.vram")
    events = adapters[0].events
    assert not events.of_type(EngineFaulted)
    assert {e.engine for e in events.of_type(DmaBufferStarted)} == {0}, "paging only: no frame's work ran"
    assert [e.allocations for e in events.of_type(VidMmMakeResident)] == [2], "only the setup's staging + readback"


def test_a_staging_buffer_no_segment_holds_is_refused_naming_workload_uploads() -> None:
    """100 uploads of up to 128 KiB a frame: a 12.5 MiB staging buffer, CPU-visible, on a 16 MiB card whose BAR
    segment is 4 MiB and aperture 8 MiB (its frames used to copy from it unmapped)."""
    with pytest.raises(ConfigurationError) as caught:
        run_scenario(catalog.load(None, {"adapter.vram": "16MiB", "workload.uploads": 100, "workload.frames": 1}))
    assert (caught.value.setting, caught.value.value) == ("workload.uploads", 100)
    assert caught.value.rule == (
        "the staging buffer p0.staging, a 12800 KiB cpu-visible buffer is larger than every segment it may live in "
        "(segment 3: 8 MiB, segment 1: 4 MiB), so it could never be made resident: lower workload.uploads "
        "(128 KiB each)"
    )


SETUP = {
    "adapter.vram": "16MiB",
    "adapter.cpu_visible": "1MiB",
    "adapter.aperture": "1MiB",
    "workload.cpu_visible": 0,
    "workload.aperture": 0,
    "workload.persistent_locks": 0,
    "workload.frames": 2,
}


def test_own_buffers_that_cannot_be_resident_together_are_refused_naming_workload_uploads() -> None:
    """Decision 0168: a 1 MiB staging buffer (8 uploads) and the 1 MiB readback buffer each fit the 1 MiB BAR
    segment or the 1 MiB aperture, but the BAR also holds the paging process's page tables: setup's MakeResident
    is refused, and the first frame's copy from the staging buffer used to fault (VA 0x870000, device removed)."""
    adapters: list[Adapter] = []
    with pytest.raises(ConfigurationError) as caught:
        run_scenario(catalog.load(None, {**SETUP, "workload.uploads": 8}), on_adapter=adapters.append)
    assert (caught.value.setting, caught.value.value) == ("workload.uploads", 8)
    assert caught.value.rule == (
        "process 0's own buffers (p0.staging 1 MiB, p0.readback 1 MiB) cannot be resident together in the segments "
        "they may use (segment 1: 1 MiB, segment 3: 1 MiB), even with CantTrimFurther: lower workload.uploads "
        "(128 KiB of staging each) or raise adapter.cpu_visible or adapter.aperture"
    )
    assert {e.engine for e in adapters[0].events.of_type(DmaBufferStarted)} == {0}, "no frame's work ran"
    result = run_scenario(catalog.load(None, {**SETUP, "workload.uploads": 6}))
    assert result.verified, [c for c in result.checks if not c.ok]


def test_the_same_sizes_on_a_card_whose_segments_hold_them_run_and_verify() -> None:
    result = run_scenario(catalog.load(None, {**REPRO, "adapter.vram": "32MiB"}))
    assert result.verified, [c for c in result.checks if not c.ok]
    assert max(r.bytes for r in result.processes) > 12224 * 1024


def test_the_cli_reproduction_exits_2_naming_the_setting_and_writes_no_device_removal(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [*REPRO_ARGS, "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "error: workload.sizes.max='16MiB': drew p0.r1, a 13824 KiB local surface" in text
    assert "removed" not in text and "PAGE_FAULT" not in text


def test_a_readback_vidmm_refuses_is_a_failed_check_and_no_gpu_work_names_its_va() -> None:
    """The second line (decision 0167), below the up-front refusal: the reproduction's process run as the runner
    runs it but without :func:`~wddmsim.scenarios.fit.check_fits` -- its readback of p0.r1 is refused, and
    verification reports that instead of copying from an unmapped VA."""
    config = catalog.load(None, REPRO)
    adapter = build_adapter(config.system_config())
    app = App(
        TracedRuntime(adapter.runtime, None), config, 0, Model(), umd=adapter.umd, capabilities=adapter.capabilities
    )
    plan = frames(config, len(app.resources), np.random.default_rng([config.seed, 0, 1]))
    app.frame(0, next(plan))
    submissions = app.gpu.submissions
    checks = verify(app)
    refused = [c for c in checks if c.operation == "MakeResident"]
    assert [(c.step, c.ok) for c in refused] == [("process 0: p0.r1 (surface, local)", False)]
    assert refused[0].detail.startswith("E_OUTOFMEMORY even with CantTrimFurther for its 13.5 MiB: not read back")
    others = [c for c in checks if c.operation != "MakeResident"]
    assert [c.ok for c in others] == [False], "the summary counts the resource it could not read"
    assert others[0].detail == "1 frames; 2 of 3 allocations verified"
    assert app.gpu.submissions == submissions, "p0.r1 was the one to read by GPU copy: none was submitted"
    events = adapter.events
    assert not events.of_type(EngineFaulted) and not events.of_type(GpuFaultReported)
