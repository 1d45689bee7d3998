"""Every number the bridge's argument writers copy into the C block, at the edges of its C member's range: what fits
is written alike by the compiled writer and the general walk; what does not is refused by both with one
``MarshalError`` naming the member path, the value and the rule, and leaves the block, the MDL images and what the
call keeps as they were (decision 0224)."""

from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, cast

import numpy as np
import pytest

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.core.errors import UnfitArgument, WddmsimError
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_UNMODELLED,
    DXGK_TRANSFER_LOCATION,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
)
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.drivers.native import kernel, paging, plan
from wddmsim.drivers.native.adapter_desc import WDDMSIM_ADAPTER_DESC, describe_mmu, segment_desc
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.marshal import ArgumentWriter, MarshalError
from wddmsim.drivers.native.services import MdlImages
from wddmsim.hw.mmu import MmuLayout
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.vidmm.errors import DeviceRemoved

from .conftest import BuildDriver
from .test_marshal_plan import GENERAL_ONLY, PAYLOADS, _args, _dirty, _replace

U32, U64 = (1 << 32) - 1, (1 << 64) - 1
ARG = "DXGKARG_BUILDPAGINGBUFFER."
LARGE_INTEGER_RULE = "a 64-bit LARGE_INTEGER (QuadPart: -2**63 to 2**64-1)"
RULES = {  # (signed, bytes) of a C integer -> what a refusal calls the member (a pointer-sized one by its name)
    (False, 1): "an 8-bit unsigned integer",
    (False, 2): "a 16-bit unsigned integer",
    (False, 4): "a 32-bit unsigned integer",
    (False, 8): "a 64-bit unsigned integer",
    (True, 4): "a 32-bit signed integer",
    (True, 8): "a 64-bit signed integer",
}


@dataclasses.dataclass(frozen=True)
class Member:
    """One number a payload carries into C: its path in the payload, the C member's range and rule."""

    payload: str
    path: str  # dotted, inside the payload
    member: str  # the union member of DXGKARG_BUILDPAGINGBUFFER the payload fills
    low: int
    high: int
    rule: str
    handle: bool
    arm: bool = False
    """In a C union: another arm the payload sets may lie over it (the two paths' bytes still agree)."""


def _c_fields(ctype: Any, union: bool = False) -> dict[str, tuple[Any, int | None, bool]]:
    """Name -> (C type, bit-field width, whether it is an arm of a union) of every member reachable by name."""
    out: dict[str, tuple[Any, int | None, bool]] = {}
    union = union or issubclass(ctype, ctypes.Union)
    for entry in getattr(ctype, "_fields_", ()):
        name, member = entry[0], entry[1]
        if name in getattr(ctype, "_anonymous_", ()):
            out.update(_c_fields(member, union))
        else:
            out[name] = (member, entry[2] if len(entry) > 2 else None, union)
    return out


def _numbers(name: str, value: Any, ctype: Any, prefix: str, arm: bool = False) -> list[Member]:
    """The numeric leaves of a payload (nested structures walked into), with the range their C member holds."""
    found: list[Member] = []
    fields = _c_fields(ctype)
    for f in dataclasses.fields(value):
        if f.name not in fields:
            continue
        inner, (member, width, in_union) = getattr(value, f.name), fields[f.name]
        union = arm or in_union
        path = prefix + f.name
        if dataclasses.is_dataclass(inner) and not isinstance(inner, BitUnion) and hasattr(member, "_fields_"):
            found.extend(_numbers(name, inner, member, path + ".", union))
            continue
        if not isinstance(inner, int):
            continue  # MDLs, pointers, arrays, bytes, flag unions: not numbers
        top = plan.MEMBERS[type(PAYLOADS[name])]
        code = getattr(member, "_type_", None)
        if member is kernel.LARGE_INTEGER:
            found.append(Member(name, path, top, -(1 << 63), U64, LARGE_INTEGER_RULE, handle=False, arm=union))
        elif width is not None:
            found.append(Member(name, path, top, 0, (1 << width) - 1, f"a {width}-bit field", handle=False, arm=union))
        elif code == "P":
            handle = f.name[0] == "h" and f.name[1].isupper()
            rule = "a 64-bit HANDLE" if handle else "a 64-bit pointer"
            found.append(Member(name, path, top, 0, U64, rule, handle=handle, arm=union))
        else:
            assert isinstance(code, str) and code in "bBhHiIlLqQ", f"{name}.{path}: C type {member} is no integer"
            signed, size = code.islower(), ctypes.sizeof(member)
            low, high = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if signed else (0, (1 << (8 * size)) - 1)
            found.append(Member(name, path, top, low, high, RULES[signed, size], handle=False, arm=union))
    return found


