"""The paging operations that move one allocation, in the documented order (the mechanism; no decisions).

Each method builds operations into VidMm's paging stream; they execute in order on the paging engine, so a
range freed by one move can be the destination of the next without a wait.  The residency manager decides
*what* moves; this module only knows *how* (wddm-spec.md section 1.4 and checklist item 29):

- into a memory segment: ``Fill`` with 0 for content never written, otherwise ``Transfer`` from the backing
  store (an MDL), then ``NotifyResidency`` (``Resident = 1``) for allocations that ask for it.  On a GpuMmu
  driver the copy and the fill go through the system paging process instead: chunk by chunk (at most half the
  scratch area each), both sides are mapped into the scratch area with ``UpdatePageTable`` in the driver's
  update mode, the scratch range's TLB entries are flushed (``FlushTlb``, decision D5), and
  ``TransferVirtual`` / ``FillVirtual`` moves the bytes;
- into an aperture segment: ``MapApertureSegment`` of the backing pages (``MapApertureSegment2`` with an ADL
  when the driver opts in with ``MapAperture2Supported``), then ``NotifyResidency``;
- out of a memory segment: ``NotifyResidency`` (``Resident = 0``, address (0, 0)) *before* the copy, then
  ``Transfer`` to the backing store -- or ``DiscardContent`` when the backing already holds the same bytes;
- out of an aperture segment: ``NotifyResidency``, then ``UnmapApertureSegment`` to the dummy page.
"""

from __future__ import annotations

from typing import final

import numpy as np

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_MAPAPERTUREFLAGS, DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import DXGK_ADL, DXGK_ADL_FLAGS, MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2,
    DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    DXGK_FILL_DESTINATION,
    DXGK_INITCONTEXTRESOURCE_DESTINATION,
    DXGK_TRANSFER_LOCATION,
)
from wddmsim.vidmm.allocation import Content, VidMmAllocation
from wddmsim.vidmm.move_kinds import Destination
from wddmsim.vidmm.moves.scratch import Direction, Pages, Scratch
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.segments import Placement, Segments

_SINGLE_SHOT = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)
_SWIZZLE = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True, Swizzle=True)
_UNSWIZZLE = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True, Unswizzle=True)


