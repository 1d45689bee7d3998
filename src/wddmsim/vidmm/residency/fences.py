"""Paging queues, their monitored fences, and monitored-fence sync objects: values signalled from the paging
buffer (``SignalMonitoredFence``, WDDM 2.2+) or, without GPU fences, by the CPU once the paging submission that
carries the value completed (wddm-spec section 3.8).
"""

from __future__ import annotations

from typing import final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.events import EventLog
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
)
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_PAGINGQUEUE_PRIORITY,
)
from wddmsim.vidmm.device import Device, FenceArea, MonitoredFence, PagingQueue, SyncObject
from wddmsim.vidmm.events import (
    PagingQueuePacket,
)
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.checks import bad, is_integer


@final
class PagingFences:
    """Queues and sync objects, and the values their fences take."""

    def __init__(
        self, paging: PagingStream, events: EventLog, objects: ObjectTable, area: FenceArea, *, gpu_fences: bool
    ) -> None:
        self.paging = paging
        self.events = events
        self.objects = objects
        self.area = area
        """Where every monitored fence's 8 bytes live."""
        self.gpu_fences = gpu_fences
        """The driver signals paging fences from the paging buffer (``SignalMonitoredFence``, WDDM 2.2+)."""

    def create_paging_queue(self, args: D3DDDI_CREATEPAGINGQUEUE) -> None:
        """``pfnCreatePagingQueueCb``: a queue and its monitored fence (value 0, CPU-readable)."""
        device = self.objects.device(args.hDevice)
        try:
            if not is_integer(args.Priority):
                raise ValueError(args.Priority)
            priority = D3DDDI_PAGINGQUEUE_PRIORITY(args.Priority)
        except ValueError:
            raise bad("Priority", args.Priority, "must be BELOW_NORMAL (-1), NORMAL (0) or ABOVE_NORMAL (1)") from None
        if args.PhysicalAdapterIndex != 0:
            raise bad("PhysicalAdapterIndex", args.PhysicalAdapterIndex, "the adapter has one physical adapter")
        queue = PagingQueue(
            self.objects.new_handle(), device, priority, MonitoredFence(self.area), self.objects.new_handle()
        )
        device.queues.append(queue)
        self.objects.queues[queue.handle] = queue
        args.hPagingQueue = queue.handle
        args.hSyncObject = queue.sync_object
        args.FenceValueCPUVirtualAddress = queue.fence.cpu

    def close_queue(self, queue: PagingQueue) -> None:
        """The queue goes once the paging work already built for it has run (it writes the queue's fence, whose
        slot is then freed); values of cancelled requests are never signalled."""
        submission = max(queue.pending.values(), default=0)
        if submission:
            self.paging.wait(submission)
        self.retire(queue)
        queue.device.queues.remove(queue)
        del self.objects.queues[queue.handle]
        queue.fence.release()

    def signal_value(self, queue: PagingQueue, value: FenceValue) -> None:
        """Signal ``value`` on ``queue`` after the work built so far."""
        if self.gpu_fences:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
                    MonitoredFenceGpuVa=queue.fence.gpu_va, MonitoredFenceValue=value
                )
            )
        queue.pending[value] = submission = self.paging.flush()
        self.events.emit(
            PagingQueuePacket(
                time=self.events.clock.now,
                queue=queue.handle,
                device=queue.device.handle,
                value=value,
                submission=submission,
            )
        )

    def fence_value(self, queue: PagingQueue) -> FenceValue:
        """The queue's monitored fence as the CPU reads it now (the GPU runs only when someone waits)."""
        self.retire(queue)
        return FenceValue(queue.fence.value)

    def retire(self, queue: PagingQueue) -> None:
        for value, submission in sorted(queue.pending.items()):
            if not self.paging.scheduler.is_complete(self.paging.node, submission):
                break
            if not self.gpu_fences:
                queue.fence.cpu_signal(max(value, queue.fence.value))
            del queue.pending[value]

    def poll(self) -> None:
        """Time passes for a CPU that polls (a ``DonotWait`` lock, a fence read): the GPU runs one more event."""
        self.paging.scheduler.poll()

    def create_sync_object(self, device: Device) -> SyncObject:
        """A monitored fence (value 0) the device's work can wait on and signal."""
        if self.objects.devices.get(device.handle) is not device:
            raise bad("hDevice", int(device.handle), "is not a live device")
        sync = SyncObject(self.objects.new_handle(), device, MonitoredFence(self.area))
        self.objects.sync_objects[sync.handle] = sync
        return sync

    def signal_from_cpu(self, handle: HANDLE, value: FenceValue) -> None:
        """``SignalSynchronizationObjectFromCpu``: the fence takes ``value`` (never lower); work waiting for it runs."""
        sync = self.objects.sync_object(handle)
        if not 0 <= value < 1 << 64 or value < sync.fence.value:
            raise bad("Value", value, f"a monitored fence only grows (it is at {sync.fence.value})")
        sync.fence.cpu_signal(value)
        self.release(sync)

    def release(self, sync: SyncObject) -> None:
        """Run, in order, the work whose value the fence has reached (or will, in paging-engine order)."""
        while sync.waiting and sync.waiting[0].value <= sync.reached:
            sync.waiting.pop(0).run()
