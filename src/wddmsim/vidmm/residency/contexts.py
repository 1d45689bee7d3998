"""Context allocations (``DxgkCbCreateContextAllocation``, ``DxgkCbUpdateContextAllocation``,
``DxgkCbDestroyContextAllocation``): a context's image, placed and initialised by VidMm, resident until
destroyed.
"""

from __future__ import annotations

from typing import final

import numpy as np

from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import (
    D3DDDI_ALLOCATIONPRIORITY_MAXIMUM,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARGCB_CREATECONTEXTALLOCATION, DXGKARGCB_UPDATECONTEXTALLOCATION
from wddmsim.ddi.driver import SystemMemoryServices
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION,
)
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.moves.scratch import Scratch
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.placement import Placer


@final
class ContextAllocations:
    """The driver's context-allocation callbacks."""

    def __init__(
        self,
        objects: ObjectTable,
        placement: Placer,
        paging: PagingStream,
        mm: SystemMemoryServices,
        events: EventLog,
        *,
        system_device: Device,
        system_chunk: int,
        scratch: Scratch | None,
        paging_process: SystemPagingProcess | None,
    ) -> None:
        self.objects = objects
        self.placement = placement
        self.segments = placement.segments
        self.paging = paging
        self.mm = mm
        self.events = events
        self.system_device = system_device
        """Owner of context allocations created with ``hDevice`` NULL."""
        self.system_chunk = system_chunk
        self.scratch = scratch
        self.paging_process = paging_process
        self.pending: list[VidMmAllocation] = []
        """Created, not yet placed and initialised (:meth:`initialize_contexts`)."""

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbCreateContextAllocation``: place the allocation, ``InitContextResource`` it, return its handle
        in ``args.hAllocation`` once initialised.  It stays in its device's residency list until destroyed."""
        device = self.system_device if not args.hDevice else self.objects.device(args.hDevice, "hDevice")
        ids = self.segments.ids_in(args.SupportedSegmentSet)
        if args.Size <= 0 or not ids or args.PhysicalAdapterIndex:
            raise InvalidArgument(
                "Size" if args.Size <= 0 else ("SupportedSegmentSet" if not ids else "PhysicalAdapterIndex"),
                args.Size if args.Size <= 0 else (args.SupportedSegmentSet if not ids else args.PhysicalAdapterIndex),
                "a context allocation needs a size, at least one segment, and the one physical adapter",
                NTSTATUS.STATUS_INVALID_PARAMETER,
            )
        size = -(-args.Size // self.system_chunk) * self.system_chunk  # whole GPU pages, as every allocation
        preferred = [s for s in args.PreferredSegment.segment_ids() if s in ids]
        backing = self._commit_backing_of(size)
        a = VidMmAllocation(
            handle=self.objects.new_handle(),
            device=device,
            size=size,
            alignment=args.Alignment,
            preferred=tuple(preferred),
            read_set=args.SupportedSegmentSet,
            write_set=args.SupportedSegmentSet,
            eviction_set=args.EvictionSegmentSet,
            flags=args.Flags,
            priority=D3DDDI_ALLOCATIONPRIORITY_MAXIMUM,
            group=self.segments.get(preferred[0] if preferred else ids[0]).group,
            backing=backing,
            context=True,
        )
        self.objects.allocations[a.handle] = a
        device.process.account.created(a)
        a.residency_count = 1
        self.pending.append(a)
        args.hAllocation = a.handle
        return NTSTATUS.STATUS_SUCCESS

    def initialize_contexts(self) -> None:
        """Place and ``InitContextResource`` the context allocations created since the last call.

        The driver learns an allocation's handle only when ``DxgkCbCreateContextAllocation`` returns, and
        ``InitContextResource`` names it by that handle: so VidMm initialises it after the callback, before the
        context can run (:meth:`VideoMemoryManager.create_context` calls this when the driver returned).
        """
        pending, self.pending = self.pending, []
        for a in pending:
            if a.placement is None and not self.placement.place(a, {a.handle}, cause=MoveCause.PRESSURE):
                raise DdiError(
                    NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                    f"no segment can hold context allocation {int(a.handle):#x}",
                )
        self.paging.wait(self.paging.flush())

    def _commit_backing_of(self, size: int) -> MDL:
        try:
            return self.mm.allocate_pages_for_mdl(size, chunk=self.system_chunk)
        except (MemoryError, ValueError) as error:
            raise DdiError(
                NTSTATUS.STATUS_NO_MEMORY, f"no system memory for a {size:#x}-byte backing store: {error}"
            ) from None

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbUpdateContextAllocation``: map the allocation into the paging process's scratch area, issue
        ``UpdateContextAllocation`` with its VA there, and return once it executed."""
        a = self.objects.allocation(args.hAllocation)
        if not a.context:
            raise InvalidArgument(
                "hAllocation", args.hAllocation, "is not a context allocation", NTSTATUS.STATUS_INVALID_PARAMETER
            )
        if self.scratch is None or self.paging_process is None:
            return NTSTATUS.STATUS_NOT_SUPPORTED  # a WDDM 2.0 operation: GpuMmu drivers only
        if args.PrivateDriverDataSize != len(args.pPrivateDriverData):
            raise InvalidArgument(
                "PrivateDriverDataSize",
                args.PrivateDriverDataSize,
                "must equal the data's length",
                NTSTATUS.STATUS_INVALID_PARAMETER,
            )
        if a.placement is None and not self.placement.place(a, {a.handle}, cause=MoveCause.PRESSURE):
            return NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY
        placement = a.placement
        assert placement is not None
        assert a.backing is not None
        space = self.segments.get(placement.segment_id)
        pages = a.size // PAGE_SIZE
        if space.aperture:
            self.scratch.map_pages(self.paging_process.scratch_base, 0, a.backing.pfns[:pages])
        else:
            first = placement.offset // PAGE_SIZE
            self.scratch.map_pages(
                self.paging_process.scratch_base, space.id, np.arange(first, first + pages, dtype=np.uint64)
            )
        va = self.paging_process.scratch_base
        self.scratch.flush_range(va, va + a.size)
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION(
                ContextAllocation=va,
                ContextAllocationSize=a.size,
                pDriverPrivateData=args.pPrivateDriverData,
                DriverPrivateDataSize=args.PrivateDriverDataSize,
            )
        )
        self.paging.wait(self.paging.flush())
        return NTSTATUS.STATUS_SUCCESS

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS:
        """``DxgkCbDestroyContextAllocation``: the range and the backing store are freed (no copy)."""
        a = self.objects.allocation(hAllocation)
        if not a.context:
            raise InvalidArgument(
                "hAllocation", hAllocation, "is not a context allocation", NTSTATUS.STATUS_INVALID_PARAMETER
            )
        if a.placement is not None:
            self.placement.leave(a, cause=MoveCause.DESTROY, keep_content=False)
        self.paging.wait(self.paging.flush())
        if a.backing is not None:
            self.mm.free_pages(a.backing)
        del self.objects.allocations[a.handle]
        self.placement.policy.freed(a)
        a.device.process.account.destroyed(a)
        return NTSTATUS.STATUS_SUCCESS