MEMBERS = [
    member
    for name in sorted(set(PAYLOADS) - {"unmodelled"})
    for member in _numbers(name, PAYLOADS[name], getattr(paging, type(PAYLOADS[name]).__name__), "")
]


def _holds(member: Member, value: int) -> bool:
    """Whether the DDI's own payload type takes ``value`` (an ADL's ``PageCount`` is checked against its pages)."""
    try:
        _replace(PAYLOADS[member.payload], member.path, value)
    except ValueError:
        return False
    return True


FITS = [(m, v) for m in MEMBERS for v in sorted({m.high, m.low, *([0] if m.handle else [])}) if _holds(m, v)]
REFUSED = [(m, v) for m in MEMBERS for v in (m.high + 1, m.low - 1) if _holds(m, v)]  # low - 1: -1 if unsigned


def _id(case: tuple[Member, int]) -> str:
    member, value = case
    return f"{member.payload}:{member.path}={value:#x}"


def _set(payload: Any, path: str, value: int) -> Any:
    """``payload`` with the leaf at ``path`` set to ``value`` (an enum member's leaf as a plain int)."""
    return _replace(payload, path, value)


def test_the_table_covers_every_kind_of_member() -> None:
    """The generated table reaches every payload with numbers, and every kind of C member they fill."""
    rules = {m.rule for m in MEMBERS}
    assert {"a 64-bit HANDLE", "a 32-bit unsigned integer", "a 64-bit unsigned integer", LARGE_INTEGER_RULE} <= rules
    assert "a 1-bit field" in rules  # NOTIFYRESIDENCY.Resident
    assert {m.payload for m in MEMBERS} == set(PAYLOADS) - {"unmodelled"}
    assert len(MEMBERS) > 60


class Paths:
    """One set of MDL images, a compiled-writer and a general-walk ``ArgumentWriter`` over it."""

    def __init__(self) -> None:
        self.images = MdlImages()
        self.fast = ArgumentWriter(self.images)
        self.walk = ArgumentWriter(self.images)

    def state(self) -> tuple[object, ...]:
        """What a refused call must leave as it was: the images made and those waiting for a submission."""
        return (dict(self.images._by_id), dict(self.images._unsubmitted), dict(self.images._idle))


def _assert_refused(args: DXGKARG_BUILDPAGINGBUFFER, message: str) -> None:
    """Both paths refuse ``args`` with ``message`` exactly, changing nothing; the compiled writer only declines."""
    paths = Paths()
    paths.fast.keep = kept = [object()]
    before = paths.state()
    block = _dirty()
    try:
        taken = plan.write(block, args, paths.images.image, paths.fast.host, [])
    except plan.Declined:
        taken = False
    assert taken is False, "the compiled writer wrote a block the walk refuses"
    assert bytes(block) == bytes(_dirty()) and paths.state() == before
    for call in (paths.fast.write, paths.walk.general):
        with pytest.raises(MarshalError) as refused:
            call(block, args)
        assert str(refused.value) == message
        assert bytes(block) == bytes(_dirty()), "a refusal wrote into the C block"
        assert paths.state() == before, "a refusal made or claimed an MDL image"
    assert paths.fast.keep is kept and kept == paths.fast.keep


OWN_COPIES = {  # payload type -> where the pointer to what each call copies for itself sits
    type(PAYLOADS["update context allocation"]): 40
    + paging.DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION.pDriverPrivateData.offset,
    type(PAYLOADS["copy page table entries"]): 40 + paging.DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES.pRanges.offset,
}


def _written(args: DXGKARG_BUILDPAGINGBUFFER, compiled: bool) -> bytes:
    """The block the general walk writes; the compiled writer's (where it has one) and the writer's, checked to be
    the same bytes but for a pointer to a call's own copy."""
    paths = Paths()
    walked = _dirty()
    paths.walk.general(walked, args)
    blocks = [_dirty()]
    paths.fast.write(blocks[0], args)
    if compiled:
        blocks.append(_dirty())
        assert plan.write(blocks[1], args, paths.images.image, paths.fast.host, paths.fast.keep) is True
    own = OWN_COPIES.get(type(args.payload))
    for block in blocks:
        a, b = bytes(block), bytes(walked)
        if own is not None:
            a, b = a[:own] + a[own + 8 :], b[:own] + b[own + 8 :]
        assert a == b
    return bytes(walked)


