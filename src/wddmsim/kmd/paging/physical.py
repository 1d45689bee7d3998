"""``DXGK_OPERATION_READ_PHYSICAL`` (3) and ``DXGK_OPERATION_WRITE_PHYSICAL`` (4).

The GPU touches 1-8 bytes at ``PhysicalAddress`` -- the largest naturally aligned access of at most 8 bytes.
The data is irrelevant to VidMm, so the write stores back the bytes already there (``WRITE_MEM`` with
``Preserve``): the access happens, no content changes.  ``PhysicalAddress`` is a segment address
(``BaseAddress + offset``), like ``SegmentAddress`` elsewhere (docs/decisions/0003).
"""

from __future__ import annotations

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import single_packet
from wddmsim.hw import commands as cmd
from wddmsim.kmd.state import DriverState


def access_size(address: int) -> int:
    """1, 2, 4 or 8: the widest naturally aligned access at ``address``."""
    for size in (8, 4, 2):
        if address % size == 0:
            return size
    return 1


def build_read_physical(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_READ_PHYSICAL``."""
    p = args.ReadPhysical
    size = access_size(p.PhysicalAddress)
    word = state.segments.address(p.SegmentId, GpuPhysAddr(p.PhysicalAddress), size, "ReadPhysical")
    return single_packet(args, cmd.ReadMem(word, size))


def build_write_physical(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_WRITE_PHYSICAL``."""
    p = args.WritePhysical
    size = access_size(p.PhysicalAddress)
    word = state.segments.address(p.SegmentId, GpuPhysAddr(p.PhysicalAddress), size, "WritePhysical")
    return single_packet(args, cmd.WriteMem(word, size, preserve=True))
