"""The simple driver's paging buffers, byte for byte, for every operation it builds; and every operation it does not
build refused with ``STATUS_NOT_SUPPORTED`` naming ``Operation``, with nothing written (decision 0075)."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, MiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MAPAPERTUREFLAGS,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_TRANSFERFLAGS,
)
from wddmsim.ddi.memory import DXGK_ADL, DXGK_ADL_FLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2,
    DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY,
    DXGK_BUILDPAGINGBUFFER_READPHYSICAL,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_UNMODELLED,
    DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL,
    DXGK_FILL_DESTINATION,
    DXGK_INITCONTEXTRESOURCE_DESTINATION,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGK_TRANSFER_LOCATION,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
    PagingPayload,
)
from wddmsim.ddi.pte import pte_array
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.drivers.simple.layout import APERTURE, LOCAL, VISIBLE
from wddmsim.drivers.simple.paging import BUILDERS
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.aperture import gart_entry
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .bench import GPU, POISON, Bench, pattern

SURFACE = "simple driver: DxgkDdiBuildPagingBuffer"
BAR = GPU.bar_size
"""Segment 2 (``local``) begins where the BAR ends; segment 3 (``visible``) at 0."""
WHOLE = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)


@pytest.fixture
def bench() -> Bench:
    return Bench()


def phys(address: int) -> int:
    return hw_address(Space.GPU_PHYS, address)


def encoded(*packets: cmd.Packet) -> bytes:
    return b"".join(cmd.encode(p) for p in packets)


# --- TRANSFER -------------------------------------------------------------------------------------------------


def test_a_segment_to_segment_transfer_is_one_copy_and_a_sync(bench: Bench) -> None:
    src, dst = BAR + 1 * MiB, 256 * 1024
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferOffset=2 * PAGE_SIZE,
        TransferSize=3 * PAGE_SIZE + 100,
        Source=DXGK_TRANSFER_LOCATION(SegmentId=LOCAL, SegmentAddress=src),
        Destination=DXGK_TRANSFER_LOCATION(SegmentId=VISIBLE, SegmentAddress=dst),
        Flags=WHOLE,
    )
    built = bench.call(payload)
    assert built.status == NTSTATUS.STATUS_SUCCESS and built.args.MultipassOffset == 4
    expected = encoded(cmd.Copy(phys(src + 2 * PAGE_SIZE), phys(dst + 2 * PAGE_SIZE), 3 * PAGE_SIZE + 100), cmd.Sync())
    assert built.written == expected
    assert set(built.buffer[len(expected) :]) == {POISON}, "nothing past the packets"
    data = pattern(3 * PAGE_SIZE + 100, 1)
    bench.gpu.local.data[src + 2 * PAGE_SIZE : src + 5 * PAGE_SIZE + 100] = data
    bench.execute(payload)
    assert np.array_equal(bench.local(dst + 2 * PAGE_SIZE, data.shape[0]), data)


def test_a_transfer_to_system_memory_lists_the_mdl_pages_as_extents(bench: Bench) -> None:
    mdl = bench.backing(6)
    src = BAR + 64 * 1024
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=4 * PAGE_SIZE,
        Source=DXGK_TRANSFER_LOCATION(SegmentId=LOCAL, SegmentAddress=src),
        Destination=DXGK_TRANSFER_LOCATION(SegmentId=0, pMdl=mdl),
        Flags=WHOLE,
        MdlOffset=2,
    )
    built = bench.call(payload)
    copy = cmd.Copy(phys(src), 0, 4 * PAGE_SIZE, dst_pages=True, extents=cmd.make_extents(mdl.pfns[2:6]))
    assert built.status == NTSTATUS.STATUS_SUCCESS
    assert built.written == encoded(copy, cmd.Sync())
    data = pattern(4 * PAGE_SIZE, 4)
    bench.gpu.local.data[src : src + data.shape[0]] = data
    bench.execute(payload)
    assert bench.mm.read(mdl, 2 * PAGE_SIZE, 4 * PAGE_SIZE) == data.tobytes()


def test_a_transfer_that_does_not_fit_goes_on_where_it_stopped(bench: Bench) -> None:
    """Room for a COPY of three extents: three pages per buffer, progress in ``MultipassOffset`` alone."""
    mdl = bench.backing(8)
    assert len(cmd.make_extents(mdl.pfns)) == 8, "every page its own extent"
    dst = BAR
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=8 * PAGE_SIZE,
        Source=DXGK_TRANSFER_LOCATION(SegmentId=0, pMdl=mdl),
        Destination=DXGK_TRANSFER_LOCATION(SegmentId=LOCAL, SegmentAddress=dst),
        Flags=WHOLE,
    )
    room = cmd.copy_length(3)
    done, passes, stream = 0, [], b""
    while True:
        built = bench.call(payload, size=room, multipass=done)
        passes.append((built.status, built.args.MultipassOffset))
        stream += built.written
        done = built.args.MultipassOffset
        if built.status == NTSTATUS.STATUS_SUCCESS:
            break
    insufficient = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
    assert passes == [(insufficient, 3), (insufficient, 6), (insufficient, 8), (NTSTATUS.STATUS_SUCCESS, 8)], (
        "the SYNC of TransferEnd did not fit after the last COPY: a fourth buffer holds it alone"
    )

    def copy(first: int, count: int) -> cmd.Copy:
        extents = cmd.make_extents(mdl.pfns[first : first + count])
        return cmd.Copy(0, phys(dst + first * PAGE_SIZE), count * PAGE_SIZE, src_pages=True, extents=extents)

    assert stream == encoded(copy(0, 3), copy(3, 3), copy(6, 2), cmd.Sync())


# --- FILL, DISCARD_CONTENT ------------------------------------------------------------------------------------


def test_fill_is_one_fill_packet_and_fills(bench: Bench) -> None:
    address = BAR + 2 * MiB
    payload = DXGK_BUILDPAGINGBUFFER_FILL(
        FillSize=5 * PAGE_SIZE,
        FillPattern=0xA1B2C3D4,
        Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=address),
    )
    built = bench.call(payload)
    assert built.status == NTSTATUS.STATUS_SUCCESS
    assert built.written == encoded(cmd.Fill(phys(address), 5 * PAGE_SIZE, 0xA1B2C3D4))
    bench.execute(payload)
    assert bench.local(address, 5 * PAGE_SIZE).tobytes() == (0xA1B2C3D4).to_bytes(4, "little") * (5 * PAGE_SIZE // 4)


def test_discard_content_writes_nothing(bench: Bench) -> None:
    payload = DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
        SegmentId=VISIBLE, SegmentAddress=0, Flags=DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True)
    )
    built = bench.call(payload)
    assert built.status == NTSTATUS.STATUS_SUCCESS
    assert built.written == b"" and built.args.DmaSize == PAGE_SIZE and set(built.buffer) == {POISON}


# --- READ_PHYSICAL, WRITE_PHYSICAL ------------------------------------------------------------------------------


@pytest.mark.parametrize(("offset", "size"), [(0, 8), (4, 4), (2, 2), (7, 1)])
def test_read_and_write_physical_are_one_access_of_the_widest_aligned_size(
    bench: Bench, offset: int, size: int
) -> None:
    address = BAR + 3 * MiB + offset
    read = bench.call(DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=LOCAL, PhysicalAddress=address))
    write = bench.call(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=LOCAL, PhysicalAddress=address))
    assert read.written == encoded(cmd.ReadMem(phys(address), size))
    assert write.written == encoded(cmd.WriteMem(phys(address), size, preserve=True))
    before = bench.local(address - offset, 16)
    bench.execute(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=LOCAL, PhysicalAddress=address))
    assert np.array_equal(bench.local(address - offset, 16), before), "the write changes no content"


# --- MAP / UNMAP_APERTURE_SEGMENT ------------------------------------------------------------------------------


def test_map_aperture_segment_writes_table_entries_and_unmap_points_at_the_dummy_page(bench: Bench) -> None:
    mdl = bench.backing(8)
    table = bench.gpu.aperture
    payload = DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
        SegmentId=APERTURE,
        OffsetInPages=20,
        NumberOfPages=5,
        pMdl=mdl,
        MdlOffset=2,
        Flags=DXGK_MAPAPERTUREFLAGS(CacheCoherent=True),
    )
    entries = np.array([gart_entry(int(p), snoop=True) for p in mdl.pfns[2:7]], dtype=np.uint64)
    built = bench.call(payload)
    assert built.written == encoded(cmd.WriteQwords(phys(table.table_offset + 20 * 8), 5, entries))
    bench.execute(payload)
    assert table.entries[20:25].tolist() == entries.tolist() and table.entries[19] == 0 and table.entries[25] == 0
    dummy = bench.system_page(0xAB)
    unmap = DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
        SegmentId=APERTURE, OffsetInPages=21, NumberOfPages=3, DummyPage=dummy
    )
    repeated = np.array([gart_entry(dummy >> PAGE_SHIFT)], dtype=np.uint64)
    assert bench.call(unmap).written == encoded(
        cmd.WriteQwords(phys(table.table_offset + 21 * 8), 3, repeated, repeat=True)
    )
    bench.execute(unmap)
    assert table.entries[20:25].tolist() == [entries[0], *[gart_entry(dummy >> PAGE_SHIFT)] * 3, entries[4]]


# --- what the driver refuses ------------------------------------------------------------------------------------


def _unsupported() -> list[PagingPayload]:
    location = DXGK_TRANSFER_LOCATION(SegmentId=LOCAL, SegmentAddress=BAR)
    adl = DXGK_ADL(PageCount=1, Flags=DXGK_ADL_FLAGS(Contiguous=True), BasePageNumber=5)
    payloads: list[PagingPayload] = [
        DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(TransferSize=PAGE_SIZE, Source=location, Destination=location),
        DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(
            hAllocation=HANDLE(0x2000),
            Destination=DXGK_INITCONTEXTRESOURCE_DESTINATION(SegmentId=LOCAL, SegmentAddress=BAR),
        ),
        DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=LOCAL, SegmentOffset=0)),
        DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION(ContextAllocation=0x1000, ContextAllocationSize=PAGE_SIZE),
        DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(hAllocation=HANDLE(0x2000)),
        DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(MonitoredFenceGpuVa=0x1000, MonitoredFenceValue=1),
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=1, Adl=adl),
        DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
            TransferSizeInBytes=PAGE_SIZE,
            SourceVirtualAddress=0x10000,
            DestinationVirtualAddress=0x20000,
            TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_LOCAL,
        ),
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(FillSizeInBytes=PAGE_SIZE, FillPattern=0, DestinationVirtualAddress=0x10000),
        DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
            PageTableLevel=0,
            PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0x10000),
            pPageTableEntries=pte_array(1),
            StartIndex=0,
            NumPageTableEntries=1,
            UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
        ),
        DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=0, pRanges=()),
    ]
    return payloads + [DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=op) for op in Op if op >= 18]


@pytest.mark.parametrize("payload", _unsupported(), ids=lambda p: type(p).__name__)
def test_an_operation_the_driver_does_not_build_is_refused_as_not_supported(
    bench: Bench, payload: PagingPayload
) -> None:
    with campaign.case(SURFACE) as box:
        with pytest.raises(InvalidArgument) as refused:
            bench.call(payload)
        assert refused.value.status == NTSTATUS.STATUS_NOT_SUPPORTED and refused.value.argument == "Operation"
        assert "not supported by the simple driver" in refused.value.rule
        box.append(Outcome.REFUSED)


def test_the_driver_builds_exactly_the_segment_model_operations() -> None:
    assert set(BUILDERS) == {
        Op.DXGK_OPERATION_TRANSFER,
        Op.DXGK_OPERATION_FILL,
        Op.DXGK_OPERATION_DISCARD_CONTENT,
        Op.DXGK_OPERATION_READ_PHYSICAL,
        Op.DXGK_OPERATION_WRITE_PHYSICAL,
        Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT,
        Op.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT,
    }
    tried = {DXGKARG_BUILDPAGINGBUFFER(p, pDmaBuffer=None, DmaSize=0).Operation for p in _unsupported()}
    assert tried | set(BUILDERS) == set(Op) and not tried & set(BUILDERS), "every other operation is tried as refused"


def _malformed(bench: Bench) -> list[tuple[str, PagingPayload, int]]:
    """``(the argument the refusal names, the request, MultipassOffset)``."""
    local = DXGK_TRANSFER_LOCATION(SegmentId=LOCAL, SegmentAddress=BAR)
    visible = DXGK_TRANSFER_LOCATION(SegmentId=VISIBLE, SegmentAddress=0)
    mdl = bench.backing(2)
    system = DXGK_TRANSFER_LOCATION(SegmentId=0, pMdl=mdl)
    fill = DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=BAR)

    def transfer(**changes: object) -> DXGK_BUILDPAGINGBUFFER_TRANSFER:
        fields: dict[str, object] = {"TransferSize": PAGE_SIZE, "Source": local, "Destination": visible, "Flags": WHOLE}
        return DXGK_BUILDPAGINGBUFFER_TRANSFER(**{**fields, **changes})  # type: ignore[arg-type]

    return [
        ("Transfer.Flags", transfer(Flags=DXGK_TRANSFERFLAGS(Swizzle=True)), 0),
        ("Transfer.TransferOffset", transfer(TransferOffset=100), 0),
        (
            "Transfer.Destination.SegmentAddress",
            transfer(Destination=DXGK_TRANSFER_LOCATION(SegmentId=VISIBLE, SegmentAddress=BAR)),
            0,
        ),
        ("Transfer.Source.SegmentId", transfer(Source=DXGK_TRANSFER_LOCATION(SegmentId=4)), 0),
        ("Transfer.MdlOffset", transfer(Destination=system, TransferSize=3 * PAGE_SIZE), 0),
        ("Transfer.Destination.SegmentId", transfer(Source=system, Destination=system), 0),
        ("Transfer.hAllocation", transfer(hAllocation=0x1234), 0),
        ("MultipassOffset", transfer(), 2),
        (
            "Fill.Destination.SegmentId",
            DXGK_BUILDPAGINGBUFFER_FILL(
                FillSize=PAGE_SIZE,
                FillPattern=0,
                Destination=DXGK_FILL_DESTINATION(SegmentId=APERTURE, SegmentAddress=GPU.aperture_base),
            ),
            0,
        ),
        ("Fill.FillPattern", DXGK_BUILDPAGINGBUFFER_FILL(FillSize=PAGE_SIZE, FillPattern=1 << 32, Destination=fill), 0),
        (
            "DiscardContent.SegmentId",
            DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(SegmentId=APERTURE, SegmentAddress=GPU.aperture_base),
            0,
        ),
        ("ReadPhysical.SegmentAddress", DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=VISIBLE, PhysicalAddress=BAR), 0),
        (
            "MapApertureSegment.SegmentId",
            DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(SegmentId=LOCAL, OffsetInPages=0, NumberOfPages=1, pMdl=mdl),
            0,
        ),
        (
            "MapApertureSegment.OffsetInPages",
            DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
                SegmentId=APERTURE, OffsetInPages=1023, NumberOfPages=2, pMdl=mdl
            ),
            0,
        ),
        (
            "MapApertureSegment.MdlOffset",
            DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
                SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=2, pMdl=mdl, MdlOffset=1
            ),
            0,
        ),
        (
            "UnmapApertureSegment.DummyPage",
            DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
                SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=1, DummyPage=100
            ),
            0,
        ),
    ]


def test_a_malformed_request_is_refused_naming_the_argument_and_writes_nothing(bench: Bench) -> None:
    cases = _malformed(bench)
    for argument, payload, multipass in cases:
        with campaign.case(SURFACE) as box:
            with pytest.raises(InvalidArgument) as refused:
                bench.call(payload, multipass=multipass)
            assert (refused.value.argument, refused.value.status) == (argument, NTSTATUS.STATUS_INVALID_PARAMETER), (
                refused.value
            )
            box.append(Outcome.REFUSED)
    assert len(cases) == 16
