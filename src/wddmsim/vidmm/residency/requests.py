"""``MakeResident`` and ``Evict`` (wddm-spec sections 3.7-3.8, decision 0043).

- ``MakeResident`` adds allocations to their device's residency list with a reference count and pages them in;
  it is atomic (on failure no count changes, ``NumBytesToTrim`` says by how much the budget is exceeded),
  returns ``S_OK`` with fence 0 when nothing had to move, ``E_PENDING`` with the queue's next fence value
  otherwise; ``CantTrimFurther`` lets it exceed the current budget (never the segments' capacity),
  ``MustSucceed`` puts the device in error when even that fails.  The paging itself is done by the
  :mod:`paging worker <wddmsim.vidmm.residency.worker>`, highest queue priority first.
- ``Evict`` drops a reference; at zero the allocation leaves the list and is paged out, unless
  ``EvictOnlyIfNecessary`` defers that to the next memory pressure; ``NotWrittenTo`` lets the page-out discard.
"""

from __future__ import annotations

from typing import final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.events import EventLog
from wddmsim.ddi.base import HANDLE, NO_FENCE
from wddmsim.ddi.residency import (
    D3DDDI_MAKERESIDENT,
    D3DDDICB_EVICT,
)
from wddmsim.ddi.status import HRESULT, DdiError
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue
from wddmsim.vidmm.events import (
    VidMmMakeResident,
)
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.budgets import Budgets
from wddmsim.vidmm.residency.checks import bad, reserved
from wddmsim.vidmm.residency.placement import Placer, in_use
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.residency.waits import Waits
from wddmsim.vidmm.residency.worker import PagingRequest


