"""Where the GPU fetches paging buffers from: ``DXGK_QUERYSEGMENTOUT4.PagingBufferSegmentId``.

0 (what COS reports): each buffer is fetched at its physical address in system memory.  An aperture segment's id:
VidMm maps each buffer into a range of that segment and the GPU fetches it through the aperture
(``DXGKARG_SUBMITCOMMAND.DmaBufferSegmentId`` and the segment address; wddm-spec section 1.1).

The map is itself a paging operation, so a pool is mapped through buffers that already work: at start, through a
one-buffer pool in plain system memory that is freed once the real pool is mapped (decision 0044); a replacement
pool (a resize, a companion's pool), through the pool in use.  A buffer is named by its segment address only once
its ``MapApertureSegment`` has executed, and its range goes back to the segment only after its
``UnmapApertureSegment`` has.  The ranges belong to VidMm, not to an allocation: memory pressure never takes them.
"""

from __future__ import annotations

from typing import final

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.base import NULL
from wddmsim.ddi.flags import DXGK_MAPAPERTUREFLAGS
from wddmsim.ddi.memory import DXGK_ADL, DXGK_ADL_FLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
)
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_buffer import PagingBuffer, PagingBufferPool
from wddmsim.vidmm.segments import MakeRoom, Segments, SegmentSpace


def paging_segment(segments: Segments, segment_id: int) -> SegmentSpace | None:
    """The segment ``PagingBufferSegmentId`` names (None for 0), checked: it must be an aperture segment."""
    if segment_id == 0:
        return None
    rule = f"must be 0 or the id of an aperture segment (segments are 1..{len(segments)})"
    if not 1 <= segment_id <= len(segments) or not segments.get(segment_id).aperture:
        raise InvalidArgument("PagingBufferSegmentId", segment_id, rule, NTSTATUS.STATUS_INVALID_PARAMETER)
    return segments.get(segment_id)


@final
class AperturePagingBuffers:
    """Maps paging-buffer pools into the aperture segment ``PagingBufferSegmentId`` names, and unmaps them."""

    def __init__(
        self, space: SegmentSpace, *, dummy_page: int, map_aperture2: bool, make_room: MakeRoom | None = None
    ) -> None:
        self.space = space
        self.dummy_page = dummy_page
        self.map_aperture2 = map_aperture2
        self.make_room = make_room
        """A range made by evicting allocations when the segment is full (the residency manager's, as for page
        tables)."""

    def place(self, pool: PagingBufferPool, stream: PagingStream) -> None:
        """Map every buffer of ``pool`` into a range of the segment, with operations built into ``stream`` (whose
        own pool is another one), and wait for them; then the buffers are fetched through the aperture.  Every
        range is taken before anything is built: when one cannot be had, nothing was mapped and none is kept."""
        if stream.pool is pool:
            raise ValueError("a pool cannot map itself: its buffers are not reachable yet")
        offsets: list[int] = []
        try:
            for buffer in pool.buffers:
                offsets.append(self._range(buffer))
        except BaseException:
            for offset in offsets:
                self.space.free(offset)
            raise
        for buffer, offset in zip(pool.buffers, offsets, strict=True):
            self._map(buffer, offset, stream)
        stream.wait(stream.flush())
        for buffer, offset in zip(pool.buffers, offsets, strict=True):
            buffer.segment_id = self.space.id
            buffer.segment_address = self.space.base + offset

    def release(self, pool: PagingBufferPool, stream: PagingStream) -> None:
        """Point ``pool``'s ranges at the dummy page (built into ``stream``, waited for) and free them."""
        if stream.pool is pool:
            raise ValueError("a pool cannot unmap itself while it is the stream's")
        mapped = [b for b in pool.buffers if b.segment_id == self.space.id]
        for buffer in mapped:
            stream.build(
                DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
                    hAllocation=NULL,
                    SegmentId=self.space.id,
                    OffsetInPages=(buffer.segment_address - self.space.base) >> PAGE_SHIFT,
                    NumberOfPages=_pages(buffer),
                    DummyPage=self.dummy_page,
                )
            )
        stream.wait(stream.flush())
        for buffer in mapped:
            self.space.free(buffer.segment_address - self.space.base)
            buffer.segment_id = buffer.segment_address = 0

    def _range(self, buffer: PagingBuffer) -> int:
        size = _pages(buffer) * PAGE_SIZE
        offset = self.space.allocate(size, buffer, from_end=True)  # at the top: they do not split the segment
        if offset is None and self.make_room is not None:
            offset = self.make_room(self.space, size, buffer)
        if offset is None:
            raise InvalidArgument(
                "PagingBufferSegmentId",
                self.space.id,
                f"the aperture segment has no free {size:#x}-byte range for a paging buffer",
                NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
            )
        return offset

    def _map(self, buffer: PagingBuffer, offset: int, stream: PagingStream) -> None:
        pages = _pages(buffer)
        first = offset >> PAGE_SHIFT
        if self.map_aperture2:
            stream.build(
                DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(
                    hAllocation=NULL,
                    SegmentId=self.space.id,
                    OffsetInPages=first,
                    NumberOfPages=pages,
                    Adl=DXGK_ADL(PageCount=pages, Flags=DXGK_ADL_FLAGS(), Pages=buffer.mdl.pfns[:pages]),
                    Flags=DXGK_MAPAPERTUREFLAGS(),
                )
            )
        else:
            stream.build(
                DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
                    hAllocation=NULL,
                    SegmentId=self.space.id,
                    OffsetInPages=first,
                    NumberOfPages=pages,
                    pMdl=buffer.mdl,
                    Flags=DXGK_MAPAPERTUREFLAGS(),
                )
            )


def _pages(buffer: PagingBuffer) -> int:
    """Pages of the buffer the GPU may fetch (its guard page is never mapped)."""
    return -(-buffer.size // PAGE_SIZE)
