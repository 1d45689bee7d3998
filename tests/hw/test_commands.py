"""The packet codec: every packet round-trips; malformed bytes are refused, never crash."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wddmsim.core.units import PAGE_SIZE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address

u64 = st.integers(0, (1 << 64) - 1)
addresses = st.builds(hw_address, st.sampled_from(list(Space)), st.integers(0, (1 << 60) - 1))
extents = st.lists(
    st.builds(cmd.extent, st.integers(0, (1 << 40) - 1), st.integers(1, 1 << 24)), min_size=1, max_size=40
)


@st.composite
def copies(draw: st.DrawFn) -> cmd.Copy:
    transform = draw(st.sampled_from(list(cmd.Transform)))
    pitch = draw(st.integers(0, (1 << 32) - 1))
    side = draw(st.sampled_from(["none", "src", "dst"]))
    if side == "none":
        return cmd.Copy(draw(addresses), draw(addresses), draw(u64), transform=transform, pitch=pitch)
    words = np.array(draw(extents), dtype=np.uint64)
    pages = int((words >> np.uint64(40)).sum()) + words.shape[0]
    first = draw(st.integers(0, PAGE_SIZE - 1))
    size = draw(st.integers(0, pages * PAGE_SIZE - first))
    other = draw(addresses)
    if side == "src":
        return cmd.Copy(first, other, size, src_pages=True, transform=transform, pitch=pitch, extents=words)
    return cmd.Copy(other, first, size, dst_pages=True, transform=transform, pitch=pitch, extents=words)


@st.composite
def write_qwords(draw: st.DrawFn) -> cmd.WriteQwords:
    if draw(st.booleans()):
        return cmd.WriteQwords(
            draw(addresses), draw(st.integers(1, (1 << 32) - 1)), np.array([draw(u64)], dtype=np.uint64), repeat=True
        )
    data = np.array(draw(st.lists(u64, min_size=1, max_size=50)), dtype=np.uint64)
    return cmd.WriteQwords(draw(addresses), int(data.shape[0]), data)


packets = st.one_of(
    copies(),
    st.builds(cmd.Fill, addresses, u64, st.integers(0, (1 << 32) - 1)),
    write_qwords(),
    st.builds(cmd.ReadMem, addresses, st.integers(1, 8)),
    st.builds(cmd.WriteMem, addresses, st.integers(1, 8), u64, st.booleans()),
    st.builds(cmd.Signal, addresses, u64, st.booleans()),
    st.builds(cmd.TlbInvalidate, addresses, u64, u64),
    st.builds(cmd.Note, st.integers(0, 0xFFFF), u64, u64),
    st.just(cmd.Sync()),
    st.builds(cmd.Nop, st.integers(1, 64).map(lambda n: 16 * n)),
)


@given(packets)
def test_every_packet_round_trips_and_its_length_is_what_it_encodes_to(packet: cmd.Packet) -> None:
    data = cmd.encode(packet)
    assert len(data) == packet.length
    assert len(data) % cmd.PACKET_ALIGNMENT == 0
    assert cmd.decode(data, 0, len(data)) == packet
    assert cmd.encode(cmd.decode(data, 0, len(data))) == data


@given(st.lists(packets, min_size=1, max_size=8))
def test_a_stream_decodes_packet_by_packet(stream: list[cmd.Packet]) -> None:
    data = b"".join(cmd.encode(p) for p in stream)
    decoded = cmd.decode_all(data)
    assert [p for _, p in decoded] == stream
    assert [o for o, _ in decoded] == list(np.cumsum([0] + [p.length for p in stream[:-1]]))


@given(st.binary(min_size=0, max_size=512))
def test_arbitrary_bytes_decode_or_are_refused_with_decode_error(data: bytes) -> None:
    offsets: list[int] = []
    try:
        cmd.decode_all(data)
    except cmd.DecodeError as error:
        offsets.append(error.offset)
    assert all(0 <= o <= len(data) for o in offsets)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (bytes(4), "less than a packet header"),
        (cmd.HEADER.pack(cmd.Opcode.SYNC, 0, 12) + bytes(8), "not a positive multiple of 16"),
        (cmd.HEADER.pack(0x7F, 0, 16) + bytes(8), "unknown opcode 0x7f"),
        (cmd.HEADER.pack(cmd.Opcode.SYNC, 0, 32) + bytes(8), "runs 0x10 byte"),
        (cmd.HEADER.pack(cmd.Opcode.READ_MEM, 9, 16) + bytes(8), "size of 1-8"),
        (cmd.HEADER.pack(cmd.Opcode.COPY, 0b11, 48) + bytes(40), "page lists on both sides"),
        (cmd.HEADER.pack(cmd.Opcode.COPY, 0b1100, 48) + bytes(40), "transform 3 is undefined"),
        (cmd.HEADER.pack(cmd.Opcode.FILL, 0, 32) + bytes(20) + b"\x01\x00\x00\x00", "reserved word"),
    ],
)
def test_malformed_packets_are_refused_with_the_reason(raw: bytes, reason: str) -> None:
    with pytest.raises(cmd.DecodeError, match=reason):
        cmd.decode(raw, 0, len(raw))


def test_make_extents_coalesces_consecutive_frames_and_splits_overlong_runs() -> None:
    words = cmd.make_extents(np.array([5, 6, 7, 9, 10, 3], dtype=np.uint64))
    assert [cmd.split_extent(w) for w in words.tolist()] == [(5, 3), (9, 2), (3, 1)]
    long_run = np.arange(100, 100 + cmd.MAX_EXTENT_PAGES + 3, dtype=np.uint64)
    split = [cmd.split_extent(w) for w in cmd.make_extents(long_run).tolist()]
    assert split == [(100, cmd.MAX_EXTENT_PAGES), (100 + cmd.MAX_EXTENT_PAGES, 3)]
    for n in range(1, 40):  # the short-list path agrees with the numpy path
        pfns = np.array(np.random.default_rng(n).integers(0, 8, n).cumsum(), dtype=np.uint64)
        expected = cmd.make_extents(np.concatenate((pfns, np.zeros(0, dtype=np.uint64))))
        assert [cmd.split_extent(w) for w in expected.tolist()] == _reference_runs(pfns.tolist())


def _reference_runs(pfns: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for pfn in pfns:
        if runs and runs[-1][0] + runs[-1][1] == pfn:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((pfn, 1))
    return runs


def _fast_agrees_with_decode(data: bytes, offset: int, end: int) -> None:
    """``write_qwords_at`` reads exactly the WRITE_QWORDS that ``decode`` accepts, with the same fields."""
    fast = cmd.write_qwords_at(data, offset, end)
    try:
        packet: cmd.Packet | None = cmd.decode(data, offset, end)
    except cmd.DecodeError:
        packet = None
    if not isinstance(packet, cmd.WriteQwords):
        assert fast is None
        return
    assert fast is not None
    dst, count, repeat, words, length = fast
    inline = 1 if repeat else count
    assert (dst, count, repeat, length) == (packet.dst, packet.count, packet.repeat, packet.length)
    assert np.array_equal(np.frombuffer(data, dtype="<u8", count=inline, offset=words), packet.data)


@given(write_qwords(), st.data())
def test_the_write_qwords_fast_path_reads_what_decode_reads(packet: cmd.WriteQwords, data: st.DataObject) -> None:
    """Valid packets, then each with a random byte changed, cut short, or followed by more bytes."""
    raw = cmd.encode(packet)
    _fast_agrees_with_decode(raw, 0, len(raw))
    spoiled = bytearray(raw)
    where = data.draw(st.integers(0, len(raw) - 1))
    spoiled[where] = data.draw(st.integers(0, 255))
    _fast_agrees_with_decode(bytes(spoiled), 0, len(spoiled))
    _fast_agrees_with_decode(raw, 0, data.draw(st.integers(0, len(raw))))
    padded = bytes(16) + raw + data.draw(st.binary(max_size=40))
    _fast_agrees_with_decode(padded, 16, len(padded))


@given(packets)
def test_the_write_qwords_fast_path_declines_every_other_packet(packet: cmd.Packet) -> None:
    raw = cmd.encode(packet)
    _fast_agrees_with_decode(raw, 0, len(raw))


@given(st.binary(min_size=0, max_size=96))
def test_the_write_qwords_fast_path_on_arbitrary_bytes(data: bytes) -> None:
    _fast_agrees_with_decode(data, 0, len(data))
    header = cmd.HEADER.pack(cmd.Opcode.WRITE_QWORDS, 0, 32)
    _fast_agrees_with_decode(header + data, 0, len(header + data))
