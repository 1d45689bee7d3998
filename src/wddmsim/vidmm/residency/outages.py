"""What power transitions (decision 0045) and adapter resets (decision D6) do to allocations."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import final

from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import (
    VidMmEvict,
)
from wddmsim.vidmm.move_kinds import Destination, MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.placement import RULES, Placer
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.segments import Placement


@final
class Outages:
    """Allocations out of ranges a power transition purges, and back; allocations an adapter reset lost."""

    def __init__(self, objects: ObjectTable, placement: Placer, servicing: PagingService, paging: PagingStream) -> None:
        self.objects = objects
        self.placement = placement
        self.servicing = servicing
        self.paging = paging
        self.segments = placement.segments
        self.mover = placement.mover
        self.events = placement.events
        self._resetting = False

    def power_down(self, purged: Callable[[int, int, int], bool]) -> list[VidMmAllocation]:
        """Before the adapter powers down: every allocation in a range the transition purges leaves for its
        backing store (cause ``power``; content that may be dropped is dropped, as for any eviction) and the
        copies run.  Returns those allocations."""
        self.servicing.service()
        gone = [
            a
            for a in self.objects.allocations.values()
            if a.placement is not None and purged(a.placement.segment_id, a.placement.offset, a.size)
        ]
        for a in gone:
            self.placement.leave(a, cause=MoveCause.POWER)
        self.servicing.settle()
        return gone

    def power_up(self, moved: list[VidMmAllocation]) -> int:
        """After the adapter is back in D0: what the kernel holds -- pinned allocations and context images --
        is placed again at once (the rest returns when its device next needs it).  Returns how many."""
        wanted = sorted(
            (
                a
                for a in moved
                if a.handle in self.objects.allocations and a.placement is None and (a.pin_count or a.context)
            ),
            key=lambda a: -a.size,
        )
        protected = {a.handle for a in wanted}
        for a in wanted:
            if not self.placement.place(a, protected, cause=MoveCause.PRESSURE):
                raise DdiError(
                    NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY, f"no segment can take {a!r} back after the wake"
                )
        self.servicing.settle()
        return len(wanted)

    def on_adapter_reset(self, reason: str) -> None:
        """After ``DxgkDdiResetFromTimeout``: memory segments lost their contents.

        Each allocation that was in a memory segment is reported evicted by a ``Transfer`` of size 0 and goes
        back to its backing store as it was (whatever was last paged out: the segment's bytes are gone); each
        aperture placement is unmapped to the dummy page (its bytes were the backing store's all along); every
        device is put in error (``DEVICE_REMOVED``).  Paging buffers built here run on the restarted engine.
        """
        if self._resetting:  # the reset's own paging failed: the outer call finishes the bookkeeping
            return
        self._resetting = True
        self.servicing.worker.drop()  # their devices are removed; every value is retired below
        try:
            for device in self.objects.devices.values():
                device.removed = device.removed or f"adapter reset: {reason}"
            lost = [(a, a.placement) for a in self.objects.allocations.values() if a.placement is not None]
            for a, placement in lost:
                self.segments.get(placement.segment_id).free(placement.offset)
                a.placement = None
                a.ready_fence = 0
                self.placement.policy.evicted(a, placement, MoveCause.RESET)
            for queue in self.objects.queues.values():
                queue.pending.clear()
                queue.fence.cpu_signal(queue.issued)  # every value is retired: nothing waits forever
            with contextlib.suppress(DeviceRemoved):  # the engine failed again: reports lost, bookkeeping not
                self._report_reset(lost)
        finally:
            self._resetting = False

    def _report_reset(self, lost: list[tuple[VidMmAllocation, Placement]]) -> None:
        for a, placement in lost:
            for (
                observer
            ) in self.placement.observers:  # mappings stop reaching the lost range (nothing else to wait for)
                observer.before_leave(a, MoveCause.RESET)
            space = self.segments.get(placement.segment_id)
            if space.aperture:
                self.mover.page_out(a, placement)
            else:
                self.mover.report_lost(a, placement)
            self.events.emit(
                VidMmEvict(
                    time=self.events.clock.now,
                    allocation=a.handle,
                    segment=placement.segment_id,
                    size=a.size,
                    cause=MoveCause.RESET.value,
                    destination=(Destination.SYSTEM if space.aperture else Destination.LOST).value,
                    policy="",
                    reason=RULES[MoveCause.RESET],
                )
            )
        self.paging.wait(self.paging.flush())
