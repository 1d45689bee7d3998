"""The reference GPU's command format: packets, and the one codec that both the driver and the GPU use.

Documented for humans in ``docs/command-format.md``; this module is the normative definition.  Every packet
starts with an 8-byte header ``<u16 opcode, u16 flags, u32 length>``; ``length`` counts the whole packet,
header included, and is a multiple of :data:`PACKET_ALIGNMENT`.  Padding bytes are zero.  All fields are
little-endian.  Addresses are tagged words (:mod:`wddmsim.hw.addressing`).

Packets are plain slotted records (decoding builds one per packet, on the hottest path); treat them as values.

The decoder trusts nothing: a bad opcode, length, reserved bit or size raises :class:`DecodeError`, which the
command processor reports as an invalid-instruction fault.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final, NoReturn, assert_never

import numpy as np
import numpy.typing as npt

from wddmsim.core.bits import BitLayout
from wddmsim.core.units import PAGE_SIZE, U64_MAX, align_down, align_up

PACKET_ALIGNMENT: Final = 16
"""Every packet's length is a multiple of this; the driver pads (``DXGKARG_BUILDPAGINGBUFFER.pDmaBuffer``)."""
LE_U64: Final = np.dtype("<u8")
"""Inline words and page-list extents are little-endian 64-bit words."""


class Opcode(IntEnum):
    NOP = 0x00
    COPY = 0x01
    FILL = 0x02
    WRITE_QWORDS = 0x03
    READ_MEM = 0x04
    WRITE_MEM = 0x05
    SIGNAL = 0x06
    TLB_INVALIDATE = 0x07
    NOTE = 0x08
    SYNC = 0x09


class Transform(IntEnum):
    """Layout conversion a COPY applies (see :mod:`wddmsim.hw.swizzle`)."""

    NONE = 0
    TILE = 1
    """Source linear, destination tiled (``DXGK_TRANSFERFLAGS.Swizzle``)."""
    UNTILE = 2
    """Source tiled, destination linear (``DXGK_TRANSFERFLAGS.Unswizzle``)."""


COPY_FLAGS: Final = BitLayout("CopyFlags", 16, [("SrcPages", 0, 1), ("DstPages", 1, 1), ("Transform", 2, 2)])
WRITE_QWORDS_FLAGS: Final = BitLayout("WriteQwordsFlags", 16, [("Repeat", 0, 1)])
WRITE_MEM_FLAGS: Final = BitLayout("WriteMemFlags", 16, [("Size", 0, 4), ("Preserve", 4, 1)])
READ_MEM_FLAGS: Final = BitLayout("ReadMemFlags", 16, [("Size", 0, 4)])
SIGNAL_FLAGS: Final = BitLayout("SignalFlags", 16, [("Interrupt", 0, 1)])

PAGE_EXTENT: Final = BitLayout("PageExtent", 64, [("Pfn", 0, 40), ("CountMinus1", 40, 24)])
"""A run of physically contiguous system pages in a COPY page list."""
MAX_EXTENT_PAGES: Final = 1 << PAGE_EXTENT["CountMinus1"].width
_PFN_MASK: Final = PAGE_EXTENT["Pfn"].mask
_COUNT_LSB: Final = PAGE_EXTENT["CountMinus1"].lsb

HEADER: Final = struct.Struct("<HHI")
_COPY: Final = struct.Struct("<HHIQQQII")  # header, src, dst, size, pitch, extent count
_FILL: Final = struct.Struct("<HHIQQII")  # header, dst, size, pattern, reserved
_WRITE_QWORDS: Final = struct.Struct("<HHIQII")  # header, dst, count, reserved
_READ_MEM: Final = struct.Struct("<HHIQ")  # header, address
_WRITE_MEM: Final = struct.Struct("<HHIQQ")  # header, address, data
_SIGNAL: Final = struct.Struct("<HHIQQ")  # header, address, value
_TLB_INVALIDATE: Final = struct.Struct("<HHIQQQ")  # header, root, start, end
_NOTE: Final = struct.Struct("<HHIQQ")  # header, a, b

COPY_SRC_WORD: Final = HEADER.size
"""Byte offset of a COPY's source address word in the packet."""
COPY_DST_WORD: Final = HEADER.size + 8
"""Byte offset of a COPY's destination address word in the packet."""
FILL_DST_WORD: Final = HEADER.size
"""Byte offset of a FILL's destination address word in the packet (where a patch location points, WDDM 1.x)."""

