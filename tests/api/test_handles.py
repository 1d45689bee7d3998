"""Handles are never reused while live, and a destroyed object's handle is refused, not aliased (issue 19).

Every handle space is churned across two processes: the driver's context handles (``DxgkDdiCreateContext``), the
driver's allocation handles (``DxgkDdiCreateAllocation``), VidMm's handles (processes, devices, allocations,
paging queues, synchronisation objects) and the monitored-fence slots.  After each step the live handles are
unique, every handle ever given is new, a destroyed one is refused with its argument named, and the other
process's work still runs.
"""

from __future__ import annotations

import pytest

from wddmsim.api import UserDevice
from wddmsim.core.addresses import FenceValue
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.residency import D3DDDI_CREATEPAGINGQUEUE
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw import commands as cmd
from wddmsim.kmd.config import DriverModel

from .desk import Desk, KiB

MODELS = [DriverModel.WDDM2, DriverModel.WDDM1]


class Ledger:
    """Every handle the adapter has given, by space: none may be given twice."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.seen: dict[str, set[int]] = {}
        self.live_before: dict[str, set[int]] = {}
        self.note()

    def _spaces(self) -> dict[str, set[int]]:
        rm = self.desk.vidmm.residency
        driver = reference_driver(self.desk.adapter.driver)
        vidmm: set[int] = (
            set(rm.processes) | set(rm.devices) | set(rm.allocations) | set(rm.queues) | set(rm.sync_objects)
        )
        vidmm |= {q.sync_object for q in rm.queues.values()}
        own = {h for h in driver.state.allocations._by_handle if h < 0x4000_0000}
        return {"contexts": set(driver.contexts), "vidmm": vidmm, "driver allocations": own}

    def note(self) -> None:
        """Record the live handles; a live handle given earlier to an object since destroyed is an alias."""
        rm = self.desk.vidmm.residency
        counts = [len(rm.processes), len(rm.devices), len(rm.allocations), len(rm.queues), len(rm.sync_objects)]
        live = self._spaces()
        assert len(live["vidmm"]) == sum(counts) + len(rm.queues), "two VidMm objects share a handle"
        assert set(rm.contexts) <= live["contexts"]
        fences = [q.fence.offset for q in rm.queues.values()] + [s.fence.offset for s in rm.sync_objects.values()]
        assert len(set(fences)) == len(fences), "two live monitored fences share a slot"
        for space, handles in live.items():
            seen = self.seen.setdefault(space, set())
            reused = (handles & seen) - self.live_before.get(space, set())
            assert not reused, f"{space}: handles {sorted(map(hex, reused))} given again after being destroyed"
            seen |= handles
        self.live_before = live


def _run(device: UserDevice, context: HANDLE) -> None:
    """A submission on ``context`` runs to completion (a stolen handle would fail it)."""
    fence = device.submit_command(context, cmd.encode(cmd.Nop()))
    assert device.wait_for_context(context, fence) == HRESULT.S_OK


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_context_handles_are_not_reused_across_processes(model: DriverModel) -> None:
    """The reference driver numbered contexts by the table's size: after a destroy, the next context took a live
    context's handle -- here another process's, whose submissions then failed."""
    d = Desk(model=model)
    ledger = Ledger(d)
    other, device_b, _ = d.other()
    mine = [d.device.create_context() for _ in range(2)]
    theirs = device_b.create_context()
    ledger.note()
    d.device.destroy_context(mine.pop(0))
    fresh = d.device.create_context()
    ledger.note()
    assert fresh != theirs and fresh not in mine
    _run(device_b, theirs)
    _run(d.device, fresh)
    with pytest.raises(InvalidArgument) as refused:
        device_b.destroy_context(fresh)  # ours, not theirs
    assert refused.value.argument == "hContext" and refused.value.status == HRESULT.E_INVALIDARG
    assert device_b.destroy_context(theirs) == HRESULT.S_OK
    other.close()
    d.process.close()
    assert d.adapter.footprint().leaks(d.start) == []


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_handle_churn_never_aliases(model: DriverModel) -> None:
    """Create and destroy contexts, allocations, queues, fences and devices in two processes, interleaved: every
    handle is new, every destroyed handle is refused, and the teardown leaves nothing."""
    d = Desk(model=model)
    ledger = Ledger(d)
    other, device_b, queue_b = d.other()
    keep_b = d.buffer(64 * KiB, device=device_b)
    context_b = device_b.create_context()
    sync_b = device_b.create_sync_object()
    for _ in range(3):
        device = d.process.create_device()
        args = D3DDDI_CREATEPAGINGQUEUE()
        device.create_paging_queue(args)
        buffer = d.buffer(64 * KiB, device=device)
        context = device.create_context()
        sync = device.create_sync_object()
        ledger.note()
        _run(device, context)
        assert device.destroy_context(context) == HRESULT.S_OK
        assert device.destroy_sync_object(sync) == HRESULT.S_OK
        assert device.destroy_paging_queue(args.hPagingQueue) == HRESULT.S_OK
        ledger.note()
        for call, stale, argument in (
            (device.destroy_context, context, "hContext"),
            (device.destroy_sync_object, sync, "hSyncObject"),
            (device.destroy_paging_queue, args.hPagingQueue, "hPagingQueue"),
        ):
            with pytest.raises(InvalidArgument) as refused:
                call(stale)
            assert refused.value.argument == argument
        d.process.destroy_device(device)
        ledger.note()
        with pytest.raises(InvalidArgument) as refused:
            d.resident(buffer)  # the allocation went with its device
        assert refused.value.argument == "AllocationList[0]"
        _run(device_b, context_b)
        assert d.resident(keep_b, device=device_b, queue=queue_b) in (HRESULT.S_OK, HRESULT.E_PENDING)
        assert device_b.signal_from_cpu(sync_b, FenceValue(1)) == HRESULT.S_OK
    other.close()
    d.process.close()
    assert d.adapter.footprint().leaks(d.start) == []
