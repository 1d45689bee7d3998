"""The compiled writers of the C argument block against the general walk: the same 320 bytes for every payload kind
the bridge marshals, and the same named refusal for every value that does not fit (decision 0216)."""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MAPAPERTUREFLAGS,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_TRANSFERFLAGS,
    DXGK_TRANSFERVIRTUALFLAGS,
    DXGK_UPDATEPAGETABLEFLAGS,
)
from wddmsim.ddi.memory import DXGK_ADL, DXGK_ADL_FLAGS, MDL
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
)
from wddmsim.ddi.pte import pte_array
from wddmsim.drivers.native import paging, plan
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.marshal import ArgumentWriter, MarshalError
from wddmsim.drivers.native.services import MdlImages
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig

from .conftest import BuildDriver

U32, U64 = (1 << 32) - 1, (1 << 64) - 1
DMA = CpuMapping(CpuVa(0x7000_0000), np.zeros(0x2000, dtype=np.uint8))
PRIVATE = CpuMapping(CpuVa(0x7100_0000), np.zeros(0x100, dtype=np.uint8))
TABLE = CpuMapping(CpuVa(0x7200_0000), np.zeros(0x1000, dtype=np.uint8))
MDL_A = MDL(pfns=np.array([5, 9], dtype=np.uint64), ByteCount=0x2000)
MDL_B = MDL(pfns=np.array([7], dtype=np.uint64), ByteCount=0xF00, ByteOffset=0x10)
FLAGS = DXGK_TRANSFERFLAGS(AllocationIsIdle=True, TransferEnd=True)
SEG = DXGK_TRANSFER_LOCATION.segment(1, 0x12345000)
SYS = DXGK_TRANSFER_LOCATION.mdl(MDL_A)
PTES = pte_array(4)
PTES["PageAddress"] = [1, 2, 3, U64 >> 12]
PAGES = np.array([11, 12, 13], dtype=np.uint64)

PAYLOADS: dict[str, Any] = {
    "transfer to system": DXGK_BUILDPAGINGBUFFER_TRANSFER(
        hAllocation=HANDLE(0x77), TransferOffset=0x1000, TransferSize=0x4000, Source=SEG, Destination=SYS, Flags=FLAGS
    ),
    "transfer from system": DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=0x1000, Source=DXGK_TRANSFER_LOCATION.mdl(MDL_B), Destination=SEG, MdlOffset=1
    ),
    "transfer between segments": DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=U64, Source=SEG, Destination=DXGK_TRANSFER_LOCATION.segment(2, U64), Flags=FLAGS
    ),
    "transfer, both union arms": DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=1, Source=DXGK_TRANSFER_LOCATION(SegmentId=0, SegmentAddress=-(1 << 63), pMdl=MDL_B), Destination=SEG
    ),
    "fill": DXGK_BUILDPAGINGBUFFER_FILL(
        hAllocation=HANDLE(1), FillSize=0x2000, FillPattern=U32, Destination=DXGK_FILL_DESTINATION(SegmentId=3, SegmentAddress=-1)
    ),
    "discard": DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
        Flags=DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True), SegmentId=1, SegmentAddress=1 << 63
    ),
    "read physical": DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=1, PhysicalAddress=0x1000),
    "write physical": DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=U32, PhysicalAddress=U64),
    "map aperture": DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
        hDevice=HANDLE(2), hAllocation=HANDLE(3), SegmentId=4, OffsetInPages=5, NumberOfPages=2, pMdl=MDL_A,
        Flags=DXGK_MAPAPERTUREFLAGS(CacheCoherent=True), MdlOffset=1,
    ),
    "unmap aperture": DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
        SegmentId=4, OffsetInPages=5, NumberOfPages=2, DummyPage=0x9000
    ),
    "special lock transfer": DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(
        TransferSize=0x1000, Source=SEG, Destination=SYS, SwizzlingRangeId=2, SwizzlingRangeData=U32
    ),
    "init context resource": DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(
        hAllocation=HANDLE(9),
        Destination=DXGK_INITCONTEXTRESOURCE_DESTINATION(
            SegmentId=0, pMdl=MDL_A, VirtualAddress=TABLE.pointer(0x40), GpuVirtualAddress=0xABC000
        ),
    ),
    "transfer virtual": DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
        TransferSizeInBytes=0x1000, SourceVirtualAddress=0x10000, DestinationVirtualAddress=U64,
        TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_LOCAL, Flags=DXGK_TRANSFERVIRTUALFLAGS(Dst64KBPages=True),
    ),
    "fill virtual": DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
        FillSizeInBytes=0x40, FillPattern=0xDEADBEEF, DestinationVirtualAddress=0x20000
    ),
    "update page table, cpu": DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=1, PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=TABLE.pointer(0)),
        pPageTableEntries=PTES, StartIndex=3, NumPageTableEntries=4,
        Flags=DXGK_UPDATEPAGETABLEFLAGS(Repeat=True, Use64KBPages=True), DriverProtection=U64,
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL, pPageTableEntries64KB=PTES,
    ),
    "update page table, gpu physical": DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=0, PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(
            GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=1, SegmentOffset=0x3000)
        ),
        pPageTableEntries=PTES[:2], StartIndex=0, NumPageTableEntries=2,
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL,
    ),
    "flush tlb": DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
        RootPageTableAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=1, SegmentOffset=0x8000), EndVirtualAddress=U64
    ),
    "update context allocation": DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION(
        ContextAllocation=0x5000, ContextAllocationSize=0x1000, pDriverPrivateData=b"abc", DriverPrivateDataSize=3
    ),
    "copy page table entries": DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(
        NumRanges=1,
        pRanges=(DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
            NumPageTableEntries=2, SrcPageTableAddress=1, DstPageTableAddress=2, SrcStartPteIndex=3, DstStartPteIndex=4
        ),),
    ),
    "notify residency": DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(
        hAllocation=HANDLE(5), PhysicalAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=2, SegmentOffset=0x100), Resident=True
    ),
    "signal fence": DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(MonitoredFenceGpuVa=0x9000, MonitoredFenceValue=U64),
    "map aperture 2, contiguous": DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(
        SegmentId=4, OffsetInPages=0, NumberOfPages=3,
        Adl=DXGK_ADL(PageCount=3, Flags=DXGK_ADL_FLAGS(Contiguous=True), BasePageNumber=0x40),
        CpuVisibleAddress=TABLE.pointer(8),
    ),
    "map aperture 2, listed": DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(
        SegmentId=4, OffsetInPages=1, NumberOfPages=3, Adl=DXGK_ADL(PageCount=3, Pages=PAGES)
    ),
    "unmodelled": DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=Op.DXGK_OPERATION_MAP_MMU, Reserved=tuple(range(64))),
}  # fmt: skip

