"""``DXGK_OPERATION_MAP_APERTURE_SEGMENT`` (5), ``UNMAP_APERTURE_SEGMENT`` (6), ``MAP_APERTURE_SEGMENT2`` (17).

Mapping writes aperture-table entries with WRITE_QWORDS packets, in paging-buffer order, so a mapping takes
effect exactly where VidMm placed it in the stream and never disturbs other ranges in use.  ``MultipassOffset``
counts the pages mapped.  Unmapping points every page at ``DummyPage`` with one repeated word: the range stays
GPU-accessible (reads see the dummy page), as the DDI requires.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import DmaWriter, multipass
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.aperture import GART_ENTRY, GART_ENTRY_SIZE, gart_entry
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState

_VALID: Final = np.uint64(GART_ENTRY["Valid"].shifted_mask)
_SNOOP: Final = np.uint64(GART_ENTRY["Snoop"].shifted_mask)
_PFN_SHIFT: Final = np.uint64(GART_ENTRY["Pfn"].lsb)

PfnSource = Callable[[int, int], npt.NDArray[np.uint64]]
"""``(first, count)`` -> the page numbers to map at pages ``[first, first + count)`` of the operation."""


def _table_word(state: DriverState, page: int) -> int:
    """Packet address of the aperture-table entry of aperture page ``page``."""
    return hw_address(Space.GPU_PHYS, state.gpu.aperture.table_offset + page * GART_ENTRY_SIZE)


def _check_range(state: DriverState, name: str, segment_id: int, offset: int, count: int) -> None:
    segment = state.segments.aperture_segment(segment_id, f"{name}.SegmentId")
    pages = segment.size >> PAGE_SHIFT
    if offset < 0 or count < 0 or offset + count > pages:
        raise DriverContractError(
            f"{name}.OffsetInPages", offset, f"{count} page(s) from it leave the aperture's {pages}"
        )


def _map_pages(
    state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER, first_page: int, pfns_at: PfnSource, count: int, coherent: bool
) -> NTSTATUS:
    writer = DmaWriter(args)
    snoop = _SNOOP if coherent else np.uint64(0)

    def emit(done: int) -> int:
        room = cmd.max_qwords_in(writer.room)
        if room < 1:
            return 0
        n = min(count - done, room)
        entries = (pfns_at(done, n) << _PFN_SHIFT) | _VALID | snoop
        writer.pos += cmd.encode_write_qwords_into(
            writer.buf, writer.pos, _table_word(state, first_page + done), n, entries
        )
        return n

    return multipass(args, writer, count, emit)


def build_map_aperture_segment(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_MAP_APERTURE_SEGMENT``."""
    p = args.MapApertureSegment
    if state.config.map_aperture2:
        raise DriverContractError(
            "Operation", int(p.OPERATION), "a driver that opted into MapApertureSegment2 no longer receives op 5"
        )
    _check_common(
        state, "MapApertureSegment", p.SegmentId, p.OffsetInPages, p.NumberOfPages, p.hAllocation, p.Flags.Value
    )
    if p.MdlOffset < 0 or p.MdlOffset + p.NumberOfPages > p.pMdl.page_count:
        raise DriverContractError(
            "MapApertureSegment.MdlOffset",
            p.MdlOffset,
            f"{p.NumberOfPages} page(s) from it leave the MDL's {p.pMdl.page_count}",
        )
    pfns = p.pMdl.pfns
    base = p.MdlOffset
    return _map_pages(
        state, args, p.OffsetInPages, lambda d, n: pfns[base + d : base + d + n], p.NumberOfPages, p.Flags.CacheCoherent
    )


def build_map_aperture_segment2(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_MAP_APERTURE_SEGMENT2`` (contiguous or page-array ADL)."""
    p = args.MapApertureSegment2
    if not state.config.map_aperture2:
        raise DriverContractError(
            "Operation", int(p.OPERATION), "MapApertureSegment2 needs DXGK_VIDMMCAPS.MapAperture2Supported"
        )
    _check_common(
        state, "MapApertureSegment2", p.SegmentId, p.OffsetInPages, p.NumberOfPages, p.hAllocation, p.Flags.Value
    )
    if p.AdlOffset < 0 or p.AdlOffset + p.NumberOfPages > p.Adl.PageCount:
        raise DriverContractError(
            "MapApertureSegment2.AdlOffset",
            p.AdlOffset,
            f"{p.NumberOfPages} page(s) from it leave the ADL's {p.Adl.PageCount}",
        )
    if p.CpuVisibleAddress is not None:
        allocation = state.allocations.get(p.hAllocation, "MapApertureSegment2.hAllocation") if p.hAllocation else None
        if allocation is None:
            raise DriverContractError(
                "MapApertureSegment2.CpuVisibleAddress",
                p.CpuVisibleAddress.address,
                "is only given for allocations created with MapApertureCpuVisible",
            )
    adl, base = p.Adl, p.AdlOffset
    return _map_pages(
        state, args, p.OffsetInPages, lambda d, n: adl.page_numbers(base + d, n), p.NumberOfPages, p.Flags.CacheCoherent
    )


def _check_common(
    state: DriverState, name: str, segment_id: int, offset: int, count: int, handle: int, flags: int
) -> None:
    _check_range(state, name, segment_id, offset, count)
    if handle:
        state.allocations.get(handle, f"{name}.hAllocation")
    if flags >> 1:
        raise DriverContractError(f"{name}.Flags.Reserved", flags >> 1, "must be zero")


def build_unmap_aperture_segment(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_UNMAP_APERTURE_SEGMENT``: every page -> ``DummyPage``."""
    p = args.UnmapApertureSegment
    _check_range(state, "UnmapApertureSegment", p.SegmentId, p.OffsetInPages, p.NumberOfPages)
    if p.hAllocation:
        state.allocations.get(p.hAllocation, "UnmapApertureSegment.hAllocation")
    if p.DummyPage % PAGE_SIZE or not state.gpu.system.contains(p.DummyPage, PAGE_SIZE):
        raise DriverContractError("UnmapApertureSegment.DummyPage", p.DummyPage, "must be a page of system memory")
    writer = DmaWriter(args)
    dummy = np.array([gart_entry(p.DummyPage >> PAGE_SHIFT)], dtype=np.uint64)
    max_run = 0xFFFFFFFF

    def emit(done: int) -> int:
        if writer.room < cmd.write_qwords_length(1):
            return 0
        n = min(p.NumberOfPages - done, max_run)
        word = _table_word(state, p.OffsetInPages + done)
        writer.pos += cmd.encode_write_qwords_into(writer.buf, writer.pos, word, n, dummy, repeat=True)
        return n

    return multipass(args, writer, p.NumberOfPages, emit)
