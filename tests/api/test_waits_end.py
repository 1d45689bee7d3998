"""No wait hangs (issue 19): every CPU wait on a value that can never be reached ends -- refused with the argument
named, or the adapter-reset (timeout) path's ``DEVICE_REMOVED`` -- and the liveness budget turns a wait that still
would not return into a ``LivenessBudgetExceeded`` (counted as HUNG) instead of a stalled run."""

from __future__ import annotations

import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.core.clock import Clock
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.status import HRESULT, NTSTATUS, InvalidArgument
from wddmsim.ddi.submit import DXGKARG_SUBMITCOMMAND
from wddmsim.hw import commands as cmd
from wddmsim.testing import campaign, liveness
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import AdapterReset

from .desk import Desk

SURFACE = "runtime.wait"
NOP = cmd.encode(cmd.Nop())


@pytest.mark.any_driver
@pytest.mark.parametrize("fence", [2, 10**6, 2**64 - 1, -1])
def test_waiting_for_a_fence_never_submitted_is_refused_with_the_fence_named(fence: int) -> None:
    d = Desk()
    context = d.device.create_context()
    submitted = d.device.submit_command(context, NOP)
    assert submitted == 1
    d.device.wait_for_context(context, submitted)
    before = d.adapter.footprint()
    with liveness.case(SURFACE, steps=100_000) as box:  # old main spun here for ever
        with pytest.raises(InvalidArgument) as error:
            d.device.wait_for_context(context, FenceValue(fence))
        box.append(Outcome.REFUSED)
    assert error.value.argument == "fence" and error.value.value == fence
    assert error.value.status == HRESULT.E_INVALIDARG
    assert "never submitted" in str(error.value)
    assert d.adapter.footprint() == before
    assert d.vidmm.reset.count == 0


@pytest.mark.any_driver
def test_waiting_on_a_fresh_context_for_any_fence_but_zero_is_refused() -> None:
    d = Desk()
    context = d.device.create_context()
    assert d.device.wait_for_context(context, FenceValue(0)) == HRESULT.S_OK
    with pytest.raises(InvalidArgument, match="last submission fence is 0"):
        d.device.wait_for_context(context, FenceValue(1))
    campaign.record(SURFACE, Outcome.REFUSED)


class DroppingDriver(DelegatingDriver):
    """Takes the processes' DMA buffers and never runs them (a GPU that stopped); paging buffers run."""

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        if args.Flags.Paging:
            return self.inner.submit_command(args)
        return NTSTATUS.STATUS_SUCCESS


def dropping_desk() -> Desk:
    return Desk(wrap=lambda driver: DroppingDriver(driver))


@pytest.mark.any_driver
def test_a_gpu_that_stops_short_of_the_fence_times_out_through_the_adapter_reset() -> None:
    d = dropping_desk()
    context = d.device.create_context()
    fence = d.device.submit_command(context, NOP)
    with liveness.case(SURFACE, steps=100_000) as box:
        with pytest.raises(DeviceRemoved, match="timeout on node") as error:
            d.device.wait_for_context(context, fence)
        box.append(Outcome.REFUSED)
    assert error.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
    assert d.vidmm.reset.count == 1 and len(d.adapter.events.of_type(AdapterReset)) == 1
    assert d.device.wait_for_context(context, fence) == HRESULT.S_OK, "after the reset the fence counts as retired"


def spin_forever(clock: Clock, period: int = 1_000) -> None:
    """A timer that never stops (a periodic interrupt): the clock always has something to run."""

    def tick() -> None:
        clock.schedule(clock.now + period, tick)

    clock.schedule(clock.now + period, tick)


@pytest.mark.any_driver
def test_the_liveness_budget_turns_a_wait_that_never_returns_into_a_clear_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the budget this wait never returns: the GPU never completes the fence, and the clock never runs
    dry (a timer keeps ticking), so nothing ever stops ``Clock.run_until``.  The hang is this test's point: it is
    counted in a registry of its own, so CI's tally stays what the real surfaces did."""
    monkeypatch.setattr(campaign, "_TALLIES", {})
    d = dropping_desk()
    context = d.device.create_context()
    fence = d.device.submit_command(context, NOP)
    spin_forever(d.adapter.clock)
    selftest = campaign.tally("liveness.selftest")
    hung_before = selftest.hung
    spent = r"liveness budget of 20000 steps exceeded in Clock\.step"
    with pytest.raises(liveness.LivenessBudgetExceeded, match=spent), liveness.case(selftest.surface, steps=20_000):
        d.device.wait_for_context(context, fence)
    assert selftest.hung == hung_before + 1, "counted as HUNG"


@pytest.mark.any_driver
def test_the_budget_is_not_swallowed_as_a_driver_crash() -> None:
    """VidMm catches ``Exception`` around driver calls; a spent budget inside one is not taken for a crash."""
    spent: list[int] = []

    class Spinning(DelegatingDriver):
        def reset_from_timeout(self) -> NTSTATUS:
            spent.append(1)
            with liveness.bounded(0):
                d.adapter.clock.schedule(d.adapter.clock.now, lambda: None)
                d.adapter.clock.step()
            return NTSTATUS.STATUS_SUCCESS

    def wrap(driver: KernelModeDriver) -> KernelModeDriver:
        return Spinning(DroppingDriver(driver))

    d = Desk(wrap=wrap)
    context = d.device.create_context()
    fence = d.device.submit_command(context, NOP)
    with pytest.raises(liveness.LivenessBudgetExceeded):
        d.device.wait_for_context(context, fence)
    assert spent == [1]
