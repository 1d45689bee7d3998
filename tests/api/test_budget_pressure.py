"""Budgets that move, and the trim notifications that follow them (issue 23, decision 0169): imposed budgets,
the shared model under pressure, focus, ``D3DKMTRegisterTrimNotification``; bad input refused, nothing changed."""

from __future__ import annotations

import pytest

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.residency import (
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_REGISTERTRIMNOTIFICATION,
    D3DKMT_TRIMNOTIFICATION,
    D3DKMT_UNREGISTERTRIMNOTIFICATION,
)
from wddmsim.ddi.status import DdiError
from wddmsim.vidmm.events import (
    ProcessLifetime,
    VidMmProcessBudgetChange,
    VidMmProcessPriorityChange,
    VidMmTrimNotification,
)

from .desk import APERTURE_ONLY, CPU, Desk, KiB

LOCAL = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL


def query(desk: Desk, process: object = None) -> tuple[int, int]:
    info = D3DKMT_QUERYVIDEOMEMORYINFO(MemorySegmentGroup=LOCAL)
    (process or desk.process).query_video_memory_info(info)  # type: ignore[attr-defined]
    return info.Budget, info.CurrentUsage


def capacity(desk: Desk) -> int:
    return desk.vidmm.residency.budgets.capacity(LOCAL)


def test_an_imposed_budget_is_reported_logged_and_released() -> None:
    desk = Desk()
    runtime = desk.adapter.runtime
    runtime.impose_budget(desk.process, LOCAL, 256 * KiB)
    assert query(desk)[0] == 256 * KiB
    runtime.impose_budget(desk.process, LOCAL, None)
    assert query(desk)[0] == capacity(desk)
    changes = desk.adapter.events.of_type(VidMmProcessBudgetChange)
    assert [(c.budget, c.previous, c.cause) for c in changes] == [
        (256 * KiB, capacity(desk), "imposed"),
        (capacity(desk), 256 * KiB, "released"),
    ]
    assert all(c.process == int(desk.process.handle) and c.group == 0 for c in changes)


def test_a_trim_notification_reaches_the_registered_callback_with_the_bytes_over_budget() -> None:
    desk = Desk()
    got: list[D3DKMT_TRIMNOTIFICATION] = []
    args = D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=desk.device.handle, Callback=got.append, Context="mine")
    desk.process.register_trim_notification(args)
    assert args.Handle
    buffer = desk.buffer(512 * KiB, usage=0)
    desk.resident(buffer)
    desk.adapter.runtime.impose_budget(desk.process, LOCAL, 128 * KiB)  # over it: a TrimToBudget is queued
    assert got == []  # delivered between calls, never inside one
    assert desk.adapter.runtime.deliver_trim_notifications() == 1
    assert len(got) == 1 and got[0].Context == "mine" and got[0].Flags.TrimToBudget
    assert got[0].NumBytesToTrim == 512 * KiB - 128 * KiB
    event = desk.adapter.events.of_type(VidMmTrimNotification)[-1]
    assert (event.bytes_to_trim, event.delivered, event.flags) == (384 * KiB, 1, 4)
    desk.adapter.runtime.request_trim(desk.process, D3DDDI_TRIMRESIDENCYSET_FLAGS(PeriodicTrim=True))
    assert desk.adapter.runtime.deliver_trim_notifications() == 1 and got[-1].Flags.PeriodicTrim
    desk.process.unregister_trim_notification(
        D3DKMT_UNREGISTERTRIMNOTIFICATION(Handle=args.Handle, Callback=got.append)
    )
    desk.adapter.runtime.request_trim(desk.process, D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True))
    assert desk.adapter.runtime.deliver_trim_notifications() == 0 and len(got) == 2
    assert desk.adapter.events.of_type(VidMmTrimNotification)[-1].delivered == 0
    desk.check()