def _leaf(block: bytes, member: Member) -> Any:
    c = paging.DXGKARG_BUILDPAGINGBUFFER.from_buffer_copy(block)
    target: Any = getattr(c, member.member)
    for part in member.path.split("."):
        target = getattr(target, part)
    return target.QuadPart if isinstance(target, kernel.LARGE_INTEGER) else target


@pytest.mark.parametrize("case", FITS, ids=_id)
def test_a_member_at_the_edge_of_its_range_is_written_alike(case: tuple[Member, int]) -> None:
    member, value = case
    payload = _set(PAYLOADS[member.payload], member.path, value)
    block = _written(_args(payload), member.payload not in GENERAL_ONLY)
    read = _leaf(block, member)
    if not member.arm:  # a union arm the payload also sets may lie over it
        expected = value - (1 << 64) if member.rule == LARGE_INTEGER_RULE and value >= 1 << 63 else value
        assert (read or 0) == expected


@pytest.mark.parametrize("case", REFUSED, ids=_id)
def test_a_member_past_its_range_is_refused_by_name_changing_nothing(case: tuple[Member, int]) -> None:
    member, value = case
    payload = _set(PAYLOADS[member.payload], member.path, value)
    _assert_refused(_args(payload), f"{ARG}{member.member}.{member.path}={value:#_x}: does not fit {member.rule}")


HEADER = [  # (member, its largest value, the rule)
    ("DmaSize", U32, "a 32-bit UINT"),
    ("DmaBufferPrivateDataSize", U32, "a 32-bit UINT"),
    ("MultipassOffset", U32, "a 32-bit UINT"),
    ("hSystemContext", U64, "a 64-bit HANDLE"),
    ("DmaBufferGpuVirtualAddress", U64, "a 64-bit D3DGPU_VIRTUAL_ADDRESS"),
    ("DmaBufferWriteOffset", U32, "a 32-bit UINT"),
]
TRANSFER = PAYLOADS["transfer to system"]


@pytest.mark.parametrize(("name", "high", "rule"), HEADER)
def test_the_header_members_fit_up_to_their_width_and_no_further(name: str, high: int, rule: str) -> None:
    for value in (0, high):
        block = _written(_args(TRANSFER, **{name: value}), compiled=True)
        c = paging.DXGKARG_BUILDPAGINGBUFFER.from_buffer_copy(block)
        assert (getattr(c, name) or 0) == value
    for value in (high + 1, -1, 1 << 70):
        _assert_refused(_args(TRANSFER, **{name: value}), f"{ARG}{name}={value:#_x}: does not fit {rule}")


def test_the_refusal_reads_as_the_documents_say() -> None:
    args = _args(TRANSFER, hSystemContext=1 << 64)
    _assert_refused(
        args, "DXGKARG_BUILDPAGINGBUFFER.hSystemContext=0x1_0000_0000_0000_0000: does not fit a 64-bit HANDLE"
    )
    args = _args(_replace(TRANSFER, "hAllocation", HANDLE(-1)))
    _assert_refused(args, "DXGKARG_BUILDPAGINGBUFFER.Transfer.hAllocation=-0x1: does not fit a 64-bit HANDLE")


