"""DXGK_OPERATION_TRANSFER and SPECIAL_LOCK_TRANSFER: all four directions, offsets, sub-transfers, swizzling,
and the ALLOCATION_BUSY / AllocationIsIdle protocol -- byte for byte against numpy expectations."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE, MiB
from wddmsim.ddi.allocation import DXGKARG_ACQUIRESWIZZLINGRANGE
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGKARG_BUILDPAGINGBUFFER,
)
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.reference import reference_driver
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.kmd.errors import DriverContractError
from wddmsim.scenarios.rig import PagingRig
from wddmsim.vidmm.events import BuildPagingBuffer

CPU, LOCAL, APERTURE = 1, 2, 3
BOTH = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)
TRANSFER_OFFSET = 3 * PAGE_SIZE
MDL_OFFSET = 5


def transfer(**fields: object) -> DXGK_BUILDPAGINGBUFFER_TRANSFER:
    fields.setdefault("Flags", BOTH)
    return DXGK_BUILDPAGINGBUFFER_TRANSFER(**fields)  # type: ignore[arg-type]


def test_segment_to_segment_applies_transfer_offset_to_both_sides(rig: PagingRig) -> None:
    data = rig.pattern(6 * PAGE_SIZE, seed=1)
    rig.write_segment(LOCAL, 1 * MiB, data)
    rig.execute(
        transfer(
            TransferOffset=TRANSFER_OFFSET,
            TransferSize=2 * PAGE_SIZE + 100,
            Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 1 * MiB)),
            Destination=Loc.segment(CPU, rig.segment_address(CPU, 2 * MiB)),
        )
    )
    got = rig.read_segment(CPU, 2 * MiB + TRANSFER_OFFSET, 2 * PAGE_SIZE + 101)
    assert np.array_equal(got[:-1], data[TRANSFER_OFFSET : TRANSFER_OFFSET + 2 * PAGE_SIZE + 100])
    assert got[-1] == 0, "not one byte more"


def test_segment_to_mdl_uses_transfer_offset_on_the_segment_and_mdl_offset_in_pages(rig: PagingRig) -> None:
    data = rig.pattern(8 * PAGE_SIZE, seed=2)
    rig.write_segment(LOCAL, 0, data)
    mdl = rig.backing(16 * PAGE_SIZE, scatter_seed=3)
    rig.execute(
        transfer(
            TransferOffset=TRANSFER_OFFSET,
            TransferSize=4 * PAGE_SIZE,
            MdlOffset=MDL_OFFSET,
            Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
            Destination=Loc.mdl(mdl),
        )
    )
    out = rig.read_mdl(mdl)
    assert np.array_equal(
        out[MDL_OFFSET * PAGE_SIZE : (MDL_OFFSET + 4) * PAGE_SIZE],
        data[TRANSFER_OFFSET : TRANSFER_OFFSET + 4 * PAGE_SIZE],
    )
    assert not out[: MDL_OFFSET * PAGE_SIZE].any() and not out[(MDL_OFFSET + 4) * PAGE_SIZE :].any()


def test_mdl_to_segment_mirrors_it(rig: PagingRig) -> None:
    mdl = rig.backing(16 * PAGE_SIZE, scatter_seed=4)
    data = rig.pattern(16 * PAGE_SIZE, seed=5)
    rig.write_mdl(mdl, data)
    rig.execute(
        transfer(
            TransferOffset=TRANSFER_OFFSET,
            TransferSize=4 * PAGE_SIZE,
            MdlOffset=MDL_OFFSET,
            Source=Loc.mdl(mdl),
            Destination=Loc.segment(CPU, rig.segment_address(CPU, 0)),
        )
    )
    got = rig.read_segment(CPU, TRANSFER_OFFSET, 4 * PAGE_SIZE)
    assert np.array_equal(got, data[MDL_OFFSET * PAGE_SIZE : (MDL_OFFSET + 4) * PAGE_SIZE])


def test_mdl_to_the_aperture_segment_writes_the_pages_mapped_there(rig: PagingRig) -> None:
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT

    target = rig.backing(4 * PAGE_SIZE, scatter_seed=6)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(SegmentId=APERTURE, OffsetInPages=10, NumberOfPages=4, pMdl=target)
    )
    source = rig.backing(4 * PAGE_SIZE)
    data = rig.pattern(4 * PAGE_SIZE, seed=7)
    rig.write_mdl(source, data)
    rig.execute(
        transfer(
            TransferSize=4 * PAGE_SIZE,
            Source=Loc.mdl(source),
            Destination=Loc.segment(APERTURE, rig.segment_address(APERTURE, 10 * PAGE_SIZE)),
        )
    )
    assert np.array_equal(rig.read_mdl(target), data)


def test_sub_transfers_start_and_end_in_order(rig: PagingRig) -> None:
    info = rig.buffer(8 * PAGE_SIZE)
    mdl = rig.backing(8 * PAGE_SIZE)
    src = Loc.segment(LOCAL, rig.segment_address(LOCAL, 0))
    first = transfer(
        hAllocation=info.hAllocation,
        TransferSize=4 * PAGE_SIZE,
        Source=src,
        Destination=Loc.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True),
    )
    rig.vidmm.paging.build(first)
    with pytest.raises(Exception, match="has not ended"):
        rig.driver.build_paging_buffer(
            DXGKARG_BUILDPAGINGBUFFER(first, pDmaBuffer=rig.vidmm.pool.buffers[1].cursor, DmaSize=4096)
        )
    last = transfer(
        hAllocation=info.hAllocation,
        TransferOffset=4 * PAGE_SIZE,
        TransferSize=4 * PAGE_SIZE,
        MdlOffset=4,
        Source=src,
        Destination=Loc.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(TransferEnd=True),
    )
    rig.vidmm.paging.build(last)
    assert reference_driver(rig.driver).state.pending_transfer is None
    orphan = transfer(TransferSize=PAGE_SIZE, Source=src, Destination=Loc.mdl(mdl), Flags=DXGK_TRANSFERFLAGS())
    with pytest.raises(DriverContractError, match="without TransferStart needs a pending transfer"):
        rig.driver.build_paging_buffer(
            DXGKARG_BUILDPAGINGBUFFER(orphan, pDmaBuffer=rig.vidmm.pool.buffers[2].cursor, DmaSize=4096)
        )


def test_a_zero_size_transfer_writes_nothing_and_succeeds(rig: PagingRig) -> None:
    """After a TDR, VidMm reports each lost allocation's eviction as a Transfer of size 0."""
    mdl = rig.backing(PAGE_SIZE)
    buffer = rig.vidmm.pool.buffers[0]
    args = DXGKARG_BUILDPAGINGBUFFER(
        transfer(
            TransferSize=0,
            Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
            Destination=Loc.mdl(mdl),
            Flags=DXGK_TRANSFERFLAGS(TransferStart=True),
        ),
        pDmaBuffer=buffer.cursor,
        DmaSize=buffer.remaining,
    )
    assert rig.driver.build_paging_buffer(args) == NTSTATUS.STATUS_SUCCESS
    assert args.pDmaBuffer == buffer.cursor


