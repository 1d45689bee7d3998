"""``DxgkDdiBuildPagingBuffer`` of the simple driver: the operations VidMm sends a WDDM 1.x segment-model driver
that reports no swizzling ranges, no ``UseAlternateVA``, no context images and no ``ExplicitResidencyNotification``
(decision 0075).

=================================  =========================================================================
``TRANSFER`` (0)                   COPY packets, at most ``max_copy_bytes`` each; the system side as page
                                   extents; ``MultipassOffset`` counts pages; ``TransferEnd`` adds a SYNC
``FILL`` (1)                       FILL packets over a memory segment; ``MultipassOffset`` counts pages
``DISCARD_CONTENT`` (2)            checked, nothing written: a linear driver keeps no layout state to drop
``READ_PHYSICAL`` (3)              one READ_MEM of the widest naturally aligned 1-8 bytes
``WRITE_PHYSICAL`` (4)             one WRITE_MEM of as many bytes, writing back what is there (``Preserve``)
``MAP_APERTURE_SEGMENT`` (5)       WRITE_QWORDS of aperture-table entries; ``MultipassOffset`` counts pages
``UNMAP_APERTURE_SEGMENT`` (6)     one repeated WRITE_QWORDS pointing every page at ``DummyPage``
anything else                      refused: ``STATUS_NOT_SUPPORTED``, naming ``Operation``
=================================  =========================================================================

A malformed request of a supported operation is refused with ``STATUS_INVALID_PARAMETER`` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, pages_spanned
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION, DXGKARG_BUILDPAGINGBUFFER, Op
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.drivers.simple.allocations import AllocationTable
from wddmsim.drivers.simple.dma import multipass
from wddmsim.drivers.simple.layout import SegmentLayout
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.aperture import GART_ENTRY, GART_ENTRY_SIZE, gart_entry
from wddmsim.hw.gpu import Gpu

_SRC_PAGES: Final = cmd.COPY_FLAGS["SrcPages"].shifted_mask
_DST_PAGES: Final = cmd.COPY_FLAGS["DstPages"].shifted_mask
_GART_VALID: Final = np.uint64(GART_ENTRY["Valid"].shifted_mask)
_GART_SNOOP: Final = np.uint64(GART_ENTRY["Snoop"].shifted_mask)
_GART_PFN: Final = np.uint64(GART_ENTRY["Pfn"].lsb)
_MAX_REPEAT: Final = 0xFFFF_FFFF
"""The most words one repeated WRITE_QWORDS writes (its count is a u32)."""


@dataclass(frozen=True, slots=True)
class PagingState:
    """What a build reads: the hardware, the segments, the allocations, the largest packet."""

    gpu: Gpu
    layout: SegmentLayout
    allocations: AllocationTable
    max_copy_pages: int


Builder = Callable[[PagingState, DXGKARG_BUILDPAGINGBUFFER], NTSTATUS]


def build(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer``: dispatch on ``Operation``; what this driver does not do is refused."""
    builder = BUILDERS.get(args.Operation)
    if builder is None:
        raise InvalidArgument(
            "Operation",
            int(args.Operation),
            f"{_name(args.Operation)} is not supported by the simple driver (WDDM 1.x segment model, no swizzling, "
            "no alternate VA, no context images, no residency notifications: decision 0075)",
            NTSTATUS.STATUS_NOT_SUPPORTED,
        )
    return builder(state, args)


def _name(operation: object) -> str:
    return operation.name if isinstance(operation, Op) else f"operation {operation!r}"


# --- DXGK_OPERATION_TRANSFER ----------------------------------------------------------------------------------


