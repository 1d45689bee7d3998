"""The paging tour's steps the simple driver supports (decision 0075): fills and transfers, the aperture, multipass,
physical reads and writes -- every check passes but the reference driver's own DiscardContent note.

The tour names segments by the reference driver's numbers (1 CPU-visible, 2 local, 3 aperture); the simple driver
numbers them 3, 2, 1, so the test renames them for the tour's duration (until the tour takes the roles from the
reported descriptors)."""

from __future__ import annotations

import pytest

from wddmsim.drivers.simple.layout import APERTURE, LOCAL, VISIBLE
from wddmsim.scenarios import tour
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig

from .bench import driver_of

REFERENCE_ONLY = {"discard reaches the GPU as a note, no copy"}
"""The reference driver leaves a NOTE for a discard (decision 0006); the simple driver writes nothing (0075)."""


def test_the_tour_steps_of_the_segment_model_pass_on_the_simple_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tour, "CPU_SEGMENT", VISIBLE)
    monkeypatch.setattr(tour, "LOCAL_SEGMENT", LOCAL)
    monkeypatch.setattr(tour, "APERTURE_SEGMENT", APERTURE)
    rig = PagingRig(SystemConfig(driver_package="simple"))
    driver = driver_of(rig.adapter)
    layout = tour.tour_layout(rig.vidmm.segment(VISIBLE).Size, rig.vidmm.segment(LOCAL).Size, rig.gpu.config.local_size)
    result = tour.TourResult()
    for step in (tour._fill_and_transfers, tour._multipass, tour._physical):
        step(rig, layout, result)
    failed = {c.step for c in result.checks if not c.ok}
    assert failed == REFERENCE_ONLY, [c for c in result.checks if not c.ok]
    assert len(result.checks) >= 10
    assert driver.statistics().allocations == 2, "the tour's buffers, created through the simple driver's format"
