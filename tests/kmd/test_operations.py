"""The other operations, each executed on the GPU model and checked byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, KiB, MiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MAPAPERTUREFLAGS,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_UPDATEPAGETABLEFLAGS,
)
from wddmsim.ddi.memory import DXGK_ADL, DXGK_ADL_FLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
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
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_UNMODELLED,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL,
    DXGK_FILL_DESTINATION,
    DXGK_INITCONTEXTRESOURCE_DESTINATION,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
    PagingPayload,
)
from wddmsim.ddi.pte import pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.aperture import gart_entry
from wddmsim.hw.faults import AccessKind
from wddmsim.hw.pte import HW_PTE
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.paging.context import CONTEXT_HEADER_SIZE, CONTEXT_MAGIC
from wddmsim.kmd.paging.physical import access_size
from wddmsim.scenarios.rig import PagingRig, ScratchAddressSpace
from wddmsim.system import SystemConfig

CPU, LOCAL, APERTURE = 1, 2, 3


def call(rig: PagingRig, payload: PagingPayload, size: int = 4096) -> tuple[NTSTATUS, DXGKARG_BUILDPAGINGBUFFER]:
    """One direct DxgkDdiBuildPagingBuffer call into a fresh buffer (for contract and status checks)."""
    buffer = rig.vidmm.pool.buffers[-1]
    args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=buffer.cursor, DmaSize=size)
    return NTSTATUS(rig.driver.build_paging_buffer(args)), args


def test_map_aperture_segment_writes_snooped_entries_and_unmap_points_at_the_dummy_page(rig: PagingRig) -> None:
    mdl = rig.backing(8 * PAGE_SIZE, scatter_seed=1)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
            SegmentId=APERTURE,
            OffsetInPages=20,
            NumberOfPages=5,
            pMdl=mdl,
            MdlOffset=2,
            Flags=DXGK_MAPAPERTUREFLAGS(CacheCoherent=True),
        )
    )
    table = rig.gpu.aperture.entries
    assert table[20:25].tolist() == [gart_entry(int(p), snoop=True) for p in mdl.pfns[2:7]]
    assert table[19] == 0 and table[25] == 0
    dummy = rig.dummy_page(0xAB)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
            SegmentId=APERTURE, OffsetInPages=21, NumberOfPages=3, DummyPage=dummy
        )
    )
    assert table[21:24].tolist() == [gart_entry(dummy >> PAGE_SHIFT)] * 3
    assert table[20] == gart_entry(int(mdl.pfns[2]), snoop=True), "pages outside the range keep their mapping"


@pytest.mark.parametrize("contiguous", [True, False])
def test_map_aperture_segment2_takes_both_adl_forms(contiguous: bool) -> None:
    rig = PagingRig(SystemConfig(driver=DriverConfig(map_aperture2=True)))
    assert rig.vidmm.caps.MemoryManagementCaps.MapAperture2Supported
    if contiguous:
        adl = DXGK_ADL(PageCount=6, Flags=DXGK_ADL_FLAGS(Contiguous=True), BasePageNumber=0x400)
        pages = list(range(0x402, 0x406))
    else:
        array = np.array([0x900, 0x300, 0x301, 0x77, 0x78, 0x10], dtype=np.uint64)
        adl = DXGK_ADL(PageCount=6, Pages=array)
        pages = array[2:6].tolist()
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(
            SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=4, Adl=adl, AdlOffset=2
        )
    )
    assert rig.gpu.aperture.entries[:4].tolist() == [gart_entry(p) for p in pages]
    with pytest.raises(DriverContractError, match="no longer receives op 5"):
        call(
            rig,
            DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
                SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=1, pMdl=rig.backing(PAGE_SIZE)
            ),
        )


def test_map_aperture_segment2_needs_the_opt_in(rig: PagingRig) -> None:
    adl = DXGK_ADL(PageCount=1, Flags=DXGK_ADL_FLAGS(Contiguous=True), BasePageNumber=5)
    with pytest.raises(DriverContractError, match="MapAperture2Supported"):
        call(
            rig,
            DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=1, Adl=adl),
        )


@pytest.mark.parametrize("offset", [0, 1, 2, 3, 4, 6, 8, 13])
def test_read_and_write_physical_touch_one_to_eight_bytes_and_change_nothing(rig: PagingRig, offset: int) -> None:
    data = rig.pattern(32, seed=offset)
    rig.write_segment(LOCAL, 5 * MiB, data)
    address = rig.segment_address(LOCAL, 5 * MiB + offset)
    size = access_size(address)
    assert 1 <= size <= 8 and address % size == 0
    rig.execute(DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=LOCAL, PhysicalAddress=address))
    assert rig.gpu.engines[0].last_read == int.from_bytes(data[offset : offset + size].tobytes(), "little")
    rig.execute(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=LOCAL, PhysicalAddress=address))
    assert np.array_equal(rig.read_segment(LOCAL, 5 * MiB, 32), data)
    executed = [e.opcode for e in rig.adapter.events if type(e).__name__ == "PacketExecuted"]  # type: ignore[attr-defined]
    assert executed[-2:] == ["READMEM", "WRITEMEM"]


def test_discard_content_copies_nothing_and_leaves_a_note(rig: PagingRig) -> None:
    info = rig.buffer(64 * KiB)
    data = rig.pattern(64 * KiB, seed=2)
    rig.write_segment(LOCAL, 0, data)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
            hAllocation=info.hAllocation, SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)
        )
    )
    assert np.array_equal(rig.read_segment(LOCAL, 0, 64 * KiB), data)
    note = [e for e in rig.adapter.events if type(e).__name__ == "EngineNote"][-1]
    assert (note.a, note.b) == (rig.segment_address(LOCAL, 0), info.hAllocation)  # type: ignore[attr-defined]
    with pytest.raises(DriverContractError, match="must be a memory segment"):
        call(
            rig,
            DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
                SegmentId=APERTURE, SegmentAddress=rig.segment_address(APERTURE, 0), Flags=DXGK_DISCARDCONTENTFLAGS()
            ),
        )


def test_notify_residency_commit_and_evict(rig: PagingRig) -> None:
    info = rig.buffer(PAGE_SIZE)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(
            hAllocation=info.hAllocation,
            Resident=True,
            PhysicalAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=CPU, SegmentOffset=0x5000),
        )
    )
    allocations = reference_driver(rig.driver).state.allocations
    assert allocations.get(info.hAllocation, "h").resident_at == (CPU, 0x5000)
    rig.execute(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(hAllocation=info.hAllocation, Resident=False))
    assert allocations.get(info.hAllocation, "h").resident_at is None
    with pytest.raises(DriverContractError, match=r"invalid address \(0, 0\)"):
        call(
            rig,
            DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(
                hAllocation=info.hAllocation, Resident=False, PhysicalAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=1)
            ),
        )


@pytest.mark.parametrize("to_mdl", [False, True])
def test_init_context_resource_writes_a_zeroed_image_with_its_header(rig: PagingRig, to_mdl: bool) -> None:
    info = rig.context(12 * KiB)
    if to_mdl:
        mdl = rig.backing(12 * KiB, scatter_seed=3)
        rig.write_mdl(mdl, rig.pattern(12 * KiB, seed=4))
        destination = DXGK_INITCONTEXTRESOURCE_DESTINATION(SegmentId=0, pMdl=mdl, GpuVirtualAddress=0x7000)
    else:
        rig.write_segment(LOCAL, 0, rig.pattern(12 * KiB, seed=4))
        destination = DXGK_INITCONTEXTRESOURCE_DESTINATION(
            SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0), GpuVirtualAddress=0x7000
        )
    rig.execute(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(hAllocation=info.hAllocation, Destination=destination))
    image = rig.read_mdl(mdl) if to_mdl else rig.read_segment(LOCAL, 0, 12 * KiB)
    assert np.frombuffer(image[:32].tobytes(), "<u8").tolist() == [CONTEXT_MAGIC, 0x7000, 12 * KiB, info.hAllocation]
    assert not image[CONTEXT_HEADER_SIZE:].any()


def test_operations_through_the_paging_process_va(rig: PagingRig) -> None:
    space = ScratchAddressSpace(rig)
    fence = rig.backing(PAGE_SIZE)
    space.map(0x10_0000, segment_id=0, page_numbers=fence.pfns)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(MonitoredFenceGpuVa=0x10_0008, MonitoredFenceValue=(1 << 64) - 2)
    )
    assert np.frombuffer(rig.read_mdl(fence, 8, 8).tobytes(), "<u8").tolist() == [(1 << 64) - 2]

    # CopyPageTableEntries: copy the leaf entries of one 2 MiB range into the leaf table of another; the tables
    # are reached through VAs of the paging process (64 KB aligned).
    source_va, target_va = 0x20_0000, 0x40_0000
    backing = rig.backing(4 * PAGE_SIZE, scatter_seed=5)
    space.map(source_va, segment_id=0, page_numbers=backing.pfns)
    space.map(target_va, segment_id=0, page_numbers=rig.backing(PAGE_SIZE).pfns)
    tables = np.array([space.table_page(0, source_va), space.table_page(0, target_va)], dtype=np.uint64)
    space.map(0x100_0000, segment_id=space.segment_id, page_numbers=tables[:1])
    space.map(0x101_0000, segment_id=space.segment_id, page_numbers=tables[1:])
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(
            NumRanges=1,
            pRanges=(
                DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                    NumPageTableEntries=4,
                    SrcPageTableAddress=0x100_0000,
                    DstPageTableAddress=0x101_0000,
                    SrcStartPteIndex=0,
                    DstStartPteIndex=8,
                ),
            ),
        )
    )
    rig.execute(DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=space.root_address))
    root = space.hw_root
    runs = rig.gpu.mmu.translate(root, target_va + 8 * PAGE_SIZE, 4 * PAGE_SIZE, AccessKind.READ)
    pages = [p for _, start, length in runs for p in range(start >> PAGE_SHIFT, (start + length) >> PAGE_SHIFT)]
    assert pages == backing.pfns.tolist()
    with pytest.raises(DriverContractError, match="64 KB aligned"):
        call(
            rig,
            DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(
                NumRanges=1,
                pRanges=(
                    DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                        NumPageTableEntries=1,
                        SrcPageTableAddress=0x100_1000,
                        DstPageTableAddress=0x101_0000,
                        SrcStartPteIndex=0,
                        DstStartPteIndex=0,
                    ),
                ),
            ),
        )


@pytest.mark.parametrize("repeat", [False, True])
@pytest.mark.parametrize("dma", [32, 48, 100, 4096])
def test_update_page_table_by_gpu_equals_the_cpu_path(rig: PagingRig, repeat: bool, dma: int) -> None:
    space = ScratchAddressSpace(rig)
    table_va = 0x80_0000
    cpu_mdl, cpu_table = rig.mm.allocate_contiguous(PAGE_SIZE)
    gpu_mdl = rig.backing(PAGE_SIZE)
    space.map(table_va, segment_id=0, page_numbers=gpu_mdl.pfns)
    entries = pte_array(1 if repeat else 300)
    entries["Flags"] = pte_flags(Valid=1, Segment=LOCAL, ReadOnly=1)
    entries["PageAddress"] = np.arange(entries.shape[0], dtype=np.uint64) * 3 + 11

    def update(
        address: DXGK_PAGETABLEUPDATEADDRESS, mode: DXGK_PAGETABLEUPDATEMODE
    ) -> DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE:
        return DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
            PageTableLevel=0,
            PageTableAddress=address,
            pPageTableEntries=entries,
            StartIndex=100,
            NumPageTableEntries=300,
            Flags=DXGK_UPDATEPAGETABLEFLAGS(Repeat=repeat),
            DriverProtection=0x5A,
            UpdateMode=mode,
        )

    cpu = update(
        DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=cpu_table.pointer(0)),
        DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL,
    )
    status = rig.driver.build_paging_buffer(DXGKARG_BUILDPAGINGBUFFER(cpu, pDmaBuffer=None, DmaSize=0))
    assert status == NTSTATUS.STATUS_SUCCESS
    rig.vidmm.resize_paging_buffers(dma)
    rig.execute(
        update(
            DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=table_va), DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL
        )
    )
    by_cpu = rig.read_mdl(cpu_mdl, 0, PAGE_SIZE)
    by_gpu = rig.read_mdl(gpu_mdl)
    assert np.array_equal(by_cpu, by_gpu)
    words = np.frombuffer(by_gpu.tobytes(), "<u8")
    assert not words[:100].any() and not words[400:].any()
    first = int(words[100])
    assert HW_PTE["ReadOnly"].get(first) == 1 and HW_PTE["Key"].get(first) == 0x5A
    base = rig.segment_address(LOCAL, 0)
    assert HW_PTE["Address"].get(first) << PAGE_SHIFT == base + (11 << PAGE_SHIFT)


def test_update_page_table_reserved0_and_range_are_checked(rig: PagingRig) -> None:
    entries = pte_array(4)
    base = {
        "PageTableLevel": 0,
        "PageTableAddress": DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0x1000),
        "pPageTableEntries": entries,
        "UpdateMode": DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    }
    with pytest.raises(DriverContractError, match="Reserved0=0x1: must be zero"):
        call(rig, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(StartIndex=0, NumPageTableEntries=4, Reserved0=1, **base))  # type: ignore[arg-type]
    with pytest.raises(DriverContractError, match="leave the 512-entry table"):
        call(rig, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(StartIndex=510, NumPageTableEntries=4, **base))  # type: ignore[arg-type]


@pytest.mark.parametrize("operation", [op for op in Op if op >= 18])
def test_operations_18_to_25_are_named_but_refused(rig: PagingRig, operation: Op) -> None:
    with pytest.raises(DriverContractError, match="operations 18-25 are not modelled") as error:
        call(rig, DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=operation))
    assert error.value.status == NTSTATUS.STATUS_NOT_SUPPORTED


BAD_INPUTS = [
    (lambda r: DXGK_BUILDPAGINGBUFFER_FILL(FillSize=4096, FillPattern=1, Destination=DXGK_FILL_DESTINATION(
        SegmentId=APERTURE, SegmentAddress=r.segment_address(APERTURE, 0))), "Fill.Destination.SegmentId=0x3: must be a memory segment"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_FILL(FillSize=4096, FillPattern=1 << 32, Destination=DXGK_FILL_DESTINATION(
        SegmentId=LOCAL, SegmentAddress=r.segment_address(LOCAL, 0))), "Fill.FillPattern=0x100000000: is a 32-bit UINT"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_FILL(FillSize=4096, FillPattern=1, Destination=DXGK_FILL_DESTINATION(
        SegmentId=9, SegmentAddress=0)), "Fill.Destination.SegmentId=0x9: no such segment"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_FILL(FillSize=1 << 40, FillPattern=1, Destination=DXGK_FILL_DESTINATION(
        SegmentId=LOCAL, SegmentAddress=r.segment_address(LOCAL, 0))), "Fill.Destination.SegmentAddress=0x4000000: 0x10000000000 bytes from it leave segment 2"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=2,
        pMdl=r.backing(PAGE_SIZE)), "MapApertureSegment.MdlOffset=0x0: 2 page\\(s\\) from it leave the MDL's 1"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(SegmentId=LOCAL, OffsetInPages=0, NumberOfPages=1,
        pMdl=r.backing(PAGE_SIZE)), "MapApertureSegment.SegmentId=0x2: must be an aperture segment"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(SegmentId=APERTURE, OffsetInPages=0, NumberOfPages=1,
        DummyPage=0x1001), "UnmapApertureSegment.DummyPage=0x1001: must be a page of system memory"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(SegmentId=APERTURE, OffsetInPages=(512 * MiB) >> 12,
        NumberOfPages=1, DummyPage=0x1000), "UnmapApertureSegment.OffsetInPages=0x20000: 1 page\\(s\\) from it leave the aperture"),
    (lambda r: DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(MonitoredFenceGpuVa=0x1004, MonitoredFenceValue=1),
     "SignalMonitoredFence.MonitoredFenceGpuVa=0x1004: must be a non-null 8-byte-aligned VA"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "message"), BAD_INPUTS)
def test_bad_input_is_refused_naming_argument_value_and_rule_and_writes_nothing(
    rig: PagingRig, make: object, message: str
) -> None:
    payload = make(rig)  # type: ignore[operator]
    buffer = rig.vidmm.pool.buffers[-1]
    before = bytes(buffer.mapping.view[:4096])
    with pytest.raises(DriverContractError, match=message) as error:
        call(rig, payload)
    assert error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    assert bytes(buffer.mapping.view[:4096]) == before


@pytest.mark.parametrize(
    ("payload", "argument"),
    [
        (
            DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
                PageTableLevel=0,
                PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=1 << 61),
                pPageTableEntries=pte_array(2),
                StartIndex=0,
                NumPageTableEntries=2,
                UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
            ),
            "UpdatePageTable.PageTableAddress.GpuVirtual",
        ),
        (
            DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(
                NumRanges=2,
                pRanges=(
                    DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                        NumPageTableEntries=1,
                        SrcPageTableAddress=0x100_0000,
                        DstPageTableAddress=0x101_0000,
                        SrcStartPteIndex=0,
                        DstStartPteIndex=0,
                    ),
                    DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                        NumPageTableEntries=1,
                        SrcPageTableAddress=0x100_0000,
                        DstPageTableAddress=1 << 62,
                        SrcStartPteIndex=0,
                        DstStartPteIndex=0,
                    ),
                ),
            ),
            "CopyPageTableEntries.pRanges[1].DstPageTableAddress",
        ),
        (
            DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
                SourceVirtualAddress=1 << 62,
                DestinationVirtualAddress=0x100_0000,
                TransferSizeInBytes=PAGE_SIZE,
                TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_LOCAL,
            ),
            "TransferVirtual.SourceVirtualAddress",
        ),
        (
            DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
                SourceVirtualAddress=0x100_0000,
                DestinationVirtualAddress=-PAGE_SIZE,
                TransferSizeInBytes=PAGE_SIZE,
                TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_LOCAL,
            ),
            "TransferVirtual.DestinationVirtualAddress",
        ),
        (
            DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
                DestinationVirtualAddress=(1 << 60) - PAGE_SIZE, FillSizeInBytes=64 * PAGE_SIZE, FillPattern=7
            ),
            "FillVirtual.DestinationVirtualAddress",
        ),
    ],
    ids=[
        "UpdatePageTable",
        "CopyPageTableEntries",
        "TransferVirtual source",
        "TransferVirtual destination",
        "FillVirtual's last page",
    ],
)
def test_a_va_past_the_packet_address_field_is_refused_named(
    rig: PagingRig, payload: PagingPayload, argument: str
) -> None:
    """Regression (decision 0122): the encoder's ValueError escaped as a crash; now STATUS_INVALID_PARAMETER, named,
    and nothing written."""
    buffer = rig.vidmm.pool.buffers[-1]
    args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=buffer.cursor, DmaSize=4096)
    with pytest.raises(DriverContractError, match="60-bit address field") as refused:
        rig.driver.build_paging_buffer(args)
    assert refused.value.argument == argument
    assert refused.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    assert (args.pDmaBuffer, args.DmaSize, args.MultipassOffset) == (buffer.cursor, 4096, 0)
