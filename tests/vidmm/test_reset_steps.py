"""The reset path is handed its steps at construction, in the order they run, and nothing is added later: on a
GpuMmu adapter the paging process's tables are copied out before ``DxgkDdiResetFromTimeout`` and written back first
after ``DxgkDdiRestartFromTimeout`` (decision 0055), then residency and the VA spaces follow."""

from __future__ import annotations

import pytest

from wddmsim.kmd.config import DriverModel
from wddmsim.vidmm.errors import DeviceRemoved

from .world import World


def test_the_steps_are_fixed_at_construction_with_the_paging_tables_first() -> None:
    w = World()
    reset, process = w.vidmm.reset, w.vidmm.paging_process
    assert process is not None
    assert isinstance(reset.before, tuple) and isinstance(reset.after, tuple), "nothing can be appended later"
    assert reset.before == (process.before_reset,)
    assert reset.after[0] == process.after_reset and len(reset.after) == 2


def test_without_a_paging_process_only_the_late_step_runs_after_the_restart() -> None:
    w = World(model=DriverModel.WDDM1)
    assert w.vidmm.paging_process is None
    assert w.vidmm.reset.before == () and len(w.vidmm.reset.after) == 1


def test_a_reset_brings_the_paging_tables_back_and_removes_the_devices() -> None:
    w = World()
    process = w.vidmm.paging_process
    assert process is not None
    before = process.save_tables(lambda segment, offset, size: True)
    with pytest.raises(DeviceRemoved):
        w.vidmm.reset.trigger("test: a timeout")
    assert process.save_tables(lambda segment, offset, size: True) == before
    assert w.device.removed is not None, "residency's step ran: every device is in error"
