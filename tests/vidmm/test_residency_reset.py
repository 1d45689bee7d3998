"""Adapter reset with allocations in every kind of place (decision D6), and the introspection call."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import KiB
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER, Op
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.testing.residency import backing_bytes, check_residency
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import PagingOperation, VidMmEvict

from .world import World, pattern


def test_a_reset_loses_memory_segments_keeps_backing_stores_and_removes_every_device() -> None:
    w = World()
    local = w.buffer(64 * KiB)
    mapped = w.buffer(64 * KiB, usage=AllocationUsage.APERTURE_ONLY)
    parked = w.buffer(64 * KiB)
    for i, a in enumerate((local, mapped, parked)):
        w.make_resident(a)
        w.write(a, pattern(a.size, i))
    w.evict(parked)
    saved = backing_bytes(w.adapter, parked).copy()
    before = len(w.adapter.events.of_type(PagingOperation))
    with pytest.raises(DeviceRemoved, match="adapter reset: watchdog"):
        w.vidmm.reset.trigger("watchdog")
    reported = w.adapter.events.of_type(PagingOperation)[before:]
    assert [(e.operation, e.allocation, e.size) for e in reported] == [
        ("DXGK_OPERATION_TRANSFER", local.handle, 0),
        ("DXGK_OPERATION_UNMAP_APERTURE_SEGMENT", mapped.handle, 64 * KiB),
    ]
    assert all(a.placement is None for a in (local, mapped, parked))
    assert np.array_equal(backing_bytes(w.adapter, parked), saved), "system backing survives byte-exact"
    assert np.array_equal(backing_bytes(w.adapter, mapped), pattern(mapped.size, 1)), "aperture bytes were system"
    causes = {
        e.allocation: (e.cause, e.destination) for e in w.adapter.events.of_type(VidMmEvict) if e.cause == "reset"
    }
    assert causes == {local.handle: ("reset", "lost"), mapped.handle: ("reset", "system")}
    assert w.device.removed is not None
    with pytest.raises(DdiError, match="was removed: adapter reset: watchdog") as error:
        w.make_resident(local)
    assert error.value.status == HRESULT.D3DDDIERR_DEVICEREMOVED
    assert not check_residency(w.adapter)


class FailsTransfersDriver(DelegatingDriver):
    """A driver whose Transfer crashes: a fatal driver error in the middle of MakeResident."""

    armed = False

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if self.armed and args.Operation == Op.DXGK_OPERATION_TRANSFER and args.Transfer.TransferSize:
            raise RuntimeError("driver bug in Transfer")
        return self.inner.build_paging_buffer(args)


def test_a_fatal_driver_error_during_make_resident_takes_the_reset_path_and_leaves_consistent_state() -> None:
    w = World(physical=True)
    w.adapter.vidmm.residency.lifetimes.driver = w.adapter.driver
    failing = FailsTransfersDriver(w.adapter.driver)
    w.vidmm.paging.driver = failing
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    w.write(a, pattern(a.size, 3))
    w.evict(a)
    failing.armed = True
    with pytest.raises(DeviceRemoved, match="the driver raised RuntimeError: driver bug in Transfer"):
        w.make_resident(a)  # admitted (E_PENDING, the count taken); the worker's page-in fails in the wait
    assert a.residency_count == 1 and a.placement is None and a.device.removed
    assert np.array_equal(backing_bytes(w.adapter, a), pattern(a.size, 3))
    assert not check_residency(w.adapter)


def test_where_says_segment_address_kind_publication_and_backing() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    before = w.rm.where(a.handle)
    assert (before.segment_id, before.kind, before.offset, before.published) == (0, "system", None, True)
    from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT

    args = D3DDDI_MAKERESIDENT(hPagingQueue=w.queue.handle, NumAllocations=1, AllocationList=(a.handle,))
    assert w.rm.make_resident(args) == HRESULT.E_PENDING
    queued = w.rm.where(a.handle)  # admitted: listed, the paging worker has not run yet
    assert (queued.kind, queued.residency_count, queued.published) == ("system", 1, False)
    w.rm.servicing.service()  # placed and the page-in built, not yet run by the paging engine
    pending = w.rm.where(a.handle)
    assert pending.kind == "memory" and pending.segment_id == 2 and not pending.published, "not before its fence"
    w.rm.wait(w.queue, args.PagingFenceValue)
    done = w.rm.where(a.handle)
    assert done.published and done.segment_address == w.vidmm.spaces.get(2).base + (done.offset or 0)
    assert done.backing_pfns and done.residency_count == 1
