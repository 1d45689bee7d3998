"""``DXGK_OPERATION_VIRTUAL_TRANSFER`` (8) and ``DXGK_OPERATION_VIRTUAL_FILL`` (9), through the paging process's VA.

Both VAs are paging-process addresses (the scratch area); ``AllocationOffsetInBytes`` says where in the
allocation the bytes are and is never added to them.  Packets move at most ``max_copy_bytes``;
``MultipassOffset`` counts the 4 KiB pages done.  The reference driver keeps an allocation's layout identical in
every location in WDDM 2.x, so no swizzling happens here (docs/decisions/0004).
"""

from __future__ import annotations

from wddmsim.core.units import PAGE_SHIFT, pages_spanned
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import DmaWriter, multipass
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import HW_ADDRESS, Space, hw_address
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState

_VA_LIMIT = HW_ADDRESS["address"].mask + 1
"""One past the last VA a GPU packet's address field holds."""


def _require_packet_range(va: int, size: int, argument: str) -> None:
    """``[va, va + size)`` must fit a packet's 60-bit address field: refused, named, before any byte is written
    (decision 0122), never the encoder's ValueError halfway through a multipass build."""
    if not (va >= 0 and va + max(size, 0) <= _VA_LIMIT):
        raise DriverContractError(
            argument, va, f"[{va:#x}, +{size:#x}) does not fit the 60-bit address field of a GPU packet"
        )


def _require_wddm2(state: DriverState, name: str) -> None:
    if not state.wddm2:
        raise DriverContractError(
            "Operation", name, "is a GpuMmu (WDDM 2.x) operation; this driver runs the segment model"
        )


def build_transfer_virtual(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_VIRTUAL_TRANSFER``."""
    p = args.TransferVirtual
    _require_wddm2(state, "TransferVirtual")
    if p.hAllocation:
        state.allocations.get(p.hAllocation, "TransferVirtual.hAllocation")
    if p.TransferSizeInBytes < 0 or p.Flags.Reserved:
        raise DriverContractError("TransferVirtual.TransferSizeInBytes", p.TransferSizeInBytes, "must not be negative")
    _require_packet_range(p.SourceVirtualAddress, p.TransferSizeInBytes, "TransferVirtual.SourceVirtualAddress")
    _require_packet_range(
        p.DestinationVirtualAddress, p.TransferSizeInBytes, "TransferVirtual.DestinationVirtualAddress"
    )
    writer = DmaWriter(args)
    total = pages_spanned(p.TransferSizeInBytes)
    max_pages = state.config.max_copy_bytes >> PAGE_SHIFT

    def emit(done: int) -> int:
        pages = min(total - done, max_pages)
        size = min(pages << PAGE_SHIFT, p.TransferSizeInBytes - (done << PAGE_SHIFT))
        src = hw_address(Space.GPU_VA, p.SourceVirtualAddress + (done << PAGE_SHIFT))
        dst = hw_address(Space.GPU_VA, p.DestinationVirtualAddress + (done << PAGE_SHIFT))
        return pages if writer.put(cmd.Copy(src, dst, size)) else 0

    return multipass(args, writer, total, emit)


def build_fill_virtual(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_VIRTUAL_FILL``."""
    p = args.FillVirtual
    _require_wddm2(state, "FillVirtual")
    if p.hAllocation:
        state.allocations.get(p.hAllocation, "FillVirtual.hAllocation")
    if p.FillSizeInBytes < 0 or not 0 <= p.FillPattern <= 0xFFFFFFFF:
        raise DriverContractError(
            "FillVirtual.FillPattern", p.FillPattern, "is a 32-bit UINT; the size must not be negative"
        )
    _require_packet_range(p.DestinationVirtualAddress, p.FillSizeInBytes, "FillVirtual.DestinationVirtualAddress")
    writer = DmaWriter(args)
    total = pages_spanned(p.FillSizeInBytes)
    max_pages = state.config.max_copy_bytes >> PAGE_SHIFT

    def emit(done: int) -> int:
        pages = min(total - done, max_pages)
        size = min(pages << PAGE_SHIFT, p.FillSizeInBytes - (done << PAGE_SHIFT))
        dst = hw_address(Space.GPU_VA, p.DestinationVirtualAddress + (done << PAGE_SHIFT))
        return pages if writer.put(cmd.Fill(dst, size, p.FillPattern)) else 0

    return multipass(args, writer, total, emit)
