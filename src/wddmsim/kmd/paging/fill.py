"""``DXGK_OPERATION_FILL`` (1): FILL packets of at most ``max_copy_bytes`` over a memory segment.

``MultipassOffset`` counts the 4 KiB pages filled.  Fill never targets an aperture segment or system memory.
"""

from __future__ import annotations

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.core.units import PAGE_SHIFT, pages_spanned
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import DmaWriter, multipass
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState


def build_fill(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_FILL``."""
    p = args.Fill
    if p.hAllocation:
        state.allocations.get(p.hAllocation, "Fill.hAllocation")
    state.segments.memory_segment(p.Destination.SegmentId, "Fill.Destination.SegmentId")
    if p.FillSize < 0 or not 0 <= p.FillPattern <= 0xFFFFFFFF:
        raise DriverContractError("Fill.FillPattern", p.FillPattern, "is a 32-bit UINT; FillSize must not be negative")
    state.segments.address(
        p.Destination.SegmentId, GpuPhysAddr(p.Destination.SegmentAddress), p.FillSize, "Fill.Destination"
    )
    writer = DmaWriter(args)
    max_pages = state.config.max_copy_bytes >> PAGE_SHIFT
    total = pages_spanned(p.FillSize)
    base = p.Destination.SegmentAddress

    def emit(done: int) -> int:
        pages = min(total - done, max_pages)
        size = min(pages << PAGE_SHIFT, p.FillSize - (done << PAGE_SHIFT))
        dst = hw_address(Space.GPU_PHYS, base + (done << PAGE_SHIFT))
        return pages if writer.put(cmd.Fill(dst, size, p.FillPattern)) else 0

    return multipass(args, writer, total, emit)
