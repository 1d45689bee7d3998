"""The bridge's call path (decision 0249): the block a C driver is handed, through the compiled writers the call
tries without a lookup, is the general walk's -- for every payload kind, shapes alternating, a value of another
type, a value out of range (refused by name, nothing written, the driver not called), an MDL whose identity a new
one takes, a mapping replaced, and a call the watchdog bounds.  ``echo.c`` keeps a copy of each block it is handed.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MAPAPERTUREFLAGS,
    DXGK_TRANSFERFLAGS,
    DXGK_TRANSFERVIRTUALFLAGS,
    DXGK_UPDATEPAGETABLEFLAGS,
)
from wddmsim.ddi.memory import DXGK_ADL_FLAGS, MDL
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.native import kernel, paging, plan, services
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.native.marshal import ArgumentWriter, MarshalError, PagingBufferCall
from wddmsim.drivers.native.services import KernelServices, MdlImages
from wddmsim.drivers.native.watchdog import LibraryLost, Watchdog
from wddmsim.hw.memory import SystemMemory

from .conftest import BuildDriver
from .test_marshal_limits import OWN_COPIES
from .test_marshal_plan import GENERAL_ONLY, PAYLOADS, _args, _dirty

ECHO = Path(__file__).with_name("echo.c")
BLOCK = ctypes.sizeof(paging.DXGKARG_BUILDPAGINGBUFFER)
TRANSFER = PAYLOADS["transfer to system"]


class Echo:
    """``echo.c`` loaded behind a :class:`PagingBufferCall`, with its copy of the last block and its settings."""

    def __init__(self, path: Path, watchdog: Watchdog | None = None) -> None:
        self.library = NativeLibrary(path)
        self.call = PagingBufferCall(self.library, KernelServices(SystemMemory("system", 16 * PAGE_SIZE), watchdog))
        handle = self.library.handle
        self.block = (ctypes.c_ubyte * BLOCK).in_dll(handle, "EchoBlock")
        self.calls = ctypes.c_uint.in_dll(handle, "EchoCalls")
        self.advance = ctypes.c_longlong.in_dll(handle, "EchoAdvance")
        self.null = ctypes.c_int.in_dll(handle, "EchoNull")

    def seen(self) -> bytes:
        return bytes(self.block)

    def walked(self, args: DXGKARG_BUILDPAGINGBUFFER) -> bytes:
        """The block the general walk writes for ``args`` (with the call's own MDL images: the same addresses)."""
        block = _dirty()
        ArgumentWriter(self.call.images).general(block, args)
        return bytes(block)


@pytest.fixture
def echo(build_driver: BuildDriver) -> Echo:
    return Echo(build_driver(ECHO))


def _masked(block: bytes, payload: object) -> bytes:
    """``block`` without the pointer to what a call copies for itself (a new copy each call)."""
    own = OWN_COPIES.get(type(payload))
    return block if own is None else block[:own] + block[own + 8 :]


def _counting(monkeypatch: pytest.MonkeyPatch, name: str, writer: ArgumentWriter) -> list[str]:
    """Calls of ``ArgumentWriter.<name>`` on ``writer`` (the call's own, not the tests' walks), by payload type."""
    seen: list[str] = []
    original: Callable[..., None] = getattr(ArgumentWriter, name)

    def counted(self: ArgumentWriter, c: Any, args: DXGKARG_BUILDPAGINGBUFFER) -> None:
        if self is writer:
            seen.append(type(args.payload).__name__)
        original(self, c, args)

    monkeypatch.setattr(ArgumentWriter, name, counted)
    return seen


def test_every_call_hands_the_driver_the_walk_s_block_and_a_known_shape_needs_no_lookup(
    echo: Echo, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = _counting(monkeypatch, "write", echo.call.writer)
    walks = _counting(monkeypatch, "general", echo.call.writer)
    order = [*PAYLOADS, "transfer from system", "transfer to system", "transfer between segments", "fill"]
    for round_ in range(2):
        del writes[:], walks[:]
        for name in order:
            args = _args(PAYLOADS[name])
            assert echo.call(args) == NTSTATUS.STATUS_SUCCESS
            assert _masked(echo.seen(), args.payload) == _masked(echo.walked(args), args.payload), name
        if round_:  # every shape seen: only what has no compiled writer goes past the direct writers
            only = {type(PAYLOADS[name]).__name__ for name in GENERAL_ONLY}
            assert sorted(writes) == sorted(walks) == sorted(only)
    assert echo.calls.value == 2 * len(order)


def test_a_value_of_another_type_is_written_as_the_walk_writes_it(echo: Echo) -> None:
    echo.call(_args(TRANSFER))  # the shape's writer is made
    for payload in (
        dataclasses.replace(TRANSFER, TransferSize=np.uint64(0x3000)),
        dataclasses.replace(TRANSFER, TransferOffset=True),
        dataclasses.replace(TRANSFER, Destination=DXGK_TRANSFER_LOCATION.segment(2, 0x8000)),
        TRANSFER,
    ):
        args = _args(payload)
        echo.call(args)
        assert echo.seen() == echo.walked(args)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"payload": dataclasses.replace(TRANSFER, TransferSize=1 << 64)},
            "Transfer.TransferSize=0x1_0000_0000_0000_0000",
        ),
        ({"payload": dataclasses.replace(TRANSFER, TransferOffset=-1)}, "Transfer.TransferOffset=-0x1"),
        ({"DmaSize": 1 << 32}, "DXGKARG_BUILDPAGINGBUFFER.DmaSize=0x1_0000_0000"),
        ({"hSystemContext": -1}, "DXGKARG_BUILDPAGINGBUFFER.hSystemContext=-0x1"),
    ],
    ids=["payload past 64 bits", "payload negative", "header past 32 bits", "header negative"],
)
def test_a_value_out_of_range_is_refused_by_name_before_anything_is_written(
    echo: Echo, change: dict[str, Any], message: str
) -> None:
    echo.call(_args(TRANSFER))  # the shape's writer is made: the refusal is the direct writer's decline
    header = {k: v for k, v in change.items() if k != "payload"}
    args = _args(change.get("payload", TRANSFER), **header)
    images = echo.call.images
    before = (bytes(echo.call.arg), echo.calls.value, dict(images._by_id), dict(images._unsubmitted), args.pDmaBuffer)
    with pytest.raises(MarshalError) as refused:
        echo.call(args)
    with pytest.raises(MarshalError) as walked:
        ArgumentWriter(MdlImages()).general(_dirty(), args)
    assert str(refused.value) == str(walked.value) and message in str(refused.value)
    after = (bytes(echo.call.arg), echo.calls.value, dict(images._by_id), dict(images._unsubmitted), args.pDmaBuffer)
    assert after == before, "a refusal wrote the block, called the driver or made an MDL image"


