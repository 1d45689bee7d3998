"""A process's CPU reads and writes through a page-backed view: bytes land in the frames the view names, in
order, across runs of contiguous and scattered frames, and nothing else is touched."""

from __future__ import annotations

import random

import numpy as np
import pytest

from wddmsim.core.addresses import CpuVa
from wddmsim.core.units import PAGE_SIZE
from wddmsim.hw.memory import SystemMemory
from wddmsim.ntos.views import CpuAccessViolation, UserAddressSpace

FRAMES = [7, 8, 9, 3, 12, 13, 5, 6, 20, 2]  # runs of 3, 1, 2, 2, 1, 1 frames


def _space() -> tuple[SystemMemory, UserAddressSpace, CpuVa]:
    ram = SystemMemory("ram", 32 * PAGE_SIZE)
    ram.data[:] = np.arange(ram.size, dtype=np.int64).astype(np.uint8) ^ 0x5A
    space = UserAddressSpace(ram, None)
    va = space.reserve_view(len(FRAMES) * PAGE_SIZE)
    space.map_view_pages(va, np.array(FRAMES, dtype=np.uint64))
    return ram, space, va


def _reference(ram: SystemMemory) -> bytes:
    """The view's bytes laid end to end, frame by frame."""
    return b"".join(ram.read(f * PAGE_SIZE, PAGE_SIZE) for f in FRAMES)


def test_reads_give_the_frames_bytes_in_view_order() -> None:
    ram, space, va = _space()
    whole = _reference(ram)
    rng = random.Random(3)
    cases = [(0, 0), (0, len(whole)), (5, 1), (PAGE_SIZE - 3, 6), (PAGE_SIZE * 3 - 1, 2), (100, PAGE_SIZE * 7)]
    cases += [(o, rng.randrange(len(whole) - o + 1)) for o in (rng.randrange(len(whole)) for _ in range(40))]
    for offset, size in cases:
        assert space.read(CpuVa(va + offset), size) == whole[offset : offset + size], (offset, size)


def test_writes_reach_only_the_named_frames() -> None:
    ram, space, va = _space()
    before = ram.read(0, ram.size)
    payload = bytes(range(256)) * 40  # 10 KiB, crossing 3 frames of 2 runs
    offset = 2 * PAGE_SIZE + 100
    space.write(CpuVa(va + offset), payload)
    expected = bytearray(before)
    for i, byte in enumerate(payload):
        page, within = divmod(offset + i, PAGE_SIZE)
        expected[FRAMES[page] * PAGE_SIZE + within] = byte
    assert ram.read(0, ram.size) == bytes(expected)
    assert space.read(CpuVa(va + offset), len(payload)) == payload


def test_an_access_past_the_view_touches_nothing() -> None:
    ram, space, va = _space()
    before = ram.read(0, ram.size)
    with pytest.raises(CpuAccessViolation, match="runs past the view"):
        space.write(CpuVa(va + len(FRAMES) * PAGE_SIZE - 4), b"12345678")
    assert ram.read(0, ram.size) == before
