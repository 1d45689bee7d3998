"""Paging-fence values given to built work, and the CPU's waits for them (``pfnWaitForSynchronizationObjectFromCpuCb``
on a paging queue's fence or a monitored-fence sync object, a polled ``FenceValueCPUVirtualAddress``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

from wddmsim.core.addresses import FenceValue
from wddmsim.ddi.base import HANDLE
from wddmsim.vidmm.device import PagingQueue, Process, SyncObject
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.checks import bad, checked_fence_value
from wddmsim.vidmm.residency.fences import PagingFences
from wddmsim.vidmm.residency.servicing import PagingService


@final
class Waits:
    """Signals and waits: each services the paging worker's backlog first."""

    def __init__(
        self,
        servicing: PagingService,
        fences: PagingFences,
        paging: PagingStream,
        objects: ObjectTable,
        *,
        wait_companions: Callable[[Process], None] | None,
    ) -> None:
        self.servicing = servicing
        self.fences = fences
        self.paging = paging
        self.objects = objects
        self.wait_companions = wait_companions
        """The process's paging companions finish what they were given (tiled updates signal from there)."""

    def signal(self, queue: PagingQueue) -> FenceValue:
        """Give the work just built the queue's next fence value and submit it (after the requests admitted
        before it: a queue's values signal in order)."""
        self.servicing.service()
        queue.issued += 1
        value = FenceValue(queue.issued)
        self.fences.signal_value(queue, value)
        return value

    def wait(self, queue: PagingQueue, value: FenceValue) -> None:
        """Wait on the CPU until the queue's fence reaches ``value`` (0 returns at once).  The paging worker
        catches up first -- all of it, in priority order -- and the paging engine then runs only as far as the
        work that signals ``value``."""
        checked_fence_value(value)
        if value > queue.issued:
            raise bad("FenceValue", value, f"the queue has issued values up to {queue.issued} only")
        self.servicing.service()
        submission = max((s for v, s in queue.pending.items() if v <= value), default=0)
        if submission:
            self.paging.wait(submission)
        self.fences.retire(queue)
        if queue.fence.value < value:
            raise AssertionError(f"paging fence {value} completed but the fence reads {queue.fence.value}")

    def wait_sync(self, sync: SyncObject, value: FenceValue) -> None:
        """Wait on the CPU until a monitored-fence sync object reaches ``value`` (``hFenceObject`` of
        ``UpdateGpuVirtualAddress``): the paging work queued to signal it runs first.  A value that neither
        the fence nor any queued work reaches is refused -- with one CPU thread, nothing else could signal it,
        so the wait would never return."""
        checked_fence_value(value)
        if sync.fence.value >= value:
            return
        self.servicing.service()
        if sync.promised < value:
            raise bad(
                "FenceValue",
                value,
                f"nothing will signal it: the fence is at {sync.fence.value} and queued work reaches {sync.promised}",
            )
        self.servicing.settle()  # the paging engine runs in order: the work that signals ``promised`` completes
        if self.wait_companions is not None:  # tiled updates signal from their paging companion contexts
            self.wait_companions(sync.device.process)
        if sync.fence.value < value:
            raise AssertionError(f"monitored fence promised {sync.promised} but reads {sync.fence.value}")

    def poll_fence_value(self, queue: PagingQueue) -> FenceValue:
        """The queue's fence as a CPU polling ``FenceValueCPUVirtualAddress`` reads it: the paging worker services
        what it admitted, built work is submitted, the value is read, and then time passes
        (:meth:`GpuScheduler.poll`), so a client that polls instead of waiting sees its value after finitely many
        polls."""
        self.servicing.service()
        self.paging.flush()
        value = self.fences.fence_value(queue)
        self.fences.poll()
        return value

    def destroy_paging_queue(self, handle: HANDLE) -> None:
        """``pfnDestroyPagingQueueCb``: the queue's work completes first."""
        queue = self.objects.queue(handle)
        self.wait(queue, FenceValue(queue.issued))
        self.fences.close_queue(queue)
