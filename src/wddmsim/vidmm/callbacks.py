"""``DXGKRNL_INTERFACE``: the callbacks the driver receives in ``DxgkDdiStartDevice``.

Interrupts go to the GPU scheduler; context allocations to the residency manager, which exists only after the
device started (it needs the driver's answers first): the composition hands in the calls that reach it
(:class:`~wddmsim.vidmm.ports.ContextAllocationCalls`), which refuse until it exists.
"""

from __future__ import annotations

from typing import final

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARGCB_CREATECONTEXTALLOCATION, DXGKARGCB_UPDATECONTEXTALLOCATION
from wddmsim.ddi.status import NTSTATUS
from wddmsim.ddi.submit import DXGKARGCB_NOTIFY_INTERRUPT_DATA
from wddmsim.vidmm.ports import ContextAllocationCalls
from wddmsim.vidmm.scheduler import GpuScheduler


@final
class DxgkrnlCallbacks:
    def __init__(self, scheduler: GpuScheduler, contexts: ContextAllocationCalls) -> None:
        self.scheduler = scheduler
        self.contexts = contexts

    def notify_interrupt(self, data: DXGKARGCB_NOTIFY_INTERRUPT_DATA) -> None:
        """``DxgkCbNotifyInterrupt``."""
        self.scheduler.notify_interrupt(data)

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbCreateContextAllocation``."""
        return self.contexts.create_context_allocation(args)

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbUpdateContextAllocation``."""
        return self.contexts.update_context_allocation(args)

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS:
        """``DxgkCbDestroyContextAllocation``."""
        return self.contexts.destroy_context_allocation(hAllocation)