def build_transfer(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_TRANSFER``: bytes ``[TransferOffset, +TransferSize)`` between a segment and a segment or
    an MDL; the MDL side's page ``i`` is MDL page ``MdlOffset + i``."""
    p = args.Transfer
    flags = p.Flags
    if flags.Swizzle or flags.Unswizzle:
        raise InvalidArgument(
            "Transfer.Flags", flags.Value, "Swizzle/Unswizzle: this driver reports no swizzled allocation"
        )
    if flags.Reserved:
        raise InvalidArgument("Transfer.Flags.Reserved", flags.Reserved, "must be zero")
    if p.TransferOffset % PAGE_SIZE or p.TransferOffset < 0:
        raise InvalidArgument("Transfer.TransferOffset", p.TransferOffset, "must be a non-negative multiple of 4 KiB")
    if p.TransferSize < 0:
        raise InvalidArgument("Transfer.TransferSize", p.TransferSize, "must not be negative")
    if p.hAllocation:
        state.allocations.get(p.hAllocation, "Transfer.hAllocation")
    pages = pages_spanned(p.TransferSize)
    src = _side(state, p.Source, "Transfer.Source", p.TransferOffset, p.TransferSize, p.MdlOffset, pages)
    dst = _side(state, p.Destination, "Transfer.Destination", p.TransferOffset, p.TransferSize, p.MdlOffset, pages)
    if isinstance(src, MDL) and isinstance(dst, MDL):
        raise InvalidArgument("Transfer.Destination.SegmentId", 0, "system memory to system memory is no transfer")

    def next_packet(done: int, room: int) -> tuple[cmd.Packet, int] | None:
        count = min(pages - done, state.max_copy_pages)
        flags = 0
        extents = None
        if isinstance(src, MDL) or isinstance(dst, MDL):
            mdl = src if isinstance(src, MDL) else dst
            assert isinstance(mdl, MDL)
            first = p.MdlOffset + done
            extents = cmd.make_extents(mdl.pfns[first : first + count])
            fit = cmd.max_extents_in(room)
            if fit < 1:
                return None
            if extents.shape[0] > fit:  # as many whole extents as the room holds
                extents = extents[:fit]
                count = int(cmd.extent_pages(extents).sum())
            flags = _SRC_PAGES if isinstance(src, MDL) else _DST_PAGES
        size = min(count << PAGE_SHIFT, p.TransferSize - (done << PAGE_SHIFT))
        src_word = 0 if isinstance(src, MDL) else src + (done << PAGE_SHIFT)
        dst_word = 0 if isinstance(dst, MDL) else dst + (done << PAGE_SHIFT)
        copy = cmd.Copy(src_word, dst_word, size, src_pages=flags == _SRC_PAGES, dst_pages=flags == _DST_PAGES)
        if extents is not None:
            copy.extents = extents
        return copy, count

    return multipass(args, pages, next_packet, cmd.Sync() if flags.TransferEnd else None)


def _side(
    state: PagingState,
    location: DXGK_TRANSFER_LOCATION,
    name: str,
    offset: int,
    size: int,
    mdl_offset: int,
    pages: int,
) -> MDL | int:
    """One side of a transfer: its MDL (checked to hold the pages), or the packet word of its first byte."""
    if location.SegmentId:
        return state.layout.word(location.SegmentId, location.SegmentAddress + offset, size, name)
    mdl = location.pMdl
    if mdl is None:
        raise InvalidArgument(f"{name}.pMdl", None, "SegmentId 0 means an MDL describes this side")
    if mdl.ByteOffset:
        raise InvalidArgument(f"{name}.pMdl.ByteOffset", mdl.ByteOffset, "paging MDLs start on a page")
    if mdl_offset < 0 or mdl_offset + pages > mdl.page_count:
        raise InvalidArgument(
            "Transfer.MdlOffset", mdl_offset, f"{pages} page(s) from it leave the MDL's {mdl.page_count}"
        )
    return mdl


# --- DXGK_OPERATION_FILL, DISCARD_CONTENT ---------------------------------------------------------------------


def build_fill(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_FILL``: ``FillSize`` bytes of a memory segment with the 32-bit ``FillPattern``."""
    p = args.Fill
    if p.hAllocation:
        state.allocations.get(p.hAllocation, "Fill.hAllocation")
    if not 0 <= p.FillPattern <= 0xFFFF_FFFF:
        raise InvalidArgument("Fill.FillPattern", p.FillPattern, "is a 32-bit UINT")
    if p.FillSize < 0:
        raise InvalidArgument("Fill.FillSize", p.FillSize, "must not be negative")
    state.layout.memory(p.Destination.SegmentId, "Fill.Destination.SegmentId")
    base = state.layout.word(p.Destination.SegmentId, p.Destination.SegmentAddress, p.FillSize, "Fill.Destination")
    total = pages_spanned(p.FillSize)

    def next_packet(done: int, room: int) -> tuple[cmd.Packet, int] | None:
        count = min(total - done, state.max_copy_pages)
        size = min(count << PAGE_SHIFT, p.FillSize - (done << PAGE_SHIFT))
        return cmd.Fill(base + (done << PAGE_SHIFT), size, p.FillPattern), count

    return multipass(args, total, next_packet)


def build_discard_content(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_DISCARD_CONTENT``: checked, and nothing written -- the driver keeps no per-allocation
    layout state (no swizzling range, no compression) that the discard would have to drop."""
    p = args.DiscardContent
    if p.Flags.Reserved:
        raise InvalidArgument("DiscardContent.Flags.Reserved", p.Flags.Reserved, "must be zero")
    state.layout.memory(p.SegmentId, "DiscardContent.SegmentId")
    size = state.allocations.get(p.hAllocation, "DiscardContent.hAllocation").size if p.hAllocation else 0
    state.layout.word(p.SegmentId, p.SegmentAddress, size, "DiscardContent")
    return multipass(args, 0, lambda done, room: None)


# --- DXGK_OPERATION_READ_PHYSICAL, WRITE_PHYSICAL ----------------------------------------------------------------


def _access_size(address: int) -> int:
    """The widest naturally aligned access of at most 8 bytes at ``address``."""
    return next(size for size in (8, 4, 2, 1) if address % size == 0)


def build_read_physical(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_READ_PHYSICAL``: a GPU read at ``PhysicalAddress`` (AGP/CPU coherency)."""
    p = args.ReadPhysical
    size = _access_size(p.PhysicalAddress)
    word = state.layout.word(p.SegmentId, p.PhysicalAddress, size, "ReadPhysical")
    return multipass(args, 1, lambda done, room: (cmd.ReadMem(word, size), 1))


def build_write_physical(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_WRITE_PHYSICAL``: a GPU write at ``PhysicalAddress`` of the bytes already there."""
    p = args.WritePhysical
    size = _access_size(p.PhysicalAddress)
    word = state.layout.word(p.SegmentId, p.PhysicalAddress, size, "WritePhysical")
    return multipass(args, 1, lambda done, room: (cmd.WriteMem(word, size, preserve=True), 1))


# --- DXGK_OPERATION_MAP_APERTURE_SEGMENT, UNMAP_APERTURE_SEGMENT ------------------------------------------------


def _aperture_range(state: PagingState, name: str, segment_id: int, offset: int, count: int, handle: int) -> None:
    segment = state.layout.get(segment_id, f"{name}.SegmentId")
    if not segment.aperture:
        raise InvalidArgument(f"{name}.SegmentId", segment_id, "must be the aperture segment")
    pages = segment.size >> PAGE_SHIFT
    if offset < 0 or count < 0 or offset + count > pages:
        raise InvalidArgument(f"{name}.OffsetInPages", offset, f"{count} page(s) from it leave the aperture's {pages}")
    if handle:
        state.allocations.get(handle, f"{name}.hAllocation")


def _table_word(state: PagingState, page: int) -> int:
    """The packet word of aperture page ``page``'s table entry."""
    return hw_address(Space.GPU_PHYS, state.gpu.aperture.table_offset + page * GART_ENTRY_SIZE)


def build_map_aperture_segment(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_MAP_APERTURE_SEGMENT``: aperture pages ``OffsetInPages..`` -> MDL pages ``MdlOffset..``."""
    p = args.MapApertureSegment
    _aperture_range(state, "MapApertureSegment", p.SegmentId, p.OffsetInPages, p.NumberOfPages, p.hAllocation)
    if p.Flags.Value >> 1:
        raise InvalidArgument("MapApertureSegment.Flags.Reserved", p.Flags.Value >> 1, "must be zero")
    if p.MdlOffset < 0 or p.MdlOffset + p.NumberOfPages > p.pMdl.page_count:
        raise InvalidArgument(
            "MapApertureSegment.MdlOffset",
            p.MdlOffset,
            f"{p.NumberOfPages} page(s) leave the MDL's {p.pMdl.page_count}",
        )
    snoop = _GART_SNOOP if p.Flags.CacheCoherent else np.uint64(0)
    pfns = p.pMdl.pfns

    def next_packet(done: int, room: int) -> tuple[cmd.Packet, int] | None:
        count = min(p.NumberOfPages - done, cmd.max_qwords_in(room))
        if count < 1:
            return None
        first = p.MdlOffset + done
        entries = (pfns[first : first + count].astype(np.uint64) << _GART_PFN) | _GART_VALID | snoop
        return cmd.WriteQwords(_table_word(state, p.OffsetInPages + done), count, entries), count

    return multipass(args, p.NumberOfPages, next_packet)


def build_unmap_aperture_segment(state: PagingState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DXGK_OPERATION_UNMAP_APERTURE_SEGMENT``: every page of the range -> ``DummyPage`` (the range stays
    GPU-readable, as the DDI requires)."""
    p = args.UnmapApertureSegment
    _aperture_range(state, "UnmapApertureSegment", p.SegmentId, p.OffsetInPages, p.NumberOfPages, p.hAllocation)
    if p.DummyPage % PAGE_SIZE or not state.gpu.system.contains(p.DummyPage, PAGE_SIZE):
        raise InvalidArgument("UnmapApertureSegment.DummyPage", p.DummyPage, "must be a page of system memory")
    dummy = np.array([gart_entry(p.DummyPage >> PAGE_SHIFT)], dtype=np.uint64)

    def next_packet(done: int, room: int) -> tuple[cmd.Packet, int] | None:
        count = min(p.NumberOfPages - done, _MAX_REPEAT)
        word = _table_word(state, p.OffsetInPages + done)
        return cmd.WriteQwords(word, count, dummy, repeat=True), count

    return multipass(args, p.NumberOfPages, next_packet)


BUILDERS: Final[dict[Op, Builder]] = {
    Op.DXGK_OPERATION_TRANSFER: build_transfer,
    Op.DXGK_OPERATION_FILL: build_fill,
    Op.DXGK_OPERATION_DISCARD_CONTENT: build_discard_content,
    Op.DXGK_OPERATION_READ_PHYSICAL: build_read_physical,
    Op.DXGK_OPERATION_WRITE_PHYSICAL: build_write_physical,
    Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT: build_map_aperture_segment,
    Op.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT: build_unmap_aperture_segment,
}
"""What the simple driver builds; every other ``DXGK_BUILDPAGINGBUFFER_OPERATION`` is refused."""
