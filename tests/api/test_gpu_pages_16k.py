"""Seed rule (a): with a GPU page larger than 4 KB every page table, scratch page and mapped page honours the GPU
page size (``DXGK_GPUMMUCAPS``/``PageTableSizeInBytes`` geometry, decision 0011).  A 48 KiB allocation maps,
runs and reads back through the runtime with 16 KiB GPU pages, dual or single PTEs, CPU_VIRTUAL or GPU_VIRTUAL
page-table updates."""

from __future__ import annotations

import dataclasses

import pytest

from wddmsim.core.units import KiB
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.lock import D3DDDICB_LOCK2, D3DDDICB_UNLOCK2
from wddmsim.ddi.status import HRESULT
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.testing.residency import gpu_view
from wddmsim.vidmm.paging.process import PageTableTag
from wddmsim.vidmm.vaspace.regions import ProcessTable

from .desk import SMALL_GPU, Desk, MiB, pattern

GPU_PAGE = 16 * KiB
MODES = {
    "cpu-virtual": (DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL, 1),
    "gpu-virtual": (DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL, 2),
}


def desk_16k(dual: bool, mode: str) -> Desk:
    update, segment = MODES[mode]
    gpu = dataclasses.replace(SMALL_GPU, gpu_page_shift=14, dual_pte=dual)
    return Desk(gpu=gpu, driver={"page_table_update_mode": update, "page_table_segment": segment})


def map_va(d: Desk, handle: HANDLE) -> int:
    args = D3DDDI_MAPGPUVIRTUALADDRESS(
        hPagingQueue=d.queue,
        hAllocation=handle,
        SizeInPages=d.a(handle).size // 4096,
        Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
    )
    if d.device.map_gpu_va(args) == HRESULT.E_PENDING:
        d.device.wait_for_paging_fence(d.queue, args.PagingFenceValue)
    return args.VirtualAddress


def read(d: Desk, handle: HANDLE, size: int) -> bytes:
    lock = D3DDDICB_LOCK2(hAllocation=handle)
    assert d.device.lock2(lock) == HRESULT.S_OK
    got = d.cpu_read(lock.pData, size).tobytes()
    d.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=handle))
    return got


def write(d: Desk, handle: HANDLE, data: bytes) -> None:
    lock = D3DDDICB_LOCK2(hAllocation=handle)
    assert d.device.lock2(lock) == HRESULT.S_OK
    d.process.cpu_write(lock.pData, data)
    d.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=handle))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dual", [True, False], ids=["dual-pte", "single-pte"])
def test_a_48_kib_allocation_maps_runs_and_reads_back_with_16_kib_gpu_pages(dual: bool, mode: str) -> None:
    d = desk_16k(dual, mode)
    src, dst = d.buffer(48 * KiB), d.buffer(48 * KiB)
    d.resident(src, dst)
    data = pattern(48 * KiB, 7).tobytes()
    write(d, src, data)
    src_va, dst_va = map_va(d, src), map_va(d, dst)
    assert src_va % GPU_PAGE == 0 and dst_va % GPU_PAGE == 0, "a mapped VA starts on a GPU page"
    context = d.device.create_context()
    fence = d.device.submit_command(
        context, cmd.encode(cmd.Copy(hw_address(Space.GPU_VA, src_va), hw_address(Space.GPU_VA, dst_va), 48 * KiB))
    )
    assert d.device.wait_for_context(context, fence) == HRESULT.S_OK
    assert read(d, dst, 48 * KiB) == data
    d.check()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dual", [True, False], ids=["dual-pte", "single-pte"])
def test_every_table_and_mapped_page_sits_on_a_16_kib_boundary(dual: bool, mode: str) -> None:
    d = desk_16k(dual, mode)
    handles = [d.buffer(size) for size in (16 * KiB, 48 * KiB, 80 * KiB)]
    d.resident(*handles)
    vas = [map_va(d, h) for h in handles]
    assert all(va % GPU_PAGE == 0 for va in vas)
    tables = 0
    for segment in d.vidmm.spaces:
        for offset, size, owner in segment.held():
            if isinstance(owner, (PageTableTag, ProcessTable)):
                tables += 1
                assert offset % GPU_PAGE == 0 and size % GPU_PAGE == 0, (segment.id, hex(offset), hex(size), owner)
    assert tables > 4, "the paging process's tables and the process's tables were all seen"
    for h in handles:
        placement = d.a(h).placement
        assert placement is not None and placement.offset % GPU_PAGE == 0


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dual", [True, False], ids=["dual-pte", "single-pte"])
def test_content_survives_eviction_and_page_in_through_the_scratch_area_with_16_kib_pages(
    dual: bool, mode: str
) -> None:
    """Moves through the scratch area (TransferVirtual) span several scratch leaf tables (more than 2 MiB)."""
    d = desk_16k(dual, mode)
    h = d.buffer(3 * MiB + 48 * KiB, usage=0)
    d.resident(h)
    data = pattern(d.a(h).size, 9)
    gpu_view(d.adapter, d.a(h), 0, data.shape[0], write=data)
    d.evict(h)
    assert d.a(h).placement is None and d.backing(h).tobytes() == data.tobytes(), "paged out byte for byte"
    d.resident(h)
    assert d.a(h).placement is not None
    assert d.gpu_bytes(h).tobytes() == data.tobytes(), "paged back in byte for byte"
    d.check()
