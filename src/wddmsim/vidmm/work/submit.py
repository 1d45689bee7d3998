"""GPU work of the processes: DMA buffers submitted on their contexts, run through their own VA spaces.

What it models (wddm-spec sections 2.8 and 3.8):

- A device's work runs only once its whole residency list is resident: :meth:`WorkSubmitter.submit` pages back in
  whatever pressure took (``ResidencyManager.ensure_resident``) before the buffer is handed to
  ``DxgkDdiSubmitCommand``.
- Allocations of a device with work in flight are pinned: before one of them leaves its range, VidMm waits for the
  device's last submission to complete (so the work reads and writes the bytes where it expects them).
- A GPU fault in a context's work puts that context's device in error (``DEVICE_REMOVED``) and resets only that
  engine (``DxgkDdiResetEngine``); work of other devices the reset dropped is submitted again, and nothing of
  any other process or of the paging engine is touched.  If the engine cannot be reset, the adapter is
  (``DxgkDdiResetFromTimeout``, decision D6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import final

from wddmsim.core import liveness
from wddmsim.core.addresses import FenceValue
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.ddi.submit import DXGKARG_RESETENGINE, DXGKARGCB_NOTIFY_INTERRUPT_DATA
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device
from wddmsim.vidmm.gpu.reset import ResetPath
from wddmsim.vidmm.gpu.scheduler import GpuHung, GpuScheduler
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.moves.causes import STAY, LeaveHow
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.segments import SegmentSpace
from wddmsim.vidmm.vaspace import GpuVaSpaces

_ENGINE_RESETS_PER_WAIT = 8
"""Engine resets one wait may go through before VidMm resets the whole adapter instead (decision D6): each
removes the faulting device, so more than this means resets are not curing the engine."""


@dataclass(slots=True, eq=False)
class Submission:
    """One DMA buffer of a context, as submitted (``fence`` is its current submission fence on ``node``)."""

    context: HANDLE
    device: Device
    node: int
    fence: int
    mdl: MDL
    mapping: CpuMapping
    size: int
    patch: Callable[[], None] | None = None
    """``DxgkDdiPatch`` of a segment-model DMA buffer, called before each submission of it."""
    allocations: frozenset[int] | None = None
    """The allocations it references (a segment-model allocation list); None: any of its device's."""


