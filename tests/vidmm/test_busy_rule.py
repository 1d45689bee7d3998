"""Seed rule (b): ``STATUS_GRAPHICS_ALLOCATION_BUSY`` is legal only from Transfer, DiscardContent and
SpecialLockTransfer (``DxgkDdiBuildPagingBuffer``); from any other operation it is a contract breach and takes the
adapter-reset path."""

from __future__ import annotations

import pytest

from wddmsim.ddi.paging import Op
from wddmsim.ddi.status import NTSTATUS
from wddmsim.testing import campaign, fakes
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import AdapterReset

from .world import World


def test_allocation_busy_from_init_context_resource_takes_the_reset_path() -> None:
    busy: list[fakes.BusyForeverDriver] = []

    def wrap(driver: object) -> fakes.BusyForeverDriver:
        busy.append(fakes.BusyForeverDriver(driver, Op.DXGK_OPERATION_INIT_CONTEXT_RESOURCE))  # type: ignore[arg-type]
        return busy[0]

    w = World(wrap_driver=wrap)
    with campaign.case("BuildPagingBuffer.status") as box:
        with pytest.raises(DeviceRemoved, match="legal only for Transfer, DiscardContent") as error:
            w.vidmm.create_context(w.device)
        box.append(Outcome.REFUSED)
    assert error.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
    assert busy[0].calls == 1, "refused on the first ALLOCATION_BUSY: no AllocationIsIdle retry"
    (reset,) = w.adapter.events.of_type(AdapterReset)
    assert "DXGK_OPERATION_INIT_CONTEXT_RESOURCE" in reset.reason
