"""A ``MakeResident`` admitted while it fits, whose room is gone by the time the paging worker services it
(decision 0043): the request's fence value is still signalled (no wait hangs on it), the allocation stays listed and
not resident, and it is paged in before the device's work runs (``ResidencyManager._serve``)."""

from __future__ import annotations

import numpy as np

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import MiB
from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT
from wddmsim.ddi.status import HRESULT
from wddmsim.vidmm.events import PagingRequestServiced

from .world import World, pattern

LOCAL = 2


def test_a_request_that_cannot_be_placed_at_service_time_still_signals_and_is_paged_in_later() -> None:
    w = World()
    other = w.rm.create_device(w.rm.create_process())
    other_queue = w.new_queue(other)
    hog = w.buffer(2 * MiB, device=other)
    w.make_resident(hog, queue=other_queue)
    assert hog.placement is not None and hog.placement.segment_id == LOCAL
    w.write(hog, pattern(hog.size, 4))
    big = w.buffer(5 * MiB)  # only the local segment can hold it, and only with the hog gone
    args = D3DDDI_MAKERESIDENT(hPagingQueue=w.queue.handle, NumAllocations=1, AllocationList=(big.handle,))
    result = w.rm.make_resident(args)  # admitted, not yet serviced (the caller does not wait)
    assert result == HRESULT.E_PENDING, "admitted: evicting the hog makes room"
    hog.pin_count += 1  # the kernel pins the hog (scan-out) before the worker runs: the room is gone
    value = w.queue.issued
    w.rm.wait(w.queue, FenceValue(value))  # the worker serves the request; the wait ends
    assert value == args.PagingFenceValue and w.rm.fences.fence_value(w.queue) >= value
    (served,) = [e for e in w.adapter.events.of_type(PagingRequestServiced) if e.queue == w.queue.handle]
    assert (served.placed, served.unplaced) == (0, 1)
    assert big.placement is None and big.residency_count == 1, "still listed, not resident"
    assert hog.placement is not None and np.array_equal(w.read(hog), pattern(hog.size, 4)), "the pinned hog stayed"
    w.check()
    hog.pin_count -= 1
    w.rm.servicing.ensure_resident(w.device)  # what runs before the device's work: the listed allocation comes back
    back = w.rm.objects.allocation(big.handle).placement
    assert back is not None and back.segment_id == LOCAL
    w.check()