def test_the_pointer_the_driver_leaves_is_read_in_the_mapping_it_was_given(echo: Echo) -> None:
    """Moved forward, moved back, outside the mapping (its distance kept, for VidMm's checker), NULL; and a mapping
    that replaced the one before (a new paging buffer pool) is addressed as itself."""
    first = CpuMapping(CpuVa(0x7400_0000), np.zeros(0x1000, dtype=np.uint8))
    second = CpuMapping(CpuVa(0x7500_0000), np.zeros(0x2000, dtype=np.uint8))
    fill = PAYLOADS["fill"]
    for mapping, advance, offset in ((first, 0x30, 0x40), (second, -0x10, 0), (first, -0x20, -0x10), (second, 0, 0x10)):
        echo.advance.value = advance
        args = _args(fill, pDmaBuffer=mapping.pointer(0x10))
        echo.call(args)
        assert int.from_bytes(echo.seen()[:8], "little") == mapping.data.ctypes.data + 0x10
        assert args.pDmaBuffer is not None
        assert (args.pDmaBuffer.mapping, args.pDmaBuffer.offset) == (mapping, offset)
    echo.null.value = 1
    args = _args(fill, pDmaBuffer=second.pointer(0x10))
    echo.call(args)
    assert args.pDmaBuffer is None


def _image_pfn(block: bytes) -> int:
    """The first PFN of the MDL image ``Transfer.Destination.pMdl`` names (48 bytes of header, then the PFNs)."""
    address = ctypes.cast(
        paging.DXGKARG_BUILDPAGINGBUFFER.from_buffer_copy(block).Transfer.Destination.pMdl, ctypes.c_void_p
    )
    assert address.value is not None
    return ctypes.c_uint64.from_address(address.value + ctypes.sizeof(kernel.MDL)).value