@final
class Requests:
    """The user-mode residency requests."""

    def __init__(
        self,
        objects: ObjectTable,
        placement: Placer,
        servicing: PagingService,
        waits: Waits,
        budgets: Budgets,
        paging: PagingStream,
        events: EventLog,
        *,
        deferred: bool,
    ) -> None:
        self.objects = objects
        self.placement = placement
        self.servicing = servicing
        self.waits = waits
        self.budgets = budgets
        self.paging = paging
        self.events = events
        self.deferred = deferred
        """``MakeResident`` is admitted at the call and serviced by the paging worker (decision 0043); False: each
        request is serviced within its call."""

    def make_resident(self, args: D3DDDI_MAKERESIDENT) -> HRESULT:
        """``pfnMakeResidentCb`` / ``D3DKMTMakeResident``."""
        queue = self.objects.queue(args.hPagingQueue)
        device = queue.device
        reserved("Flags", args.Flags)
        wanted = self._listed(args.NumAllocations, args.AllocationList, device)
        self._check_priorities(args)
        if args.Flags.MustSucceed and not args.Flags.CantTrimFurther:
            raise bad("Flags.MustSucceed", 1, "is valid only with Flags.CantTrimFurther")
        if device.removed is not None:
            raise DdiError(
                HRESULT.D3DDDIERR_DEVICEREMOVED, f"hDevice={int(device.handle):#x} was removed: {device.removed}"
            )
        over = self.budgets.over_budget(device, wanted, hard=False)
        if over > 0 and args.Flags.CantTrimFurther:
            over = self.budgets.over_budget(device, wanted, hard=True)
        if over > 0:
            return self._refuse(args, device, over, "over budget")
        unplaced = self.placement.unplaceable(wanted) or self.placement.overflow(self._needed(device, wanted))
        if unplaced:
            short = self.placement.short
            if short is not None and args.Flags.CantTrimFurther:
                # The caller cannot trim further: the refusal is final, so say what stood in the way (0158).
                self.placement.no_room(short, {a.handle for a in wanted}, "MakeResident")
            return self._refuse(args, device, unplaced, "segments full")
        if self.deferred:
            return self._admit(args, queue, wanted)
        self.placement.moved = False
        protected = {a.handle for a in wanted}
        for a in wanted:
            self.placement.use(a)
            if a.placement is None and not self.placement.place(a, protected, cause=MoveCause.PRESSURE):
                if args.Flags.CantTrimFurther:  # final: say what stood in the way (decision 0158)
                    self.placement.no_room(a, protected, "MakeResident")
                missing = sum(x.size for x in wanted if x.placement is None)
                return self._refuse(args, device, missing, "segments full")
        for a in wanted:
            if a.residency_count == 0:
                a.backing_current = False  # a new period of use: the GPU may write it again
            a.residency_count += 1
        args.NumAllocations = len(wanted)
        args.PagingFenceValue = self.waits.signal(queue) if self.placement.moved else NO_FENCE
        for a in wanted:
            if self.placement.moved:
                a.ready_fence = max(a.ready_fence, args.PagingFenceValue)
        result = HRESULT.E_PENDING if self.placement.moved else HRESULT.S_OK
        self._emit_make_resident(device, len(wanted), result, args.PagingFenceValue, 0)
        return result

    def _needed(self, device: Device, wanted: list[VidMmAllocation]) -> list[VidMmAllocation]:
        """What must be resident together before the device's contexts run once ``wanted`` joins its residency
        list: ``wanted`` and what the list already holds (decision 0172).  A request that could never fit with
        them is refused now (``E_OUTOFMEMORY``: the caller evicts and retries) rather than admitted to stop the
        device's next submission."""
        listed = {a.handle for a in wanted}
        return wanted + [a for a in self.objects.allocations_of(device) if in_use(a) and a.handle not in listed]

    @staticmethod
    def _check_priorities(args: D3DDDI_MAKERESIDENT) -> None:
        """``PriorityList`` is NULL or one UINT priority per listed allocation (ignored by VidMm, but checked)."""
        if args.PriorityList is None:
            return
        if not isinstance(args.PriorityList, (tuple, list)) or len(args.PriorityList) != args.NumAllocations:
            raise bad("PriorityList", args.PriorityList, f"must be NULL or hold NumAllocations ({args.NumAllocations})")
        for i, priority in enumerate(args.PriorityList):
            if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 0xFFFF_FFFF:
                raise bad(f"PriorityList[{i}]", priority, "is a UINT")

    def _admit(self, args: D3DDDI_MAKERESIDENT, queue: PagingQueue, wanted: list[VidMmAllocation]) -> HRESULT:
        """The deferred form (decision 0043): the counts are taken now; what must move is queued for the paging
        worker under the queue's next fence value (``E_PENDING``); ``S_OK`` with 0 if everything is in place."""
        device = queue.device
        for a in wanted:
            self.placement.use(a)
            if a.residency_count == 0:
                a.backing_current = False  # a new period of use: the GPU may write it again
            a.residency_count += 1
        args.NumAllocations = len(wanted)
        result = HRESULT.S_OK
        args.PagingFenceValue = NO_FENCE
        if any(a.placement is None for a in wanted):
            queue.issued += 1
            args.PagingFenceValue = FenceValue(queue.issued)
            for a in wanted:
                a.ready_fence = max(a.ready_fence, queue.issued)
            result = HRESULT.E_PENDING
            self.servicing.worker.admit(PagingRequest(queue, args.PagingFenceValue, tuple(wanted)))
        self._emit_make_resident(device, len(wanted), result, args.PagingFenceValue, 0)
        return result

    def _refuse(self, args: D3DDDI_MAKERESIDENT, device: Device, over: int, why: str) -> HRESULT:
        """``E_OUTOFMEMORY``: no count changed; ``MustSucceed`` puts the device in error."""
        args.NumBytesToTrim = over
        args.NumAllocations = 0
        args.PagingFenceValue = NO_FENCE
        if args.Flags.MustSucceed:
            device.removed = f"MakeResident with MustSucceed could not be satisfied ({why}, {over:#x} bytes)"
        self.paging.flush()
        self._emit_make_resident(device, 0, HRESULT.E_OUTOFMEMORY, 0, over)
        return HRESULT.E_OUTOFMEMORY

    def _emit_make_resident(self, device: Device, count: int, result: HRESULT, fence: int, trim: int) -> None:
        self.events.emit(
            VidMmMakeResident(
                time=self.events.clock.now,
                device=device.handle,
                allocations=count,
                result=result.name,
                paging_fence=fence,
                bytes_to_trim=trim,
            )
        )

    def _listed(self, count: int, handles: tuple[HANDLE, ...], device: Device) -> list[VidMmAllocation]:
        if not isinstance(count, int) or count != len(handles) or count <= 0:
            raise bad("NumAllocations", count, f"must be positive and match AllocationList ({len(handles)} handles)")
        out: list[VidMmAllocation] = []
        seen: set[int] = set()
        for i, handle in enumerate(handles):
            a = self.objects.allocation(handle, f"AllocationList[{i}]")
            if a.device is not device:
                raise bad(f"AllocationList[{i}]", handle, "belongs to another device than the paging queue's")
            if a.offered is not None:
                raise bad(f"AllocationList[{i}]", handle, "is offered: reclaim it first")
            if handle not in seen:
                seen.add(handle)
                out.append(a)
        return out

    def evict(self, args: D3DDDICB_EVICT) -> HRESULT:
        """``pfnEvictCb`` / ``D3DKMTEvict``: drop one residency reference per listed allocation."""
        device = self.objects.device(args.hDevice)
        reserved("Flags", args.Flags)
        if (
            not isinstance(args.NumAllocations, int)
            or args.NumAllocations != len(args.AllocationList)
            or not args.AllocationList
        ):
            raise bad(
                "NumAllocations",
                args.NumAllocations,
                f"must be positive and match AllocationList ({len(args.AllocationList)} handles)",
            )
        listed = [self.objects.allocation(h, f"AllocationList[{i}]") for i, h in enumerate(args.AllocationList)]
        self.servicing.service()
        drops: dict[int, int] = {}
        for i, a in enumerate(listed):
            if a.device is not device:
                raise bad(f"AllocationList[{i}]", a.handle, "belongs to another device")
            drops[a.handle] = drops.get(a.handle, 0) + 1
            if drops[a.handle] > a.residency_count:
                raise bad(f"AllocationList[{i}]", a.handle, "is evicted more times than it was made resident")
        for a in listed:
            a.residency_count -= 1
            if a.residency_count == 0 and args.Flags.NotWrittenTo:
                # The GPU has not written in this period of use and may not before another MakeResident: the backing
                # is as good as the segment if it was when the period began (a page-in copied or zero-filled from
                # it) -- not if an earlier period's writes never left the segment (an EvictOnlyIfNecessary).
                a.backing_current = a.clean_start
            elif a.residency_count == 0:
                a.clean_start = False  # the period ends without the hint: the GPU may have written the placement
            if a.residency_count == 0 and a.placement is not None and not args.Flags.EvictOnlyIfNecessary:
                self.placement.leave(a, cause=MoveCause.EVICT)
        self.paging.flush()
        args.NumBytesToTrim = max(0, self.budgets.trim_need(device.process))
        return HRESULT.S_OK
