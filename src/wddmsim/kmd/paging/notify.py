"""Notifications: ``DXGK_OPERATION_DISCARD_CONTENT`` (2) and ``DXGK_OPERATION_NOTIFY_RESIDENCY`` (15).

Neither moves bytes.  The driver updates its own record of the allocation and leaves a NOTE packet in the
stream, so the notification is ordered with the paging work around it (and visible in disassembly and in the
engine's log).  DiscardContent releases the allocation's detiling register; like Transfer it needs the
allocation idle to do that (``STATUS_GRAPHICS_ALLOCATION_BUSY`` otherwise).
"""

from __future__ import annotations

from enum import IntEnum

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import single_packet
from wddmsim.hw import commands as cmd
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState


class NoteKind(IntEnum):
    """The reference driver's NOTE kinds (``hw.commands.Note.kind``)."""

    DISCARD = 1
    RESIDENT = 2
    EVICTED = 3
    CONTEXT_INIT = 4


def build_discard_content(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_DISCARD_CONTENT``."""
    p = args.DiscardContent
    if p.Flags.Reserved:
        raise DriverContractError("DiscardContent.Flags.Reserved", p.Flags.Reserved, "must be zero")
    state.segments.memory_segment(p.SegmentId, "DiscardContent.SegmentId")
    allocation = state.allocations.get(p.hAllocation, "DiscardContent.hAllocation") if p.hAllocation else None
    size = allocation.size if allocation is not None else 0
    state.segments.address(p.SegmentId, GpuPhysAddr(p.SegmentAddress), size, "DiscardContent")
    if allocation is not None and allocation.holds_detile_window:
        if not p.Flags.AllocationIsIdle:
            return NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
        state.release_detile_windows(allocation)
    status = single_packet(args, cmd.Note(NoteKind.DISCARD, p.SegmentAddress, p.hAllocation))
    if status == NTSTATUS.STATUS_SUCCESS and allocation is not None:
        allocation.resident_at = None
    return status


def build_notify_residency(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_NOTIFY_RESIDENCY``."""
    p = args.NotifyResidency
    allocation = state.allocations.get(p.hAllocation, "NotifyResidency.hAllocation")
    address = p.PhysicalAddress
    if p.Resident:
        state.segments.get(address.SegmentId, "NotifyResidency.PhysicalAddress.SegmentId")
        note = cmd.Note(NoteKind.RESIDENT, (address.SegmentId << 56) | address.SegmentOffset, p.hAllocation)
    else:
        if address.SegmentId or address.SegmentOffset:
            raise DriverContractError(
                "NotifyResidency.PhysicalAddress",
                (address.SegmentId, address.SegmentOffset),
                "an eviction notification carries the invalid address (0, 0)",
            )
        note = cmd.Note(NoteKind.EVICTED, 0, p.hAllocation)
    status = single_packet(args, note)
    if status == NTSTATUS.STATUS_SUCCESS:
        allocation.resident_at = (address.SegmentId, address.SegmentOffset) if p.Resident else None
    return status
