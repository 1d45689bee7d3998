"""Out of memory at every allocation site of the residency manager: the call fails whole, with the documented
status, and nothing leaks (system pages, segment ranges, driver handles, VidMm records)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from wddmsim.core.units import KiB
from wddmsim.ddi.allocation import DXGKARG_CREATEALLOCATION
from wddmsim.ddi.residency import (
    D3DDDI_OFFER_PRIORITY,
    D3DKMT_OFFER_FLAGS,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.drivers.reference import reference_driver
from wddmsim.testing.fakes import DelegatingDriver

from .world import World


def snapshot(w: World) -> tuple[Any, ...]:
    return (
        w.adapter.mm.free_bytes,
        sorted(w.rm.allocations),
        len(reference_driver(w.adapter.driver).state.allocations),
        [(s.id, list(s.ranges.allocated())) for s in w.vidmm.spaces],
        {h: (a.residency_count, a.placement, a.offered, a.backing is None) for h, a in w.rm.allocations.items()},
    )


def fail_nth_page_allocation(w: World, n: int) -> Callable[[], int]:
    """Make the ``n``-th later call of ``allocate_pages_for_mdl`` raise ``MemoryError``; returns a call counter."""
    mm = w.adapter.mm
    real = mm.allocate_pages_for_mdl
    calls = [0]

    def allocate(byte_count: int, *, chunk: int = 4096) -> Any:
        calls[0] += 1
        if calls[0] == n:
            raise MemoryError("injected: no free frames")
        return real(byte_count, chunk=chunk)

    mm.allocate_pages_for_mdl = allocate  # type: ignore[method-assign]
    return lambda: calls[0]


def test_create_allocation_without_backing_pages_fails_whole_and_releases_the_driver_handle() -> None:
    w = World()
    w.buffer(64 * KiB)
    before = snapshot(w)
    fail_nth_page_allocation(w, 1)
    with pytest.raises(DdiError, match="no system memory for a 0x10000-byte backing store") as error:
        w.buffer(64 * KiB)
    assert error.value.status == NTSTATUS.STATUS_NO_MEMORY
    assert snapshot(w) == before


def test_a_driver_that_fails_create_allocation_leaves_no_record() -> None:
    class OutOfMemoryDriver(DelegatingDriver):
        def create_allocation(self, args: DXGKARG_CREATEALLOCATION) -> NTSTATUS:
            return NTSTATUS.STATUS_NO_MEMORY

    w = World()
    rm = w.rm
    rm.lifetimes.driver = OutOfMemoryDriver(w.adapter.driver)
    before = snapshot(w)
    with pytest.raises(DdiError, match="DxgkDdiCreateAllocation failed") as error:
        w.buffer(64 * KiB)
    assert error.value.status == NTSTATUS.STATUS_NO_MEMORY
    assert snapshot(w) == before


def test_reclaim_that_cannot_recommit_fails_whole_for_every_allocation_of_the_call() -> None:
    w = World()
    allocations = [w.buffer(64 * KiB) for _ in range(3)]
    w.rm.offer(
        D3DKMT_OFFERALLOCATIONS(
            hDevice=w.device.handle,
            HandleList=tuple(a.handle for a in allocations),
            NumAllocations=3,
            Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
            Flags=D3DKMT_OFFER_FLAGS(OfferImmediately=True, AllowDecommit=True),
        )
    )
    w.settle()
    for n in (1, 2, 3):
        before = snapshot(w)
        fail_nth_page_allocation(w, n)
        args = D3DKMT_RECLAIMALLOCATIONS2(
            hPagingQueue=w.queue.handle, NumAllocations=3, HandleList=tuple(a.handle for a in allocations)
        )
        with pytest.raises(DdiError, match="no system memory to recommit") as error:
            w.rm.reclaim(args)
        assert error.value.status == NTSTATUS.STATUS_NO_MEMORY
        assert snapshot(w) == before, f"failure at the {n}th recommit leaked"
        w.adapter.mm.allocate_pages_for_mdl = type(w.adapter.mm).allocate_pages_for_mdl.__get__(w.adapter.mm)  # type: ignore[method-assign]


def test_running_out_of_fence_slots_fails_create_paging_queue_cleanly() -> None:
    w = World()
    w.vidmm.fences.next = 10**9
    queues = dict(w.rm.queues)
    with pytest.raises(DdiError, match="monitored fences") as error:
        w.new_queue(w.device)
    assert error.value.status == NTSTATUS.STATUS_NO_MEMORY
    assert w.rm.queues == queues and w.device.queues == [w.queue]


def test_segments_too_small_for_a_request_refuse_it_atomically() -> None:
    from wddmsim.ddi.status import HRESULT

    w = World()
    kept = w.buffer(64 * KiB)
    w.make_resident(kept)
    huge = [w.buffer(2048 * KiB) for _ in range(6)]
    before = snapshot(w)
    result, args = w.make_resident(*huge, CantTrimFurther=True)
    assert result == HRESULT.E_OUTOFMEMORY and args.NumBytesToTrim > 0
    after = snapshot(w)
    assert after[4][kept.handle] == before[4][kept.handle] or after[4][kept.handle][0] == 1
    assert all(after[4][h.handle][0] == 0 for h in huge), "no count changed"