def test_under_the_shared_model_a_newcomer_in_the_foreground_takes_its_share() -> None:
    desk = Desk(budgets="shared")
    whole = capacity(desk)
    first = desk.buffer(whole // 2 // (64 * KiB) * (64 * KiB), usage=0)
    desk.resident(first)
    assert query(desk)[0] == whole  # alone: no pressure, nothing imposed
    other, device, queue = desk.other()
    desk.adapter.runtime.set_focus(other, True)
    second = desk.buffer(whole // 2 // (64 * KiB) * (64 * KiB) + 256 * KiB, usage=0, device=device)
    desk.resident(second, device=device, queue=queue)  # past the capacity: pressure, the shares are imposed
    mine, used = query(desk)
    theirs, their_use = query(desk, other)
    # Water-filled by weight 4 : 8 (the foreground doubles): the newcomer's demand is under its share, so it is
    # met, and the first process gets what is left; the level is that over 4, the newcomer's budget 8 times it.
    assert mine == whole - their_use and theirs == 2 * mine
    assert used > mine
    causes = {c.cause for c in desk.adapter.events.of_type(VidMmProcessBudgetChange)}
    assert causes == {"usage"}
    assert desk.vidmm.residency.budgets.pending  # the first process is over its budget: a notification is due
    focus = desk.adapter.events.of_type(VidMmProcessPriorityChange)
    assert [(f.process, f.foreground) for f in focus] == [(int(other.handle), True)]
    other.close()
    assert query(desk)[0] == whole  # the newcomer exited: no pressure any more
    lifetimes = [(e.process, e.action) for e in desk.adapter.events.of_type(ProcessLifetime)]
    assert lifetimes[-1] == (int(other.handle), "exit")
    assert desk.adapter.runtime.deliver_trim_notifications() == 0  # back within its budget: nothing to say
    assert not desk.adapter.events.of_type(VidMmTrimNotification)
    desk.check()


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda d: d.adapter.runtime.impose_budget(d.process, LOCAL, 1 << 62), "Budget"),
        (lambda d: d.adapter.runtime.impose_budget(d.process, 7, 0), "MemorySegmentGroup"),
        (lambda d: d.adapter.runtime.impose_budget("nobody", LOCAL, 0), "hProcess"),
        (lambda d: d.adapter.runtime.set_scheduling_priority_class(d.process, 9), "Priority"),
        (lambda d: d.adapter.runtime.request_trim(d.process, 4), "Flags"),
        (
            lambda d: d.adapter.runtime.request_trim(d.process, D3DDDI_TRIMRESIDENCYSET_FLAGS(Reserved=1)),
            "Flags",
        ),
        (
            lambda d: d.process.register_trim_notification(
                D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=d.device.handle, Callback=None)
            ),
            "Callback",
        ),
        (
            lambda d: d.process.register_trim_notification(
                D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=HANDLE(12345), Callback=print)
            ),
            "hDevice",
        ),
        (
            lambda d: d.process.unregister_trim_notification(
                D3DKMT_UNREGISTERTRIMNOTIFICATION(Handle=99, Callback=print)
            ),
            "Handle",
        ),
    ],
    ids=["budget-too-big", "group", "process", "priority", "flags-type", "reserved", "callback", "device", "handle"],
)
def test_bad_pressure_calls_are_refused_naming_the_argument_and_change_nothing(call, argument: str) -> None:  # type: ignore[no-untyped-def]
    desk = Desk()
    before = (query(desk), len(desk.adapter.events), dict(desk.process.process.trim_callbacks))
    with pytest.raises(DdiError) as error:
        call(desk)
    assert argument in str(error.value)
    assert (query(desk), len(desk.adapter.events), dict(desk.process.process.trim_callbacks)) == before


def test_a_residency_list_that_can_never_fit_its_segments_is_refused_at_make_resident() -> None:
    """Decision 0172: CPU-visible buffers can live only in the 2 MiB BAR segment or the 4 MiB aperture; a list
    asking for more than those 6 MiB is refused when asked (E_OUTOFMEMORY, no count changed), never admitted to
    stop the device's next submission."""
    from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT, D3DDDI_MAKERESIDENT_FLAGS
    from wddmsim.ddi.status import HRESULT

    desk = Desk()
    first = [desk.buffer(1024 * KiB) for _ in range(5)]  # 5 MiB of the 6
    for h in first:
        assert desk.resident(h) in (HRESULT.S_OK, HRESULT.E_PENDING)
    extra = desk.buffer(1536 * KiB)  # 6.5 MiB in all: no room for it anywhere, whatever is evicted
    args = D3DDDI_MAKERESIDENT(
        hPagingQueue=desk.queue,
        NumAllocations=1,
        AllocationList=(extra,),
        Flags=D3DDDI_MAKERESIDENT_FLAGS(CantTrimFurther=True),
    )
    assert desk.device.make_resident(args) == HRESULT.E_OUTOFMEMORY
    assert desk.a(extra).residency_count == 0
    assert [desk.a(h).residency_count for h in first] == [1] * 5
    desk.evict(first[0])
    assert desk.resident(extra) in (HRESULT.S_OK, HRESULT.E_PENDING)  # room once the list shrank
    desk.check()


