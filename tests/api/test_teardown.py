"""The end of contexts, synchronisation objects, devices and processes (decision 0046).

A process killed after any step of a busy script -- allocations in every segment, a lock held, a context with
work in flight, GPU VAs mapped and reserved, a tile mapping waiting for its fence, a ``MakeResident`` admitted and
not serviced, an offer -- leaves nothing behind (reliability-plan F13, I19: the adapter's footprint is back to
what it was before any process opened it), and another process's bytes are untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.lock import D3DDDICB_LOCK2, D3DDDICB_UNLOCK2
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_MAKERESIDENT,
    D3DDDI_OFFER_PRIORITY,
    D3DKMT_OFFER_FLAGS,
    D3DKMT_OFFERALLOCATIONS,
)
from wddmsim.ddi.status import HRESULT, NTSTATUS, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.kmd.config import DriverModel
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import ObjectDestroyed, PagingRequestServiced, VidMmPageIn

from .desk import APERTURE_ONLY, Desk, KiB, MiB, pattern


class Bystander:
    """Another process whose bytes must survive the victim's end."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.process, self.device, self.queue = desk.other()
        self.handles = [desk.buffer(256 * KiB, device=self.device), desk.buffer(1 * MiB, device=self.device)]
        self.expected = [pattern(256 * KiB, 1), pattern(1 * MiB, 2)]
        for h, data in zip(self.handles, self.expected, strict=True):
            self._write(h, data)

    def _write(self, h: HANDLE, data: np.ndarray) -> None:
        lock = self._lock(h)
        self.process.cpu_write(lock.pData, data.tobytes())
        self._unlock(h)

    def _lock(self, h: HANDLE) -> D3DDDICB_LOCK2:
        lock = D3DDDICB_LOCK2(hAllocation=h)
        if self.desk.wddm1:
            return self.desk.lock(h, device=self.device)  # type: ignore[return-value]
        assert self.device.lock2(lock) == HRESULT.S_OK
        return lock

    def _unlock(self, h: HANDLE) -> None:
        if self.desk.wddm1:
            self.desk.unlock(h, device=self.device)
        else:
            self.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h))

    def verify(self) -> None:
        """Resident again (the victim's pressure may have evicted them), then read through a lock."""
        assert self.desk.resident(*self.handles, device=self.device, queue=self.queue) != HRESULT.E_OUTOFMEMORY
        for h, data in zip(self.handles, self.expected, strict=True):
            lock = self._lock(h)
            got = np.frombuffer(self.process.cpu_read(lock.pData, data.shape[0]), dtype=np.uint8)
            self._unlock(h)
            assert np.array_equal(got, data), f"the bystander's allocation {int(h):#x} changed"


