"""``pfnWaitForSynchronizationObjectFromCpuCb`` on a monitored fence: what a user-mode driver calls after
``UpdateGpuVirtualAddress`` before work may use the new tile mappings (the update signals ``FenceValue + 1``)."""

from __future__ import annotations

import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
)

from .desk import Desk


class Tiled:
    def __init__(self) -> None:
        self.d = Desk()
        self.context = self.d.device.create_context()
        self.sync = self.d.device.create_sync_object()
        self.pool = self.d.buffer(256 * KiB, usage=0)
        self.d.resident(self.pool)
        args = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=self.d.queue, Size=1 * MiB)
        assert self.d.device.reserve_gpu_va(args) == HRESULT.S_OK
        self.base = args.VirtualAddress

    def update(self, fence: int) -> None:
        op = D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(
            OperationType=D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
            payload=D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(
                BaseAddress=self.base, SizeInBytes=64 * KiB, hAllocation=self.pool
            ),
        )
        self.d.device.update_gpu_va(
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=self.context,
                hFenceObject=self.sync,
                NumOperations=1,
                Operations=(op,),
                FenceValue=fence,
            )
        )

    def fence(self) -> int:
        return self.d.vidmm.residency.objects.sync_object(self.sync).fence.value


def test_the_wait_returns_once_the_update_signalled_its_value() -> None:
    t = Tiled()
    t.update(0)
    assert t.d.device.wait_for_sync_object(t.sync, FenceValue(1)) == HRESULT.S_OK
    assert t.fence() == 1, "the paging engine ran the update and its SignalMonitoredFence"
    assert t.d.device.wait_for_sync_object(t.sync, FenceValue(0)) == HRESULT.S_OK, (
        "a value already reached returns at once"
    )


def test_a_value_nothing_will_signal_is_refused_until_a_cpu_signal_releases_the_update() -> None:
    t = Tiled()
    t.update(5)  # queued: it waits for 5
    with pytest.raises(InvalidArgument, match=r"FenceValue=0x6: nothing will signal it") as refused:
        t.d.device.wait_for_sync_object(t.sync, FenceValue(6))
    assert refused.value.status == HRESULT.E_INVALIDARG
    t.d.device.signal_from_cpu(t.sync, FenceValue(5))
    assert t.d.device.wait_for_sync_object(t.sync, FenceValue(6)) == HRESULT.S_OK
    assert t.fence() == 6


def test_another_process_s_sync_object_is_not_a_handle_of_this_process() -> None:
    t = Tiled()
    _, other, _ = t.d.other()
    with pytest.raises(InvalidArgument, match=r"hSyncObject=.*is not a synchronization object of this process"):
        other.wait_for_sync_object(HANDLE(t.sync), FenceValue(0))