def test_a_value_that_is_not_a_number_is_refused_by_name() -> None:
    _assert_refused(
        _args(TRANSFER, hSystemContext=1.5),
        "DXGKARG_BUILDPAGINGBUFFER.hSystemContext=1.5: not an integer, the C member is a 64-bit HANDLE",
    )
    _assert_refused(
        _args(TRANSFER, DmaSize="4096"),
        "DXGKARG_BUILDPAGINGBUFFER.DmaSize='4096': not an integer, the C member is a 32-bit UINT",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class WideFlags(BitUnion):
    """A flag union wider than the C word it goes into: its ``Value`` cannot fit."""

    WIDTH: ClassVar[int] = 64
    Contiguous: bool = flag(0)  # what DXGK_ADL reads of its flags
    Low: int = bits(1, 31)
    High: int = bits(32, 32)


@pytest.mark.parametrize(
    ("payload", "path", "rule"),
    [
        ("transfer to system", "Flags", "a 32-bit flag word"),
        ("discard", "Flags", "a 32-bit flag word"),
        ("map aperture", "Flags", "a 32-bit flag word"),
        ("transfer virtual", "Flags", "a 32-bit flag word"),
        ("update page table, cpu", "Flags", "the structure's 32 bits"),  # a plain bit-field struct
        ("map aperture 2, contiguous", "Adl.Flags", "the structure's 32 bits"),
    ],
)
def test_a_flag_word_wider_than_its_c_word_is_refused(payload: str, path: str, rule: str) -> None:
    member = plan.MEMBERS[type(PAYLOADS[payload])]
    contiguous = path == "Adl.Flags"
    fits = _replace(PAYLOADS[payload], path, WideFlags(Contiguous=True, Low=U32 >> 1))
    block = _written(_args(fits), compiled=True)
    c: Any = getattr(paging.DXGKARG_BUILDPAGINGBUFFER.from_buffer_copy(block), member)
    for part in path.split("."):
        c = getattr(c, part)
    assert bytes(c)[:4] == b"\xff" * 4
    wide = _replace(PAYLOADS[payload], path, WideFlags(Contiguous=contiguous, High=1))
    shown = "0x1_0000_0001" if contiguous else "0x1_0000_0000"
    _assert_refused(_args(wide), f"{ARG}{member}.{path}={shown}: does not fit {rule}")


def test_the_unmodelled_operations_reserved_words_are_uints() -> None:
    words = [0] * 64
    words[63] = U32
    block = _written(
        _args(DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=Op.DXGK_OPERATION_MAP_MMU, Reserved=tuple(words))),
        compiled=False,
    )
    assert block[40 + 63 * 4 : 40 + 64 * 4] == b"\xff" * 4
    for value in (U32 + 1, -1):
        words[63] = value
        payload = DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=Op.DXGK_OPERATION_MAP_MMU, Reserved=tuple(words))
        _assert_refused(_args(payload), f"{ARG}Reserved.Reserved[63]={value:#_x}: does not fit a 32-bit UINT")
    payload = DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=Op.DXGK_OPERATION_MAP_MMU, Reserved=(0,) * 65)
    _assert_refused(_args(payload), f"{ARG}Reserved.Reserved: 65 words, the C array holds 64")


def test_an_mdl_past_a_ulong_of_bytes_is_refused_before_its_image_is_made() -> None:
    pages = (1 << 32) // 4096
    big = MDL(pfns=np.zeros(pages, dtype=np.uint64), ByteCount=1 << 32)
    args = _args(_replace(TRANSFER, "Destination", DXGK_TRANSFER_LOCATION.mdl(big)))
    _assert_refused(args, "MDL.ByteCount=0x1_0000_0000: does not fit a 32-bit ULONG (an MDL's bytes)")
    fits = MDL(pfns=np.zeros(pages, dtype=np.uint64), ByteCount=U32)
    _written(_args(_replace(TRANSFER, "Destination", DXGK_TRANSFER_LOCATION.mdl(fits))), compiled=True)


def test_an_enum_member_is_checked_as_its_value() -> None:
    class Wide(Enum):
        HUGE = 1 << 32

    payload = _replace(PAYLOADS["transfer virtual"], "TransferDirection", Wide.HUGE)
    _assert_refused(
        _args(payload), f"{ARG}TransferVirtual.TransferDirection=0x1_0000_0000: does not fit a 32-bit unsigned integer"
    )


def test_vidmm_resets_the_adapter_naming_the_refusal_and_the_library_is_not_called(build_driver: BuildDriver) -> None:
    """Upstream: the bridge's refusal is VidMm's own value, not the driver's failure (decision 0237) -- an adapter
    reset whose reason says so and names the member, the value and the rule -- and the C driver never sees the
    call."""
    rig = PagingRig(SystemConfig(driver_package=str(build_driver())))
    assert isinstance(rig.driver, NativeDriver)
    calls = rig.driver.call.calls
    segment = DXGK_TRANSFER_LOCATION.segment(1, rig.segment_address(1, 0))
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        hAllocation=HANDLE(1 << 64), TransferSize=0x1000, Source=segment, Destination=segment
    )
    with pytest.raises(DeviceRemoved) as removed:
        rig.execute(payload)
    assert (
        "DXGK_OPERATION_TRANSFER: the C bridge refused VidMm's own argument before the driver ran: "
        "DXGKARG_BUILDPAGINGBUFFER.Transfer.hAllocation=0x1_0000_0000_0000_0000: does not fit a 64-bit HANDLE"
    ) in str(removed.value)
    assert "the driver raised" not in str(removed.value)
    assert rig.driver.call.calls == calls