@final
class Mover:
    """Builds the paging operations of one allocation's move into the paging stream."""

    def __init__(
        self,
        paging: PagingStream,
        segments: Segments,
        *,
        dummy_page: int,
        map_aperture2: bool,
        scratch: Scratch | None = None,
    ) -> None:
        self.paging = paging
        self.segments = segments
        self.dummy_page = dummy_page
        self.map_aperture2 = map_aperture2
        self.scratch = scratch
        """The paging process's scratch area (GpuMmu): content moves by GPU VA through it."""

    def _pages(self, placement: Placement, size: int) -> Pages:
        return Pages(
            placement.segment_id, np.arange(size >> PAGE_SHIFT, dtype=np.uint64) + (placement.offset >> PAGE_SHIFT)
        )

    def _address(self, placement: Placement) -> int:
        return self.segments.get(placement.segment_id).base + placement.offset

    def _backing(self, a: VidMmAllocation) -> MDL:
        if a.backing is None:
            raise AssertionError(f"{a!r} has no backing store")
        return a.backing

    # --- in ------------------------------------------------------------------------------------------------

    def page_in(self, a: VidMmAllocation, placement: Placement) -> str:
        """Bring ``a``'s content to ``placement``; returns how (``fill``, ``transfer`` or ``map``)."""
        space = self.segments.get(placement.segment_id)
        if space.aperture:
            how = self._map(a, placement)
            if a.context and a.content != Content.DATA:
                self._init_context(a, None)
        elif a.context and a.content != Content.DATA:
            self._init_context(a, placement)
            how = "init"
        elif a.content == Content.DATA:
            if self.scratch is not None:
                self.scratch.transfer(
                    a, Pages(0, self._backing(a).pfns), self._pages(placement, a.size), Direction.SYSTEM_TO_LOCAL
                )
            else:
                # A swizzled allocation whose backing store was unswizzled for the CPU is swizzled again on the
                # way in (wddm-spec 4.5: VidMm tracks the swizzle state).
                swizzle = a.swizzled and a.backing_linear
                self.paging.build(
                    DXGK_BUILDPAGINGBUFFER_TRANSFER(
                        hAllocation=a.handle,
                        TransferSize=a.size,
                        Source=DXGK_TRANSFER_LOCATION.mdl(self._backing(a)),
                        Destination=DXGK_TRANSFER_LOCATION.segment(placement.segment_id, self._address(placement)),
                        Flags=_SWIZZLE if swizzle else _SINGLE_SHOT,
                    )
                )
            how = "transfer"
        else:
            # Never written (or discarded): zeros, so no byte of another process ever shows through.
            if self.scratch is not None:
                self.scratch.fill(a, self._pages(placement, a.size), 0)
            else:
                self.paging.build(
                    DXGK_BUILDPAGINGBUFFER_FILL(
                        hAllocation=a.handle,
                        FillSize=a.size,
                        FillPattern=0,
                        Destination=DXGK_FILL_DESTINATION(
                            SegmentId=placement.segment_id, SegmentAddress=self._address(placement)
                        ),
                    )
                )
            how = "fill"
        if a.notify:
            self._notify(a, placement)
        a.paging = self.paging.ticket()
        return how

    def _init_context(self, a: VidMmAllocation, placement: Placement | None) -> None:
        """``InitContextResource``: the driver initialises a context image where it now is (a segment range,
        or the backing pages an aperture range maps)."""
        if placement is None:
            destination = DXGK_INITCONTEXTRESOURCE_DESTINATION(SegmentId=0, pMdl=self._backing(a))
        else:
            destination = DXGK_INITCONTEXTRESOURCE_DESTINATION(
                SegmentId=placement.segment_id, SegmentAddress=self._address(placement)
            )
        self.paging.build(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(hAllocation=a.handle, Destination=destination))

    def _map(self, a: VidMmAllocation, placement: Placement) -> str:
        backing = self._backing(a)
        pages = a.size >> PAGE_SHIFT
        first = placement.offset >> PAGE_SHIFT
        # CacheCoherent only when cacheable pages go into a cache-coherent aperture segment (wddm-spec 1.4 op 5).
        coherent = bool(a.flags.Cached and self.segments.get(placement.segment_id).descriptor.Flags.CacheCoherent)
        flags = DXGK_MAPAPERTUREFLAGS(CacheCoherent=coherent)
        if self.map_aperture2:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(
                    hAllocation=a.handle,
                    SegmentId=placement.segment_id,
                    OffsetInPages=first,
                    NumberOfPages=pages,
                    Adl=DXGK_ADL(PageCount=pages, Flags=DXGK_ADL_FLAGS(), Pages=backing.pfns),
                    Flags=flags,
                )
            )
        else:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
                    hAllocation=a.handle,
                    SegmentId=placement.segment_id,
                    OffsetInPages=first,
                    NumberOfPages=pages,
                    pMdl=backing,
                    Flags=flags,
                )
            )
        return "map"

    # --- out -----------------------------------------------------------------------------------------------

    def page_out(
        self,
        a: VidMmAllocation,
        placement: Placement,
        *,
        keep_content: bool = True,
        unswizzle: bool = False,
        special: tuple[int, int] | None = None,
    ) -> Destination:
        """Take ``a`` out of ``placement`` into its backing store; returns ``SYSTEM`` or ``DISCARDED``.

        ``keep_content`` False drops the bytes (destroy, offer): nothing is copied.  ``unswizzle``: the system copy
        must be linear (the CPU will read it).  ``special``: ``(SwizzlingRangeId, SwizzlingRangeData)`` of an
        alternate-VA lock, whose transfer is a ``SpecialLockTransfer``.
        """
        try:
            return self._page_out(a, placement, keep_content, unswizzle, special)
        finally:
            a.paging = self.paging.ticket()  # the copy to the backing store is what a CPU view must wait for

    def _page_out(
        self,
        a: VidMmAllocation,
        placement: Placement,
        keep_content: bool,
        unswizzle: bool,
        special: tuple[int, int] | None,
    ) -> Destination:
        if a.notify:
            self._notify(a, None)
        space = self.segments.get(placement.segment_id)
        if space.aperture:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
                    hAllocation=a.handle,
                    SegmentId=placement.segment_id,
                    OffsetInPages=placement.offset >> PAGE_SHIFT,
                    NumberOfPages=a.size >> PAGE_SHIFT,
                    DummyPage=self.dummy_page,
                )
            )
            return Destination.SYSTEM if keep_content else Destination.DISCARDED
        linear_wanted = a.swizzled and unswizzle
        if keep_content and a.content == Content.DATA and (not a.backing_current or linear_wanted != a.backing_linear):
            if self.scratch is not None:
                self.scratch.transfer(
                    a, self._pages(placement, a.size), Pages(0, self._backing(a).pfns), Direction.LOCAL_TO_SYSTEM
                )
            else:
                self._transfer_out(a, placement, linear_wanted, special)
                a.backing_linear = linear_wanted
            return Destination.SYSTEM
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
                hAllocation=a.handle, SegmentId=placement.segment_id, SegmentAddress=self._address(placement)
            )
        )
        return Destination.SYSTEM if keep_content else Destination.DISCARDED

    def _transfer_out(
        self, a: VidMmAllocation, placement: Placement, unswizzle: bool, special: tuple[int, int] | None
    ) -> None:
        source = DXGK_TRANSFER_LOCATION.segment(placement.segment_id, self._address(placement))
        destination = DXGK_TRANSFER_LOCATION.mdl(self._backing(a))
        flags = _UNSWIZZLE if unswizzle else _SINGLE_SHOT
        if special is not None:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(
                    hAllocation=a.handle,
                    TransferSize=a.size,
                    Source=source,
                    Destination=destination,
                    Flags=flags,
                    SwizzlingRangeId=special[0],
                    SwizzlingRangeData=special[1],
                )
            )
            return
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                hAllocation=a.handle, TransferSize=a.size, Source=source, Destination=destination, Flags=flags
            )
        )

    def report_lost(self, a: VidMmAllocation, placement: Placement) -> None:
        """After an adapter reset (decision D6): the eviction of a lost allocation, as a ``Transfer`` of size 0."""
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                hAllocation=a.handle,
                TransferSize=0,
                Source=DXGK_TRANSFER_LOCATION.segment(placement.segment_id, self._address(placement)),
                Destination=DXGK_TRANSFER_LOCATION.mdl(self._backing(a)),
                Flags=_SINGLE_SHOT,
            )
        )
        a.paging = self.paging.ticket()

    def _notify(self, a: VidMmAllocation, placement: Placement | None) -> None:
        address = (
            D3DGPU_PHYSICAL_ADDRESS()
            if placement is None
            else D3DGPU_PHYSICAL_ADDRESS(SegmentId=placement.segment_id, SegmentOffset=placement.offset)
        )
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(
                hAllocation=a.handle, PhysicalAddress=address, Resident=placement is not None
            )
        )
