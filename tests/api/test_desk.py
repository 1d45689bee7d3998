"""The desk runs on any driver package (decision 0097): it takes its segments from the descriptors the driver
reported, by role, as the tour does (decision 0076), so the same test reads the right segment on every package."""

from __future__ import annotations

import pytest

from wddmsim.drivers import DriverModel

from .desk import CPU, Desk, KiB

ROLES = {"reference": (1, 2, 3), "simple": (3, 2, 1)}
"""(CPU-visible, local, aperture) as each package numbers them."""


@pytest.mark.any_driver
def test_the_desk_finds_its_segments_by_the_roles_the_driver_reported(desk_package: str) -> None:
    desk = Desk(model=DriverModel.WDDM1)
    assert desk.package == desk_package and desk.adapter.config.driver_package == desk_package
    assert (desk.cpu_segment, desk.local_segment, desk.aperture_segment) == ROLES[desk_package]
    flags = {space.id: space.descriptor.Flags for space in desk.vidmm.spaces}
    assert flags[desk.aperture_segment].Aperture
    assert flags[desk.cpu_segment].CpuVisible and not flags[desk.cpu_segment].Aperture
    assert not (flags[desk.local_segment].CpuVisible or flags[desk.local_segment].Aperture)
    h = desk.buffer(64 * KiB, usage=CPU)
    desk.resident(h)
    assert desk.where(h) == desk.cpu_segment, "a CPU-visible buffer goes where the driver's CPU-visible segment is"
    desk.check()


def test_a_model_the_package_cannot_present_skips_the_desk() -> None:
    with pytest.raises(pytest.skip.Exception, match="driver package simple presents no wddm2"):
        Desk(model=DriverModel.WDDM2, package="simple")
