"""The end of contexts, synchronisation objects, devices and processes (decision 0046).

What it models: ``D3DKMTDestroyContext``, ``D3DKMTDestroySynchronizationObject``, ``D3DKMTDestroyDevice`` and the
exit of a process -- a clean one, or a kill at any point, with paging queued, locks held and tile mappings waiting
for their fences (reliability-plan F13).  Whatever the process left, the same order reclaims it:

1. paging requests its queues admitted that the worker has not serviced are cancelled (no one can wait for
   them now), and work queued behind its monitored fences is cancelled (no one will signal them);
2. its GPU work in flight completes, and so do the page-table updates its paging companions were given;
3. each device: locks are dropped (views unmapped and released, swizzling ranges given back), contexts destroyed
   (``DxgkDdiDestroyContext``: the driver hands their images back with ``DxgkCbDestroyContextAllocation``) with
   their paging companions, allocations destroyed (``DxgkDdiDestroyAllocation``: VAs freed, ranges and backing
   stores freed), synchronisation objects and paging queues destroyed (their fence slots freed once nothing
   can write them);
4. its GPU VA spaces: what is left (reservations) dropped, every page table freed, the application space's
   first (the privileged space maps its tables), each after a TLB flush of its root;
5. the process record.

Once every process is gone VidMm holds only what it held when the adapter started: the footprint
(:meth:`wddmsim.system.Adapter.footprint`) checks that (reliability-plan I19).

A driver call that fails on the way (``DxgkDdiDestroyContext`` returning an error, ``DxgkDdiDestroyAllocation``
raising) does not stop the teardown (decision 0054): VidMm finishes reclaiming what is its own -- context images
the driver did not hand back go with their device -- and reports each refusal in :attr:`Teardown.refused`; only
what the driver itself kept (its context or allocation record) is left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import final

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.status import NT_SUCCESS, DdiError, InvalidArgument
from wddmsim.vidmm.cpu.locks import AllocationLocks
from wddmsim.vidmm.device import Device, Process
from wddmsim.vidmm.events import ObjectDestroyed, ProcessLifetime
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.buffers import PagingBufferPool
from wddmsim.vidmm.residency import ResidencyManager
from wddmsim.vidmm.vaspace import GpuVaSpaces
from wddmsim.vidmm.work.submit import WorkSubmitter


@dataclass(frozen=True, slots=True)
class Refusal:
    """A driver call of a teardown that failed: what was called, on which handle, and what it answered."""

    call: str
    handle: int
    status: int
    detail: str

    def __str__(self) -> str:
        return f"{self.call} failed for {self.handle:#x}: {self.detail}"


@final
class Teardown:
    """Destroys what user mode created, in the documented order, leaving nothing behind."""

    def __init__(
        self,
        driver: KernelModeDriver,
        objects: ObjectTable,
        residency: ResidencyManager,
        work: WorkSubmitter,
        locks: AllocationLocks,
        va: GpuVaSpaces | None,
        *,
        forget_context: Callable[[HANDLE], None],
        free_pool: Callable[[PagingBufferPool], None],
    ) -> None:
        self.driver = driver
        self.objects = objects
        self.residency = residency
        self.work = work
        self.locks = locks
        self.va = va
        self._forget_context = forget_context
        """Drops VidMm's per-context records (its node, what the driver said of it)."""
        self._free_pool = free_pool
        """Frees a paging companion's buffer pool (unmapped from its aperture segment first, if it was mapped)."""
        self.refused: list[Refusal] = []
        """Every driver call a teardown made that failed (the teardown went on; decision 0054)."""

    # --- contexts ----------------------------------------------------------------------------------------------

    def destroy_context(self, context: HANDLE) -> None:
        """``D3DKMTDestroyContext``: the context's work completes, work queued for it behind a fence is
        cancelled, its paging companion goes, then ``DxgkDdiDestroyContext``."""
        objects = self.objects
        device = objects.context_device(context)
        self.work.quiesce(device)
        for sync in [s for s in objects.sync_objects.values() if s.device.process is device.process]:
            for waiter in [w for w in sync.waiting if w.context == context]:
                sync.waiting.remove(waiter)
                waiter.cancel()
        if self.va is not None:
            companion = self.va.updates.drop_companion(context)
            if companion is not None:
                self._destroy(companion.context, "DxgkDdiDestroyContext (paging companion)")
                self._free_pool(companion.stream.pool)
        self._destroy(context, "DxgkDdiDestroyContext")
        del objects.contexts[context]
        self._forget_context(context)
        self._emit("context", context, device.handle)

    def _destroy(self, context: HANDLE, what: str) -> None:
        """``DxgkDdiDestroyContext``; a failure is recorded and the teardown goes on."""
        try:
            status = self.driver.destroy_context(context)
        except DdiError as error:
            self._refuse(what, context, int(error.status), str(error))
            return
        if not NT_SUCCESS(status):
            self._refuse(what, context, int(status), f"returned {status!r}")

    def _refuse(self, call: str, handle: int, status: int, detail: str) -> None:
        self.refused.append(Refusal(call, int(handle), status, detail))

    # --- synchronisation objects -----------------------------------------------------------------------------

    def destroy_sync_object(self, handle: HANDLE) -> None:
        """``D3DKMTDestroySynchronizationObject``: work still waiting for a value of it is cancelled (nothing can
        signal it now); its fence slot is freed once no queued paging work can write it."""
        residency = self.residency
        sync = self.objects.sync_object(handle, "hSyncObject")
        waiting, sync.waiting = sync.waiting, []
        for waiter in waiting:
            waiter.cancel()
        if sync.promised > sync.fence.value:  # paging work (system or companion) still writes the slot
            residency.settle()
            if self.va is not None:
                self.va.updates.wait_companions(sync.device.process)
        del self.objects.sync_objects[sync.handle]
        sync.fence.release()
        self._emit("sync_object", sync.handle, sync.device.handle)

    # --- devices ---------------------------------------------------------------------------------------------

    def destroy_device(self, handle: HANDLE) -> None:
        """``D3DKMTDestroyDevice`` -- also what a process's exit does to each of its devices, whatever state
        they are in (the module docstring gives the order)."""
        residency, objects = self.residency, self.objects
        device = objects.device(handle)
        if device is residency.system_device:
            raise InvalidArgument("hDevice", handle, "the system device lives as long as VidMm")
        residency.servicing.cancel_requests(device)
        self.work.quiesce(device)
        if self.va is not None:
            self.va.updates.wait_companions(device.process)
        owned = [a for a in objects.allocations_of(device) if not a.context]
        for a in owned:
            self.locks.abandon(a)
            a.pin_count = 0  # the kernel's pins on a dead device's allocations go with it
        for context in [c for c, d in objects.contexts.items() if d is device]:
            self.destroy_context(HANDLE(context))
        for sync in [s for s in objects.sync_objects.values() if s.device is device]:
            self.destroy_sync_object(sync.handle)
        for a in owned:
            try:
                residency.destroy_allocation(a.handle)
            except DdiError as error:
                if a.handle in objects.allocations:
                    raise  # VidMm's own refusal (an inconsistency, not the driver's): it stops the teardown
                # DxgkDdiDestroyAllocation failed: VidMm's record is gone already; the driver kept its own
                self._refuse("DxgkDdiDestroyAllocation", a.handle, int(error.status), str(error))
        for a in [a for a in objects.allocations_of(device) if a.context]:
            residency.context_allocations.destroy_context_allocation(
                a.handle
            )  # images a refused DxgkDdiDestroyContext kept
        for queue in list(device.queues):
            residency.fences.close_queue(queue)
        del objects.devices[device.handle]
        self._emit("device", device.handle, device.process.handle)

    # --- processes -------------------------------------------------------------------------------------------

    def destroy_process(self, handle: HANDLE) -> None:
        """The process exits or is killed: its devices go, then its GPU VA spaces, then the process."""
        residency = self.residency
        process = self.objects.processes.get(handle)
        if process is None or process is residency.system_device.process:
            raise InvalidArgument("hProcess", handle, "is not a live user process")
        for device in self._devices(process):
            self.destroy_device(device.handle)
        if self.va is not None:
            self.va.destroy_space(process)
        del self.objects.processes[process.handle]
        self._emit("process", process.handle, HANDLE(0))
        events = residency.events
        events.emit(ProcessLifetime(time=events.clock.now, process=int(process.handle), action="exit"))
        residency.budgets.pending.pop(process, None)
        residency.budgets.rebalance("process-exit")

    def _devices(self, process: Process) -> list[Device]:
        return self.objects.devices_of(process)

    def _emit(self, kind: str, handle: HANDLE, owner: HANDLE) -> None:
        events = self.residency.events
        events.emit(ObjectDestroyed(time=events.clock.now, kind=kind, handle=int(handle), owner=int(owner)))
