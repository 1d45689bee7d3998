"""Clients that poll instead of waiting, and clients on the paging node (issue 19, found by the review of the
campaign's change).

The simulated GPU runs only while the CPU waits; a client that polls -- a ``DonotWait`` lock retried, the paging
fence read through ``FenceValueCPUVirtualAddress`` -- saw nothing ever complete and spun for ever.  A poll lets
time pass now (``GpuScheduler.poll``), so every polling loop ends.  And a user context on the paging node let an
application's fault reset the engine VidMm's paging buffers run on: buffers queued behind the fault were dropped
and counted as run, so another process's page-out never copied its bytes.
"""

from __future__ import annotations

import pytest

from tests.api.desk import CPU, Desk, KiB, pattern
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCKFLAGS
from wddmsim.ddi.residency import D3DDDI_EVICT_FLAGS, D3DDDI_MAKERESIDENT, D3DDDICB_EVICT
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.kmd.config import DriverModel
from wddmsim.testing import liveness
from wddmsim.vidmm.errors import DeviceRemoved

MODELS = [DriverModel.WDDM1, DriverModel.WDDM2]
POLLS = 100_000
"""Far more polls than any of these loops needs; the liveness budget bounds them too."""


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_a_donotwait_lock_retried_after_an_unwaited_evict_succeeds_with_the_bytes(model: DriverModel) -> None:
    desk = Desk(model=model)
    desk.vidmm.resize_paging_buffers(0x1000)  # the copy out spans several buffers
    h = desk.buffer(192 * KiB, usage=CPU)
    desk.resident(h)
    data = pattern(192 * KiB, 3)
    desk.cpu_write(desk.lock(h).pData, data)
    desk.unlock(h)
    desk.device.evict(D3DDDICB_EVICT(NumAllocations=1, AllocationList=(h,), Flags=D3DDDI_EVICT_FLAGS()))
    args = D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True))
    with liveness.bounded(1_000_000):
        for _ in range(POLLS):
            if desk.device.lock(args) == HRESULT.S_OK:
                break
    assert args.pData, f"no S_OK after {POLLS} polls"
    assert (desk.cpu_read(args.pData, 192 * KiB) == data).all()
    desk.unlock(h)
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_polling_the_paging_fence_reaches_the_value_make_resident_gave(model: DriverModel) -> None:
    desk = Desk(model=model)
    h = desk.buffer(256 * KiB)
    args = D3DDDI_MAKERESIDENT(hPagingQueue=desk.queue, NumAllocations=1, AllocationList=(h,))
    assert desk.device.make_resident(args) == HRESULT.E_PENDING
    with liveness.bounded(1_000_000):
        for _ in range(POLLS):
            if desk.device.paging_fence_value(desk.queue) >= args.PagingFenceValue:
                break
    assert desk.device.paging_fence_value(desk.queue) >= args.PagingFenceValue
    assert desk.vidmm.residency.where(h).published
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_a_user_context_on_the_paging_node_is_refused(model: DriverModel) -> None:
    desk = Desk(model=model)
    paging_node = desk.vidmm.caps.PagingNode
    before = desk.adapter.footprint()
    with pytest.raises(InvalidArgument) as refused:
        desk.device.create_context(paging_node)
    assert refused.value.argument == "NodeOrdinal" and refused.value.status == HRESULT.E_INVALIDARG
    assert "paging node" in refused.value.rule
    assert desk.adapter.footprint() == before


@pytest.mark.any_driver
def test_a_fault_on_the_paging_node_takes_the_adapter_reset_path_not_an_engine_reset() -> None:
    """Defence in depth: only VidMm's own contexts run there now; a fault of theirs must not drop paging buffers
    queued behind it, as an engine reset would (reliability-plan F10)."""
    desk = Desk()
    context = desk.vidmm.create_context(None, node=desk.vidmm.caps.PagingNode)  # a system context
    fence = desk.vidmm.work.submit(context, cmd.encode(cmd.Fill(hw_address(Space.GPU_VA, 0x7000_0000), 64, 0xDEAD)))
    resets = desk.vidmm.reset.count
    with pytest.raises(DeviceRemoved):
        desk.vidmm.work.wait(context, fence)
    assert desk.vidmm.reset.count == resets + 1
    assert "paging node" in desk.vidmm.reset.reasons[-1]
