"""The residency manager through its user-mode calls: MakeResident, Evict, placement and eviction, budgets,
paging fences, offer and reclaim."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, KiB, MiB
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, Op
from wddmsim.ddi.residency import D3DDDICB_EVICT, D3DKMT_MEMORY_SEGMENT_GROUP, D3DKMT_QUERYVIDEOMEMORYINFO
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.faults import AccessKind
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.testing.fakes import PayloadRecorder
from wddmsim.testing.residency import backing_bytes
from wddmsim.vidmm.allocation import Content, VidMmAllocation
from wddmsim.vidmm.events import PagingOperation, VidMmEvict
from wddmsim.vidmm.segments import Placement

from .world import World, pattern

LOCAL, CPU, APERTURE = 2, 1, 3
LOCAL_GROUP = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL


def ops(world: World) -> list[str]:
    return [e.operation for e in world.adapter.events.of_type(PagingOperation)]


def at(a: VidMmAllocation) -> Placement | None:
    """Where ``a`` is now (a call, so that each assertion reads the current state)."""
    return a.placement


def segment_of(a: VidMmAllocation) -> int | None:
    return None if a.placement is None else a.placement.segment_id


@pytest.mark.parametrize("physical", [False, True], ids=["by-va", "physical"])
def test_a_new_allocation_is_filled_with_zeros_in_its_preferred_segment_and_the_fence_says_when(physical: bool) -> None:
    w = World(physical=physical)
    a = w.buffer(64 * KiB)
    assert at(a) is None and a.residency_count == 0
    result, args = w.make_resident(a)
    assert result == HRESULT.E_PENDING and args.PagingFenceValue == 1 and args.NumAllocations == 1
    assert segment_of(a) == LOCAL
    assert w.rm.fences.fence_value(w.queue) == 1, "the GPU signalled the paging fence from the paging buffer"
    assert not w.read(a).any()
    expected = [w.fill_op, "DXGK_OPERATION_SIGNAL_MONITORED_FENCE"]
    if not physical:
        expected = ["DXGK_OPERATION_UPDATE_PAGE_TABLE", "DXGK_OPERATION_FLUSH_TLB", *expected]
    assert ops(w) == expected
    w.check()


def test_making_an_already_resident_allocation_resident_completes_at_once_with_fence_zero() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    result, args = w.make_resident(a)
    assert (result, args.PagingFenceValue, a.residency_count) == (HRESULT.S_OK, 0, 2)


@pytest.mark.parametrize("physical", [False, True], ids=["by-va", "physical"])
def test_n_make_resident_need_n_evict_and_only_the_last_pages_out_with_the_content(physical: bool) -> None:
    w = World(physical=physical)
    a = w.buffer(128 * KiB)
    w.make_resident(a)
    w.make_resident(a)
    data = pattern(a.size, 1)
    w.write(a, data)
    w.evict(a)
    assert at(a) is not None and a.residency_count == 1
    w.evict(a)
    assert at(a) is None and a.residency_count == 0
    assert w.copy_op in ops(w)
    w.make_resident(a)
    assert np.array_equal(w.read(a), data)
    w.check()
    with pytest.raises(InvalidArgument, match="evicted more times than it was made resident") as error:
        w.evict(a, a)
    assert error.value.status == HRESULT.E_INVALIDARG and a.residency_count == 1


def test_evict_only_if_necessary_keeps_the_allocation_until_pressure_takes_it() -> None:
    w = World()
    a = w.buffer(1 * MiB)
    w.make_resident(a)
    data = pattern(a.size, 2)
    w.write(a, data)
    w.evict(a, EvictOnlyIfNecessary=True)
    assert at(a) is not None and a.residency_count == 0
    big = [w.buffer(1 * MiB) for _ in range(6)]
    for b in big:
        w.make_resident(b)
    assert segment_of(a) != LOCAL, "pressure took the unreferenced one"
    w.make_resident(a)
    assert np.array_equal(w.read(a), data)
    w.check()


def test_not_written_to_discards_instead_of_copying_back() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    data = pattern(a.size, 3)
    w.write(a, data)
    w.evict(a)
    w.make_resident(a)
    before = len(ops(w))
    w.evict(a, NotWrittenTo=True)
    assert ops(w)[before:] == ["DXGK_OPERATION_DISCARD_CONTENT"]
    w.make_resident(a)
    assert np.array_equal(w.read(a), data), "the backing store still held the bytes"


def test_not_written_to_still_copies_back_what_an_earlier_period_left_in_the_segment() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    data = pattern(a.size, 4)
    w.write(a, data)  # the GPU writes in the first period of use
    w.evict(a, EvictOnlyIfNecessary=True)  # no pressure: it stays in its segment, the bytes only there
    w.make_resident(a)  # a second period: nothing moves, nothing is written
    before = len(ops(w))
    w.evict(a, NotWrittenTo=True)  # true of the second period only
    assert "DXGK_OPERATION_DISCARD_CONTENT" not in ops(w)[before:], "the backing store never received the bytes"
    w.make_resident(a)
    assert np.array_equal(w.read(a), data)


def test_a_failed_make_resident_changes_no_count_and_reports_bytes_to_trim() -> None:
    w = World()
    a, b = w.buffer(1 * MiB), w.buffer(1 * MiB)
    w.make_resident(a)
    w.rm.budgets.impose(w.process, LOCAL_GROUP, 1 * MiB + 512 * KiB)
    result, args = w.make_resident(a, b)
    assert result == HRESULT.E_OUTOFMEMORY
    assert args.NumBytesToTrim == 512 * KiB and args.NumAllocations == 0 and args.PagingFenceValue == 0
    assert (a.residency_count, b.residency_count) == (1, 0)
    result, args = w.make_resident(a, b, CantTrimFurther=True)
    assert result == HRESULT.E_PENDING and (a.residency_count, b.residency_count) == (2, 1)


def test_must_succeed_failing_puts_the_device_in_error() -> None:
    w = World()
    huge = [w.buffer(2 * MiB) for _ in range(8)]  # 16 MiB: more than local memory and the aperture together
    result, _ = w.make_resident(*huge, CantTrimFurther=True, MustSucceed=True)
    assert result == HRESULT.E_OUTOFMEMORY
    assert w.device.removed is not None and "MustSucceed" in w.device.removed
    assert all(h.residency_count == 0 for h in huge)


def test_must_succeed_needs_cant_trim_further() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    with pytest.raises(InvalidArgument, match=r"Flags.MustSucceed=0x1: is valid only with Flags.CantTrimFurther"):
        w.make_resident(a, MustSucceed=True)
    assert a.residency_count == 0 and at(a) is None


def test_query_video_memory_info_reports_budget_and_usage_by_group() -> None:
    w = World()
    a = w.buffer(256 * KiB)
    w.make_resident(a)
    info = D3DKMT_QUERYVIDEOMEMORYINFO(hProcess=w.process.handle, MemorySegmentGroup=LOCAL_GROUP)
    w.rm.query_video_memory_info(info)
    assert info.CurrentUsage == 256 * KiB
    assert info.Budget == w.rm.budgets.capacity(LOCAL_GROUP) == sum(s.size for s in w.vidmm.spaces if not s.aperture)


def test_pressure_from_another_process_demotes_needed_victims_to_the_aperture_with_their_bytes() -> None:
    from wddmsim.testing.residency import backing_bytes

    w = World()
    first = [w.buffer(1 * MiB) for _ in range(7)]
    data = {a.handle: pattern(a.size, i) for i, a in enumerate(first)}
    for a in first:
        w.make_resident(a)
        w.write(a, data[a.handle])
    other = w.rm.create_device(w.rm.create_process())
    queue = w.new_queue(other)
    extra = w.buffer(3 * MiB + 64 * KiB, device=other)  # more than the aperture has left: room is made locally
    result, _ = w.make_resident(extra, queue=queue)
    assert result == HRESULT.E_PENDING and segment_of(extra) == LOCAL
    evictions = w.adapter.events.of_type(VidMmEvict)
    assert [e.destination for e in evictions] == ["aperture"] * 3 + ["system"], "the aperture took three"
    assert all(e.cause == "pressure" for e in evictions)
    w.check()
    for a in first:
        got = w.read(a) if at(a) is not None else backing_bytes(w.adapter, a)
        assert np.array_equal(got, data[a.handle])
    assert w.rm.servicing.ensure_resident(w.device) > 0, "the device's list is whole again before it runs"
    for a in first:
        assert np.array_equal(w.read(a), data[a.handle])
    w.check()


def test_every_policy_by_name_keeps_content_and_an_unknown_name_is_refused() -> None:
    from wddmsim.core.errors import ConfigurationError
    from wddmsim.vidmm.policy.registry import EVICTION, offline

    for policy in (name for name in EVICTION if not offline(name)):
        w = World(policy=policy)
        allocations = [w.buffer(512 * KiB) for _ in range(30)]
        for i, a in enumerate(allocations):
            w.make_resident(a)
            w.write(a, pattern(a.size, i))
            w.evict(a)
        for i, a in enumerate(allocations):
            w.make_resident(a)
            assert np.array_equal(w.read(a), pattern(a.size, i)), policy
            w.evict(a)
        w.check()
    with pytest.raises(
        ConfigurationError, match="eviction_policy='best': known policies: arc, clock, fifo, gds, lfu, lru"
    ):
        World(policy="best")


def test_content_never_written_reads_zero_even_after_another_allocation_used_the_range() -> None:
    w = World()
    a = w.buffer(1 * MiB)
    w.make_resident(a)
    w.write(a, np.full(a.size, 0xAB, dtype=np.uint8))
    placement = at(a)
    w.evict(a)
    w.rm.destroy_allocation(a.handle)
    b = w.buffer(1 * MiB)
    w.make_resident(b)
    assert at(b) == placement, "the same range is reused"
    assert not w.read(b).any(), "no byte of the destroyed allocation shows through"


def test_aperture_only_allocations_are_mapped_not_copied_and_unmapped_to_the_dummy_page() -> None:
    from wddmsim.kmd.allocations import AllocationUsage

    w = World()
    a = w.buffer(64 * KiB, usage=AllocationUsage.APERTURE_ONLY)
    w.make_resident(a)
    assert segment_of(a) == APERTURE
    data = pattern(a.size, 9)
    w.write(a, data)
    from wddmsim.testing.residency import backing_bytes

    assert np.array_equal(backing_bytes(w.adapter, a), data), "the GPU wrote straight into the backing pages"
    placement = at(a)
    assert placement is not None
    offset = placement.offset
    w.evict(a)
    assert ops(w)[-1] == "DXGK_OPERATION_UNMAP_APERTURE_SEGMENT"
    from wddmsim.hw.faults import AccessKind

    pfns = w.adapter.gpu.aperture.pfns(offset, a.size, AccessKind.READ)
    assert set(pfns.tolist()) == {w.vidmm.dummy_page // PAGE_SIZE}
    w.check()


def test_map_aperture_segment2_is_used_when_the_driver_opts_in() -> None:
    from wddmsim.kmd.allocations import AllocationUsage

    w = World(map_aperture2=True)
    a = w.buffer(64 * KiB, usage=AllocationUsage.APERTURE_ONLY)
    w.make_resident(a)
    assert "DXGK_OPERATION_MAP_APERTURE_SEGMENT2" in ops(w)
    w.check()


def test_explicit_residency_notification_comes_after_the_fill_and_before_the_transfer_out() -> None:
    from wddmsim.kmd.allocations import AllocationUsage

    w = World(physical=True)
    a = w.buffer(64 * KiB, usage=AllocationUsage.EXPLICIT_RESIDENCY | AllocationUsage.ACCESSED_PHYSICALLY)
    plain = w.buffer(64 * KiB, usage=AllocationUsage.EXPLICIT_RESIDENCY)
    w.make_resident(a)
    assert ops(w)[-2:] == ["DXGK_OPERATION_FILL", "DXGK_OPERATION_NOTIFY_RESIDENCY"][-2:] or ops(w)[-3:-1] == [
        "DXGK_OPERATION_FILL",
        "DXGK_OPERATION_NOTIFY_RESIDENCY",
    ]
    assert reference_driver(w.adapter.driver).state.allocations.get(a.handle, "h").resident_at is not None
    w.write(a, pattern(a.size, 1))
    before = len(ops(w))
    w.evict(a)
    assert ops(w)[before:] == ["DXGK_OPERATION_NOTIFY_RESIDENCY", "DXGK_OPERATION_TRANSFER"]
    before = len(ops(w))
    w.make_resident(plain)
    assert "DXGK_OPERATION_NOTIFY_RESIDENCY" not in ops(w)[before:], "only with AccessedPhysically too"


def test_wddm1_drivers_get_cpu_signalled_paging_fences() -> None:
    from wddmsim.kmd.config import DriverModel

    w = World(model=DriverModel.WDDM1)
    a = w.buffer(64 * KiB)
    result, args = w.make_resident(a)
    assert result == HRESULT.E_PENDING and w.rm.fences.fence_value(w.queue) == args.PagingFenceValue == 1
    assert "DXGK_OPERATION_SIGNAL_MONITORED_FENCE" not in ops(w)
    assert a.content == Content.DATA
    w.check()


def test_allocations_of_another_device_are_refused() -> None:
    w = World()
    other = w.new_device()
    a = w.buffer(64 * KiB, device=other)
    with pytest.raises(InvalidArgument, match="belongs to another device than the paging queue's"):
        w.make_resident(a)
    assert a.residency_count == 0


def test_an_op_list_never_leaves_a_pending_fence_value_unsignalled() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    assert w.rm.fences.fence_value(w.queue) == w.queue.issued
    assert int(Op.DXGK_OPERATION_SIGNAL_MONITORED_FENCE) == 16


def test_offer_then_reclaim_reports_ok_discarded_or_not_committed() -> None:
    from wddmsim.ddi.residency import (
        D3DDDI_OFFER_PRIORITY,
        D3DDDI_RECLAIM_RESULT,
        D3DKMT_OFFERALLOCATIONS,
        D3DKMT_RECLAIMALLOCATIONS2,
    )

    w = World()
    kept, dropped, decommitted = (w.buffer(64 * KiB) for _ in range(3))
    for a in (kept, dropped, decommitted):
        w.make_resident(a)
        w.write(a, pattern(a.size, 5))

    offer = w.offer

    offer(kept)
    offer(dropped, OfferImmediately=True)
    offer(decommitted, OfferImmediately=True, AllowDecommit=True)
    w.check()
    assert decommitted.backing is None and at(dropped) is None
    with pytest.raises(InvalidArgument, match="is offered: reclaim it first"):
        w.make_resident(kept)
    args = D3DKMT_RECLAIMALLOCATIONS2(
        hPagingQueue=w.queue.handle, NumAllocations=3, HandleList=(kept.handle, dropped.handle, decommitted.handle)
    )
    w.rm.reclaim(args)
    assert args.pResults == [
        D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_OK,
        D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_DISCARDED,
        D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_NOT_COMMITTED,
    ]
    if args.PagingFenceValue:
        w.rm.wait(w.queue, args.PagingFenceValue)
    assert np.array_equal(w.read(kept), pattern(kept.size, 5))
    assert at(dropped) is not None and not w.read(dropped).any(), "discarded content comes back as zeros"
    w.check()
    with pytest.raises(InvalidArgument, match="D3DDDI_OFFER_PRIORITY_NONE must not be used"):
        w.rm.offer(
            D3DKMT_OFFERALLOCATIONS(
                hDevice=w.device.handle,
                HandleList=(kept.handle,),
                NumAllocations=1,
                Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_NONE,
            )
        )


def test_trim_residency_set_periodic_restart_and_to_budget() -> None:
    from wddmsim.ddi.residency import D3DDDI_TRIMRESIDENCYSET_FLAGS, D3DDDIARG_TRIMRESIDENCYSET

    w = World()
    old, recent = w.buffer(64 * KiB), w.buffer(128 * KiB)
    w.make_resident(old)
    w.rm.trim_residency_set(
        w.device, D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=D3DDDI_TRIMRESIDENCYSET_FLAGS(RestartPeriodicTrim=True))
    )
    w.make_resident(recent)
    trimmed = w.rm.trim_residency_set(
        w.device, D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=D3DDDI_TRIMRESIDENCYSET_FLAGS(PeriodicTrim=True))
    )
    assert trimmed == old.size and old.residency_count == 0 and recent.residency_count == 1
    trimmed = w.rm.trim_residency_set(
        w.device,
        D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True), NumBytesToTrim=1),
    )
    assert trimmed == recent.size and at(recent) is None
    with pytest.raises(InvalidArgument, match="RestartPeriodicTrim is not valid with PeriodicTrim"):
        w.rm.trim_residency_set(
            w.device,
            D3DDDIARG_TRIMRESIDENCYSET(
                TrimFlags=D3DDDI_TRIMRESIDENCYSET_FLAGS(PeriodicTrim=True, RestartPeriodicTrim=True)
            ),
        )
    w.check()


def test_paging_queues_have_their_own_fences_read_through_the_cpu_mapping() -> None:
    w = World()
    second = w.new_queue(w.device, priority=1)
    a, b = w.buffer(64 * KiB), w.buffer(64 * KiB)
    w.make_resident(a)
    w.make_resident(b, queue=second)
    w.make_resident(w.buffer(64 * KiB), queue=second)
    assert (w.rm.fences.fence_value(w.queue), w.rm.fences.fence_value(second)) == (1, 2)
    assert int.from_bytes(second.fence.cpu.bytes(8), "little") == 2
    assert second.priority == 1
    with pytest.raises(InvalidArgument, match="Priority=0x5: must be BELOW_NORMAL"):
        w.new_queue(w.device, priority=5)
    with pytest.raises(InvalidArgument, match="FenceValue=0x9: the queue has issued values up to 1 only"):
        w.rm.wait(w.queue, FenceValue(9))


@pytest.mark.parametrize(
    "mode", list(DXGK_PAGETABLEUPDATEMODE), ids=lambda m: m.name.removeprefix("DXGK_PAGETABLEUPDATE_")
)
def test_moves_through_the_scratch_area_work_in_every_update_mode_in_chunks(mode: DXGK_PAGETABLEUPDATEMODE) -> None:
    w = World(update_mode=mode, scratch_size=2 * MiB)
    assert w.virtual and w.vidmm.mover.scratch is not None and w.vidmm.mover.scratch.chunk_pages == 256
    big = w.buffer(3 * MiB)
    w.make_resident(big)
    data = pattern(big.size, 11)
    w.write(big, data)
    before = len(ops(w))
    w.evict(big)
    moved = ops(w)[before:]
    assert moved.count("DXGK_OPERATION_VIRTUAL_TRANSFER") == 3, "1 MiB chunks: half of the 2 MiB scratch area"
    assert moved.count("DXGK_OPERATION_FLUSH_TLB") == 3
    others = [w.buffer(1 * MiB) for _ in range(5)]
    for i, o in enumerate(others):  # reuse the scratch area and the local range with other content
        w.make_resident(o)
        w.write(o, pattern(o.size, 100 + i))
        w.evict(o)
    w.make_resident(big)
    assert np.array_equal(w.read(big), data)
    for i, o in enumerate(others):
        w.make_resident(o)
        assert np.array_equal(w.read(o), pattern(o.size, 100 + i))
        w.evict(o)
    w.check()
    if mode == DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
        events = [e for e in w.adapter.events.of_type(PagingOperation) if e.operation.endswith("UPDATE_PAGE_TABLE")]
        assert events, "the CPU path still goes through UpdatePageTable"


def test_pressure_drops_offered_content_first_without_copying_it() -> None:
    from wddmsim.ddi.residency import (
        D3DDDI_OFFER_PRIORITY,
        D3DDDI_RECLAIM_RESULT,
        D3DKMT_OFFERALLOCATIONS,
        D3DKMT_RECLAIMALLOCATIONS2,
    )

    w = World()
    offered = w.buffer(2 * MiB)
    idle = w.buffer(2 * MiB)
    for a in (offered, idle):
        w.make_resident(a)
        w.write(a, pattern(a.size, 4))
        w.evict(a, EvictOnlyIfNecessary=True)
    w.rm.offer(
        D3DKMT_OFFERALLOCATIONS(
            hDevice=w.device.handle,
            HandleList=(offered.handle,),
            NumAllocations=1,
            Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
        )
    )
    before = len(ops(w))
    w.make_resident(w.buffer(2 * MiB))  # room for one of the two in the local segment
    assert at(offered) is None and at(idle) is not None, "the offered one went first"
    assert w.copy_op not in ops(w)[before:], "its content was dropped, not copied"
    args = D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=w.queue.handle, NumAllocations=1, HandleList=(offered.handle,))
    w.rm.reclaim(args)
    assert args.pResults == [D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_DISCARDED]
    w.check()


def test_segments_never_hand_out_more_than_their_commit_limit() -> None:
    w = World()
    for space in w.vidmm.spaces:
        assert space.size <= space.descriptor.CommitLimit


def test_a_paging_process_table_placed_where_an_eviction_just_left_waits_for_the_copy_out() -> None:
    """The paging process's tables are written by the CPU at once (forced ``CPU_VIRTUAL``).  One placed in the
    range an eviction has just freed must wait for that eviction's copy out, or the copy carries the new table's
    entries into the backing store (found by the scenario sweep: one PTE inside a CPU-visible buffer)."""
    w = World()
    pp = w.vidmm.paging_process
    assert pp is not None
    segment = w.vidmm.spaces.get(pp.segment_id)
    filled: list[tuple[VidMmAllocation, int]] = []
    while segment.ranges.largest_free() >= 64 * KiB:
        a = w.buffer(64 * KiB, usage=AllocationUsage.CPU_VISIBLE)
        w.make_resident(a)
        assert a.placement is not None and a.placement.segment_id == pp.segment_id
        w.write(a, pattern(a.size, len(filled)))
        filled.append((a, len(filled)))
    top, seed = max(filled, key=lambda item: item[0].placement.offset if item[0].placement else -1)
    assert top.placement is not None
    freed = top.placement.offset
    w.settle()
    w.rm.evict(D3DDDICB_EVICT(hDevice=w.device.handle, NumAllocations=1, AllocationList=(top.handle,)))
    assert all(owner is not top for _, _, owner in segment.held())  # recorded; the copy out is built, not run
    va = 1 << 32  # a fresh 1 GiB region of the paging process's hand-driven space: new tables below the root
    pp.map(va, segment_id=0, page_numbers=np.array([w.vidmm.dummy_page >> PAGE_SHIFT], dtype=np.uint64))
    assert w.vidmm.gpummu is not None
    new_tables = [pp.table_offset(level, va) for level in range(w.vidmm.gpummu.level_count - 1)]
    assert any(freed <= offset < freed + top.size for offset in new_tables)
    w.settle()
    assert np.array_equal(backing_bytes(w.adapter, top), pattern(top.size, seed))
    w.check()


@pytest.mark.parametrize("named", [False, True])
def test_transfer_virtual_names_the_scratch_leaf_tables_only_when_the_driver_asks(named: bool) -> None:
    """``LegacyBehaviors.SourcePageTableVaInTransfer``: ``SourcePageTable``/``DestinationPageTable`` are the
    paging-process VAs of the leaf tables that map each side (consecutive leaf tables follow at consecutive
    pages); without the cap they stay 0.  The scratch mappings' ``UpdatePageTable`` calls name the allocation
    and the offset of their first page, the same offset as the transfer they prepare."""
    recorders: list[PayloadRecorder] = []

    def wrap(driver: object) -> KernelModeDriver:
        recorders.append(PayloadRecorder(cast(KernelModeDriver, driver)))
        return recorders[0]

    w = World(wrap_driver=wrap, driver_options={"source_page_table_va_in_transfer": named}, scratch_size=2 * MiB)
    caps = w.vidmm.gpummu.caps if w.vidmm.gpummu is not None else None
    assert caps is not None and bool(caps.LegacyBehaviors.SourcePageTableVaInTransfer) == named
    big = w.buffer(3 * MiB)
    w.make_resident(big)
    w.write(big, pattern(big.size, 12))
    start = len(recorders[0].payloads)
    w.evict(big)
    w.make_resident(big)
    assert np.array_equal(w.read(big), pattern(big.size, 12))
    payloads = recorders[0].payloads[start:]
    transfers = [p for p in payloads if isinstance(p, DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL)]
    assert len(transfers) == 6, "3 chunks out, 3 back"
    pp, mmu = w.vidmm.paging_process, w.adapter.gpu.mmu
    assert pp is not None
    root = w.adapter.gpu.engines[0].root
    assert root is not None
    for t in transfers:
        if not named:
            assert t.SourcePageTable == t.DestinationPageTable == 0
            continue
        for va, table_va in (
            (t.SourceVirtualAddress, t.SourcePageTable),
            (t.DestinationVirtualAddress, t.DestinationPageTable),
        ):
            leaf = mmu.walk(root, va).steps[-1].table
            (run,) = mmu.translate(root, table_va, PAGE_SIZE, AccessKind.READ)
            assert run[0] is mmu.local and run[1] == leaf.address, "the VA of the table the MMU walks through"
    maps = [p for p in payloads if isinstance(p, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE) and p.hAllocation]
    assert {int(p.hAllocation) for p in maps} == {int(big.handle)}
    assert {t.AllocationOffsetInBytes for t in transfers} == {
        p.AllocationOffsetInBytes for p in maps if p.StartIndex == 0
    }


def test_the_aperture_never_maps_more_than_the_driver_commit_limit() -> None:
    """``DXGK_DRIVERCAPS.ApertureSegmentCommitLimit``: VidMm never maps more physical memory than this into the
    aperture segments; past it, aperture allocations make room like in a full segment (checklist item 98)."""
    w = World(driver_options={"aperture_commit_limit": 1 * MiB})
    assert w.vidmm.caps.ApertureSegmentCommitLimit == 1 * MiB
    aperture = w.vidmm.spaces.aperture
    assert aperture is not None and aperture.size > 1 * MiB
    held = [w.buffer(384 * KiB, usage=AllocationUsage.APERTURE_ONLY) for _ in range(4)]
    for i, a in enumerate(held):
        w.make_resident(a)
        assert w.vidmm.spaces.aperture_commit is not None
        assert w.vidmm.spaces.aperture_commit.used <= 1 * MiB
        assert a.placement is not None and a.placement.segment_id == aperture.id
        w.write(a, pattern(a.size, 40 + i))
    placed = [a for a in held if a.placement is not None]
    assert len(placed) == 2, "two 384 KiB allocations fit under 1 MiB; the others were evicted to make room"
    w.check()
    for i, a in enumerate(held):
        w.make_resident(a)
        assert np.array_equal(w.read(a), pattern(a.size, 40 + i))
    w.check()