@pytest.mark.parametrize(("width", "height", "mips"), [(128, 32, 1), (1000, 300, 1), (2048, 512, 5), (384, 96, 3)])
def test_swizzle_then_unswizzle_returns_the_original_bytes_for_every_mip_level(
    rig: PagingRig, width: int, height: int, mips: int
) -> None:
    info = rig.surface(width, height, mips=mips, usage=AllocationUsage.SWIZZLED)
    size = info.Size
    linear = rig.pattern(size, seed=width)
    upload = rig.backing(size, scatter_seed=height)
    rig.write_mdl(upload, linear)
    where = rig.segment_address(LOCAL, 4 * MiB)
    rig.execute(
        transfer(
            hAllocation=info.hAllocation,
            TransferSize=size,
            Source=Loc.mdl(upload),
            Destination=Loc.segment(LOCAL, where),
            Flags=DXGK_TRANSFERFLAGS(Swizzle=True, TransferStart=True, TransferEnd=True),
        )
    )
    assert np.array_equal(rig.read_segment(LOCAL, 4 * MiB, size), rig.tiled_image(info.hAllocation, linear))
    back = rig.backing(size)
    rig.execute(
        transfer(
            hAllocation=info.hAllocation,
            TransferSize=size,
            Source=Loc.segment(LOCAL, where),
            Destination=Loc.mdl(back),
            Flags=DXGK_TRANSFERFLAGS(Unswizzle=True, TransferStart=True, TransferEnd=True),
        )
    )
    assert np.array_equal(rig.read_mdl(back), linear)


