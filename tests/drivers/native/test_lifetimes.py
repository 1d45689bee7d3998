"""What the bridge hands a native driver lives as long as the driver may use it, and no longer (decision 0131).

An MDL's system view (``MmGetSystemAddressForMdlSafe``) that a driver records in its software log is used by its
executor when the paging buffer runs: it must stay mapped until then, however many MDLs were handed over in
between, and be unmapped once the buffer retired -- the footprint counts what is left.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION
from wddmsim.drivers.native import kernel
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.services import IDLE_IMAGES
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.residency import check_residency

from .conftest import BuildDriver

SOFTLOG = Path(__file__).with_name("softlog.c")
SURFACE = "native driver: lifetimes of MDL images and views"
MDLS = 40
"""More MDLs in one paging buffer than the bridge ever cached (16)."""
SEGMENT = 1


def softlog_description(tmp_path: Path, library: Path, **extra: object) -> Path:
    """The softlog driver's description: Transfer claimed, its own C executor; ``extra`` top-level keys."""
    toml = tmp_path / "softlog.toml"
    keys = "".join(f"{key} = {value}\n" for key, value in extra.items())
    toml.write_text(
        f'library = "{library}"\nmodel = "wddm1"\noperations = ["Transfer"]\n{keys}[executor]\nkind = "c"\n',
        encoding="utf-8",
    )
    return toml


def transfer(rig: PagingRig, mdl: MDL, offset: int, *, to_system: bool) -> DXGK_BUILDPAGINGBUFFER_TRANSFER:
    segment = DXGK_TRANSFER_LOCATION.segment(SEGMENT, rig.segment_address(SEGMENT, offset))
    system = DXGK_TRANSFER_LOCATION.mdl(mdl)
    return DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=PAGE_SIZE,
        Source=segment if to_system else system,
        Destination=system if to_system else segment,
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
    )


@pytest.mark.parametrize("to_system", [True, False], ids=["local-to-system", "system-to-local"])
def test_views_live_until_their_paging_buffer_ran_then_go(
    build_driver: BuildDriver, tmp_path: Path, to_system: bool
) -> None:
    rig = PagingRig(SystemConfig(driver_package=str(softlog_description(tmp_path, build_driver(SOFTLOG)))))
    driver = rig.driver
    assert isinstance(driver, NativeDriver)
    start = rig.adapter.footprint()
    mdls = [rig.backing(PAGE_SIZE, scatter_seed=None) for _ in range(MDLS)]
    for i, mdl in enumerate(mdls):
        data = rig.pattern(PAGE_SIZE, seed=i)
        if to_system:
            rig.write_segment(SEGMENT, i * PAGE_SIZE, data)
        else:
            rig.write_mdl(mdl, data)
    with campaign.case(SURFACE) as box:
        for i, mdl in enumerate(mdls):  # built into one paging buffer, none executed yet
            rig.vidmm.paging.build(transfer(rig, mdl, i * PAGE_SIZE, to_system=to_system))
        assert driver.services.live_views() == MDLS, "every view a pending buffer recorded is still mapped"
        assert driver.services.images.count() == MDLS
        pending = rig.adapter.footprint().leaks(start)
        assert any(line.startswith("mdl_images: 40") for line in pending), pending
        assert any(line.startswith("bridge_views: 40") for line in pending), pending
        rig.vidmm.paging.wait(rig.vidmm.paging.flush())
        for i, mdl in enumerate(mdls):
            got = rig.read_mdl(mdl) if to_system else rig.read_segment(SEGMENT, i * PAGE_SIZE, PAGE_SIZE)
            assert np.array_equal(got, rig.pattern(PAGE_SIZE, seed=i)), f"transfer {i}"
        now = driver.statistics()
        assert (now.mdl_images, now.bridge_views) == (0, 0), "the buffer retired: its images and views went"
        for mdl in mdls:
            rig.mm.free_pages(mdl)
        assert rig.adapter.footprint().leaks(start) == []
        assert check_residency(rig.adapter) == []
        box.append(Outcome.ACCEPTED)


def test_an_adapter_reset_lets_every_image_go(build_driver: BuildDriver, tmp_path: Path) -> None:
    """Built but never submitted: the reset path's ``DxgkDdiResetFromTimeout`` drops the images and views."""
    rig = PagingRig(SystemConfig(driver_package=str(softlog_description(tmp_path, build_driver(SOFTLOG)))))
    driver = rig.driver
    assert isinstance(driver, NativeDriver)
    mdls = [rig.backing(PAGE_SIZE) for _ in range(3)]
    for i, mdl in enumerate(mdls):
        rig.vidmm.paging.build(transfer(rig, mdl, i * PAGE_SIZE, to_system=True))
    assert driver.statistics().bridge_views == 3
    driver.reset_from_timeout()
    now = driver.statistics()
    assert (now.mdl_images, now.bridge_views) == (0, 0)


def test_an_idle_image_is_reused_with_a_fresh_view_and_the_idle_ones_are_bounded(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    """VidMm hands the same MDL to build after build: its image is kept idle between them (decision 0131), never
    with a stale view -- the header of an idle image names no mapping, so the next build maps afresh and the bytes
    land -- and no more than ``IDLE_IMAGES`` idle ones are kept."""
    rig = PagingRig(SystemConfig(driver_package=str(softlog_description(tmp_path, build_driver(SOFTLOG)))))
    driver = rig.driver
    assert isinstance(driver, NativeDriver)
    images = driver.services.images
    start = rig.adapter.footprint()
    mdl = rig.backing(PAGE_SIZE, scatter_seed=None)
    for round_ in range(3):
        data = rig.pattern(PAGE_SIZE, seed=round_)
        rig.write_segment(SEGMENT, 0, data)
        rig.execute(transfer(rig, mdl, 0, to_system=True))
        assert np.array_equal(rig.read_mdl(mdl), data), f"round {round_}: the reused image's view reached the pages"
        driver.retire()
        assert (images.count(), images.live_views(), images.idle()) == (0, 0, 1)
        address = images.image(mdl)  # the idle image comes back, its header naming no view
        header = kernel.MDL.from_address(address)
        assert header.MappedSystemVa is None and not int(header.MdlFlags) & kernel.MDL_MAPPED_TO_SYSTEM_VA
        images.submitted(0, 0)  # hand it back to a (completed) buffer, as a build would
        images.retire(lambda node: 0)
    many = [rig.backing(PAGE_SIZE) for _ in range(IDLE_IMAGES + 8)]
    for i, other in enumerate(many):
        rig.execute(transfer(rig, other, (i % 4) * PAGE_SIZE, to_system=True))
    driver.retire()
    assert (images.count(), images.live_views()) == (0, 0)
    assert images.idle() == IDLE_IMAGES, "the oldest idle images went"
    for other in [mdl, *many]:
        rig.mm.free_pages(other)
    assert rig.adapter.footprint().leaks(start) == []