def test_an_mdl_whose_identity_a_new_one_takes_gets_its_own_image(echo: Echo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Images are found by the MDL's identity: every MDL here has the same one, as a freed MDL's successor may."""
    monkeypatch.setattr(services, "id", lambda _: 1, raising=False)
    images = echo.call.images
    for fence, pfn in enumerate((5, 9, 5), start=1):
        mdl = MDL(pfns=np.array([pfn], dtype=np.uint64), ByteCount=PAGE_SIZE)
        echo.call(_args(dataclasses.replace(TRANSFER, Destination=DXGK_TRANSFER_LOCATION.mdl(mdl))))
        assert _image_pfn(echo.seen()) == pfn
        images.submitted(0, fence)
        images.retire(lambda node: fence)  # noqa: B023 - called at once: the buffer ran, the image is idle
        assert (images.count(), images.idle()) == (0, 1), "the image of the MDL before went"


def test_a_bounded_call_hands_the_driver_the_same_block_and_a_lost_library_gets_nothing(
    build_driver: BuildDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline, bounded = Echo(build_driver(ECHO)), Echo(build_driver(ECHO), Watchdog(None, driver_delay=60.0))
    bounds: list[str] = []
    call_driver = Watchdog.call_driver

    def counted(self: Watchdog, entry: str, function: Callable[[], int], *keep: object) -> int:
        bounds.append(entry)
        return call_driver(self, entry, function, *keep)

    monkeypatch.setattr(Watchdog, "call_driver", counted)
    for echo in (inline, bounded):
        echo.advance.value = 0x20
    names = ["fill", "transfer between segments", "fill", "update context allocation"]
    for name in names:
        ours, theirs = _args(PAYLOADS[name]), _args(PAYLOADS[name])
        assert inline.call(ours) == bounded.call(theirs) == NTSTATUS.STATUS_SUCCESS
        assert _masked(inline.seen(), ours.payload) == _masked(bounded.seen(), theirs.payload)
        assert (ours.pDmaBuffer, ours.DmaSize) == (theirs.pDmaBuffer, theirs.DmaSize)
    assert bounds == ["DxgkDdiBuildPagingBuffer"] * len(names), "only the bounded call went to the watchdog"
    bounded.call.watchdog.lost = "a test lost it"
    block, calls = bytes(bounded.call.arg), bounded.calls.value
    with pytest.raises(LibraryLost, match="a test lost it"):
        bounded.call(_args(PAYLOADS["fill"]))
    assert (bytes(bounded.call.arg), bounded.calls.value) == (block, calls), "a lost library is not written to"


FLAG_UNIONS = [
    DXGK_TRANSFERFLAGS,
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MAPAPERTUREFLAGS,
    DXGK_TRANSFERVIRTUALFLAGS,
    DXGK_UPDATEPAGETABLEFLAGS,
    DXGK_ADL_FLAGS,
]


def _word(code: plan._Code, v: object) -> object:
    scope = {"v": v, "Declined": plan.Declined}
    exec("\n".join(line.strip() for line in code.lines), scope)  # the writer's statements for this leaf
    return scope["y"]


@pytest.mark.parametrize("kind", FLAG_UNIONS, ids=lambda k: k.__name__)
def test_a_flag_word_computed_inline_is_the_union_s_value(kind: Any) -> None:
    fields = kind.layout().fields
    samples = [kind(), kind(**{f.name: (True if f.width == 1 else f.mask) for f in fields})]
    samples += [kind(**{f.name: (True if f.width == 1 else 1 << (f.width - 1))}) for f in fields]
    for sample in samples:
        code = plan._Code()
        plan._flag_word(code, "v", "y", sample, 32)
        assert not any(".Value" in line for line in code.lines), "computed inline, not through the property"
        assert code.unsigned == {32: ["y"]}, "checked with the other 32-bit values"
        word = _word(code, sample)
        assert (type(word), word) == (int, sample.Value)


def test_a_union_that_computes_its_own_word_is_read_through_it() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Own(DXGK_TRANSFERFLAGS):
        @property
        def Value(self) -> int:
            return 0x1234

    code = plan._Code()
    plan._flag_word(code, "v", "y", Own(Swizzle=True), 32)
    assert code.unsigned == {} and _word(code, Own(Swizzle=True)) == 0x1234
    assert any("raise Declined" in line for line in code.lines), "its word is checked on its own"
