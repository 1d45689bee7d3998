"""The paging tour on the simple driver (decision 0075), composed by name: the segment-model steps it supports run
and pass -- fills and transfers, the aperture, multipass, physical reads and writes -- the others are skipped by
capability (no swizzling, no GpuMmu) or probe (no context images), and the segments are found by their role in the
descriptors the driver reported (it numbers them 3 visible, 2 local, 1 aperture)."""

from __future__ import annotations

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4, DXGK_SEGMENTFLAGS
from wddmsim.drivers.simple.layout import APERTURE, LOCAL, VISIBLE
from wddmsim.scenarios.demos import demo_config
from wddmsim.scenarios.rig import PagingRig
from wddmsim.scenarios.tour import TourSegments, run_tour, tour_segments
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .bench import driver_of

SEGMENT_MODEL = {
    "Fill(0)",
    "Fill(0xDEADBEEF)",
    "Transfer(segment->MDL)",
    "Transfer(MDL->segment)",
    "Transfer(segment->segment)",
    "MapApertureSegment",
    "UnmapApertureSegment",
    "DiscardContent",
    "Transfer(multipass)",
    "ReadPhysical",
    "WritePhysical",
}
"""The operations of the tour's steps a segment-model driver without swizzling or probe supports."""


def test_the_tour_runs_the_steps_the_simple_driver_supports_and_skips_the_others() -> None:
    rig, result = run_tour(demo_config("tour", driver="simple"))
    driver = driver_of(rig.adapter)
    assert result.verified, [c for c in result.checks if not c.ok]
    operations = {c.operation for c in result.checks}
    assert operations >= SEGMENT_MODEL, SEGMENT_MODEL - operations
    skipped = {"Transfer(Swizzle)", "TransferVirtual", "InitContextResource", "NotifyResidency"}
    assert not operations & skipped, "no swizzling, no GpuMmu, no probe: those steps are skipped"
    discard = [c for c in result.checks if c.operation == "DiscardContent"]
    assert [c.step for c in discard] == ["discard copies nothing: the content stays"], "the driver-neutral check"
    assert driver.statistics().allocations == 2, "the tour's buffers, created through the simple driver's format"


def test_the_reference_driver_still_leaves_its_discard_note() -> None:
    _, result = run_tour(demo_config("tour", vram=64 * 1024 * 1024))
    discard = [c for c in result.checks if c.operation == "DiscardContent"]
    assert [c.step for c in discard] == ["discard reaches the GPU as a note, no copy"] and discard[0].ok


@pytest.mark.parametrize(
    ("package", "roles"),
    [
        ("reference", TourSegments(cpu_visible=1, local=2, aperture=3)),
        ("simple", TourSegments(VISIBLE, LOCAL, APERTURE)),
    ],
)
def test_the_tour_finds_segments_by_their_reported_role(package: str, roles: TourSegments) -> None:
    rig = PagingRig(SystemConfig(driver_package=package))
    assert tour_segments(rig.vidmm.segments) == roles


def test_a_driver_reporting_no_aperture_segment_cannot_be_toured() -> None:
    memory = DXGK_SEGMENTDESCRIPTOR4(
        Flags=DXGK_SEGMENTFLAGS(CpuVisible=True), BaseAddress=0, Size=1 << 20, CommitLimit=1 << 20
    )
    local = DXGK_SEGMENTDESCRIPTOR4(Flags=DXGK_SEGMENTFLAGS(), BaseAddress=1 << 20, Size=1 << 20, CommitLimit=1 << 20)
    with campaign.case("simple driver: the tour") as box:
        with pytest.raises(ConfigurationError) as raised:
            tour_segments([memory, local])
        assert (raised.value.setting, raised.value.value) == ("segments", 2)
        assert "aperture" in raised.value.rule
        box.append(Outcome.REFUSED)