class Victim:
    """A busy process, driven one step at a time."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.handles: list[HANDLE] = []
        self.context = HANDLE(0)
        self.sync = HANDLE(0)
        self.vas: list[int] = []

    @property
    def steps(self) -> list[Callable[[], None]]:
        steps = [self.allocate, self.resident, self.lock, self.create_context, self.queue_paging, self.offer]
        if not self.desk.wddm1:
            steps[4:4] = [self.map, self.submit, self.tile_waiting]
        return steps

    def allocate(self) -> None:
        d = self.desk
        self.handles = [d.buffer(512 * KiB), d.buffer(2 * MiB, usage=0), d.buffer(256 * KiB, usage=APERTURE_ONLY)]
        self.handles.append(d.buffer(1 * MiB, usage=0))  # offered later

    def resident(self) -> None:
        assert self.desk.resident(*self.handles[:3]) != HRESULT.E_OUTOFMEMORY

    def lock(self) -> None:
        args = self.desk.lock(self.handles[0])  # held until the end
        self.desk.cpu_write(args.pData, pattern(512 * KiB, 9))

    def create_context(self) -> None:
        self.context = self.desk.device.create_context()

    def map(self) -> None:
        d = self.desk
        for h in self.handles[:2]:
            args = D3DDDI_MAPGPUVIRTUALADDRESS(
                hPagingQueue=d.queue,
                hAllocation=h,
                SizeInPages=d.a(h).size // 4096,
                Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
            )
            d.device.map_gpu_va(args)  # not waited for: the kill may come first
            self.vas.append(args.VirtualAddress)

    def submit(self) -> None:
        d = self.desk
        d.settle()
        copy = cmd.Copy(hw_address(Space.GPU_VA, self.vas[0]), hw_address(Space.GPU_VA, self.vas[1]), 256 * KiB)
        d.device.submit_command(self.context, cmd.encode(copy))  # in flight

    def tile_waiting(self) -> None:
        d = self.desk
        self.sync = d.device.create_sync_object()
        reserve = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=d.queue, Size=1 * MiB)
        assert d.device.reserve_gpu_va(reserve) == HRESULT.S_OK
        op = D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(
            OperationType=D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
            payload=D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(
                BaseAddress=reserve.VirtualAddress, SizeInBytes=64 * KiB, hAllocation=self.handles[1]
            ),
        )
        d.device.update_gpu_va(  # waits for a value no one will signal
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=self.context, hFenceObject=self.sync, NumOperations=1, Operations=(op,), FenceValue=7
            )
        )

    def queue_paging(self) -> None:
        """A MakeResident with paging to do, admitted and never waited for."""
        d = self.desk
        d.evict(self.handles[1])
        args = D3DDDI_MAKERESIDENT(hPagingQueue=d.queue, NumAllocations=2, AllocationList=tuple(self.handles[1:3]))
        d.device.make_resident(args)

    def offer(self) -> None:
        d = self.desk
        d.device.offer(
            D3DKMT_OFFERALLOCATIONS(
                hDevice=d.device.handle,
                HandleList=(self.handles[3],),
                NumAllocations=1,
                Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
                Flags=D3DKMT_OFFER_FLAGS(),
            )
        )


def _leaks(desk: Desk) -> list[str]:
    desk.settle()
    return desk.adapter.footprint().leaks(desk.start)


CPU_VIRTUAL = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
CONFIGURATIONS = {
    "wddm2": {},
    "wddm1": {"model": DriverModel.WDDM1},
    "paging-buffers-in-aperture": {"paging_buffers_in_aperture": True},
    "explicit-invalidation-idle-updates": {
        "explicit_page_table_invalidation": True,
        "page_table_update_requires_idle": True,
    },
    "cpu-virtual-tables": {"page_table_update_mode": CPU_VIRTUAL, "page_table_segment": 1},
}


@pytest.mark.any_driver
@pytest.mark.parametrize("options", CONFIGURATIONS.values(), ids=CONFIGURATIONS.keys())
def test_a_process_killed_after_any_step_leaves_nothing_and_spares_the_others(options: dict[str, Any]) -> None:
    options = dict(options)
    model = options.pop("model", DriverModel.WDDM2)
    steps = len(Victim(Desk(model=model)).steps)
    for killed_after in range(steps + 1):
        desk = Desk(model=model, driver=options)
        bystander = Bystander(desk)
        victim = Victim(desk)
        for step in victim.steps[:killed_after]:
            step()
        desk.process.close()
        bystander.verify()
        bystander.process.close()
        leaks = _leaks(desk)
        assert not leaks, f"killed after {killed_after} step(s):\n" + "\n".join(leaks)


@pytest.mark.any_driver
def test_queued_paging_of_a_killed_process_is_cancelled_not_serviced() -> None:
    desk = Desk()
    victim = Victim(desk)
    victim.allocate()
    victim.resident()
    marker = len(desk.adapter.events.of_type(VidMmPageIn))
    serviced = len(desk.adapter.events.of_type(PagingRequestServiced))
    victim.queue_paging()
    assert len(desk.vidmm.residency.worker) == 1
    desk.process.close()
    assert len(desk.vidmm.residency.worker) == 0
    assert not desk.adapter.events.of_type(VidMmPageIn)[marker:], "nothing was paged in for a dead process"
    assert not desk.adapter.events.of_type(PagingRequestServiced)[serviced:]
    assert not _leaks(desk)


def test_teardown_runs_in_order_and_says_so() -> None:
    desk = Desk()
    victim = Victim(desk)
    for step in victim.steps:
        step()
    device, process = desk.device.handle, desk.process.handle
    desk.process.close()
    kinds = [(e.kind, e.owner) for e in desk.adapter.events.of_type(ObjectDestroyed)]
    assert kinds == [
        ("context", device),
        ("sync_object", device),
        ("device", process),
        ("process", 0),
    ]
    assert not _leaks(desk)


def test_a_destroyed_context_cancels_its_waiting_tile_mappings_and_its_companion() -> None:
    desk = Desk()
    victim = Victim(desk)
    victim.allocate()
    victim.resident()
    victim.create_context()
    victim.tile_waiting()
    pool = desk.a(victim.handles[1])
    held = pool.residency_count
    contexts = len(reference_driver(desk.adapter.driver).contexts)
    sync = desk.vidmm.residency.objects.sync_object(victim.sync)
    assert len(sync.waiting) == 1
    assert desk.device.destroy_context(victim.context) == HRESULT.S_OK
    assert not sync.waiting and pool.residency_count == held - 1, "the queued update's hold on its pool went"
    companions = desk.vidmm.va.updates.companions if desk.vidmm.va is not None else {}
    assert victim.context not in companions
    assert len(reference_driver(desk.adapter.driver).contexts) == contexts - 2, "the context and its paging companion"
    desk.device.signal_from_cpu(victim.sync, FenceValue(7))  # nothing runs for the destroyed context
    assert sync.fence.value == 7


@pytest.mark.any_driver
def test_a_destroyed_fence_s_slot_serves_the_next_one_from_zero() -> None:
    desk = Desk()
    first = desk.device.create_sync_object()
    desk.device.signal_from_cpu(first, FenceValue(41))
    offset = desk.vidmm.residency.objects.sync_object(first).fence.offset
    used = desk.vidmm.fences.in_use
    assert desk.device.destroy_sync_object(first) == HRESULT.S_OK
    assert desk.vidmm.fences.in_use == used - 1
    args = D3DDDI_CREATEPAGINGQUEUE()
    desk.device.create_paging_queue(args)
    queue = desk.vidmm.residency.objects.queue(args.hPagingQueue)
    assert queue.fence.offset == offset and queue.fence.value == 0
    assert desk.device.paging_fence_value(args.hPagingQueue) == 0


@pytest.mark.any_driver
def test_destroying_one_device_leaves_the_process_and_its_other_device() -> None:
    desk = Desk()
    keep = desk.buffer(64 * KiB)
    desk.resident(keep)
    second = desk.process.create_device()
    args = D3DDDI_CREATEPAGINGQUEUE()
    second.create_paging_queue(args)
    gone = desk.buffer(256 * KiB, device=second)
    desk.resident(gone, device=second, queue=args.hPagingQueue)
    assert desk.process.destroy_device(second) == HRESULT.S_OK
    rm = desk.vidmm.residency
    assert gone not in rm.allocations and args.hPagingQueue not in rm.queues
    assert keep in rm.allocations and desk.a(keep).placement is not None
    assert desk.process.devices == [desk.device]
    desk.process.close()
    assert not _leaks(desk)


@pytest.mark.any_driver
def test_bad_teardown_requests_are_refused_and_change_nothing() -> None:
    desk = Desk()
    _, other, _ = desk.other()
    before = desk.adapter.footprint()
    with pytest.raises(InvalidArgument, match=r"hDevice=.*is not a device of this process"):
        desk.process.destroy_device(other)
    with pytest.raises(InvalidArgument, match=r"hContext=0x1234: is not a context of this device") as error:
        desk.device.destroy_context(HANDLE(0x1234))
    assert error.value.status == HRESULT.E_INVALIDARG
    with pytest.raises(InvalidArgument, match=r"hSyncObject=0x10: is not a synchronization object of this process"):
        desk.device.destroy_sync_object(HANDLE(0x10))
    system = desk.vidmm.residency.system_device
    with pytest.raises(InvalidArgument, match=r"hDevice=.*the system device lives as long as VidMm") as refused:
        desk.vidmm.destroy_device(system.handle)
    assert refused.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    with pytest.raises(InvalidArgument, match=r"hProcess=.*is not a live user process"):
        desk.vidmm.destroy_process(system.process.handle)
    assert desk.adapter.footprint() == before
    desk.process.close()
    with pytest.raises(InvalidArgument, match=r"hProcess=.*the process has exited"):
        desk.process.close()
    with pytest.raises(InvalidArgument, match=r"hProcess=.*the process has exited"):
        desk.process.create_device()


@pytest.mark.parametrize(
    ("skipped", "leaked"),
    [
        ("destroy_space", "page_tables"),
        ("close_queue", "paging_queues"),
        ("abandon", "system_bytes"),
    ],
)
def test_the_footprint_catches_a_teardown_step_left_out(
    monkeypatch: pytest.MonkeyPatch, skipped: str, leaked: str
) -> None:
    """Negative controls: with one reclaiming step disabled, the footprint names what stayed behind."""
    desk = Desk()
    victim = Victim(desk)
    for step in victim.steps:
        step()
    owner = {
        "destroy_space": desk.vidmm.va,
        "close_queue": desk.vidmm.residency.fences,
        "abandon": desk.vidmm.locks,
    }[skipped]
    monkeypatch.setattr(owner, skipped, lambda *args: None)
    if skipped == "abandon":  # a lock left in place stops the teardown half-way: that leaks too
        with pytest.raises(InvalidArgument, match="is locked: unlock it before destroying it"):
            desk.process.close()
    else:
        desk.process.close()
    assert any(line.startswith(leaked) for line in _leaks(desk)), _leaks(desk)


@pytest.mark.any_driver
@pytest.mark.parametrize("model", [DriverModel.WDDM2, DriverModel.WDDM1], ids=["wddm2", "wddm1"])
def test_processes_whose_devices_an_adapter_reset_removed_still_leave_nothing(model: DriverModel) -> None:
    desk = Desk(model=model)
    bystander = Bystander(desk)
    victim = Victim(desk)
    for step in victim.steps:
        step()
    with pytest.raises(DeviceRemoved, match="adapter reset: watchdog"):
        desk.vidmm.reset.trigger("watchdog")
    desk.process.close()
    bystander.process.close()
    assert not _leaks(desk)