GENERAL_ONLY = {"copy page table entries", "notify residency", "unmodelled"}
"""What the compiled writers leave to the walk: an array of structures, a bit-field member, no fields at all."""


def _args(payload: Any, **header: Any) -> DXGKARG_BUILDPAGINGBUFFER:
    fields = {"pDmaBuffer": DMA.pointer(0x10), "DmaSize": 0x1FF0, "MultipassOffset": 2, **header}
    return DXGKARG_BUILDPAGINGBUFFER(payload, **fields)


def _dirty() -> paging.DXGKARG_BUILDPAGINGBUFFER:
    block = paging.DXGKARG_BUILDPAGINGBUFFER()
    ctypes.memset(ctypes.addressof(block), 0xA5, ctypes.sizeof(block))  # every byte must be written
    return block


def _both(args: DXGKARG_BUILDPAGINGBUFFER) -> tuple[bytes, bytes, ArgumentWriter]:
    """The block as the compiled writer leaves it and as the general walk does (one set of MDL images)."""
    images = MdlImages()
    fast, walk = ArgumentWriter(images), ArgumentWriter(images)
    a, b = _dirty(), _dirty()
    assert plan.write(a, args, images.image, fast.host, fast.keep) is True
    walk.general(b, args)
    return bytes(a), bytes(b), fast


@pytest.mark.parametrize("name", sorted(set(PAYLOADS) - GENERAL_ONLY))
def test_the_compiled_writer_writes_the_bytes_of_the_walk(name: str) -> None:
    a, b, fast = _both(_args(PAYLOADS[name], pDmaBufferPrivateData=PRIVATE.pointer(4), DmaBufferPrivateDataSize=0xFC))
    assert len(a) == 320 and a[0:8] == (DMA.data.ctypes.data + 0x10).to_bytes(8, "little")  # the host address
    if name == "update context allocation":  # private data: each path's own copy, at its own address
        offset = 40 + paging.DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION.pDriverPrivateData.offset
        for block in (a, b):
            address = int.from_bytes(block[offset : offset + 8], "little")
            assert ctypes.string_at(address, 3) == b"abc"
        a, b = a[:offset] + a[offset + 8 :], b[:offset] + b[offset + 8 :]
        assert any(isinstance(k, ctypes.Array) for k in fast.keep)
    assert a == b


