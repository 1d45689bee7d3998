"""What VidMm's parts ask of one another, as small protocols (TTM's ``ttm_device_funcs``: a table of calls handed
in at construction, not a back-pointer assigned afterwards).

The residency core tells the VA services, the CPU locks and work submission of every move
(:class:`~wddmsim.vidmm.moves.causes.MoveObserver`); they, the paging process and the VA services' page tables in turn
need room in full segments, paging fences and quiescent devices from it.  That recursion is the domain's (room
for a page table evicts an allocation whose mappings must follow), so it cannot be removed, only closed in one
place: the composition root (:mod:`wddmsim.vidmm.manager`) builds the parts in dependency order and hands the
earlier ones these protocols (decision 0060).  No module imports a later one for them.
"""

from __future__ import annotations

from typing import Protocol

from wddmsim.core.addresses import FenceValue
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARGCB_CREATECONTEXTALLOCATION, DXGKARGCB_UPDATECONTEXTALLOCATION
from wddmsim.ddi.status import NTSTATUS
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue, SyncObject
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.segments import SegmentSpace


class VaResidency(Protocol):
    """What the GPU VA services need of residency and work submission."""

    def make_room(self, space: SegmentSpace, size: int, owner: object, *, alignment: int = 0) -> int | None:
        """A range for a page table in a full segment (:class:`MakeRoom`)."""
        ...

    def signal(self, queue: PagingQueue) -> FenceValue:
        """Give the paging work just built the queue's next fence value; returns it."""
        ...

    def hold(self, a: VidMmAllocation) -> None:
        """VidMm's own residency reference (a tile pool queued updates map)."""
        ...

    def unhold(self, a: VidMmAllocation) -> None: ...

    def release(self, sync: SyncObject) -> None:
        """Run the work waiting on ``sync`` whose value it has reached."""
        ...

    def quiesce(self, device: Device) -> None:
        """The device's work in flight completes."""
        ...


class LockResidency(Protocol):
    """What the CPU locks need of residency: moves for the CPU's sake, and paging work they must wait for."""

    def service(self) -> None:
        """The paging worker catches up (the lock sees where the allocation really is)."""
        ...

    def settle(self) -> None:
        """Submit what is built and wait until the paging engine has run it."""
        ...

    def poll(self) -> None:
        """Time passes for a CPU that polls."""
        ...

    def paging_done(self, a: VidMmAllocation, *, wait: bool) -> bool:
        """Whether the paging work queued on ``a`` has run (with ``wait``: it runs first)."""
        ...

    def published(self, a: VidMmAllocation) -> bool:
        """Whether the paging fence of the move that put ``a`` where it is has passed."""
        ...

    def bring_into_memory(self, a: VidMmAllocation, *, cause: MoveCause) -> bool:
        """``a`` into a memory segment (False, ``a`` where it was, if none can take it)."""
        ...

    def evict_for_cpu(self, a: VidMmAllocation, *, discard: bool) -> None:
        """``a`` to system memory now (cause ``lock``), its bytes there once this returns."""
        ...


class ContextAllocationCalls(Protocol):
    """``DxgkCbCreateContextAllocation`` and friends, as the residency manager answers them."""

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS: ...

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS: ...

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS: ...