@pytest.mark.parametrize("imposed", [False, True], ids=["no-budget", "over-budget"])
def test_an_over_budget_process_is_evicted_before_one_within_its_budget(imposed: bool) -> None:
    """Decision 0173: two other processes hold equal buffers in the local segment; lru alone takes the older one
    (the polite process's); with the greedy process over its (imposed) budget, the greedy one's goes instead."""
    desk = Desk(policy="lru")
    desk.crowd(desk.cpu_segment)
    _, hog_device, hog_queue = desk.other()
    aperture = desk.vidmm.spaces.get(desk.aperture_segment).size
    for _ in range(4):  # no free room anywhere: the newcomer must take some from the local segment
        hog = desk.buffer(aperture // 4, usage=CPU | APERTURE_ONLY, device=hog_device)
        desk.resident(hog, device=hog_device, queue=hog_queue)
    size = (desk.vidmm.spaces.get(desk.local_segment).size // 3) // (64 * KiB) * (64 * KiB)
    _, polite_device, polite_queue = desk.other()
    greedy_process, greedy_device, greedy_queue = desk.other()
    polite = desk.buffer(size, usage=0, device=polite_device)
    desk.resident(polite, device=polite_device, queue=polite_queue)  # first: the least recently used
    greedy = desk.buffer(size, usage=0, device=greedy_device)
    desk.resident(greedy, device=greedy_device, queue=greedy_queue)
    filler = desk.buffer(size, usage=0, device=polite_device)
    desk.resident(filler, device=polite_device, queue=polite_queue)
    if imposed:
        desk.adapter.runtime.impose_budget(greedy_process, LOCAL, 0)  # now over its budget
    desk.resident(desk.buffer(size, usage=0))
    victim = greedy if imposed else polite
    kept = polite if imposed else greedy
    assert desk.where(victim) != desk.local_segment and desk.where(kept) == desk.local_segment
    desk.check()


def test_a_reservation_is_reported_and_floors_the_shared_budget() -> None:
    """``D3DKMTChangeVideoMemoryReservation``: reported as ``CurrentReservation``; under pressure the process's
    budget stays at least its reservation (decision 0169); more than ``AvailableForReservation`` is refused."""
    from wddmsim.ddi.residency import D3DKMT_CHANGEVIDEOMEMORYRESERVATION

    desk = Desk(budgets="shared")
    whole = capacity(desk)
    reserve = D3DKMT_CHANGEVIDEOMEMORYRESERVATION(MemorySegmentGroup=LOCAL, Reservation=whole // 2)
    desk.process.change_video_memory_reservation(reserve)
    info = D3DKMT_QUERYVIDEOMEMORYINFO(MemorySegmentGroup=LOCAL)
    desk.process.query_video_memory_info(info)
    assert (info.CurrentReservation, info.AvailableForReservation) == (whole // 2, whole // 2)
    quarter = whole // 4 // (64 * KiB) * (64 * KiB)
    for _ in range(2):
        desk.resident(desk.buffer(quarter, usage=0))
    other, device, queue = desk.other()
    desk.adapter.runtime.set_focus(other, True)
    for _ in range(3):
        desk.resident(desk.buffer(quarter, usage=0, device=device), device=device, queue=queue)
    mine, used = query(desk)
    theirs, their_use = query(desk, other)
    assert used + their_use > whole, "pressure"
    # Water-filled 4 : 8, the level whole / 12: the newcomer gets 8/12 of it, this process 4/12 -- raised to its
    # reservation, the half.
    assert theirs == whole * 8 // 12 and mine == whole // 2, "the reservation is a floor"
    with pytest.raises(DdiError) as error:
        desk.process.change_video_memory_reservation(
            D3DKMT_CHANGEVIDEOMEMORYRESERVATION(MemorySegmentGroup=LOCAL, Reservation=whole)
        )
    assert "Reservation" in str(error.value) and "AvailableForReservation" in str(error.value)
    desk.check()


def past(desk: Desk, handle: HANDLE) -> None:
    """MakeResident with CantTrimFurther: over the budget, within the capacity."""
    from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT, D3DDDI_MAKERESIDENT_FLAGS
    from wddmsim.ddi.status import HRESULT

    args = D3DDDI_MAKERESIDENT(
        hPagingQueue=desk.queue,
        NumAllocations=1,
        AllocationList=(handle,),
        Flags=D3DDDI_MAKERESIDENT_FLAGS(CantTrimFurther=True),
    )
    result = desk.device.make_resident(args)
    assert result in (HRESULT.S_OK, HRESULT.E_PENDING)
    if result == HRESULT.E_PENDING:
        desk.device.wait_for_paging_fence(desk.queue, args.PagingFenceValue)


def test_going_over_an_unchanged_budget_queues_one_notification_per_crossing() -> None:
    desk = Desk()
    got: list[D3DKMT_TRIMNOTIFICATION] = []
    desk.process.register_trim_notification(
        D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=desk.device.handle, Callback=got.append)
    )
    desk.adapter.runtime.impose_budget(desk.process, LOCAL, 256 * KiB)
    assert desk.adapter.runtime.deliver_trim_notifications() == 0  # within it: nothing to say
    past(desk, desk.buffer(512 * KiB, usage=0))  # past it, the budget unchanged
    assert desk.adapter.runtime.deliver_trim_notifications() == 1 and got[-1].NumBytesToTrim == 256 * KiB
    past(desk, desk.buffer(64 * KiB, usage=0))  # further past it: still the same crossing
    assert desk.adapter.runtime.deliver_trim_notifications() == 0 and len(got) == 1
    desk.check()
