"""``DXGKRNL_INTERFACE``: the callbacks the driver receives in ``DxgkDdiStartDevice``.

Interrupts go to the GPU scheduler; context allocations to the residency manager, which exists only after the
device started (it needs the driver's answers first), so it is bound late.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARGCB_CREATECONTEXTALLOCATION, DXGKARGCB_UPDATECONTEXTALLOCATION
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.ddi.submit import DXGKARGCB_NOTIFY_INTERRUPT_DATA
from wddmsim.vidmm.scheduler import GpuScheduler

if TYPE_CHECKING:
    from wddmsim.vidmm.residency import ResidencyManager


@final
class DxgkrnlCallbacks:
    def __init__(self, scheduler: GpuScheduler) -> None:
        self.scheduler = scheduler
        self.residency: ResidencyManager | None = None

    def notify_interrupt(self, data: DXGKARGCB_NOTIFY_INTERRUPT_DATA) -> None:
        """``DxgkCbNotifyInterrupt``."""
        self.scheduler.notify_interrupt(data)

    def _manager(self) -> ResidencyManager:
        if self.residency is None:
            raise DdiError(NTSTATUS.STATUS_UNSUCCESSFUL, "context allocations are available once the device started")
        return self.residency

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbCreateContextAllocation``."""
        return self._manager().create_context_allocation(args)

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbUpdateContextAllocation``."""
        return self._manager().update_context_allocation(args)

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS:
        """``DxgkCbDestroyContextAllocation``."""
        return self._manager().destroy_context_allocation(hAllocation)