def test_the_header_members_sit_where_the_abi_puts_them() -> None:
    args = _args(
        PAYLOADS["fill"], DmaBufferPrivateDataSize=7, hSystemContext=0x55, DmaBufferGpuVirtualAddress=U64,
        DmaBufferWriteOffset=U32, pDmaBufferPrivateData=PRIVATE.pointer(0),
    )  # fmt: skip
    a, b, _ = _both(args)
    assert a == b
    block = paging.DXGKARG_BUILDPAGINGBUFFER.from_buffer_copy(a)
    assert (block.DmaSize, block.MultipassOffset, block.Operation) == (0x1FF0, 2, int(Op.DXGK_OPERATION_FILL))
    assert (block.pDmaBufferPrivateData, block.DmaBufferPrivateDataSize) == (PRIVATE.data.ctypes.data, 7)
    assert (block.hSystemContext, block.DmaBufferGpuVirtualAddress, block.DmaBufferWriteOffset) == (0x55, U64, U32)
    assert block.Fill.FillPattern == U32 and block.Fill.Destination.SegmentAddress.QuadPart == -1


@pytest.mark.parametrize("name", sorted(GENERAL_ONLY))
def test_what_has_no_compiled_writer_is_left_to_the_walk(name: str) -> None:
    images = MdlImages()
    writer = ArgumentWriter(images)
    args = _args(PAYLOADS[name])
    assert plan.write(_dirty(), args, images.image, writer.host, writer.keep) is False
    a, b = _dirty(), _dirty()
    writer.write(a, args)
    kept: list[Any] = list(writer.keep)
    writer.general(b, args)
    if name == "copy page table entries":  # the ranges: each call's own copy, at its own address
        ranges = [a.CopyPageTableEntries.pRanges, b.CopyPageTableEntries.pRanges]
        size = ctypes.sizeof(paging.DXGK_BUILDPAGINGBUFFER_COPY_RANGE)
        assert [ctypes.string_at(r, size) for r in ranges] == [bytes(kept[0]), bytes(cast(Any, writer.keep[0]))]
        assert bytes(kept[0]) == bytes(cast(Any, writer.keep[0])) and kept[0][0].DstStartPteIndex == 4
        a.CopyPageTableEntries.pRanges = b.CopyPageTableEntries.pRanges
    assert bytes(a) == bytes(b)


def _replace(payload: Any, path: str, value: object) -> Any:
    head, _, rest = path.partition(".")
    inner = _replace(getattr(payload, head), rest, value) if rest else value
    return dataclasses.replace(payload, **{head: inner})


Edit = Callable[[], DXGKARG_BUILDPAGINGBUFFER]
T, TV, SL = PAYLOADS["transfer to system"], PAYLOADS["transfer virtual"], PAYLOADS["fill"]

