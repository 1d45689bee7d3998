"""CPU views never race VidMm's queued paging (issue 19 defect 1, decision 0058).

Real applications evict and lock without waiting for the paging fence, and lock after a ``MakeResident`` that
returned ``E_PENDING`` without waiting for it.  Whatever is queued, a lock (``pfnLockCb`` on WDDM 1.x,
``pfnLockCb`` and ``pfnLock2Cb`` on WDDM 2.x) shows exactly the bytes last written, and nothing written through
it is overwritten by a move queued before or during it.  On the main of 2026-11-22 every test here failed but
the ``pfnLockCb``-after-``MakeResident`` ones (that lock already waited for an unpublished placement): the lock
mapped the backing store before the queued page-out copy ran, ``pfnLock2Cb`` did not wait at all, and a reclaim
zeroed a backing store a queued copy then overwrote.
"""

from __future__ import annotations

import pytest

from tests.api.desk import CPU, Desk, KiB, pattern
from wddmsim.core.pointer import ByteArray
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCK2, D3DDDICB_LOCKFLAGS, D3DDDICB_UNLOCK2
from wddmsim.ddi.residency import (
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDI_OFFER_PRIORITY,
    D3DDDI_RECLAIM_RESULT,
    D3DDDICB_EVICT,
    D3DKMT_OFFER_FLAGS,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.kmd.config import DriverModel

SIZE = 192 * KiB
MODELS = [DriverModel.WDDM1, DriverModel.WDDM2]
PAGING_BUFFERS = [None, 0x1000]
"""The driver's own paging-buffer size, and one page: a page-out copy then spans several buffers (multipass)."""


def _desk(model: DriverModel, paging_buffer: int | None) -> Desk:
    desk = Desk(model=model)
    if paging_buffer is not None:
        desk.vidmm.resize_paging_buffers(paging_buffer)
    return desk


def _evict_without_waiting(desk: Desk, h: HANDLE) -> None:
    desk.device.evict(
        D3DDDICB_EVICT(NumAllocations=1, AllocationList=(h,), Flags=D3DDDI_EVICT_FLAGS()),
    )


def _make_resident_without_waiting(desk: Desk, h: HANDLE) -> HRESULT:
    return desk.device.make_resident(
        D3DDDI_MAKERESIDENT(hPagingQueue=desk.queue, NumAllocations=1, AllocationList=(h,)),
    )


def _written(desk: Desk, h: HANDLE, seed: int) -> ByteArray:
    """Resident, then written through a lock: the bytes the allocation holds now."""
    desk.resident(h)
    data = pattern(SIZE, seed)
    args = desk.lock(h)
    desk.cpu_write(args.pData, data)
    desk.unlock(h)
    return data


def _read_locked(desk: Desk, h: HANDLE, *, lock2: bool) -> ByteArray:
    if lock2:
        args2 = D3DDDICB_LOCK2(hAllocation=h)
        assert desk.device.lock2(args2) == HRESULT.S_OK
        out = desk.cpu_read(args2.pData, SIZE).copy()
        desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h))
        return out
    args = desk.lock(h)
    out = desk.cpu_read(args.pData, SIZE).copy()
    desk.unlock(h)
    return out


def _write_locked(desk: Desk, h: HANDLE, data: ByteArray, *, lock2: bool) -> None:
    if lock2:
        args2 = D3DDDICB_LOCK2(hAllocation=h)
        assert desk.device.lock2(args2) == HRESULT.S_OK
        desk.cpu_write(args2.pData, data)
        desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h))
        return
    args = desk.lock(h)
    desk.cpu_write(args.pData, data)
    desk.unlock(h)


def _locks(model: DriverModel) -> list[bool]:
    return [False, True] if model == DriverModel.WDDM2 else [False]


CASES = [
    pytest.param(
        model, lock2, paging_buffer, id=f"{model.name}-{'lock2' if lock2 else 'lock'}-{paging_buffer or 'own'}"
    )
    for model in MODELS
    for lock2 in _locks(model)
    for paging_buffer in PAGING_BUFFERS
]


