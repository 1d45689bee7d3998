"""Context allocations: ``DXGK_OPERATION_INIT_CONTEXT_RESOURCE`` (10) and ``..._UPDATE_CONTEXT_ALLOCATION`` (13).

The reference GPU's context image is a 64-byte header -- ``CONTEXT_MAGIC``, the image's GPU VA, its size, the
allocation handle -- followed by state the driver owns.  InitContextResource zeroes the whole image with FILL
packets (per run of pages when the destination is an MDL) and then writes the header.  UpdateContextAllocation
writes the driver's private data after the header, through the paging process's VA of the allocation.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.core.units import PAGE_SHIFT, pages_spanned
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import DmaWriter, multipass
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.kmd.allocations import ResourceKind
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState

CONTEXT_MAGIC: Final = int.from_bytes(b"WCTXIMG1", "little")
CONTEXT_HEADER_SIZE: Final = 64


def build_init_context_resource(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_INIT_CONTEXT_RESOURCE``."""
    p = args.InitContextResource
    allocation = state.allocations.get(p.hAllocation, "InitContextResource.hAllocation")
    if allocation.desc.kind != ResourceKind.CONTEXT:
        raise DriverContractError("InitContextResource.hAllocation", p.hAllocation, "is not a context allocation")
    size = allocation.size
    dest = p.Destination
    header = np.array([CONTEXT_MAGIC, dest.GpuVirtualAddress, size, p.hAllocation], dtype=np.uint64)
    if dest.SegmentId:
        state.segments.memory_segment(dest.SegmentId, "InitContextResource.Destination.SegmentId")
        state.segments.address(
            dest.SegmentId, GpuPhysAddr(dest.SegmentAddress), size, "InitContextResource.Destination"
        )
        base_word = hw_address(Space.GPU_PHYS, dest.SegmentAddress)

        def address_of(page: int) -> tuple[int, int]:
            return hw_address(Space.GPU_PHYS, dest.SegmentAddress + (page << PAGE_SHIFT)), pages_spanned(size) - page
    else:
        mdl = dest.pMdl
        if mdl is None or mdl.ByteOffset or mdl.page_count < pages_spanned(size):
            raise DriverContractError("InitContextResource.Destination.pMdl", mdl, "must hold the whole context image")
        pfns = mdl.pfns.astype(np.int64)
        base_word = hw_address(Space.SYSTEM, int(pfns[0]) << PAGE_SHIFT)

        def address_of(page: int) -> tuple[int, int]:
            run = 1
            while page + run < pfns.shape[0] and pfns[page + run] == pfns[page] + run:
                run += 1
            return hw_address(Space.SYSTEM, int(pfns[page]) << PAGE_SHIFT), run

    writer = DmaWriter(args)
    total = pages_spanned(size)
    max_pages = state.config.max_copy_bytes >> PAGE_SHIFT

    def emit(done: int) -> int:
        word, run = address_of(done)
        pages = min(run, total - done, max_pages)
        fill_size = min(pages << PAGE_SHIFT, size - (done << PAGE_SHIFT))
        return pages if writer.put(cmd.Fill(word, fill_size, 0)) else 0

    tail = cmd.encode(cmd.WriteQwords(base_word, 4, header))
    return multipass(args, writer, total, emit, tail=tail)


def build_update_context_allocation(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION``."""
    p = args.UpdateContextAllocation
    if not state.wddm2:
        raise DriverContractError("Operation", int(p.OPERATION), "UpdateContextAllocation is a WDDM 2.0 operation")
    data = p.pDriverPrivateData
    if p.DriverPrivateDataSize != len(data) or len(data) % 8:
        raise DriverContractError(
            "UpdateContextAllocation.DriverPrivateDataSize",
            p.DriverPrivateDataSize,
            "must equal the data's length, a multiple of 8",
        )
    if CONTEXT_HEADER_SIZE + len(data) > p.ContextAllocationSize or p.ContextAllocation % 8:
        raise DriverContractError(
            "UpdateContextAllocation.ContextAllocationSize",
            p.ContextAllocationSize,
            "the state must fit after the 64-byte header",
        )
    words = np.frombuffer(data, dtype="<u8")
    writer = DmaWriter(args)
    base = p.ContextAllocation + CONTEXT_HEADER_SIZE
    total = int(words.shape[0])

    def emit(done: int) -> int:
        room = cmd.max_qwords_in(writer.room)
        if room < 1:
            return 0
        n = min(total - done, room)
        word = hw_address(Space.GPU_VA, base + 8 * done)
        writer.pos += cmd.encode_write_qwords_into(
            writer.buf, writer.pos, word, n, words[done : done + n].astype(np.uint64)
        )
        return n

    return multipass(args, writer, total, emit)
