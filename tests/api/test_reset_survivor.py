"""A process that survives an adapter reset (``DxgkDdiResetFromTimeout``; its devices are removed) opens a new
device and works again: its GPU VA space's page tables, lost with the memory segments, are rebuilt before any of
its work runs, so it maps, submits and reads back the right bytes."""

from __future__ import annotations

import pytest

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK2, D3DDDICB_UNLOCK2
from wddmsim.ddi.residency import D3DDDI_CREATEPAGINGQUEUE, D3DDDI_MAKERESIDENT
from wddmsim.ddi.status import HRESULT, NTSTATUS
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.gpu import POWER_LOSS_PATTERN
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import PageTablesRestored

from .desk import Desk, KiB, pattern


class Survivor:
    def __init__(self, d: Desk) -> None:
        self.d = d
        self.device = d.process.create_device()
        args = D3DDDI_CREATEPAGINGQUEUE()
        self.device.create_paging_queue(args)
        self.queue = args.hPagingQueue

    def buffer(self, size: int) -> HANDLE:
        h = self.d.buffer(size, device=self.device)
        args = D3DDDI_MAKERESIDENT(hPagingQueue=self.queue, NumAllocations=1, AllocationList=(h,))
        if self.device.make_resident(args) == HRESULT.E_PENDING:
            self.device.wait_for_paging_fence(self.queue, args.PagingFenceValue)
        return h

    def map(self, h: HANDLE) -> int:
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=self.queue,
            hAllocation=h,
            SizeInPages=self.d.a(h).size // 4096,
            Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
        )
        if self.device.map_gpu_va(args) == HRESULT.E_PENDING:
            self.device.wait_for_paging_fence(self.queue, args.PagingFenceValue)
        return args.VirtualAddress

    def copy(self, size: int, seed: int) -> bytes:
        src, dst = self.buffer(size), self.buffer(size)
        lock = D3DDDICB_LOCK2(hAllocation=src)
        self.device.lock2(lock)
        self.d.process.cpu_write(lock.pData, pattern(size, seed).tobytes())
        self.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=src))
        src_va, dst_va = self.map(src), self.map(dst)
        context = self.device.create_context()
        fence = self.device.submit_command(
            context, cmd.encode(cmd.Copy(hw_address(Space.GPU_VA, src_va), hw_address(Space.GPU_VA, dst_va), size))
        )
        assert self.device.wait_for_context(context, fence) == HRESULT.S_OK
        lock = D3DDDICB_LOCK2(hAllocation=dst)
        self.device.lock2(lock)
        got = self.d.process.cpu_read(lock.pData, size)
        self.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=dst))
        return got


class LosesMemory(DelegatingDriver):
    """A GPU whose reset loses every byte of its local memory (what VidMm must assume of any reset)."""

    def reset_from_timeout(self) -> NTSTATUS:
        status = self.inner.reset_from_timeout()
        gpu = self.inner.gpu  # type: ignore[attr-defined]
        gpu.local.fill(0, gpu.config.local_size, POWER_LOSS_PATTERN)
        return status


def test_a_process_that_survives_a_reset_maps_runs_and_reads_back_again() -> None:
    d = Desk(wrap=lambda driver: LosesMemory(driver))
    before = Survivor(d)
    assert before.copy(64 * KiB, 1) == pattern(64 * KiB, 1).tobytes()
    with pytest.raises(DeviceRemoved):
        d.vidmm.reset.trigger("watchdog")
    va = d.vidmm.va
    assert va is not None and all(space.evicted for space in va.spaces.values()), "trees lost with the memory"
    after = Survivor(d)  # the old devices are removed; the process opens a new one
    assert after.copy(64 * KiB, 2) == pattern(64 * KiB, 2).tobytes()
    assert after.copy(192 * KiB, 3) == pattern(192 * KiB, 3).tobytes()
    assert any(e.process == int(d.process.handle) for e in d.adapter.events.of_type(PageTablesRestored))
    d.check()
