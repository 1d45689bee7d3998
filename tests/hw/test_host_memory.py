"""Host memory a native driver can address: system RAM as a memory file whose frames can be viewed contiguously
elsewhere (``SystemMemory.alias``), and local memory as one flat, sparse CPU range (``host_address``)."""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE, GiB, MiB
from wddmsim.hw import hostmap
from wddmsim.hw.memory import AliasUnsupported, HostViewError, LocalMemory, SystemMemory

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memory files and /proc are Linux's")


def _maps() -> str:
    return Path("/proc/self/maps").read_text() if sys.platform.startswith("linux") else ""


@pytest.fixture(scope="module")
def ram() -> SystemMemory:
    return SystemMemory("system memory", 1 * GiB)


def _frame_bytes(ram: SystemMemory, pfns: list[int], offset: int, count: int) -> bytes:
    """The bytes ``[offset, offset + count)`` of frames ``pfns`` laid end to end, read through the RAM itself."""
    joined = b"".join(ram.read(pfn * PAGE_SIZE, PAGE_SIZE) for pfn in pfns)
    return joined[offset : offset + count]


@linux_only
def test_system_memory_is_a_memory_file_that_can_be_aliased(ram: SystemMemory) -> None:
    assert ram.aliasable
    target = os.readlink(f"/proc/self/fd/{ram._fd}")
    assert target.startswith("/memfd:")


@linux_only
@pytest.mark.parametrize("pfns", [[7], [40, 41, 42], [100, 3, 250, 251, 9], [12, 12]])
def test_writes_through_the_alias_reach_the_frames_and_back(ram: SystemMemory, pfns: list[int]) -> None:
    offset = 0x123
    count = len(pfns) * PAGE_SIZE - offset - 5
    view = ram.alias(pfns, offset, count)
    try:
        assert view.address == view.base + offset and view.size == count
        payload = np.random.default_rng(len(pfns)).integers(0, 256, count, dtype=np.uint8).tobytes()
        ctypes.memmove(view.address, payload, count)  # a C driver's store through its pointer
        if len(set(pfns)) == len(pfns):
            assert _frame_bytes(ram, pfns, offset, count) == payload
        # ... and RAM writes show through the view: the last page's frame, written directly.
        ram.write(pfns[-1] * PAGE_SIZE + PAGE_SIZE - 16, b"from ram")
        at = len(pfns) * PAGE_SIZE - 16 - offset
        assert ctypes.string_at(view.address + at, 8) == b"from ram"
        assert view.read(at, 8) == b"from ram"
    finally:
        view.close()


@linux_only
def test_decommit_frees_file_pages_and_aliases_read_zero(ram: SystemMemory) -> None:
    view = ram.alias([300, 301], 0, 2 * PAGE_SIZE)
    try:
        view.write(0, b"\xff" * (2 * PAGE_SIZE))
        ram.decommit(300 * PAGE_SIZE, 2 * PAGE_SIZE)
        assert view.read(0, 2 * PAGE_SIZE) == bytes(2 * PAGE_SIZE)
        assert ram.read(300 * PAGE_SIZE, 2 * PAGE_SIZE) == bytes(2 * PAGE_SIZE)
    finally:
        view.close()


@linux_only
def test_decommit_returns_the_pages_to_the_os() -> None:
    ram = SystemMemory("s", 256 * MiB)
    ram.fill(0, 64 * MiB, 0x5A5A5A5A)
    resident = _rss_of(ram.host_address)
    ram.decommit(0, 64 * MiB)
    assert resident >= 60 * MiB
    assert _rss_of(ram.host_address) <= 4 * MiB
    assert ram.read(32 * MiB, 16) == bytes(16)


def _mapping_lines(address: int) -> list[str]:
    """The /proc/self/smaps block of the mapping that holds ``address`` (its header line, then its fields)."""
    blocks: list[list[str]] = []
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(" ", 1)[0]
        if "-" in head and ":" not in head:  # a header: "start-end perms ..."
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    for block in blocks:
        low, high = (int(part, 16) for part in block[0].split(" ", 1)[0].split("-"))
        if low <= address < high:
            return block
    raise AssertionError(f"no mapping holds {address:#x}")