def test_swizzling_part_of_a_tile_row_is_a_contract_error(rig: PagingRig) -> None:
    info = rig.surface(1024, 64, usage=AllocationUsage.SWIZZLED)
    mdl = rig.backing(info.Size)
    args = DXGKARG_BUILDPAGINGBUFFER(
        transfer(
            hAllocation=info.hAllocation,
            TransferSize=PAGE_SIZE,
            Source=Loc.mdl(mdl),
            Destination=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
            Flags=DXGK_TRANSFERFLAGS(Swizzle=True, TransferStart=True, TransferEnd=True),
        ),
        pDmaBuffer=rig.vidmm.pool.buffers[0].cursor,
        DmaSize=4096,
    )
    with pytest.raises(DriverContractError, match="whole tile rows"):
        rig.driver.build_paging_buffer(args)


def test_a_held_swizzling_range_makes_transfer_busy_until_vidmm_retries_with_allocation_is_idle(
    rig_wddm1: PagingRig,
) -> None:
    rig = rig_wddm1
    info = rig.surface(512, 64, usage=AllocationUsage.SWIZZLED | AllocationUsage.CPU_VISIBLE)
    where = rig.segment_address(CPU, 1 * MiB)
    linear = rig.pattern(info.Size, seed=8)
    tiled = rig.tiled_image(info.hAllocation, linear)
    rig.write_segment(CPU, 1 * MiB, tiled)
    acquire = DXGKARG_ACQUIRESWIZZLINGRANGE(
        hAllocation=info.hAllocation,
        SegmentId=CPU,
        RangeSize=info.Size,
        CPUTranslatedAddress=rig.gpu.bar.bus_base + where,
    )
    assert rig.driver.acquire_swizzling_range(acquire) == NTSTATUS.STATUS_SUCCESS
    assert rig.gpu.bar.read(rig.gpu.bar.bus_base + where, info.Size) == linear.tobytes(), "the CPU sees it linear"

    mdl = rig.backing(info.Size)
    payload = transfer(
        hAllocation=info.hAllocation,
        TransferSize=info.Size,
        Source=Loc.segment(CPU, where),
        Destination=Loc.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(Unswizzle=True, TransferStart=True, TransferEnd=True),
    )
    direct = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=rig.vidmm.pool.buffers[3].cursor, DmaSize=4096)
    assert rig.driver.build_paging_buffer(direct) == NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
    assert direct.pDmaBuffer == rig.vidmm.pool.buffers[3].cursor, "nothing written"

    rig.execute(payload)
    statuses = [e.status for e in rig.adapter.events.of_type(BuildPagingBuffer)]
    assert statuses[-2:] == ["STATUS_GRAPHICS_ALLOCATION_BUSY", "STATUS_SUCCESS"]
    assert np.array_equal(rig.read_mdl(mdl), linear), "byte order after eviction = what the CPU saw through the BAR"
    assert all(w is None for w in rig.gpu.bar.windows), "the range was released while the allocation was idle"