def test_a_marshal_error_is_one_the_cli_reports_without_a_traceback() -> None:
    """``MarshalError`` is a ``WddmsimError`` (the CLI's named failure, exit 1) and still a ``ValueError``; it is an
    ``UnfitArgument``, which VidMm names as its own value refused (decision 0237)."""
    assert issubclass(MarshalError, WddmsimError) and issubclass(MarshalError, ValueError)
    assert issubclass(MarshalError, UnfitArgument)


@pytest.mark.parametrize(
    ("base", "size", "message"),
    [
        (-0x1000, 0x1000, "WDDMSIM_SEGMENT_DESC[2].BaseAddress=-0x1000: does not fit a 64-bit UINT64"),
        (0, 1 << 64, "WDDMSIM_SEGMENT_DESC[2].Size=0x1_0000_0000_0000_0000: does not fit a 64-bit UINT64"),
    ],
)
def test_the_adapter_description_refuses_a_segment_past_64_bits(base: int, size: int, message: str) -> None:
    fits = segment_desc(2, DXGK_SEGMENTDESCRIPTOR4(BaseAddress=U64, Size=U64, CommitLimit=0))
    assert (fits.SegmentId, fits.BaseAddress, fits.Size) == (3, U64, U64)
    with pytest.raises(MarshalError) as refused:
        segment_desc(2, DXGK_SEGMENTDESCRIPTOR4(BaseAddress=base, Size=size, CommitLimit=0))
    assert str(refused.value) == message


@dataclasses.dataclass
class MmuShape:
    """What ``describe_mmu`` reads of an ``MmuLayout``, free to go past what a real layout can be."""

    counts: tuple[int, ...]
    gpu_page_ratio: int = 1
    leaf64_entries: int = 0
    dual_pte: bool = False

    @property
    def levels(self) -> int:
        return len(self.counts)

    def entries(self, level: int) -> int:
        return self.counts[level]


@pytest.mark.parametrize(
    ("shape", "member"),
    [
        (MmuShape((512, 1 << 32)), "EntriesPerLevel[1]=0x1_0000_0000"),
        (MmuShape((512, 512), gpu_page_ratio=1 << 32), "GpuPageRatio=0x1_0000_0000"),
        (MmuShape((512, 512), leaf64_entries=-1), "Leaf64KEntries=-0x1"),
    ],
)
def test_the_adapter_description_refuses_an_mmu_shape_past_32_bits(shape: MmuShape, member: str) -> None:
    desc = WDDMSIM_ADAPTER_DESC()
    describe_mmu(desc, cast(MmuLayout, MmuShape((512, U32), gpu_page_ratio=U32)))
    assert (desc.PageTableLevels, desc.EntriesPerLevel[1], desc.GpuPageRatio) == (2, U32, U32)
    with pytest.raises(MarshalError) as refused:
        describe_mmu(WDDMSIM_ADAPTER_DESC(), cast(MmuLayout, shape))
    assert str(refused.value) == f"WDDMSIM_ADAPTER_DESC.{member}: does not fit a 32-bit UINT32"


@pytest.mark.parametrize(("value", "fits"), [(U32, True), (U32 + 1, False), (-1, False)])
def test_a_copy_range_in_the_array_of_structures_is_checked_too(value: int, fits: bool) -> None:
    copy = PAYLOADS["copy page table entries"]
    ranges = (copy.pRanges[0], dataclasses.replace(copy.pRanges[0], DstStartPteIndex=value))
    args = _args(dataclasses.replace(copy, NumRanges=2, pRanges=ranges))
    if not fits:
        message = (
            f"{ARG}CopyPageTableEntries.pRanges[1].DstStartPteIndex={value:#_x}: does not fit a 32-bit unsigned integer"
        )
        _assert_refused(args, message)
        return
    paths = Paths()
    block = _dirty()
    paths.fast.write(block, args)
    written = paging.DXGKARG_BUILDPAGINGBUFFER.from_buffer_copy(bytes(block)).CopyPageTableEntries.pRanges
    assert (written[0].DstStartPteIndex, written[1].DstStartPteIndex) == (4, U32)
