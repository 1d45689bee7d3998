"""The calls of VidMm's parts into parts built after them (decision 0060).

Room for a page table evicts allocations whose mappings, views and work must follow the move: the recursion
between the residency core and its move observers is the domain's, so it cannot be removed, only closed in one
place.  The composition root (:class:`~wddmsim.vidmm.manager.VideoMemoryManager`) builds the parts in dependency
order and hands the earlier ones -- the paging process and stream, the VA services, work submission, the CPU
locks, the driver's callbacks -- a :class:`LateCalls`, whose every call goes to the part the composition holds
when it is made.  No part keeps a back-pointer, and no part is given one after it was built.
"""

from __future__ import annotations

from typing import Protocol, final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARGCB_CREATECONTEXTALLOCATION, DXGKARGCB_UPDATECONTEXTALLOCATION
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue, SyncObject
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.paging.buffers import PagingBufferPool
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency import ResidencyManager
from wddmsim.vidmm.segments import SegmentSpace
from wddmsim.vidmm.vaspace import GpuVaSpaces
from wddmsim.vidmm.work.submit import WorkSubmitter


class Composition(Protocol):
    """What :class:`LateCalls` reaches in the composition root (read when a call is made)."""

    @property
    def work(self) -> WorkSubmitter: ...

    @property
    def va(self) -> GpuVaSpaces | None: ...

    def new_companion_pool(self, count: int) -> PagingBufferPool:
        """Paging buffers for a paging companion, where ``PagingBufferSegmentId`` says."""
        ...


@final
class LateCalls:
    """Calls of the parts built before the residency manager (and work submission) into them (decision 0060).

    Room for a page table evicts allocations whose mappings, views and work must follow the move: the recursion
    is the domain's.  The parts are built in dependency order; the earlier ones -- the paging process and
    stream, the reset path, the VA services, work submission, the CPU locks, the driver's callbacks -- get these
    calls, each of which goes to the part the composition holds when it is made.  A call before that part exists
    is refused (``STATUS_UNSUCCESSFUL``), as a callback before ``DxgkDdiStartDevice`` returned would be; only the
    reset path's step skips the parts not built yet (a reset must run to its end whenever it comes).
    """

    def __init__(self, vidmm: Composition) -> None:
        self._vidmm = vidmm

    def _residency(self) -> ResidencyManager:
        found: ResidencyManager | None = vars(self._vidmm).get("residency")
        if found is None:
            raise DdiError(NTSTATUS.STATUS_UNSUCCESSFUL, "VidMm's residency manager is not built yet")
        return found

    # room and fences (the paging process, the VA services)

    def make_room(self, space: SegmentSpace, size: int, owner: object, *, alignment: int = 0) -> int | None:
        """None before the residency manager exists: there is no allocation to evict yet."""
        residency: ResidencyManager | None = vars(self._vidmm).get("residency")
        return None if residency is None else residency.placement.make_room(space, size, owner, alignment=alignment)

    def signal(self, queue: PagingQueue) -> FenceValue:
        return self._residency().waits.signal(queue)

    def hold(self, a: VidMmAllocation) -> None:
        self._residency().placement.hold(a)

    def unhold(self, a: VidMmAllocation) -> None:
        self._residency().placement.unhold(a)

    def release(self, sync: SyncObject) -> None:
        self._residency().fences.release(sync)

    def quiesce(self, device: Device) -> None:
        self._vidmm.work.quiesce(device)

    def quiesce_allocation(self, handle: HANDLE) -> None:
        self._vidmm.work.quiesce_allocation(handle)

    def settle_paging(self) -> None:
        """Submit what is built and wait for the paging queue to drain (nothing is queued before it exists: the
        paging process writes its first tables while it is built)."""
        paging: PagingStream | None = vars(self._vidmm).get("paging")
        if paging is not None:
            paging.wait(paging.flush())

    def unique_protections(self, a: VidMmAllocation) -> list[tuple[int, int, int]]:
        va = self._vidmm.va
        return [(0, a.size // PAGE_SIZE, 0)] if va is None else va.mappings.unique_protections(a)

    def new_companion_pool(self, count: int) -> PagingBufferPool:
        return self._vidmm.new_companion_pool(count)

    # the reset path

    def after_adapter_reset(self, reason: str) -> None:
        """After ``DxgkDdiRestartFromTimeout``: the allocations' part (residency), then the page-table trees'
        (VA spaces) -- each once it is built (a reset while VidMm is being composed has neither yet)."""
        residency: ResidencyManager | None = vars(self._vidmm).get("residency")
        if residency is not None:
            residency.outages.on_adapter_reset(reason)
        va: GpuVaSpaces | None = vars(self._vidmm).get("va")
        if va is not None:
            va.on_adapter_reset(reason)

    # work submission

    def ensure_resident(self, device: Device) -> int:
        return self._residency().servicing.ensure_resident(device)

    # the CPU locks

    def service(self) -> None:
        self._residency().servicing.service()

    def settle(self) -> None:
        self._residency().settle()

    def poll(self) -> None:
        self._residency().fences.poll()

    def paging_done(self, a: VidMmAllocation, *, wait: bool) -> bool:
        return self._residency().servicing.paging_done(a, wait=wait)

    def published(self, a: VidMmAllocation) -> bool:
        return self._residency().where(a.handle).published

    def bring_into_memory(self, a: VidMmAllocation, *, cause: MoveCause) -> bool:
        return self._residency().servicing.bring_into_memory(a, cause=cause)

    def evict_for_cpu(self, a: VidMmAllocation, *, discard: bool) -> None:
        self._residency().servicing.evict_for_cpu(a, discard=discard)

    # the driver's context-allocation callbacks

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS:
        return self._residency().context_allocations.create_context_allocation(args)

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS:
        return self._residency().context_allocations.update_context_allocation(args)

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS:
        return self._residency().context_allocations.destroy_context_allocation(hAllocation)