@pytest.mark.any_driver
@pytest.mark.parametrize(("model", "lock2", "paging_buffer"), CASES)
def test_a_lock_after_an_evict_nobody_waited_for_shows_the_bytes_last_written(
    model: DriverModel, lock2: bool, paging_buffer: int | None
) -> None:
    desk = _desk(model, paging_buffer)
    h = desk.buffer(SIZE, usage=CPU)
    data = _written(desk, h, 1)
    _evict_without_waiting(desk, h)
    assert desk.a(h).paging is not None, "the page-out is queued, not run"
    assert (_read_locked(desk, h, lock2=lock2) == data).all()
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize(("model", "lock2", "paging_buffer"), CASES)
def test_a_write_through_a_lock_after_an_evict_is_not_overwritten_by_the_queued_copy(
    model: DriverModel, lock2: bool, paging_buffer: int | None
) -> None:
    desk = _desk(model, paging_buffer)
    h = desk.buffer(SIZE, usage=CPU)
    _written(desk, h, 2)
    _evict_without_waiting(desk, h)
    fresh = pattern(SIZE, 3)
    _write_locked(desk, h, fresh, lock2=lock2)
    desk.settle()
    assert (desk.backing(h) == fresh).all(), "the backing store holds what the CPU wrote last"
    desk.resident(h)
    assert (desk.gpu_bytes(h) == fresh).all(), "and so does the allocation once it is back in a segment"
    assert (_read_locked(desk, h, lock2=lock2) == fresh).all()
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize(("model", "lock2", "paging_buffer"), CASES)
def test_a_write_through_a_lock_after_an_unwaited_make_resident_survives_the_page_in(
    model: DriverModel, lock2: bool, paging_buffer: int | None
) -> None:
    desk = _desk(model, paging_buffer)
    h = desk.buffer(SIZE, usage=CPU)
    _written(desk, h, 4)
    desk.evict(h)  # out, and waited for
    assert _make_resident_without_waiting(desk, h) == HRESULT.E_PENDING
    fresh = pattern(SIZE, 5)
    _write_locked(desk, h, fresh, lock2=lock2)
    desk.settle()
    assert (desk.gpu_bytes(h) == fresh).all(), "the queued page-in ran before the CPU wrote, not after"
    assert (_read_locked(desk, h, lock2=lock2) == fresh).all()
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_a_first_write_after_an_unwaited_make_resident_is_not_zero_filled(model: DriverModel) -> None:
    """Never written: the page-in is a Fill with 0, queued; the CPU's bytes must land after it."""
    desk = Desk(model=model)
    h = desk.buffer(SIZE, usage=CPU)
    assert _make_resident_without_waiting(desk, h) == HRESULT.E_PENDING
    fresh = pattern(SIZE, 6)
    _write_locked(desk, h, fresh, lock2=False)
    desk.settle()
    assert (desk.gpu_bytes(h) == fresh).all()
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("ignore_sync", [False, True])
def test_donotwait_says_wasstilldrawing_while_a_page_out_is_queued_and_changes_nothing(
    model: DriverModel, ignore_sync: bool
) -> None:
    desk = Desk(model=model)
    h = desk.buffer(SIZE, usage=CPU)
    data = _written(desk, h, 7)
    _evict_without_waiting(desk, h)
    before = desk.adapter.footprint()
    flags = D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True, IgnoreSync=ignore_sync)
    args = D3DDDICB_LOCK(hAllocation=h, Flags=flags)
    assert desk.device.lock(args) == HRESULT.D3DERR_WASSTILLDRAWING
    assert args.pData == 0
    assert desk.a(h).lock is None
    assert desk.adapter.footprint() == before
    assert (_read_locked(desk, h, lock2=False) == data).all(), "a waiting lock then shows the bytes"
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_a_reclaim_after_an_unwaited_evict_zeroes_after_the_queued_copy_not_before(model: DriverModel) -> None:
    desk = Desk(model=model)
    h = desk.buffer(SIZE, usage=CPU)
    _written(desk, h, 8)
    _evict_without_waiting(desk, h)  # the copy to the backing store is queued
    desk.device.offer(
        D3DKMT_OFFERALLOCATIONS(
            hDevice=desk.device.handle,
            HandleList=(h,),
            NumAllocations=1,
            Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
            Flags=D3DKMT_OFFER_FLAGS(OfferImmediately=True),
        )
    )
    reclaim = D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=desk.queue, NumAllocations=1, HandleList=(h,))
    desk.device.reclaim(reclaim)
    assert reclaim.pResults == [D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_DISCARDED]
    desk.settle()
    assert not desk.backing(h).any(), "discarded content reads zero: the queued copy did not land over the zeros"
    assert not _read_locked(desk, h, lock2=False).any()
    desk.check()
