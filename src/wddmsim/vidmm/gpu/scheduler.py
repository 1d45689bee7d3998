"""The GPU scheduler: numbers submissions, hands them to ``DxgkDdiSubmitCommand`` and waits on their fences.

It is the ``DxgkrnlInterface`` the driver calls back: ``DxgkCbNotifyInterrupt`` with ``DMA_COMPLETED`` advances
a node's completed fence; a fault interrupt is recorded and makes every wait fail, so the caller can take the
reset path.  Waiting runs the simulated clock until the fence completes; if the clock runs out of work first
the GPU has hung (a timeout, in TDR terms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.clock import Clock
from wddmsim.core.events import EventLog
from wddmsim.core.pointer import CpuPointer
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.flags import DXGK_SUBMITCOMMANDFLAGS
from wddmsim.ddi.submit import DXGK_INTERRUPT_TYPE, DXGKARG_SUBMITCOMMAND, DXGKARGCB_NOTIFY_INTERRUPT_DATA
from wddmsim.vidmm.events import GpuFaultReported

_PAGING = DXGK_SUBMITCOMMANDFLAGS(Paging=True)
_USER = DXGK_SUBMITCOMMANDFLAGS()
_DMA_COMPLETED = DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED


class GpuHung(Exception):
    """A wait cannot complete: the GPU faulted or ran out of work before the fence (the TDR trigger)."""


@dataclass(slots=True)
class _Node:
    """A node's fences: the last submitted and the last completed."""

    submitted: int = 0
    completed: int = 0


@final
class GpuScheduler:
    """Per-node submission fences, completion tracking and waits."""

    def __init__(self, driver: KernelModeDriver, clock: Clock, events: EventLog, *, nodes: int = 1) -> None:
        self.driver = driver
        self.clock = clock
        self.events = events
        self.nodes = [_Node() for _ in range(nodes)]
        self.faults: dict[int, DXGKARGCB_NOTIFY_INTERRUPT_DATA] = {}
        """Node -> the fault it reported (a faulted node runs nothing until VidMm resets it)."""

    # --- DxgkrnlInterface ---------------------------------------------------------------------------------

    def notify_interrupt(self, data: DXGKARGCB_NOTIFY_INTERRUPT_DATA) -> None:
        """``DxgkCbNotifyInterrupt``."""
        kind = data.InterruptType
        completed = data.DmaCompleted
        if kind == _DMA_COMPLETED and completed is not None:
            done = self.nodes[completed.NodeOrdinal]
            if completed.SubmissionFenceId > done.completed:  # a comparison, not max(): once per submission
                done.completed = completed.SubmissionFenceId
            return
        if kind in (
            DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
            DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_FAULTED,
        ):
            page = data.DmaPageFaulted
            node = page.NodeOrdinal if page else (data.DmaFaulted.NodeOrdinal if data.DmaFaulted else 0)
            self.faults[node] = data
            fence = page.FaultedFenceId if page else (data.DmaFaulted.FaultedFenceId if data.DmaFaulted else 0)
            address = page.FaultedVirtualAddress if page else 0
            detail = f"{page.FaultErrorCode.name}, level {page.PageTableLevel}" if page else "DMA fault"
            self.events.emit(
                GpuFaultReported(time=self.clock.now, interrupt=kind.name, fence=fence, address=address, detail=detail)
            )

    # --- submission and waits -----------------------------------------------------------------------------

    def submit(
        self,
        context: HANDLE,
        node: int,
        *,
        address: int,
        size: int,
        start: int,
        end: int,
        paging: bool = True,
        segment_id: int = 0,
        private_data: CpuPointer | None = None,
        private_size: int = 0,
    ) -> FenceValue:
        """Submit bytes ``[start, end)`` of the DMA buffer at physical ``address`` -- or, with ``segment_id``, at
        segment address ``address`` of that segment (``DmaBufferSegmentId``); returns its fence.

        ``paging``: a paging buffer (``DXGK_SUBMITCOMMANDFLAGS.Paging``), the only kind that may name physical
        memory.  ``private_data``/``private_size``: the buffer's ``pDmaBufferPrivateData`` as VidMm passed it to
        ``DxgkDdiBuildPagingBuffer`` (decision 0111), submitted whole."""
        state = self.nodes[node]
        state.submitted += 1
        fence: FenceValue = state.submitted  # type: ignore[assignment]  # FenceValue(...) without its call
        self.driver.submit_command(
            DXGKARG_SUBMITCOMMAND(
                hContext=context,
                DmaBufferPhysicalAddress=address,
                DmaBufferSegmentId=segment_id,
                DmaBufferSize=size,
                DmaBufferSubmissionStartOffset=start,
                DmaBufferSubmissionEndOffset=end,
                SubmissionFenceId=fence,
                Flags=_PAGING if paging else _USER,
                NodeOrdinal=node,
                pDmaBufferPrivateData=private_data,
                DmaBufferPrivateDataSubmissionEndOffset=private_size if private_data is not None else 0,
            )
        )
        return fence

    def completed(self, node: int) -> FenceValue:
        return FenceValue(self.nodes[node].completed)

    def is_complete(self, node: int, fence: int) -> bool:
        return self.nodes[node].completed >= fence

    @property
    def fault(self) -> DXGKARGCB_NOTIFY_INTERRUPT_DATA | None:
        """The first fault any node reported (None: no node is faulted)."""
        return next(iter(self.faults.values()), None)

    def wait(self, node: int, fence: int) -> None:
        """Run the GPU until ``fence`` completes on ``node``; :class:`GpuHung` if that node faulted or never will.

        A fault on another node does not stop the wait: engines fail alone (wddm-spec section 2.8).
        """
        state = self.nodes[node]
        if node in self.faults:
            raise GpuHung(f"node {node} reported a fault")
        if state.completed >= fence:
            return
        # The clock's run_until with the test written out: no closure called per step (once per paging operation).
        step, faults = self.clock.step, self.faults
        while state.completed < fence and node not in faults and step():
            pass
        if node in faults:
            raise GpuHung(f"node {node} reported a fault")
        if state.completed < fence:
            raise GpuHung(f"node {node} stopped before fence {fence} (last completed {state.completed})")

    def poll(self) -> bool:
        """A CPU that polls instead of waiting lets time pass: the GPU runs its next pending event (a real GPU runs
        alongside the CPU; the model's runs only while the CPU waits or polls).  A client polling a fence or a
        ``DonotWait`` lock thus sees the work complete after finitely many polls.  False: nothing was pending."""
        return self.clock.step()

    def clear_fault(self, node: int) -> None:
        """After the node's engine was reset: everything submitted to it counts as retired."""
        self.faults.pop(node, None)
        self.nodes[node].completed = self.nodes[node].submitted

    def wait_idle(self) -> None:
        for index, state in enumerate(self.nodes):
            self.wait(index, state.submitted)

    def abandon(self) -> None:
        """After a reset: everything submitted counts as retired; faults are cleared."""
        for state in self.nodes:
            state.completed = state.submitted
        self.faults.clear()
