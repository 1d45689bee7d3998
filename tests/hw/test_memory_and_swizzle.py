"""Sparse memories, fills, the tiled layout, the aperture table and the BAR's detiling windows."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wddmsim.core.units import PAGE_SIZE, GiB, MiB
from wddmsim.hw import swizzle
from wddmsim.hw.aperture import Aperture, gart_entry
from wddmsim.hw.bar import BarAccessError, DetileWindow, PciBar
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.memory import DENSE_LIMIT, LocalMemory, PhysicalMemory


def test_an_80_gib_memory_is_sparse_reads_zero_and_keeps_what_is_written() -> None:
    memory = LocalMemory("vram", 80 * GiB)
    assert memory.read(79 * GiB, 8) == bytes(8)
    memory.write(79 * GiB + 3, b"wddm")
    assert memory.read(79 * GiB, 8) == b"\x00\x00\x00wddm\x00"
    memory.decommit(79 * GiB, PAGE_SIZE)
    assert memory.read(79 * GiB + 3, 4) == bytes(4)


@pytest.mark.parametrize("offset", [0, 1, 2, 3, 4096])
@pytest.mark.parametrize("length", [1, 3, 4, 7, 4096, 4099])
def test_fill_repeats_the_little_endian_pattern_from_the_first_byte(offset: int, length: int) -> None:
    memory = LocalMemory("m", MiB)
    memory.fill(offset, length, 0x11223344)
    expected = (bytes([0x44, 0x33, 0x22, 0x11]) * (length // 4 + 1))[:length]
    assert memory.read(offset, length) == expected
    assert memory.read(offset + length, 4) == bytes(4)


@given(pitch_tiles=st.integers(1, 8), tile_rows=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_untile_inverts_tile_and_tiled_offset_agrees(pitch_tiles: int, tile_rows: int, seed: int) -> None:
    pitch = pitch_tiles * swizzle.TILE_WIDTH
    size = pitch * swizzle.TILE_HEIGHT * tile_rows
    linear = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    tiled = swizzle.tile(linear, pitch)
    assert np.array_equal(swizzle.untile(tiled, pitch), linear)
    for offset in np.random.default_rng(seed).integers(0, size, 20).tolist():
        assert tiled[swizzle.tiled_offset(offset, pitch)] == linear[offset]


def test_a_tile_holds_128_byte_rows_of_32_rows() -> None:
    pitch = 256
    linear = np.arange(pitch * 32, dtype=np.uint32).astype(np.uint8)
    tiled = swizzle.tile(linear, pitch)
    assert np.array_equal(tiled[:128], linear[:128])  # row 0 of tile 0
    assert np.array_equal(tiled[128:256], linear[256:384])  # row 1 of tile 0
    assert swizzle.check_surface(100, 4096) is not None
    assert swizzle.check_surface(128, 4096) is None


def test_the_aperture_translates_through_its_table_and_invalid_entries_fault() -> None:
    local = LocalMemory("m", 4 * MiB)
    aperture = Aperture(1 << 40, 1 * MiB, local, 3 * MiB)
    aperture.entries[2] = gart_entry(0x1234)
    assert aperture.pfns(2 * PAGE_SIZE + 5, 10, AccessKind.READ).tolist() == [0x1234]
    with pytest.raises(GpuFault, match="aperture page 3 is not mapped"):
        aperture.pfns(2 * PAGE_SIZE, 2 * PAGE_SIZE, AccessKind.READ)


def test_a_detiling_window_shows_tiled_bytes_as_linear_through_the_bar() -> None:
    local = LocalMemory("m", 4 * MiB)
    bar = PciBar(1 << 40, 2 * MiB, local, 0, 2)
    pitch, rows = 256, 64
    linear = np.random.default_rng(1).integers(0, 256, pitch * rows, dtype=np.uint8)
    local.data[8192 : 8192 + linear.shape[0]] = swizzle.tile(linear, pitch)
    assert bar.read((1 << 40) + 8192, 256) != linear[:256].tobytes()
    bar.program_window(0, DetileWindow(8192, pitch * rows, pitch))
    assert bar.read((1 << 40) + 8192, linear.shape[0]) == linear.tobytes()
    (seen,) = bar.spans((1 << 40) + 8192, linear.shape[0])  # a reader that compares sees it linear too
    assert not isinstance(seen, int) and np.array_equal(seen, linear)
    (plain,) = bar.spans((1 << 40) + 4096, 16)  # outside the window: local memory itself, linearly
    assert not isinstance(plain, int) and np.shares_memory(plain, local.data) and plain.shape == (16,)
    with pytest.raises(BarAccessError):
        bar.spans((1 << 40) + 2 * MiB - 4, 8)
    bar.write((1 << 40) + 8192 + 300, b"\xff\xfe")
    assert local.data[8192 + swizzle.tiled_offset(300, pitch)] == 0xFF
    with pytest.raises(BarAccessError):
        bar.read((1 << 40) + 2 * MiB, 1)
    with pytest.raises(ValueError, match="pitch 100"):
        bar.program_window(1, DetileWindow(0, 4096, 100))


KINDS = ("dense", "sparse", "file")
"""Anonymous memory small enough to be dense (zero fills store), anonymous memory past ``DENSE_LIMIT`` (zero fills
release pages), and a memory file (zero fills punch holes)."""


def _memory(kind: str, pages: int) -> PhysicalMemory:
    size = pages * PAGE_SIZE + (DENSE_LIMIT if kind == "sparse" else 0)  # never touched past the first pages
    mem = PhysicalMemory("m", size, shared=kind == "file")
    assert mem.dense == (kind == "dense")
    return mem


@pytest.mark.parametrize("kind", KINDS)
def test_a_long_zero_fill_zeroes_exactly_its_range_in_every_kind_of_memory(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long zero fills release whole pages instead of storing, except in dense memory: the ragged edges and the
    # bytes around must be exactly right either way.
    mem = _memory(kind, 64)
    released: list[tuple[int, int]] = []
    decommit = PhysicalMemory.decommit

    def counted(m: PhysicalMemory, offset: int, length: int) -> None:
        released.append((offset, length))
        decommit(m, offset, length)

    monkeypatch.setattr(PhysicalMemory, "decommit", counted)
    mem.data[: 64 * PAGE_SIZE] = 0xA5
    start, length = PAGE_SIZE + 3, 40 * PAGE_SIZE + 5
    mem.fill(start, length, 0)
    expected = np.full(64 * PAGE_SIZE, 0xA5, dtype=np.uint8)
    expected[start : start + length] = 0
    assert np.array_equal(mem.data[: 64 * PAGE_SIZE], expected)
    assert released == ([] if kind == "dense" else [(start, length)])
    mem.fill(start, 8, 0x11223344)  # the released pages take stores again
    assert mem.read(start, 8) == bytes([0x44, 0x33, 0x22, 0x11] * 2)


def test_only_a_small_anonymous_memory_is_dense() -> None:
    assert LocalMemory("local memory", DENSE_LIMIT).dense
    assert not LocalMemory("local memory", DENSE_LIMIT + PAGE_SIZE).dense
    ram = PhysicalMemory("system memory", 16 * PAGE_SIZE, shared=True)
    assert ram.dense == (ram._fd is None)  # a memory file is never dense (where there are none, it is anonymous)


def test_a_local_memory_past_the_built_in_scenarios_sizes_stays_sparse() -> None:
    """Dense pays only where the built-in scenarios live (32-64 MiB): from ``--vram 128MiB`` up it cost more resident
    memory (+37 % at 128 MiB, +72 % at 1 GiB) and more time than sparse, measured on ``default`` (decision 0246)."""
    assert LocalMemory("local memory", 64 << 20).dense
    assert not LocalMemory("local memory", 128 << 20).dense
    assert not LocalMemory("local memory", 1 << 30).dense


def _holed(kind: str) -> tuple[PhysicalMemory, np.ndarray]:
    """80 pages of ``kind`` memory with two long zero fills (released: holes in a memory file; the second with
    ragged edges), a page written inside the first and a write across two pages of the second; and its bytes."""
    mem = _memory(kind, 80)
    expected = np.full(80 * PAGE_SIZE, 0x5A, dtype=np.uint8)
    mem.data[: 80 * PAGE_SIZE] = 0x5A
    for start, size in ((3 * PAGE_SIZE, 20 * PAGE_SIZE), (40 * PAGE_SIZE + 9, 30 * PAGE_SIZE)):
        mem.fill(start, size, 0)
        expected[start : start + size] = 0
    for at, data in ((10 * PAGE_SIZE + 100, b"\x01\x02\x03"), (60 * PAGE_SIZE + 4095, b"\x07\x08")):
        mem.write(at, data)
        expected[at : at + len(data)] = np.frombuffer(data, dtype=np.uint8)
    return mem, expected


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("offset", "length"), [(0, 80 * PAGE_SIZE), (5, 40 * PAGE_SIZE + 7), (PAGE_SIZE - 1, 70000)])
def test_read_into_gives_the_bytes_of_written_pages_and_zeros_of_released_ones(
    kind: str, offset: int, length: int
) -> None:
    # A long read from a memory file stores zeros for its holes instead of reading them: every byte must still be
    # the memory's, at a hole's edges, in a page partly written, at the ragged ends, and in anonymous memory.
    mem, expected = _holed(kind)
    out = bytearray(b"\xee" * length)
    mem.read_into(offset, memoryview(out))
    assert bytes(out) == expected[offset : offset + length].tobytes()
    if kind == "file":  # the holes read were not filled in: the file still holds no page there
        assert os.lseek(mem._fd, 4 * PAGE_SIZE, os.SEEK_DATA) == 10 * PAGE_SIZE  # type: ignore[arg-type]


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("offset", [-PAGE_SIZE, 3 * PAGE_SIZE, 10 * PAGE_SIZE])
def test_a_long_read_into_past_the_memory_is_refused_as_a_short_one(shared: bool, offset: int) -> None:
    # The holes of a memory file must not read past its ends as zeros: refused, as a copy through the mapping is.
    mem = PhysicalMemory("m", 4 * PAGE_SIZE, shared=shared)
    out = bytearray(b"\xee" * (2 * PAGE_SIZE))
    with pytest.raises(ValueError, match=r"different structures|m: read_into offset=.* leaves \[0, 0x4000\)"):
        mem.read_into(offset, memoryview(out))


def test_a_short_read_into_copies_through_the_mapping() -> None:
    mem = PhysicalMemory("m", 16 * PAGE_SIZE, shared=True)
    mem.write(PAGE_SIZE - 2, b"abcd")
    out = bytearray(8)
    mem.read_into(PAGE_SIZE - 4, memoryview(out))
    assert bytes(out) == b"\x00\x00abcd\x00\x00"


def _laid_end_to_end(spans: list[np.ndarray | int]) -> bytes:
    return b"".join(bytes(s) if isinstance(s, int) else s.tobytes() for s in spans)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("offset", "length"), [(0, 80 * PAGE_SIZE), (5, 40 * PAGE_SIZE + 7), (PAGE_SIZE - 1, 70000)])
def test_spans_show_the_bytes_where_they_lie_and_the_holes_by_their_length(kind: str, offset: int, length: int) -> None:
    # What a reader that only compares is handed: views of the memory itself (no copy, and no way to write), and
    # for a memory file's holes their lengths, which read zero without a page being made for them.
    mem, expected = _holed(kind)
    spans = mem.spans(offset, length)
    assert _laid_end_to_end(spans) == expected[offset : offset + length].tobytes()
    views = [s for s in spans if not isinstance(s, int)]
    assert all(not v.flags.writeable and np.shares_memory(v, mem.data) for v in views)
    for v in views:  # nor can a reader make them writeable again
        with pytest.raises(ValueError, match="WRITEABLE"):
            v.flags.writeable = True
    assert any(isinstance(s, int) for s in spans) == (kind == "file")  # anonymous memory cannot tell its holes
    if kind == "file":
        assert os.lseek(mem._fd, 4 * PAGE_SIZE, os.SEEK_DATA) == 10 * PAGE_SIZE  # type: ignore[arg-type]


@pytest.mark.parametrize("shared", [False, True])
def test_spans_past_the_memory_are_refused(shared: bool) -> None:
    mem = PhysicalMemory("m", 4 * PAGE_SIZE, shared=shared)
    assert mem.spans(PAGE_SIZE, 0) == []
    for offset in (-PAGE_SIZE, 3 * PAGE_SIZE):
        with pytest.raises(ValueError, match=r"m: spans offset=.* leave \[0, 0x4000\)"):
            mem.spans(offset, 2 * PAGE_SIZE)