def _rss_of(address: int) -> int:
    for line in _mapping_lines(address):
        if line.startswith("Rss:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("smaps without Rss")


@linux_only
def test_close_unmaps_the_view(ram: SystemMemory) -> None:
    view = ram.alias([5, 9], 0, 2 * PAGE_SIZE)
    base = view.base
    assert any(line.startswith(f"{base:x}-") for line in _maps().splitlines())
    view.close()
    view.close()  # idempotent
    assert view.closed
    assert not any(line.startswith(f"{base:x}-") for line in _maps().splitlines())
    with pytest.raises(HostViewError, match="closed"):
        view.read(0, 1)


@pytest.mark.parametrize(
    ("pfns", "offset", "count", "argument"),
    [
        ([1], PAGE_SIZE, 1, "byte_offset"),
        ([1], -1, 1, "byte_offset"),
        ([1], 0, 0, "byte_count"),
        ([1], 1, PAGE_SIZE, "byte_count"),
        ([1, 1 << 20], 0, 2 * PAGE_SIZE, "pfns[1]"),
        ([-1], 0, 1, "pfns[0]"),
    ],
)
def test_a_bad_alias_request_names_its_argument_and_maps_nothing(
    ram: SystemMemory, pfns: list[int], offset: int, count: int, argument: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mapped: list[tuple[int, ...]] = []

    def counting_mmap(*args: int) -> int:
        mapped.append(args)
        return 0

    monkeypatch.setattr(hostmap, "_mmap", counting_mmap)
    with pytest.raises(HostViewError) as caught:
        ram.alias(pfns, offset, count)
    assert caught.value.argument == argument
    assert str(caught.value).startswith(f"{argument}=")
    assert mapped == []  # refused before any address space was reserved


def test_without_memory_files_ram_is_private_and_aliasing_is_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    ram = SystemMemory("s", 1 * MiB)
    assert not ram.aliasable
    ram.write(PAGE_SIZE, b"still RAM")
    ram.decommit(0, 2 * PAGE_SIZE)
    assert ram.read(PAGE_SIZE, 9) == bytes(9)
    with pytest.raises(AliasUnsupported, match="memory file"):
        ram.alias([1], 0, 1)


@linux_only
def test_system_memories_do_not_leak_descriptors() -> None:
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(200):
        SystemMemory("s", 16 * GiB).write(0, b"x")
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= before


def test_local_memory_is_one_flat_cpu_range() -> None:
    local = LocalMemory("vram", 4 * MiB)
    assert local.host_address == local.data.ctypes.data
    ctypes.memmove(local.host_address + 3 * MiB + 1, b"vram", 4)  # a software GPU's store: VideoMemory + address
    assert local.read(3 * MiB + 1, 4) == b"vram"
    local.write(17, b"back")
    assert ctypes.string_at(local.host_address + 17, 4) == b"back"


@linux_only
def test_an_80_gib_local_memory_commits_only_the_pages_written() -> None:
    gc.collect()  # no dead memory of an earlier test next to this one
    local = LocalMemory("vram", 80 * GiB)
    for index in range(64):  # 64 pages spread over the whole 80 GiB, through the flat pointer
        ctypes.memset(local.host_address + index * (80 * GiB // 64) + 5, 0xA5, 1)
    assert local.read(63 * (80 * GiB // 64) + 4, 3) == b"\x00\xa5\x00"
    lines = _mapping_lines(local.host_address)
    size_kib = next(int(line.split()[1]) for line in lines if line.startswith("Size:"))
    assert size_kib * 1024 >= 80 * GiB
    assert _rss_of(local.host_address) <= 16 * MiB  # 64 pages (plus any readahead), never gigabytes
