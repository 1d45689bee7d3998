"""A paging buffer carried out by a pluggable executor that fails: the engine faults and VidMm's reset path takes
over, exactly as for a bad decoded packet (issue 21, item 3)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from wddmsim.core.units import KiB
from wddmsim.hw.engine import Submission
from wddmsim.hw.events import EngineFaulted
from wddmsim.hw.services import GpuServices
from wddmsim.testing.residency import backing_bytes, check_residency
from wddmsim.vidmm.errors import DeviceRemoved

from .world import World, pattern


def _broken(buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices) -> None:
    raise RuntimeError("the executor's replay table has no entry for this record")


def test_an_executor_that_raises_on_a_paging_buffer_ends_in_the_reset_path() -> None:
    w = World(physical=True)
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    w.write(a, pattern(a.size, 5))
    w.evict(a)
    engine = w.adapter.gpu.engines[0]
    plain = engine.submit

    def through_executor(submission: Submission) -> None:  # the driver's buffers, carried out by the executor
        plain(dataclasses.replace(submission, executor=_broken))

    engine.submit = through_executor  # type: ignore[method-assign]
    with pytest.raises(DeviceRemoved, match="adapter reset"):
        w.make_resident(a)
    faults = w.adapter.events.of_type(EngineFaulted)
    assert faults, "the engine faulted"
    for fault in faults:  # the failed page-in, and whatever the reset path itself submitted through it
        assert fault.kind == "INVALID_INSTRUCTION"
        assert "executor _broken raised RuntimeError: the executor's replay table" in fault.reason
    assert np.array_equal(backing_bytes(w.adapter, a), pattern(a.size, 5))
    assert not check_residency(w.adapter)