@final
class WorkSubmitter:
    """Submits the processes' DMA buffers and handles what their faults do."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        scheduler: GpuScheduler,
        objects: ObjectTable,
        reset: ResetPath,
        contexts: dict[int, int],
        *,
        ensure_resident: Callable[[Device], int],
        va: GpuVaSpaces | None = None,
        paging_node: int = 0,
    ) -> None:
        self.driver = driver
        self.paging_node = paging_node
        """Where VidMm's paging buffers run: a fault there is never cured by an engine reset (it would drop them)."""
        self.mm = mm
        self.scheduler = scheduler
        self.objects = objects
        self._ensure_resident = ensure_resident
        """Pages in what a device's residency list holds that pressure took (the residency manager's)."""
        self.va = va
        """The GPU VA services (GpuMmu): a process's page tables come back before its work runs."""
        self.reset = reset
        self.nodes = contexts
        """Context -> the node it runs on."""
        self.in_flight: list[Submission] = []
        self.renamed: dict[tuple[int, int], int] = {}
        """(node, fence a caller holds) -> the fence it was submitted again under after an engine reset."""
        self.issued: dict[int, int] = {}
        """Context -> the last submission fence it was given (a wait for a later one could never return)."""

    # --- submission ------------------------------------------------------------------------------------------

    def submit(self, context: HANDLE, data: bytes) -> FenceValue:
        """Run ``data`` (the reference GPU's packets) on ``context``; returns the submission fence to wait for."""
        device, node = self._runnable(context)
        if not data or len(data) % 16:
            raise InvalidArgument(
                "DmaBufferSize",
                len(data),
                "must be a positive multiple of 16 bytes (whole packets)",
                HRESULT.E_INVALIDARG,
            )
        va = self.va
        if va is not None:
            va.bring_back(device.process)  # its page tables are in place before its residency list comes back
        self._ensure_resident(device)  # the residency list gates every context of the device
        if va is not None:
            va.resume(device.process)  # page-table work that needed its contexts idle has run
        mdl, mapping = self.mm.allocate_contiguous(len(data))
        mapping.data[: len(data)] = memoryview(data)
        return FenceValue(self.enqueue(Submission(context, device, node, 0, mdl, mapping, len(data))))

    def _runnable(self, context: HANDLE) -> tuple[Device, int]:
        device = self.objects.context_device(context)
        node = self.nodes.get(context)
        if node is None:
            raise InvalidArgument("hContext", context, "is not a context VidMm created", HRESULT.E_INVALIDARG)
        if device.removed is not None:
            raise DdiError(
                HRESULT.D3DDDIERR_DEVICEREMOVED, f"hDevice={int(device.handle):#x} was removed: {device.removed}"
            )
        return device, node

    def enqueue(self, entry: Submission) -> int:
        """Submit a DMA buffer VidMm holds (freed once it completed); returns its fence."""
        self._send(entry)
        self.in_flight.append(entry)
        return entry.fence

    def _send(self, entry: Submission) -> None:
        if entry.patch is not None:  # DxgkDdiPatch before every submission of a patched buffer, resubmissions too
            entry.patch()
        entry.fence = fence = self.scheduler.submit(
            entry.context,
            entry.node,
            address=int(entry.mdl.pfns[0]) << PAGE_SHIFT,
            size=entry.size,
            start=0,
            end=entry.size,
            paging=False,  # a user buffer: GPU VAs only, unless the driver patched it
        )
        self.issued[entry.context] = fence

    def wait(self, context: HANDLE, fence: FenceValue) -> None:
        """Wait on the CPU for work of ``context`` (``pfnWaitForSynchronizationObjectFromCpuCb`` on its fence).

        A fence the context was never given is refused (``fence`` named): with one CPU thread nothing could ever
        submit it, so the wait would not return.  Otherwise the wait ends: once the fence completes, with
        ``DEVICE_REMOVED`` if the device faulted, or -- the GPU stopping short of the fence, a timeout in TDR
        terms, or faults that keep coming back -- through the adapter-reset path (``DxgkDdiResetFromTimeout``).
        """
        device = self.objects.context_device(context)
        node = self.nodes[context]
        issued = self.issued.get(context, 0)
        if not 0 <= fence <= issued:
            raise InvalidArgument(
                "fence",
                fence,
                f"was never submitted on hContext={int(context):#x} (its last submission fence is {issued})",
                HRESULT.E_INVALIDARG,
            )
        resets = 0
        while True:
            liveness.charge("WorkSubmitter.wait")
            current = self.renamed.get((node, fence), fence)
            try:
                self.scheduler.wait(node, current)
            except GpuHung as error:
                resets += 1
                if resets > _ENGINE_RESETS_PER_WAIT:  # the engine keeps faulting: the whole adapter (D6)
                    self.reset.trigger(f"hContext={int(context):#x}: {resets - 1} engine resets did not help")
                self._hung(node, error)
                _removed(device)
                continue
            break
        self._retire()

    def busy(self, device: Device) -> bool:
        """Whether work of ``device`` is still in flight on the GPU."""
        return any(e.device is device and not self.scheduler.is_complete(e.node, e.fence) for e in self.in_flight)

    def quiesce_allocation(self, handle: HANDLE) -> None:
        """Until no work in flight references the allocation (its allocation lists, or its device's work)."""
        a = self.objects.allocations.get(handle)

        def uses(entry: Submission) -> bool:
            if entry.allocations is not None:
                return handle in entry.allocations
            return a is not None and entry.device is a.device

        self._drain(uses)

    def quiesce(self, device: Device) -> None:
        """Before an allocation of ``device`` moves: its work in flight completes (faults handled on the way)."""
        self._drain(lambda entry: entry.device is device)

    # --- a move observer of the residency core (MoveObserver, decision 0060) -----------------------------------

    def may_enter(self, a: VidMmAllocation, space: SegmentSpace) -> bool:
        """Work does not care where an allocation goes, only that it does not move under it."""
        return True

    def before_leave(self, a: VidMmAllocation, cause: MoveCause) -> LeaveHow:
        """Allocations of a device with work in flight are pinned: the work completes before one leaves its range.
        An adapter reset's loss waits for nothing (the engines were reset; every fence retired)."""
        if cause is not MoveCause.RESET:
            self.quiesce(a.device)
        return STAY

    def after_leave(self, a: VidMmAllocation) -> None:
        """Nothing: the work was waited for before the move."""

    def after_enter(self, a: VidMmAllocation) -> None:
        """Nothing: work runs only once its device's whole residency list is in place (:meth:`submit`)."""

    def may_forget(self, a: VidMmAllocation) -> None:
        """Work in flight never refuses a destroy: it is waited for (:meth:`forget`)."""

    def forget(self, a: VidMmAllocation) -> None:
        """Work in flight may still use a destroyed allocation: it completes before its VAs go."""
        self.quiesce(a.device)

    def _drain(self, selected: Callable[[Submission], bool]) -> None:
        """Until no selected work of a live device is in flight.  Work an engine reset submitted again is waited
        for too; every turn either completes work, removes a device or resets an engine -- and a bounded number
        of engine resets ends in the adapter reset, so the loop always ends."""
        resets = 0
        while True:
            liveness.charge("WorkSubmitter.quiesce")
            pending = [
                e
                for e in self.in_flight
                if selected(e) and e.device.removed is None and not self.scheduler.is_complete(e.node, e.fence)
            ]
            if not pending:
                break
            entry = pending[0]
            try:
                self.scheduler.wait(entry.node, entry.fence)
            except GpuHung as error:
                resets += 1
                if resets > _ENGINE_RESETS_PER_WAIT:
                    self.reset.trigger(f"quiescing work: {resets - 1} engine resets did not help")
                self._hung(entry.node, error)
        self._retire()

    def _hung(self, node: int, error: GpuHung) -> None:
        """A wait on ``node`` could not complete: a reported fault resets the engine; a GPU that stopped short
        of the fence without one is a timeout -- the adapter-reset path (``DxgkDdiResetFromTimeout``)."""
        if node in self.scheduler.faults:
            self._engine_fault(node)
        else:
            self.reset.trigger(f"timeout on node {node}: {error}")

    def forget_context(self, context: HANDLE) -> None:
        """The context was destroyed: its fences are no longer anyone's to wait for."""
        self.issued.pop(context, None)

    def _retire(self) -> None:
        for entry in list(self.in_flight):
            if self.scheduler.is_complete(entry.node, entry.fence) and entry.node not in self.scheduler.faults:
                self.in_flight.remove(entry)
                self.mm.free_pages(entry.mdl)

    # --- faults ----------------------------------------------------------------------------------------------

    def _engine_fault(self, node: int) -> None:
        """The node reported a fault: its context's device goes in error, the engine is reset, the other
        devices' dropped work runs again."""
        record = self.scheduler.faults.get(node)
        if record is None:
            return
        fence = _fence_of(record)
        culprit = next((e for e in self.in_flight if e.node == node and e.fence == fence), None)
        if culprit is not None:
            culprit.device.removed = f"GPU fault in its work: {_describe(record)}"
        if node == self.paging_node:
            # Paging buffers queued behind the fault would be dropped by an engine reset and count as run (F10):
            # the paging engine's faults take the adapter-reset path.
            self.reset.trigger(f"a fault on the paging node {node}: {_describe(record)}")
        args = DXGKARG_RESETENGINE(NodeOrdinal=node)
        try:
            status = self.driver.reset_engine(args)
        except Exception as error:  # the driver cannot reset the engine: the whole adapter then (D6)
            status = None
            reason = f"DxgkDdiResetEngine failed after a fault on node {node}: {error}"
        else:
            reason = f"DxgkDdiResetEngine returned {status!r} after a fault on node {node}"
        if status != NTSTATUS.STATUS_SUCCESS:
            self.reset.trigger(reason)
        self.scheduler.clear_fault(node)
        dropped = [e for e in self.in_flight if e.node == node and e.fence >= fence]
        for entry in dropped:
            if entry.device.removed is not None:
                self.in_flight.remove(entry)
                self.mm.free_pages(entry.mdl)
                continue
            old = entry.fence
            self._send(entry)
            for key, value in self.renamed.items():  # callers holding an older name follow it too
                if key[0] == node and value == old:
                    self.renamed[key] = entry.fence
            self.renamed[(node, old)] = entry.fence


def _removed(device: Device) -> None:
    """``DEVICE_REMOVED`` if ``device`` is in error."""
    if device.removed is not None:
        raise DdiError(
            HRESULT.D3DDDIERR_DEVICEREMOVED, f"hDevice={int(device.handle):#x} was removed: {device.removed}"
        ) from None


def _fence_of(record: DXGKARGCB_NOTIFY_INTERRUPT_DATA) -> int:
    if record.DmaPageFaulted is not None:
        return record.DmaPageFaulted.FaultedFenceId
    return record.DmaFaulted.FaultedFenceId if record.DmaFaulted is not None else 0


def _describe(record: DXGKARGCB_NOTIFY_INTERRUPT_DATA) -> str:
    page = record.DmaPageFaulted
    if page is not None:
        return (
            f"{page.FaultErrorCode.name} at VA {page.FaultedVirtualAddress:#x} "
            f"(flags {page.PageFaultFlags!r}, level {page.PageTableLevel}, fence {page.FaultedFenceId})"
        )
    return "DMA fault"
