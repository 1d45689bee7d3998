"""The engine's fast path for a small page-list COPY (decision 0204) against the general path it stands beside:
the same fields as the decoded packet, and the same bytes, events, times and faults for whole programs."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE
from wddmsim.hw import commands as cmd
from wddmsim.hw import engine as engine_module
from wddmsim.hw.addressing import Space, hw_address

from .test_posted_copies import Outcome, _run_program

LOCAL = hw_address(Space.GPU_PHYS, 0x10000)
ONE = np.array([cmd.extent(0x300, 1)], dtype=np.uint64)
TWO = np.array([cmd.extent(0x300, 2), cmd.extent(0x310, 3)], dtype=np.uint64)
EIGHT = np.array([cmd.extent(0x300 + 4 * i, 1) for i in range(8)], dtype=np.uint64)
NINE = np.array([cmd.extent(0x300 + 4 * i, 1) for i in range(9)], dtype=np.uint64)

TAKEN = [  # (packet, what the fast path reads from it)
    (cmd.Copy(LOCAL, 0, PAGE_SIZE, dst_pages=True, extents=ONE), (LOCAL, 0, PAGE_SIZE, True)),
    (cmd.Copy(0, LOCAL, PAGE_SIZE, src_pages=True, extents=ONE), (LOCAL, 0, PAGE_SIZE, False)),
    (cmd.Copy(LOCAL, 100, 1, dst_pages=True, extents=ONE), (LOCAL, 100, 1, True)),
    (cmd.Copy(100, LOCAL, 5 * PAGE_SIZE - 100, src_pages=True, extents=TWO), (LOCAL, 100, 5 * PAGE_SIZE - 100, False)),
    (cmd.Copy(LOCAL, 0, 8 * PAGE_SIZE, dst_pages=True, extents=EIGHT), (LOCAL, 0, 8 * PAGE_SIZE, True)),
]

DECLINED: list[cmd.Packet] = [  # well-formed COPYs for the general path, and malformed ones for decode to explain
    cmd.Copy(LOCAL, LOCAL + PAGE_SIZE, PAGE_SIZE),  # no page list
    cmd.Copy(LOCAL, 0, 9 * PAGE_SIZE, dst_pages=True, extents=NINE),  # more than eight extents
    cmd.Copy(LOCAL, 0, 0, dst_pages=True, extents=ONE),  # nothing to copy
    cmd.Copy(LOCAL, 0, PAGE_SIZE, dst_pages=True, extents=ONE, transform=cmd.Transform.TILE, pitch=256),
    cmd.Copy(LOCAL, 0, 2 * PAGE_SIZE, dst_pages=True, extents=ONE),  # runs past its page list
    cmd.Copy(LOCAL, PAGE_SIZE, 1, dst_pages=True, extents=ONE),  # offset word beyond the first page
    cmd.Sync(),
]


def _malformed() -> list[bytes]:
    good = bytearray(cmd.encode(cmd.Copy(LOCAL, 0, PAGE_SIZE, dst_pages=True, extents=ONE)))
    out = []
    for at, value in ((2, 0x30), (2, 0x03), (2, 0x12), (4, len(good) + 16), (36, 2)):
        bad = bytearray(good)
        bad[at] = value  # flags: reserved, both sides, a transform; the length; the extent count
        out.append(bytes(bad))
    padded = bytearray(cmd.encode(cmd.Copy(LOCAL, 0, PAGE_SIZE, dst_pages=True, extents=TWO)))
    assert len(padded) == 64  # 40 fixed bytes, two extents, 8 bytes of padding
    padded[-1] = 1
    return [*out, bytes(padded), bytes(good[:-16])]  # ... padding not zero; cut short


@pytest.mark.parametrize(("packet", "fields"), TAKEN)
def test_the_fast_path_reads_what_decode_reads(packet: cmd.Copy, fields: tuple[int, int, int, bool]) -> None:
    raw = cmd.encode(packet)
    got = cmd.paged_copy_at(raw, 0, len(raw))
    assert got is not None
    assert got[:4] == fields
    decoded = cmd.decode(raw, 0, len(raw))
    assert isinstance(decoded, cmd.Copy)
    assert list(got[4]) == decoded.extents.tolist()
    assert got[5] == len(raw)
    assert cmd.paged_copy_at(b"\0" * 16 + raw, 16, 16 + len(raw)) == got  # at an offset too


@pytest.mark.parametrize("raw", [cmd.encode(p) for p in DECLINED] + _malformed())
def test_the_fast_path_declines_what_it_does_not_carry_out(raw: bytes) -> None:
    assert cmd.paged_copy_at(raw, 0, len(raw)) is None


def _program_outcome(
    seed: int, posted: bool, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[Outcome, list[bytes]]:
    monkeypatch.setattr(engine_module, "fast_paged_copy", fast)
    return _run_program(seed, posted)


@pytest.mark.parametrize("posted", [True, False], ids=["posted", "not posted"])
@pytest.mark.parametrize("seed", range(20))
def test_a_random_program_gives_the_same_bytes_events_and_faults_with_or_without_the_fast_path(
    seed: int, posted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, seen_a = _program_outcome(seed, posted, True, monkeypatch)
    b, seen_b = _program_outcome(seed, posted, False, monkeypatch)
    assert a[2] == b[2], "events (times, offsets, opcodes, faults) differ"
    assert seen_a == seen_b, "memory differed when something else ran between packets"
    assert a[3:] == b[3:]
    assert a[0] == b[0], "local memory differs"
    assert a[1] == b[1], "system memory differs"


@pytest.mark.parametrize("count", range(17))
def test_a_copy_packed_from_words_is_the_copy_encoded_from_its_array(count: int) -> None:
    """The driver's packing of a small transfer's COPY (decision 0204) against the general encoder, over a buffer
    of stale bytes (the padding is written too)."""
    words = [cmd.extent(0x1000 + 7 * i, 1 + i % 3) for i in range(count)]
    flags = cmd.COPY_FLAGS["SrcPages"].shifted_mask if count else 0
    general, packed = bytearray(b"\xee" * 256), bytearray(b"\xee" * 256)
    extents = np.array(words, dtype=np.uint64) if count else None
    n = cmd.encode_copy_into(memoryview(general), 16, 123, LOCAL, 5000, flags=flags, extents=extents)
    assert cmd.encode_copy_words_into(memoryview(packed), 16, 123, LOCAL, 5000, flags, words) == n
    assert packed == general
    assert cmd.small_extents([]) == []
