"""The paging worker's side of residency (decision 0043): admitted ``MakeResident`` requests are serviced before
VidMm does anything else that reads or changes residency, and the moves made for the CPU (locks) and for
segment-model submissions wait for it.
"""

from __future__ import annotations

from typing import final

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device
from wddmsim.vidmm.events import (
    PagingRequestServiced,
)
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.fences import PagingFences
from wddmsim.vidmm.residency.placement import Placer, in_use
from wddmsim.vidmm.residency.worker import PagingRequest, PagingWorker


@final
class PagingService:
    """Owns the paging worker; every residency call that must see the backlog serviced asks it first."""

    def __init__(self, objects: ObjectTable, placement: Placer, fences: PagingFences, paging: PagingStream) -> None:
        self.objects = objects
        self.placement = placement
        self.fences = fences
        self.paging = paging
        self.segments = placement.segments
        self.events = placement.events
        self.worker = PagingWorker(self._serve)

    def service(self) -> None:
        """Let the paging worker catch up: every admitted request is serviced, highest queue priority first."""
        self.worker.service()

    def _serve(self, request: PagingRequest) -> None:
        """Service one admitted ``MakeResident``: page in what the device still lists, then signal its value.
        What cannot be placed now stays listed and not resident -- it is paged in before the device's work runs
        (:meth:`ensure_resident`), as a victim of pressure is.  An allocation offered since is left out: no work may
        use it until it is reclaimed, and Reclaim pages it in then."""
        listed = [a for a in request.allocations if a.handle in self.objects.allocations and in_use(a)]
        protected = {a.handle for a in listed}
        placed = 0
        for a in listed:
            if (
                a.placement is None
                and not a.device.removed
                and self.placement.place(a, protected, cause=MoveCause.PRESSURE)
            ):
                placed += 1
        self.fences.signal_value(request.queue, request.value)
        self.events.emit(
            PagingRequestServiced(
                time=self.events.clock.now,
                queue=request.queue.handle,
                device=request.queue.device.handle,
                value=request.value,
                priority=int(request.queue.priority),
                allocations=len(request.allocations),
                placed=placed,
                unplaced=sum(1 for a in listed if a.placement is None),
            )
        )

    def settle(self) -> None:
        """Service the admitted requests, submit what is built and wait until the paging engine has run it."""
        self.service()
        self.paging.wait(self.paging.flush())

    def paging_done(self, a: VidMmAllocation, *, wait: bool) -> bool:
        """Whether the paging work queued on ``a`` -- a move built by an ``Evict`` or a ``MakeResident`` nobody
        waited for, and anything the worker had still to service -- has run; with ``wait`` it runs first.  Every
        CPU view of ``a``'s bytes asks this before it shows them (decision 0058): a view of the backing store
        before the page-out copy ran would show old bytes, and what the CPU wrote there would be overwritten."""
        self.service()
        ticket = a.paging
        if ticket is None:
            return True
        if not self.paging.done(ticket, wait=wait):
            return False
        a.paging = None
        return True

    def bring_into_memory(self, a: VidMmAllocation, *, cause: MoveCause) -> bool:
        """Put ``a`` in a memory segment (out of an aperture or system memory) and wait for the move; False -- with
        ``a`` where it was -- if no memory segment can take it, even by evicting what ``a`` does not need."""
        self.service()
        if a.placement is not None and not self.segments.get(a.placement.segment_id).aperture:
            return True
        if not self.placement.into_memory(a, cause=cause):
            return False
        self.settle()
        return True

    def place_for_submission(self, allocations: list[VidMmAllocation], *, protected: set[HANDLE]) -> bool:
        """Place every one of ``allocations`` (the allocation list of a segment-model submission), evicting only
        what ``protected`` does not name; False, with what could be placed left placed, if one does not fit."""
        self.service()
        return self.placement.place_all(allocations, protected=protected)

    def evict_for_cpu(self, a: VidMmAllocation, *, discard: bool) -> None:
        """Take ``a`` to system memory now for a CPU lock (cause ``lock``) and wait until its bytes are there;
        ``discard``: the lock may drop the content (``Discard``), so nothing is copied."""
        self.service()
        if a.placement is not None:
            self.placement.leave(a, cause=MoveCause.LOCK, keep_content=not discard)
        self.settle()

    def ensure_resident(self, device: Device) -> int:
        """Before any context of ``device`` runs: page in whatever its residency list holds that left (a
        victim of pressure).  Offered allocations stay out (``pfnOfferAllocationsCb``: no work may use them until
        they are reclaimed; with ``AllowDecommit`` they have no backing store to page in from).  Returns the paging
        fence to wait for (0: nothing moved)."""
        self.service()
        wanted = [a for a in self.objects.allocations.values() if a.device is device and in_use(a)]
        wanted.sort(key=lambda a: -a.size)  # largest first: the fewest ranges left too small to use
        protected = {a.handle for a in wanted}
        self.placement.moved = False
        for a in wanted:
            if a.placement is not None or self.placement.place(a, protected, cause=MoveCause.PRESSURE):
                continue
            failed = self._repack(wanted, a, protected)
            if failed is not None:
                why = self.placement.no_room(failed, protected, "its residency list, before a context runs")
                raise DdiError(
                    NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                    f"device {int(device.handle):#x}'s residency list ({sum(x.size for x in wanted):#x} bytes) "
                    f"does not fit the segments it may use: {why}",
                )
        if not self.placement.moved:
            return 0
        fence = self.paging.flush()
        self.paging.wait(fence)
        return fence

    def _repack(
        self, wanted: list[VidMmAllocation], a: VidMmAllocation, protected: set[HANDLE]
    ) -> VidMmAllocation | None:
        """``a`` found no range although the list may fit: its own placed members scatter the segments ``a`` may
        use, or took the room only ``a`` can use.  They leave those segments (to their backing stores:
        ``compact``) and the list's unplaced part is placed again -- those with the fewest segments to go to
        first, then the largest (decision 0172).  Returns the one left without a range (None: all placed)."""
        segments = self.placement.segments_for(a)
        movable = [
            x
            for x in wanted
            if x.placement is not None and x.placement.segment_id in segments and x.pin_count == 0 and x.lock is None
        ]
        if not movable:
            return a
        for x in movable:
            self.placement.leave(x, cause=MoveCause.COMPACT)
        unplaced = [x for x in wanted if x.placement is None]
        unplaced.sort(key=lambda x: (len(self.placement.segments_for(x)), -x.size))
        for x in unplaced:
            if not self.placement.place(x, protected, cause=MoveCause.PRESSURE):
                return x
        return None

    def cancel_requests(self, device: Device) -> int:
        """The device is being destroyed: requests its queues admitted that the worker has not serviced are
        forgotten (their allocations go with the device; nothing will wait for their values).  Returns how many."""
        return len(self.worker.cancel({q.handle for q in device.queues}))
