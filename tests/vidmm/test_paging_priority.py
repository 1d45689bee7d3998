"""Paging-queue priorities (decision 0043): ``MakeResident`` is admitted at the call and serviced by VidMm's paging
worker, highest queue priority first, each queue's requests in order; anything else VidMm does lets the worker
catch up first.  The tests read fence values through the queues' CPU mappings, the order of the worker's
``PagingRequestServiced`` events, and the GPU clock."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.residency import (
    D3DDDI_MAKERESIDENT,
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDIARG_TRIMRESIDENCYSET,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.hw.events import DmaBufferCompleted
from wddmsim.testing.residency import check_residency
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import PagingQueue
from wddmsim.vidmm.events import PagingQueuePacket, PagingRequestServiced
from wddmsim.vidmm.residency.worker import BACKLOG_LIMIT

from .world import World, pattern

BELOW, NORMAL, ABOVE = -1, 0, 1


def _admit(w: World, queue: PagingQueue, *allocations: VidMmAllocation) -> int:
    """``MakeResident`` without waiting; the fence value it was given."""
    args = D3DDDI_MAKERESIDENT(
        hPagingQueue=queue.handle, NumAllocations=len(allocations), AllocationList=tuple(a.handle for a in allocations)
    )
    assert w.rm.make_resident(args) == HRESULT.E_PENDING
    return int(args.PagingFenceValue)


def _serviced(w: World) -> list[tuple[int, int]]:
    """(queue handle, fence value) of every request the worker serviced, in order."""
    return [(e.queue, e.value) for e in w.adapter.events.of_type(PagingRequestServiced)]


def _completed_at(w: World, queue: PagingQueue, value: int) -> int:
    """GPU time at which the paging buffer that signals ``value`` on ``queue`` completed."""
    (submission,) = [
        e.submission
        for e in w.adapter.events.of_type(PagingQueuePacket)
        if (e.queue, e.value)
        == (
            queue.handle,
            value,
        )
    ]
    node = w.vidmm.paging.node
    return next(
        e.time for e in w.adapter.events.of_type(DmaBufferCompleted) if (e.engine, e.fence) == (node, submission)
    )


def _two_requests(first: int, second: int) -> tuple[World, PagingQueue, PagingQueue, int, int]:
    """A large request on a queue of priority ``first``, then a small one on a queue of priority ``second``."""
    w = World()
    early, late = w.new_queue(w.device, first), w.new_queue(w.device, second)
    large = [w.buffer(1 * MiB) for _ in range(4)]
    small = w.buffer(64 * KiB)
    return w, early, late, _admit(w, early, *large), _admit(w, late, small)


def test_an_above_normal_request_admitted_later_completes_before_a_below_normal_one() -> None:
    w, low, high, low_value, high_value = _two_requests(BELOW, ABOVE)
    assert len(w.rm.worker) == 2 and _serviced(w) == [], "admitted only: nothing serviced before anyone waits"
    assert w.rm.fences.fence_value(low) == w.rm.fences.fence_value(high) == 0
    w.rm.wait(high, FenceValue(high_value))
    assert _serviced(w) == [(high.handle, high_value), (low.handle, low_value)], "higher priority first"
    assert high.fence.value == high_value
    w.rm.wait(low, FenceValue(low_value))
    assert low.fence.value == low_value
    assert _completed_at(w, high, high_value) < _completed_at(w, low, low_value), "the paging engine ran it first"
    assert not check_residency(w.adapter)


def test_equal_priorities_are_serviced_in_admission_order() -> None:
    w, first, second, first_value, second_value = _two_requests(NORMAL, NORMAL)
    w.rm.wait(second, FenceValue(second_value))
    assert _serviced(w) == [(first.handle, first_value), (second.handle, second_value)]
    w.rm.wait(first, FenceValue(first_value))
    assert _completed_at(w, first, first_value) < _completed_at(w, second, second_value), "in order of admission"


def test_priority_lets_the_urgent_request_finish_earlier_on_the_gpu_clock() -> None:
    finished = {}
    for first, second in ((NORMAL, NORMAL), (BELOW, ABOVE)):
        w, _, late, _, value = _two_requests(first, second)
        w.rm.wait(late, FenceValue(value))
        finished[first, second] = _completed_at(w, late, value)
    assert finished[BELOW, ABOVE] < finished[NORMAL, NORMAL]


def test_each_queue_signals_its_values_in_order_among_other_queues_requests() -> None:
    w = World()
    low, normal, high = (w.new_queue(w.device, p) for p in (BELOW, NORMAL, ABOVE))
    order = [low, high, normal, low, high, normal, low]
    admitted = [(q.handle, _admit(w, q, w.buffer(64 * KiB))) for q in order]
    w.rm.wait(low, FenceValue(3))
    rank = {high.handle: 0, normal.handle: 1, low.handle: 2}
    expected = sorted(admitted, key=lambda item: (rank[item[0]], admitted.index(item)))
    assert _serviced(w) == expected
    for q in (low, normal, high):
        assert [v for h, v in _serviced(w) if h == q.handle] == list(range(1, q.issued + 1))
        assert w.rm.fences.fence_value(q) == q.issued


def test_a_request_whose_allocations_are_in_place_completes_at_once() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    args = D3DDDI_MAKERESIDENT(hPagingQueue=w.queue.handle, NumAllocations=1, AllocationList=(a.handle,))
    assert w.rm.make_resident(args) == HRESULT.S_OK and args.PagingFenceValue == 0
    assert len(w.rm.worker) == 0 and a.residency_count == 2


def test_content_paged_in_by_a_deferred_request_is_the_content_paged_out() -> None:
    w = World()
    low, high = w.new_queue(w.device, BELOW), w.new_queue(w.device, ABOVE)
    kept = [w.buffer(512 * KiB) for _ in range(4)]
    for i, a in enumerate(kept):
        w.make_resident(a)
        w.write(a, pattern(a.size, i))
        w.evict(a)
    values = [(_admit(w, low if i % 2 else high, a), a) for i, a in enumerate(kept)]
    assert all(a.placement is None for a in kept)
    w.rm.wait(low, FenceValue(max(v for v, a in values[1::2])))
    for i, a in enumerate(kept):
        assert np.array_equal(w.read(a), pattern(a.size, i))


def _trim(w: World, a: VidMmAllocation) -> None:
    flags = D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True)
    w.rm.trim_residency_set(a.device, D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=flags, NumBytesToTrim=1))


CATCH_UP: dict[str, Callable[[World, VidMmAllocation], object]] = {
    "evict another": lambda w, a: w.evict(a),
    "offer another": lambda w, a: w.offer(a),
    "trim": _trim,
    "destroy another": lambda w, a: w.rm.destroy_allocation(a.handle),
    "ensure resident": lambda w, a: w.rm.servicing.ensure_resident(a.device),
    "settle": lambda w, a: w.rm.settle(),
    "pin": lambda w, a: w.rm.lifetimes.pin(a.handle),
    "lock eviction": lambda w, a: w.rm.servicing.evict_for_cpu(a, discard=False),
}


@pytest.mark.parametrize("name", sorted(CATCH_UP))
def test_anything_else_vidmm_does_lets_the_worker_catch_up_first(name: str) -> None:
    w = World()
    other = w.buffer(64 * KiB)
    if name in ("evict another", "trim"):
        w.make_resident(other)
    queued = w.buffer(256 * KiB)
    value = _admit(w, w.queue, queued)
    CATCH_UP[name](w, other)
    assert len(w.rm.worker) == 0 and _serviced(w)[-1] == (w.queue.handle, value)
    assert queued.residency_count == 1
    assert not check_residency(w.adapter)


def test_the_worker_services_the_backlog_once_it_reaches_its_limit() -> None:
    w = World()
    allocations = [w.buffer(4 * KiB) for _ in range(BACKLOG_LIMIT)]
    for a in allocations[:-1]:
        _admit(w, w.queue, a)
    assert len(w.rm.worker) == BACKLOG_LIMIT - 1 and _serviced(w) == []
    _admit(w, w.queue, allocations[-1])
    assert len(w.rm.worker) == 0 and len(_serviced(w)) == BACKLOG_LIMIT
    assert all(a.placement is not None for a in allocations)


def test_without_deferral_each_request_is_serviced_in_its_call_and_priorities_change_nothing() -> None:
    w = World(deferred=False)
    low, high = w.new_queue(w.device, BELOW), w.new_queue(w.device, ABOVE)
    big, small = w.buffer(1 * MiB), w.buffer(64 * KiB)
    low_value, high_value = _admit(w, low, big), _admit(w, high, small)
    assert big.placement is not None and small.placement is not None and len(w.rm.worker) == 0
    w.rm.wait(high, FenceValue(high_value))
    assert w.rm.fences.fence_value(low) == low_value, "serviced in call order: the earlier request ran first"
    assert _serviced(w) == []


def test_an_adapter_reset_forgets_the_backlog_and_retires_every_value() -> None:
    w = World()
    low = w.new_queue(w.device, BELOW)
    a = w.buffer(64 * KiB)
    value = _admit(w, low, a)
    w.rm.outages.on_adapter_reset("test")
    assert len(w.rm.worker) == 0 and w.rm.fences.fence_value(low) == value
    assert a.placement is None and w.device.removed