def test_special_lock_transfer_is_wddm1_only_and_checks_its_range(rig: PagingRig, rig_wddm1: PagingRig) -> None:
    mdl = rig.backing(PAGE_SIZE)
    info = rig.buffer(PAGE_SIZE)
    payload = DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(
        hAllocation=info.hAllocation,
        TransferSize=PAGE_SIZE,
        Source=Loc.segment(CPU, rig.segment_address(CPU, 0)),
        Destination=Loc.mdl(mdl),
        Flags=BOTH,
    )
    with pytest.raises(DriverContractError, match=r"WDDM 1\.x driver with UseAlternateVA"):
        rig.driver.build_paging_buffer(
            DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=rig.vidmm.pool.buffers[0].cursor, DmaSize=4096)
        )
    info1 = rig_wddm1.buffer(PAGE_SIZE)
    mdl1 = rig_wddm1.backing(PAGE_SIZE)
    data = rig_wddm1.pattern(PAGE_SIZE, seed=9)
    rig_wddm1.write_segment(CPU, 0, data)
    rig_wddm1.execute(
        DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(
            hAllocation=info1.hAllocation,
            TransferSize=PAGE_SIZE,
            Source=Loc.segment(CPU, rig_wddm1.segment_address(CPU, 0)),
            Destination=Loc.mdl(mdl1),
            Flags=BOTH,
        )
    )
    assert np.array_equal(rig_wddm1.read_mdl(mdl1), data)


def test_without_an_allocation_a_swizzle_flag_means_a_plain_copy(rig: PagingRig) -> None:
    """hAllocation NULL (DMA buffers, aperture pages): no swizzling or tiling, whatever the flags say."""
    mdl = rig.backing(8 * PAGE_SIZE)
    data = rig.pattern(8 * PAGE_SIZE, seed=11)
    rig.write_mdl(mdl, data)
    rig.execute(
        transfer(
            TransferSize=8 * PAGE_SIZE,
            Source=Loc.mdl(mdl),
            Destination=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
            Flags=DXGK_TRANSFERFLAGS(Swizzle=True, TransferStart=True, TransferEnd=True),
        )
    )
    assert np.array_equal(rig.read_segment(LOCAL, 0, 8 * PAGE_SIZE), data)


def test_discard_of_an_allocation_holding_a_swizzling_range_needs_it_idle(rig_wddm1: PagingRig) -> None:
    from wddmsim.ddi.flags import DXGK_DISCARDCONTENTFLAGS
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT

    rig = rig_wddm1
    info = rig.surface(256, 32, usage=AllocationUsage.SWIZZLED | AllocationUsage.CPU_VISIBLE)
    where = rig.segment_address(CPU, 0)
    rig.driver.acquire_swizzling_range(
        DXGKARG_ACQUIRESWIZZLINGRANGE(
            hAllocation=info.hAllocation,
            SegmentId=CPU,
            RangeSize=info.Size,
            CPUTranslatedAddress=rig.gpu.bar.bus_base + where,
        )
    )
    payload = DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(hAllocation=info.hAllocation, SegmentId=CPU, SegmentAddress=where)
    busy = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=rig.vidmm.pool.buffers[2].cursor, DmaSize=4096)
    assert rig.driver.build_paging_buffer(busy) == NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
    rig.execute(payload)
    assert rig.adapter.events.of_type(BuildPagingBuffer)[-1].status == "STATUS_SUCCESS"
    assert all(w is None for w in rig.gpu.bar.windows)
    idle = DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True)
    assert idle.Value == 1


def test_regression_a_transfer_start_with_no_room_for_a_packet_can_be_retried(rig: PagingRig) -> None:
    """A first call that finds no room for one packet starts nothing: the retry in a fresh buffer, MultipassOffset
    still 0, is the same start (found by check-driver's DMA-size sweep)."""
    mdl = rig.backing(2 * PAGE_SIZE)
    payload = transfer(
        TransferSize=2 * PAGE_SIZE, Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)), Destination=Loc.mdl(mdl)
    )
    tiny = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=rig.vidmm.pool.buffers[1].cursor, DmaSize=16)
    assert rig.driver.build_paging_buffer(tiny) == NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
    assert tiny.MultipassOffset == 0
    retry = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=rig.vidmm.pool.buffers[2].cursor, DmaSize=4096)
    assert rig.driver.build_paging_buffer(retry) == NTSTATUS.STATUS_SUCCESS
    assert reference_driver(rig.driver).state.pending_transfer is None
