"""No return value, no pointer written into ``pDmaBuffer`` and no endless loop of a C driver crashes the Python
process or hangs it (issue 21): ``wddmsim run`` ends in the reset path naming the breach, ``check-driver`` exits 1
naming the check."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.marshal import address_of
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.errors import DeviceRemoved

from .conftest import BuildDriver

HOSTILE = Path(__file__).with_name("hostile.c")
SURFACE = "native driver: hostile return values and pointers"
SUCCESS, INSUFFICIENT = 0, 0xC01E0001
CASES = [
    # (status, pointer action, what the run's reset says, the check-driver check)
    (0xC000000D, 0, "returned STATUS_INVALID_PARAMETER", "status"),
    (0x12345678, 0, "returned 0x12345678", "status"),
    (0x40000000, 0, "returned 0x40000000", "status"),
    (SUCCESS, 1, "pDmaBuffer no longer points into the paging buffer", "bounds"),
    (SUCCESS, 2, "pDmaBuffer moved by", "bounds"),
    (SUCCESS, 3, "pDmaBuffer moved by -16", "bounds"),
    (SUCCESS, 4, "pDmaBuffer moved by", "bounds"),
    (INSUFFICIENT, 5, "MultipassOffset stayed at 0 for 64 calls", "progress"),
    (INSUFFICIENT, 0, "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER on an empty", "progress"),
]


@pytest.mark.parametrize(("status", "pointer", "reset", "check"), CASES)
def test_a_hostile_driver_ends_cleanly(
    build_driver: BuildDriver, status: int, pointer: int, reset: str, check: str
) -> None:
    library = build_driver(HOSTILE, HOSTILE_STATUS=f"{status:#x}u", HOSTILE_POINTER=pointer)
    with campaign.case(SURFACE) as box:
        run = CliRunner().invoke(main, ["run", "--driver", str(library), "--frames", "1", "--processes", "1"])
        assert run.exit_code == 1, run.output
        assert isinstance(run.exception, SystemExit), run.exception
        assert "adapter reset" in run.output and reset in run.output, run.output
        checked = CliRunner().invoke(main, ["check-driver", str(library)])
        assert checked.exit_code == 1, checked.output
        assert isinstance(checked.exception, SystemExit), checked.exception
        assert f"\n{check} " in checked.output, checked.output
        box.append(Outcome.REFUSED)


def test_the_library_s_own_reset_from_timeout_runs_after_the_base_s(build_driver: BuildDriver) -> None:
    """``DxgkDdiResetFromTimeout``, when the library exports it, is called once the base has stopped the GPU."""
    library = build_driver(HOSTILE, HOSTILE_STATUS="0xC000000Du", HOSTILE_POINTER=0)
    rig = PagingRig(SystemConfig(driver_package=str(library)))
    driver = rig.driver
    assert isinstance(driver, NativeDriver)
    mdl = rig.backing(PAGE_SIZE)
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=PAGE_SIZE,
        Source=DXGK_TRANSFER_LOCATION.segment(2, rig.segment_address(2, 0)),
        Destination=DXGK_TRANSFER_LOCATION.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
    )
    with pytest.raises(DeviceRemoved, match="returned STATUS_INVALID_PARAMETER"):
        rig.execute(payload)
    counter = driver.library.function("HostileResets")
    assert counter is not None
    assert driver.library_resets == 1 == ctypes.CFUNCTYPE(ctypes.c_uint)(address_of(counter))()
