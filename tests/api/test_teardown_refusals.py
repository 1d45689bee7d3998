"""A teardown that meets a failing driver call goes on (decision 0054): ``DxgkDdiDestroyContext`` or
``DxgkDdiDestroyAllocation`` refused once, the process still ends, VidMm reclaims everything of its own, and
``Teardown.refused`` names the call; the footprint is back to its start except for what the driver kept."""

from __future__ import annotations

import pytest

from wddmsim.ddi.allocation import DXGKARG_DESTROYALLOCATION
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.hw import commands as cmd
from wddmsim.testing.fakes import DelegatingDriver

from .desk import Desk, KiB


class FailOnce(DelegatingDriver):
    """Fails the first DxgkDdiDestroyContext (an error status) and the first DxgkDdiDestroyAllocation (raises)."""

    def __init__(self, inner: KernelModeDriver, *, context: bool, allocation: bool) -> None:
        super().__init__(inner)
        self.fail_context = context
        self.fail_allocation = allocation
        self.failed: list[int] = []

    def destroy_context(self, hContext: HANDLE) -> NTSTATUS:
        if self.fail_context:
            self.fail_context = False
            self.failed.append(int(hContext))
            return NTSTATUS.STATUS_UNSUCCESSFUL
        return self.inner.destroy_context(hContext)

    def destroy_allocation(self, args: DXGKARG_DESTROYALLOCATION) -> NTSTATUS:
        if self.fail_allocation:
            self.fail_allocation = False
            self.failed.append(int(args.pAllocationList[0]))
            raise DdiError(NTSTATUS.STATUS_UNSUCCESSFUL, "the driver could not destroy it")
        return self.inner.destroy_allocation(args)


def busy_process(context: bool, allocation: bool) -> tuple[Desk, FailOnce]:
    drivers: list[FailOnce] = []

    def wrap(driver: KernelModeDriver) -> KernelModeDriver:
        drivers.append(FailOnce(driver, context=context, allocation=allocation))
        return drivers[0]

    d = Desk(wrap=wrap)
    handles = [d.buffer(64 * KiB), d.buffer(256 * KiB)]
    d.resident(*handles)
    ctx = d.device.create_context()
    d.device.wait_for_context(ctx, d.device.submit_command(ctx, cmd.encode(cmd.Nop())))
    d.device.create_context()
    return d, drivers[0]


def test_a_refused_destroy_context_does_not_stop_the_process_teardown() -> None:
    d, driver = busy_process(context=True, allocation=False)
    d.process.close()
    teardown = d.vidmm.teardown
    (refusal,) = teardown.refused
    assert refusal.call == "DxgkDdiDestroyContext" and refusal.handle == driver.failed[0]
    assert refusal.status == NTSTATUS.STATUS_UNSUCCESSFUL
    now, start = d.adapter.footprint(), d.start
    assert len(now.leaks(start)) == 2, "VidMm reclaimed the context's image itself; only the driver's records stay"
    assert now.driver_contexts == start.driver_contexts + 1
    assert now.driver_allocations == start.driver_allocations + 2  # its context record and its image record
    assert not d.vidmm.residency.processes.keys() - {d.vidmm.residency.system_device.process.handle}


@pytest.mark.any_driver
def test_a_refused_destroy_allocation_does_not_stop_the_process_teardown() -> None:
    d, driver = busy_process(context=False, allocation=True)
    d.process.close()
    (refusal,) = d.vidmm.teardown.refused
    assert refusal.call == "DxgkDdiDestroyAllocation" and refusal.handle == driver.failed[0]
    assert "could not destroy it" in str(refusal)
    now, start = d.adapter.footprint(), d.start
    assert len(now.leaks(start)) == 1 and now.driver_allocations == start.driver_allocations + 1


@pytest.mark.any_driver
def test_a_clean_teardown_reports_nothing() -> None:
    d, _ = busy_process(context=False, allocation=False)
    d.process.close()
    assert d.vidmm.teardown.refused == []
    assert d.adapter.footprint().leaks(d.start) == []
