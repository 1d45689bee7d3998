"""Context allocations end to end: DxgkDdiCreateContext -> DxgkCbCreateContextAllocation -> InitContextResource;
DxgkCbUpdateContextAllocation -> UpdateContextAllocation through the paging process; eviction keeps the image;
DxgkDdiDestroyContext frees it."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.pointer import ByteArray
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.reference import reference_driver
from wddmsim.kmd.config import DriverModel
from wddmsim.kmd.paging.context import CONTEXT_HEADER_SIZE, CONTEXT_MAGIC
from wddmsim.vidmm.events import PagingOperation

from .world import World, pattern


def image(w: World, handle: HANDLE) -> ByteArray:
    a = w.rm.objects.allocation(handle)
    return w.read(a)


def context_allocation(w: World, context: int) -> HANDLE:
    return reference_driver(w.adapter.driver).context_allocations[context][1]


def test_a_context_gets_an_allocation_initialised_by_init_context_resource() -> None:
    w = World()
    context = w.vidmm.create_context(w.device)
    handle = context_allocation(w, context)
    a = w.rm.objects.allocation(handle)
    assert a.context and a.residency_count == 1 and a.placement is not None and a.placement.segment_id == 2
    header = image(w, handle)[:32].view("<u8")
    assert int(header[0]) == CONTEXT_MAGIC and int(header[2]) == a.size and int(header[3]) == handle
    assert "DXGK_OPERATION_INIT_CONTEXT_RESOURCE" in [e.operation for e in w.adapter.events.of_type(PagingOperation)]
    w.check()


def test_update_context_allocation_writes_the_state_through_the_paging_process_and_returns_when_done() -> None:
    w = World()
    context = w.vidmm.create_context(w.device)
    handle = context_allocation(w, context)
    state = pattern(256, 1).tobytes()
    assert reference_driver(w.adapter.driver).update_context_state(context, state) == NTSTATUS.STATUS_SUCCESS
    got = image(w, handle)[CONTEXT_HEADER_SIZE : CONTEXT_HEADER_SIZE + 256].tobytes()
    assert got == state, "written by the GPU before the callback returned"
    ops = [e.operation for e in w.adapter.events.of_type(PagingOperation)]
    assert ops[-3:] == [
        "DXGK_OPERATION_UPDATE_PAGE_TABLE",
        "DXGK_OPERATION_FLUSH_TLB",
        "DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION",
    ]


def test_a_context_image_survives_eviction_and_comes_back_byte_exact() -> None:
    w = World()
    context = w.vidmm.create_context(w.device)
    handle = context_allocation(w, context)
    reference_driver(w.adapter.driver).update_context_state(context, pattern(64, 2).tobytes())
    before = image(w, handle).copy()
    other = w.rm.create_device(w.rm.create_process())
    queue = w.new_queue(other)
    local = w.vidmm.spaces.get(2)
    pinned = sum(size for _, size, owner in local.held() if owner is not w.rm.objects.allocation(handle))
    whole = local.size - pinned  # needs all of the local segment the image sits in, but for its page tables
    hog = w.buffer(whole, device=other)
    w.make_resident(hog, queue=queue)
    assert hog.placement is not None and hog.placement.segment_id == 2
    a = w.rm.objects.allocation(handle)
    assert a.placement is None or a.placement.segment_id == 3, "pressure moved the image"
    w.rm.servicing.ensure_resident(w.device)
    assert np.array_equal(image(w, handle), before)
    w.check()


def test_destroying_the_context_frees_its_allocation() -> None:
    w = World()
    context = w.vidmm.create_context(w.device)
    handle = context_allocation(w, context)
    used = w.vidmm.spaces.get(2).ranges.used_bytes
    w.vidmm.destroy_context(context)
    assert handle not in w.rm.allocations and w.vidmm.spaces.get(2).ranges.used_bytes < used
    assert context not in reference_driver(w.adapter.driver).contexts
    w.check()


def test_wddm1_drivers_cannot_update_context_allocations() -> None:
    w = World(model=DriverModel.WDDM1)
    context = w.vidmm.create_context()
    assert reference_driver(w.adapter.driver).update_context_state(context, b"\0" * 8) == NTSTATUS.STATUS_NOT_SUPPORTED


def test_the_system_device_owns_contexts_created_without_a_device() -> None:
    w = World()
    context = w.vidmm.create_context()
    assert w.rm.objects.allocation(context_allocation(w, context)).device is w.rm.system_device
    with pytest.raises(Exception, match="is not a context of this driver"):
        reference_driver(w.adapter.driver).update_context_state(HANDLE(context + 1), b"")