FIXED_PARTS: Final = {
    None: HEADER,
    Opcode.COPY: _COPY,
    Opcode.FILL: _FILL,
    Opcode.WRITE_QWORDS: _WRITE_QWORDS,
    Opcode.READ_MEM: _READ_MEM,
    Opcode.WRITE_MEM: _WRITE_MEM,
    Opcode.SIGNAL: _SIGNAL,
    Opcode.TLB_INVALIDATE: _TLB_INVALIDATE,
    Opcode.NOTE: _NOTE,
}
"""The fixed part of each packet with a body (``None``: the header alone), for views that print the format
(the C data sheet, :mod:`wddmsim.drivers.native.datasheet`)."""

COPY_FIXED_SIZE: Final = _COPY.size
COPY_MIN_LENGTH: Final = -(-COPY_FIXED_SIZE // PACKET_ALIGNMENT) * PACKET_ALIGNMENT
WRITE_QWORDS_FIXED_SIZE: Final = _WRITE_QWORDS.size
WRITE_QWORDS_HEADER: Final = _WRITE_QWORDS
"""A WRITE_QWORDS's fixed part (opcode, flags, length, dst, count, reserved), for builders that pack it in place."""


def padded(size: int) -> int:
    return align_up(size, PACKET_ALIGNMENT)


@dataclass(slots=True)
class Nop:
    """Padding; ``length`` bytes (a multiple of 16) that do nothing."""

    length: int = PACKET_ALIGNMENT


@dataclass(slots=True, eq=False)
class Copy:
    """Copy ``size`` bytes from ``src`` to ``dst``, optionally (un)tiling rows of ``pitch`` bytes.

    At most one side is a page list: then its address word holds only the byte offset into the first page and
    ``extents`` lists the system pages (``PAGE_EXTENT`` words) the bytes run through, in order.
    """

    src: int
    dst: int
    size: int
    src_pages: bool = False
    dst_pages: bool = False
    transform: Transform = Transform.NONE
    pitch: int = 0
    extents: npt.NDArray[np.uint64] = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))

    @property
    def length(self) -> int:
        return copy_length(int(self.extents.shape[0]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Copy):
            return NotImplemented
        return (self.src, self.dst, self.size, self.src_pages, self.dst_pages, self.transform, self.pitch) == (
            other.src,
            other.dst,
            other.size,
            other.src_pages,
            other.dst_pages,
            other.transform,
            other.pitch,
        ) and np.array_equal(self.extents, other.extents)

    __hash__ = None  # type: ignore[assignment]


@dataclass(slots=True)
class Fill:
    """Fill ``size`` bytes at ``dst`` with the little-endian 32-bit ``pattern``."""

    dst: int
    size: int
    pattern: int
    length: int = 32


@dataclass(slots=True, eq=False)
class WriteQwords:
    """Write ``count`` 64-bit words at ``dst``: the inline ``data``, or ``data[0]`` repeated if ``repeat``."""

    dst: int
    count: int
    data: npt.NDArray[np.uint64]
    repeat: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.data, np.ndarray) or self.data.dtype != np.uint64:
            self.data = np.asarray(self.data, dtype=np.uint64)

    @property
    def length(self) -> int:
        return write_qwords_length(1 if self.repeat else self.count)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WriteQwords):
            return NotImplemented
        return (self.dst, self.count, self.repeat) == (other.dst, other.count, other.repeat) and np.array_equal(
            self.data, other.data
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(slots=True)
class ReadMem:
    """Read ``size`` (1-8) bytes at ``address``; the value lands in the engine's ``last_read`` register."""

    address: int
    size: int
    length: int = 16


@dataclass(slots=True)
class WriteMem:
    """Write ``size`` (1-8) bytes of ``data`` at ``address``; ``preserve`` writes back what is already there."""

    address: int
    size: int
    data: int = 0
    preserve: bool = False
    length: int = 32


@dataclass(slots=True)
class Signal:
    """Write the 64-bit ``value`` at ``address`` (8-byte aligned); raise an interrupt if ``interrupt``."""

    address: int
    value: int
    interrupt: bool = False
    length: int = 32


@dataclass(slots=True)
class TlbInvalidate:
    """Drop cached translations of the address space rooted at ``root`` for VAs in [start, end]; 0/0 = all."""

    root: int
    start: int
    end: int
    length: int = 32


@dataclass(slots=True)
class Note:
    """A driver annotation: no memory effect; the engine records ``(kind, a, b)`` in its log."""

    kind: int
    a: int = 0
    b: int = 0
    length: int = 32


@dataclass(slots=True)
class Sync:
    """Wait until every earlier packet's writes are visible (a full barrier and cache flush)."""

    length: int = 16


Packet = Nop | Copy | Fill | WriteQwords | ReadMem | WriteMem | Signal | TlbInvalidate | Note | Sync

MIN_PACKET_LENGTH: Final = PACKET_ALIGNMENT


_PAD: Final = PACKET_ALIGNMENT - 1


def copy_length(extent_count: int) -> int:
    return (COPY_FIXED_SIZE + 8 * extent_count + _PAD) & ~_PAD


def write_qwords_length(inline_count: int) -> int:
    return (WRITE_QWORDS_FIXED_SIZE + 8 * inline_count + _PAD) & ~_PAD


def max_extents_in(space: int) -> int:
    """The most page-list extents a COPY can carry within ``space`` bytes (negative: not even the header)."""
    return ((space & ~_PAD) - COPY_FIXED_SIZE) // 8  # align_down to PACKET_ALIGNMENT, without the call


def max_qwords_in(space: int) -> int:
    """The most inline words a WRITE_QWORDS can carry within ``space`` bytes."""
    return (align_down(space, PACKET_ALIGNMENT) - WRITE_QWORDS_FIXED_SIZE) // 8


def make_extents(pfns: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Coalesce a PFN array into ``PAGE_EXTENT`` words (consecutive PFNs become one extent)."""
    count = pfns.shape[0]
    if count == 0:
        return np.zeros(0, dtype=np.uint64)
    if count == 1:  # one page: its extent word is its PFN
        return pfns.astype(np.uint64)
    if count <= 16:  # a short list is cheaper in plain Python than in numpy's per-call overhead
        return np.array(_small_extents(pfns.tolist()), dtype=np.uint64)
    p = pfns.astype(np.int64, copy=False)
    breaks = np.flatnonzero(np.diff(p) != 1) + 1
    starts = np.concatenate(([0], breaks))
    counts = np.diff(np.concatenate((starts, [p.shape[0]])))
    if int(counts.max()) > MAX_EXTENT_PAGES:
        return _split_long_extents(p[starts], counts)
    words: npt.NDArray[np.uint64] = p[starts].astype(np.uint64) | (
        (counts - 1).astype(np.uint64) << np.uint64(_COUNT_LSB)
    )
    return words


def small_extents(pfns: list[int]) -> list[int]:
    """:func:`make_extents` for a short list of PFNs (at most :data:`MAX_EXTENT_PAGES`), in plain Python: the
    extent words as ints, without an array."""
    return _small_extents(pfns) if pfns else []


def _small_extents(pfns: list[int]) -> list[int]:
    words: list[int] = []
    start = prev = pfns[0]
    for pfn in pfns[1:]:
        if pfn != prev + 1:
            words.append(start | ((prev - start) << _COUNT_LSB))
            start = pfn
        prev = pfn
    words.append(start | ((prev - start) << _COUNT_LSB))
    return words


def _split_long_extents(starts: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    out: list[int] = []
    for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
        while count > 0:
            take = min(count, MAX_EXTENT_PAGES)
            out.append(start | ((take - 1) << _COUNT_LSB))
            start += take
            count -= take
    return np.array(out, dtype=np.uint64)


def extent_pages(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    """Pages in each extent."""
    counts: npt.NDArray[np.int64] = (words >> np.uint64(_COUNT_LSB)).astype(np.int64) + 1
    return counts


def split_extent(word: int) -> tuple[int, int]:
    """``(first pfn, page count)`` of one extent word."""
    return word & _PFN_MASK, (word >> _COUNT_LSB) + 1


def extent(pfn: int, pages: int) -> int:
    if not 0 < pages <= MAX_EXTENT_PAGES or not 0 <= pfn <= _PFN_MASK:
        raise ValueError(f"extent pfn={pfn:#x} pages={pages}: out of range")
    return pfn | ((pages - 1) << _COUNT_LSB)


# --- encoding -------------------------------------------------------------------------------------------------


def encode_copy_into(
    buf: memoryview,
    offset: int,
    src: int,
    dst: int,
    size: int,
    *,
    flags: int = 0,
    pitch: int = 0,
    extents: npt.NDArray[np.uint64] | None = None,
) -> int:
    """Write a COPY at ``offset``; ``flags`` is a packed ``COPY_FLAGS`` word.  Returns the packet length."""
    count = 0 if extents is None else int(extents.shape[0])
    length = (COPY_FIXED_SIZE + 8 * count + _PAD) & ~_PAD  # copy_length, without the call
    _COPY.pack_into(buf, offset, Opcode.COPY, flags, length, src, dst, size, pitch, count)
    end = offset + COPY_FIXED_SIZE
    if count:
        assert extents is not None
        buf[end : end + 8 * count] = extents.astype(LE_U64, copy=False).tobytes()
        end += 8 * count
    if end != offset + length:
        buf[end : offset + length] = bytes(offset + length - end)
    return length


_COPY_WITH_WORDS: Final = tuple(struct.Struct(f"<HHIQQQII{n}Q") for n in range(17))
"""A COPY's fixed part and its first 0-16 extent words, packed in one call."""
_COPY_WORDS_PLANS: Final = tuple(
    (packer, length, bytes(length - packer.size))
    for packer, length in ((p, (p.size + _PAD) & ~_PAD) for p in _COPY_WITH_WORDS)
)
"""Per extent count: its packer, the packet's length and the zero bytes that pad it."""


def encode_copy_words_into(
    buf: memoryview, offset: int, src: int, dst: int, size: int, flags: int, words: list[int]
) -> int:
    """:func:`encode_copy_into` for a page list of at most 16 extent words given as ints (no pitch): one pack."""
    count = len(words)
    packer, length, padding = _COPY_WORDS_PLANS[count]
    packer.pack_into(buf, offset, _OP_COPY, flags, length, src, dst, size, 0, count, *words)
    if padding:
        buf[offset + length - len(padding) : offset + length] = padding
    return length


def encode_write_qwords_into(
    buf: memoryview, offset: int, dst: int, count: int, data: npt.NDArray[np.uint64], *, repeat: bool = False
) -> int:
    """Write a WRITE_QWORDS whose inline words are ``data`` (one word when ``repeat``)."""
    inline = int(data.shape[0])
    length = encode_write_qwords_header_into(buf, offset, dst, count, inline, repeat=repeat)
    start = offset + WRITE_QWORDS_FIXED_SIZE
    buf[start : start + 8 * inline] = data.astype(LE_U64, copy=False).tobytes()
    return length


def encode_write_qwords_header_into(
    buf: memoryview, offset: int, dst: int, count: int, inline: int, *, repeat: bool = False
) -> int:
    """Write a WRITE_QWORDS's header and padding, leaving its ``inline`` words (at ``offset + 24``) to the caller,
    who fills them in place -- e.g. translating page-table entries straight into the DMA buffer.  Returns the
    packet length."""
    length = (WRITE_QWORDS_FIXED_SIZE + 8 * inline + _PAD) & ~_PAD  # write_qwords_length, without the call
    _WRITE_QWORDS.pack_into(buf, offset, _OP_WRITE_QWORDS, repeat, length, dst, count, 0)
    end = offset + WRITE_QWORDS_FIXED_SIZE + 8 * inline
    if end != offset + length:
        buf[end : offset + length] = _ZEROS[: offset + length - end]
    return length


_ZEROS: Final = bytes(PACKET_ALIGNMENT)
_OP_WRITE_QWORDS: Final = int(Opcode.WRITE_QWORDS)


def encode_into(buf: memoryview, offset: int, packet: Packet) -> int:
    """Encode ``packet`` at ``offset``; returns its length.  The caller checks there is room."""
    match packet:
        case Copy():
            flags = COPY_FLAGS.pack(
                {"SrcPages": packet.src_pages, "DstPages": packet.dst_pages, "Transform": packet.transform}
            )
            return encode_copy_into(
                buf,
                offset,
                packet.src,
                packet.dst,
                packet.size,
                flags=flags,
                pitch=packet.pitch,
                extents=packet.extents,
            )
        case Fill():
            _FILL.pack_into(buf, offset, Opcode.FILL, 0, 32, packet.dst, packet.size, packet.pattern, 0)
            return 32
        case WriteQwords():
            return encode_write_qwords_into(buf, offset, packet.dst, packet.count, packet.data, repeat=packet.repeat)
        case ReadMem():
            _READ_MEM.pack_into(
                buf, offset, Opcode.READ_MEM, READ_MEM_FLAGS.pack({"Size": packet.size}), 16, packet.address
            )
            return 16
        case WriteMem():
            flags = WRITE_MEM_FLAGS.pack({"Size": packet.size, "Preserve": packet.preserve})
            _WRITE_MEM.pack_into(buf, offset, Opcode.WRITE_MEM, flags, 32, packet.address, packet.data)
            buf[offset + 24 : offset + 32] = bytes(8)
            return 32
        case Signal():
            _SIGNAL.pack_into(buf, offset, Opcode.SIGNAL, int(packet.interrupt), 32, packet.address, packet.value)
            buf[offset + 24 : offset + 32] = bytes(8)
            return 32
        case TlbInvalidate():
            _TLB_INVALIDATE.pack_into(buf, offset, Opcode.TLB_INVALIDATE, 0, 32, packet.root, packet.start, packet.end)
            return 32
        case Note():
            _NOTE.pack_into(buf, offset, Opcode.NOTE, packet.kind, 32, packet.a, packet.b)
            buf[offset + 24 : offset + 32] = bytes(8)
            return 32
        case Sync():
            HEADER.pack_into(buf, offset, Opcode.SYNC, 0, 16)
            buf[offset + 8 : offset + 16] = bytes(8)
            return 16
        case Nop():
            HEADER.pack_into(buf, offset, Opcode.NOP, 0, packet.length)
            buf[offset + 8 : offset + packet.length] = bytes(packet.length - 8)
            return packet.length
        case _:
            assert_never(packet)


SYNC_BYTES: Final = HEADER.pack(Opcode.SYNC, 0, 16) + bytes(8)
"""A SYNC packet, encoded once (the most frequent packet a driver appends)."""


def encode(packet: Packet) -> bytes:
    buf = bytearray(packet.length)
    encode_into(memoryview(buf), 0, packet)
    return bytes(buf)


# --- decoding -------------------------------------------------------------------------------------------------


class DecodeError(Exception):
    """A packet the command processor cannot execute; ``offset`` is where it starts."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"packet at +{offset:#x}: {reason}")
        self.offset = offset
        self.reason = reason


def _zero(buf: memoryview | bytes, start: int, end: int) -> bool:
    return not any(buf[start:end])


_PAD_WORD: Final = struct.Struct("<Q")
"""A WRITE_QWORDS's padding: a 24-byte header and whole words leave 0 or 8 bytes to the 16-byte alignment."""

_WQ_FIXED: Final = WRITE_QWORDS_FIXED_SIZE
WriteQwordsFields = tuple[int, int, bool, int, int]
"""``(dst, count, repeat, offset of the inline words, packet length)`` of a WRITE_QWORDS."""


def write_qwords_at(buf: memoryview | bytes, offset: int, end: int) -> WriteQwordsFields | None:
    """The fields of the well-formed WRITE_QWORDS at ``offset``, read without building a packet or an array (the
    first item of :func:`write_qwords_run`) -- or ``None`` when the packet there is anything else, well-formed or
    not (:func:`decode` it: it returns the same WRITE_QWORDS, or explains the fault).
    """
    return next(write_qwords_run(buf, offset, end), None)


def write_qwords_run(buf: memoryview | bytes, offset: int, end: int) -> Iterator[WriteQwordsFields]:
    """The fields (:data:`WriteQwordsFields`) of the well-formed WRITE_QWORDS packets that follow one another from
    ``offset`` -- a paging buffer holds hundreds in a row -- with the checks :func:`decode` makes of one.  A
    packet's header is read only when the one before has been taken (a packet may rewrite the next one's bytes),
    and the run ends before the first packet that is anything else, well-formed or not."""
    unpack, pad_word, op, fixed, pad = (
        _WRITE_QWORDS.unpack_from,
        _PAD_WORD.unpack_from,
        _OP_WRITE_QWORDS,
        _WQ_FIXED,
        _PAD,
    )
    while end - offset >= fixed + 8:
        opcode, flags, length, dst, count, reserved = unpack(buf, offset)
        if opcode != op or flags >> 1 or reserved or count <= 0:
            return
        start = offset + fixed
        words_end = start + (8 if flags else count << 3)
        stop = offset + length
        if length != (words_end - offset + pad) & ~pad or stop > end:
            return
        if words_end != stop and (
            pad_word(buf, words_end)[0] if stop - words_end == 8 else not _zero(buf, words_end, stop)
        ):
            return
        yield dst, count, flags == 1, start, length
        offset = stop


_SYNC_WORDS: Final = struct.Struct("<QQ")
_SYNC_WORD_VALUES: Final = _SYNC_WORDS.unpack(SYNC_BYTES)
"""A SYNC's 16 bytes as two words: :func:`sync_at` compares them as a tuple (cheaper than a slice of a view)."""


def sync_at(buf: memoryview | bytes, offset: int, end: int) -> bool:
    """Whether a well-formed SYNC starts at ``offset`` (read without building a packet; anything else, well-formed
    or not, is for :func:`decode`)."""
    return end - offset >= 16 and _SYNC_WORDS.unpack_from(buf, offset) == _SYNC_WORD_VALUES  # no slice to compare


def decode(buf: memoryview | bytes, offset: int, end: int) -> Packet:
    """Decode the packet at ``offset``; the buffer's valid bytes end at ``end``."""
    if end - offset < 8:
        raise DecodeError(offset, f"{end - offset} byte(s) left, less than a packet header")
    opcode, flags, length = HEADER.unpack_from(buf, offset)
    if length < MIN_PACKET_LENGTH or length % PACKET_ALIGNMENT:
        raise DecodeError(offset, f"length {length:#x} is not a positive multiple of {PACKET_ALIGNMENT}")
    if offset + length > end:
        raise DecodeError(offset, f"length {length:#x} runs {offset + length - end:#x} byte(s) past the buffer")
    decoder = _DECODERS.get(opcode)
    if decoder is None:
        raise DecodeError(offset, f"unknown opcode {opcode:#x}")
    return decoder(buf, offset, flags, length)


def _expect(offset: int, ok: bool, reason: str) -> None:
    if not ok:
        raise DecodeError(offset, reason)


def _decode_nop(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, flags == 0, f"NOP flags {flags:#x} must be zero")
    return Nop(length)


_SRC_PAGES: Final = COPY_FLAGS["SrcPages"].shifted_mask
_DST_PAGES: Final = COPY_FLAGS["DstPages"].shifted_mask
_TRANSFORM_LSB: Final = COPY_FLAGS["Transform"].lsb


_TRANSFORMS: Final = tuple(Transform)


def _decode_copy(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    if length < COPY_MIN_LENGTH:  # the message is formatted only when it is needed
        raise DecodeError(offset, f"COPY length {length:#x} is shorter than its fixed part")
    _, _, _, src, dst, size, pitch, count = _COPY.unpack_from(buf, offset)
    src_pages, dst_pages, transform = bool(flags & _SRC_PAGES), bool(flags & _DST_PAGES), flags >> _TRANSFORM_LSB
    if (
        length != (COPY_FIXED_SIZE + 8 * count + _PAD) & ~_PAD  # copy_length(count)
        or flags >> 4
        or (src_pages and dst_pages)
        or transform >= 3
        or (src_pages or dst_pages) != (count > 0)
    ):
        _copy_header_error(offset, flags, length, count)
    start = offset + COPY_FIXED_SIZE
    if count <= 8:  # the common small case without numpy's per-call overhead
        words = struct.unpack_from(_SMALL_EXTENTS[count], buf, start)
        extents = np.array(words, dtype=np.uint64)
        pages = count
        for word in words:  # a loop beats sum() over a generator for a word or two
            pages += word >> _COUNT_LSB
    else:
        extents = np.frombuffer(buf, dtype="<u8", count=count, offset=start).astype(np.uint64)
        pages = count + int((extents >> np.uint64(_COUNT_LSB)).sum())
    if count:
        first = src if src_pages else dst
        if first >= PAGE_SIZE:
            raise DecodeError(offset, "COPY page-list address word must hold only the first-page offset")
        if first + size > pages * PAGE_SIZE:
            raise DecodeError(offset, "COPY size runs past its page list")
    pad = start + 8 * count
    if pad != offset + length and not _zero(buf, pad, offset + length):
        raise DecodeError(offset, "COPY padding not zero")
    return Copy(src, dst, size, src_pages, dst_pages, _TRANSFORMS[transform], pitch, extents)


_SMALL_EXTENTS: Final = tuple(f"<{n}Q" for n in range(9))

_SMALL_EXTENT_WORDS: Final = tuple(struct.Struct(f"<{n}Q") for n in range(9))
_OP_COPY: Final = int(Opcode.COPY)
_COPY_ONE: Final = struct.Struct(_COPY.format + "Q")  # a COPY's header and its first extent word
_COPY_ONE_LENGTH: Final = (COPY_FIXED_SIZE + 8 + _PAD) & ~_PAD
assert _COPY_ONE.size == _COPY_ONE_LENGTH, "paged_copy_at reads a one-extent COPY as unpadded"

PagedCopyFields = tuple[int, int, int, bool, tuple[int, ...], int]
"""``(linear side's address word, first-page offset, size, to_pages, extent words, packet length)`` of a COPY
between a linear range and a page list."""


def paged_copy_at(buf: memoryview | bytes, offset: int, end: int) -> PagedCopyFields | None:
    """The fast path for a small transfer's packet: the fields of the well-formed COPY at ``offset`` that has a
    page list of one to eight extents on one side, no transform and a size above zero, read without building a
    packet or an array -- or ``None`` for anything else, well-formed or not (:func:`decode` it: it returns the
    same COPY, or explains the fault)."""
    if end - offset < COPY_FIXED_SIZE + 8:
        return None
    # The header and the first extent word in one unpack: one extent (a 4 KiB transfer) needs no other.
    opcode, flags, length, src, dst, size, _, count, word = _COPY_ONE.unpack_from(buf, offset)
    # flags exactly one page-list bit: no transform, no reserved bit, not both sides
    if opcode != _OP_COPY or (flags != _SRC_PAGES and flags != _DST_PAGES) or size <= 0:
        return None
    if count == 1:
        if length != _COPY_ONE_LENGTH or offset + length > end:  # no padding: the packet is 16-byte aligned
            return None
        words: tuple[int, ...] = (word,)
        pages = (word >> _COUNT_LSB) + 1
    else:
        if not 1 < count <= 8:
            return None
        start = offset + COPY_FIXED_SIZE
        pad = start + 8 * count
        if length != (pad - offset + _PAD) & ~_PAD or offset + length > end:
            return None
        if pad != offset + length and not _zero(buf, pad, offset + length):
            return None
        words = _SMALL_EXTENT_WORDS[count].unpack_from(buf, start)
        pages = count
        for word in words:
            pages += word >> _COUNT_LSB
    to_pages = flags == _DST_PAGES
    first, linear = (dst, src) if to_pages else (src, dst)
    if first >= PAGE_SIZE or first + size > pages * PAGE_SIZE:
        return None
    return linear, first, size, to_pages, words, length


def _copy_header_error(offset: int, flags: int, length: int, count: int) -> None:
    transform = flags >> _TRANSFORM_LSB
    _expect(offset, length == copy_length(count), f"COPY length {length:#x} does not match its {count} extent(s)")
    _expect(offset, flags >> 4 == 0, f"COPY reserved flag bits {flags:#x}")
    _expect(offset, (flags & 3) != 3, "COPY with page lists on both sides")
    _expect(offset, transform < 3, f"COPY transform {transform} is undefined")
    raise DecodeError(offset, "COPY extent count does not match its page-list flags")


def _decode_fill(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, length == 32 and flags == 0, "FILL must be 32 bytes with zero flags")
    _, _, _, dst, size, pattern, reserved = _FILL.unpack_from(buf, offset)
    _expect(offset, reserved == 0, "FILL reserved word not zero")
    return Fill(dst, size, pattern)


def _decode_write_qwords(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    # One test for the well-formed case (a page table's worth of words per packet is the hot path); the
    # explanations only when it fails.
    if length < WRITE_QWORDS_FIXED_SIZE + 8 or flags >> 1:
        raise DecodeError(offset, "WRITE_QWORDS header malformed")
    _, _, _, dst, count, reserved = _WRITE_QWORDS.unpack_from(buf, offset)
    repeat = flags == 1
    start = offset + WRITE_QWORDS_FIXED_SIZE
    end = start + 8 * (1 if repeat else count)
    if reserved or count <= 0 or length != (end - offset + _PAD) & ~_PAD:
        _write_qwords_error(offset, count, reserved, length)
    _expect(offset, end == offset + length or _zero(buf, end, offset + length), "WRITE_QWORDS padding not zero")
    # The words stay where they were fetched (a view, no copy).
    data = np.frombuffer(buf, dtype=LE_U64, count=(end - start) >> 3, offset=start)
    return WriteQwords(dst, count, data, repeat)


def _write_qwords_error(offset: int, count: int, reserved: int, length: int) -> NoReturn:
    _expect(offset, reserved == 0 and count > 0, "WRITE_QWORDS count must be positive, reserved zero")
    raise DecodeError(offset, f"WRITE_QWORDS length {length:#x} does not match count")


def _decode_read_mem(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, length == 16 and 1 <= flags <= 8, "READ_MEM must be 16 bytes with a size of 1-8")
    _, _, _, address = _READ_MEM.unpack_from(buf, offset)
    return ReadMem(address, flags)


def _decode_write_mem(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, length == 32 and flags >> 5 == 0, "WRITE_MEM must be 32 bytes")
    f = WRITE_MEM_FLAGS.unpack(flags)
    _expect(offset, 1 <= f["Size"] <= 8, f"WRITE_MEM size {f['Size']} outside 1-8")
    _, _, _, address, data = _WRITE_MEM.unpack_from(buf, offset)
    _expect(offset, _zero(buf, offset + 24, offset + 32), "WRITE_MEM padding not zero")
    return WriteMem(address, f["Size"], data, bool(f["Preserve"]))


def _decode_signal(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, length == 32 and flags >> 1 == 0, "SIGNAL must be 32 bytes")
    _, _, _, address, value = _SIGNAL.unpack_from(buf, offset)
    _expect(offset, _zero(buf, offset + 24, offset + 32), "SIGNAL padding not zero")
    return Signal(address, value, bool(flags))


def _decode_tlb_invalidate(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, length == 32 and flags == 0, "TLB_INVALIDATE must be 32 bytes with zero flags")
    _, _, _, root, start, end = _TLB_INVALIDATE.unpack_from(buf, offset)
    return TlbInvalidate(root, start, end)


def _decode_note(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    _expect(offset, length == 32, "NOTE must be 32 bytes")
    _, _, _, a, b = _NOTE.unpack_from(buf, offset)
    _expect(offset, _zero(buf, offset + 24, offset + 32), "NOTE padding not zero")
    return Note(flags, a, b)


def _decode_sync(buf: memoryview | bytes, offset: int, flags: int, length: int) -> Packet:
    if length != 16 or flags or not _zero(buf, offset + 8, offset + 16):
        raise DecodeError(offset, "SYNC must be 16 zero-padded bytes")
    return Sync()


Decoder = Callable[[memoryview | bytes, int, int, int], Packet]


def decoder(opcode: Opcode) -> Decoder:
    """The decoder of ``opcode``'s packets (exhaustive: mypy names an opcode without one)."""
    match opcode:
        case Opcode.NOP:
            return _decode_nop
        case Opcode.COPY:
            return _decode_copy
        case Opcode.FILL:
            return _decode_fill
        case Opcode.WRITE_QWORDS:
            return _decode_write_qwords
        case Opcode.READ_MEM:
            return _decode_read_mem
        case Opcode.WRITE_MEM:
            return _decode_write_mem
        case Opcode.SIGNAL:
            return _decode_signal
        case Opcode.TLB_INVALIDATE:
            return _decode_tlb_invalidate
        case Opcode.NOTE:
            return _decode_note
        case Opcode.SYNC:
            return _decode_sync
        case _:
            assert_never(opcode)


_DECODERS: Final[dict[int, Decoder]] = {opcode: decoder(opcode) for opcode in Opcode}
"""Looked up by the raw opcode on the hot path (an unknown one is a :class:`DecodeError`)."""


def decode_all(buf: memoryview | bytes, start: int = 0, end: int | None = None) -> list[tuple[int, Packet]]:
    """Every packet of ``buf[start:end]`` with its offset; raises :class:`DecodeError` at the first bad one."""
    stop = len(buf) if end is None else end
    out: list[tuple[int, Packet]] = []
    offset = start
    while offset < stop:
        packet = decode(buf, offset, stop)
        out.append((offset, packet))
        offset += packet.length
    return out


def check_u64(value: int, name: str) -> None:
    if not 0 <= value <= U64_MAX:
        raise ValueError(f"{name}={value:#x}: does not fit 64 bits")