REFUSED: dict[str, Edit] = {
    "UINT past 32 bits": lambda: _args(_replace(T, "TransferOffset", 1 << 32)),
    "UINT below 0": lambda: _args(_replace(T, "MdlOffset", -1)),
    "SIZE_T past 64 bits": lambda: _args(_replace(T, "TransferSize", 1 << 64)),
    "SIZE_T below 0": lambda: _args(_replace(T, "TransferSize", -1)),
    "HANDLE past 64 bits": lambda: _args(_replace(T, "hAllocation", 1 << 64)),
    "nested UINT past 32 bits": lambda: _args(_replace(T, "Source.SegmentId", 1 << 32)),
    "LARGE_INTEGER past 64 bits": lambda: _args(_replace(T, "Source.SegmentAddress", 1 << 64)),
    "LARGE_INTEGER below -2**63": lambda: _args(_replace(SL, "Destination.SegmentAddress", -(1 << 63) - 1)),
    "union arm hidden by a later arm": lambda: _args(_replace(T, "Destination.SegmentAddress", 1 << 64)),
    "enum past 32 bits": lambda: _args(_replace(TV, "TransferDirection", 1 << 32)),
    "header DmaSize": lambda: _args(T, DmaSize=1 << 32),
    "header MultipassOffset": lambda: _args(T, MultipassOffset=-1),
    "header DmaBufferPrivateDataSize": lambda: _args(T, DmaBufferPrivateDataSize=1 << 32),
    "header DmaBufferWriteOffset": lambda: _args(T, DmaBufferWriteOffset=1 << 40),
    "a value with no C form": lambda: _args(_replace(T, "TransferOffset", 1.5)),
    "numpy UINT past 32 bits": lambda: _args(_replace(T, "TransferOffset", np.uint64(1 << 32))),
    "numpy header DmaSize": lambda: _args(T, DmaSize=np.uint64(1 << 32)),
    "array of the wrong element size": lambda: _args(
        _replace(PAYLOADS["update page table, cpu"], "pPageTableEntries", np.zeros(4, dtype=np.uint32))
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_value_that_does_not_fit_gets_the_walk_s_named_refusal(name: str) -> None:
    args = REFUSED[name]()
    images = MdlImages()
    writer = ArgumentWriter(images)
    with pytest.raises(MarshalError) as walked:
        writer.general(_dirty(), args)
    try:
        taken = plan.write(_dirty(), args, images.image, writer.host, writer.keep)
    except plan.Declined:
        taken = False
    assert taken is False, "the compiled writer wrote a block the walk refuses"
    with pytest.raises(MarshalError) as written:
        writer.write(_dirty(), args)
    assert str(written.value) == str(walked.value)


def test_the_refusals_name_the_member_and_its_value() -> None:
    writer = ArgumentWriter(MdlImages())
    arg = r"^DXGKARG_BUILDPAGINGBUFFER\."
    with pytest.raises(
        MarshalError, match=arg + r"Transfer\.TransferOffset=0x1_0000_0000: does not fit a 32-bit unsigned"
    ):
        writer.write(_dirty(), REFUSED["UINT past 32 bits"]())
    with pytest.raises(
        MarshalError, match=arg + r"Transfer\.Source\.SegmentAddress=0x1_0000_0000_0000_0000: does not fit"
    ):
        writer.write(_dirty(), REFUSED["LARGE_INTEGER past 64 bits"]())
    with pytest.raises(MarshalError, match=arg + r"DmaSize=0x1_0000_0000: does not fit a 32-bit UINT$"):
        writer.write(_dirty(), REFUSED["header DmaSize"]())


EDGES: dict[str, Edit] = {
    "UINT at 2**32-1": lambda: _args(_replace(T, "TransferOffset", U32)),
    "SIZE_T at 2**64-1": lambda: _args(_replace(T, "TransferSize", U64)),
    "HANDLE at 2**64-1": lambda: _args(_replace(T, "hAllocation", U64)),
    "LARGE_INTEGER at -2**63": lambda: _args(_replace(T, "Source.SegmentAddress", -(1 << 63))),
    "LARGE_INTEGER at 2**64-1": lambda: _args(_replace(T, "Source.SegmentAddress", U64)),
    "zeros everywhere": lambda: _args(_replace(_replace(T, "Source.SegmentAddress", 0), "TransferSize", 0)),
    "a bool as a number": lambda: _args(_replace(T, "TransferOffset", True)),
    "numpy integers as numbers": lambda: _args(
        _replace(_replace(T, "TransferOffset", np.uint32(U32)), "Source.SegmentAddress", np.int64(-(1 << 63)))
    ),
    "an enum where a number goes": lambda: _args(_replace(T, "MdlOffset", DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_LOCAL)),
    "a later zero arm keeps the earlier": lambda: _args(
        _replace(T, "Source", DXGK_TRANSFER_LOCATION(SegmentId=0, pMdl=MDL_B, SegmentAddress=0))
    ),
    "header at the limits": lambda: _args(T, DmaSize=U32, MultipassOffset=U32, DmaBufferWriteOffset=U32),
    "no DMA buffer": lambda: _args(T, pDmaBuffer=None),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_values_that_fit_are_written_alike(name: str) -> None:
    a, b, _ = _both(EDGES[name]())
    assert a == b


def test_numpy_integers_are_written_as_the_plain_integers_they_hold() -> None:
    """A value read out of a numpy array is a number like any other, in the header and in the payload (the
    compiled writer declines a header it does not check, and the walk writes it)."""
    images = MdlImages()
    as_numpy = _args(
        _replace(T, "TransferSize", np.uint64(0x2000)), DmaSize=np.uint32(0x1000), MultipassOffset=np.int64(3)
    )
    plain = _args(_replace(T, "TransferSize", 0x2000), DmaSize=0x1000, MultipassOffset=3)
    a, b = _dirty(), _dirty()
    ArgumentWriter(images).write(a, as_numpy)
    ArgumentWriter(images).write(b, plain)
    assert bytes(a) == bytes(b) and a.DmaSize == 0x1000 and a.MultipassOffset == 3


def test_a_numpy_bool_is_written_as_a_python_bool_is() -> None:
    """``np.True_`` (an element of a mask, a comparison's result) goes where ``True`` goes: 1, in the payload and the
    header, through the compiled writer and the walk alike."""
    images = MdlImages()
    as_numpy = _args(_replace(T, "TransferOffset", np.True_), MultipassOffset=np.True_)
    plain = _args(_replace(T, "TransferOffset", True), MultipassOffset=True)
    a, b = _dirty(), _dirty()
    ArgumentWriter(images).write(a, as_numpy)
    ArgumentWriter(images).write(b, plain)
    assert bytes(a) == bytes(b) and a.MultipassOffset == 1


def test_a_bit_field_struct_is_one_word_only_when_the_probe_says_so() -> None:
    assert plan._bit_word(paging.DXGK_UPDATEPAGETABLEFLAGS) == 32
    assert plan._bit_word(paging.DXGK_ADL_FLAGS) == 32
    short = type("Short", (ctypes.Structure,), {"_fields_": [("A", ctypes.c_uint32, 3)]})
    assert plan._bit_word(short) is None


def test_a_shape_gets_one_writer_per_set_of_value_types() -> None:
    images = MdlImages()
    writer = ArgumentWriter(images)
    for payload in (PAYLOADS["transfer to system"], PAYLOADS["transfer from system"], PAYLOADS["transfer to system"]):
        writer.write(_dirty(), _args(payload))
    shape = plan._SHAPES[DXGK_BUILDPAGINGBUFFER_TRANSFER]
    assert shape is not None
    arms = {(key[5], key[8]) for key in shape.writers}  # the types of Source.pMdl and Destination.pMdl
    assert {(type(None), MDL), (MDL, type(None))} <= arms


@pytest.mark.parametrize(("first", "second", "expected"), [(5, 0, 5), (5, 7, 7), (0, 7, 7), (0, 0, 0)])
def test_union_arms_of_one_size_fold_as_the_walk_writes_them(first: int, second: int, expected: int) -> None:
    """Two number arms at one place: the later wins unless it is 0, which the walk leaves unwritten."""
    leaves = (("A", 40, ctypes.c_uint64, False), ("B", 40, ctypes.c_uint64, False))
    writer = plan.compile_writer(leaves, (first, second))
    assert writer is not None
    block = _dirty()
    writer(
        block,
        _args(PAYLOADS["read physical"]),
        (first, second),
        MdlImages().image,
        ArgumentWriter(MdlImages()).host,
        [],
    )
    assert bytes(block)[40:48] == expected.to_bytes(8, "little") and bytes(block)[48:296] == bytes(248)


def test_the_example_driver_s_transfers_and_fills_never_need_the_walk(
    build_driver: BuildDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VidMm's own payloads all have writers: a round trip through the C driver moves the bytes, and the general
    walk is not called once (a payload change that made every call fall back would be caught here)."""
    walked: list[Op] = []
    general = ArgumentWriter.general

    def counting(self: ArgumentWriter, c: paging.DXGKARG_BUILDPAGINGBUFFER, args: DXGKARG_BUILDPAGINGBUFFER) -> None:
        walked.append(args.Operation)
        general(self, c, args)

    monkeypatch.setattr(ArgumentWriter, "general", counting)
    rig = PagingRig(SystemConfig(driver_package=str(build_driver())))
    assert isinstance(rig.driver, NativeDriver)
    mdl = rig.backing(2 * PAGE_SIZE, scatter_seed=3)
    data = rig.pattern(2 * PAGE_SIZE, seed=1)
    rig.write_segment(1, 0, data)
    segment = DXGK_TRANSFER_LOCATION.segment(1, rig.segment_address(1, 0))
    flags = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)
    size = 2 * PAGE_SIZE
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=size, Source=segment, Destination=SYS_OF(mdl), Flags=flags)
    )
    assert bytes(rig.read_mdl(mdl)) == bytes(data)
    fill = DXGK_FILL_DESTINATION(SegmentId=1, SegmentAddress=rig.segment_address(1, 0))
    rig.execute(DXGK_BUILDPAGINGBUFFER_FILL(FillSize=size, FillPattern=0x01020304, Destination=fill))
    assert bytes(rig.read_segment(1, 0, 8)) == bytes([4, 3, 2, 1, 4, 3, 2, 1])
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=size, Source=SYS_OF(mdl), Destination=segment, Flags=flags)
    )
    assert bytes(rig.read_segment(1, 0, size)) == bytes(data)
    assert walked == []


SYS_OF = DXGK_TRANSFER_LOCATION.mdl
