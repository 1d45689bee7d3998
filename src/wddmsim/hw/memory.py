"""Physical memories: local video memory and system RAM, both sparse.

Each is one anonymous mapping reserved without commit (``MAP_NORESERVE``), so an 80 GiB GPU fits on a 24 GiB
machine: the kernel commits a page only when it is first written.  The bytes are reachable as a numpy array
(``data``) and a memoryview (``view``) over the same mapping -- no copies.  ``MADV_HUGEPAGE`` is never applied:
on a sparse region it would commit 2 MiB per touch.
"""

from __future__ import annotations

import mmap
import sys
from typing import Final, final

import numpy as np

from wddmsim.core.addresses import BusAddress, Pfn
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, align_down, align_up

MAP_NORESERVE: Final = 0x4000
"""Linux's ``MAP_NORESERVE`` (Python 3.11's mmap module lacks the constant)."""


def _anonymous_sparse(size: int) -> mmap.mmap:
    if sys.platform.startswith("linux"):
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
    return mmap.mmap(-1, size)  # type: ignore[unreachable,unused-ignore]


class PhysicalMemory:
    """A sparse, zero-initialised byte array of ``size`` bytes (a multiple of 4 KiB)."""

    __slots__ = ("_map", "data", "name", "size", "u32", "u64", "view")

    def __init__(self, name: str, size: int) -> None:
        if size <= 0 or size % PAGE_SIZE:
            raise ValueError(f"{name} size={size:#x}: must be a positive multiple of {PAGE_SIZE:#x}")
        self.name = name
        self.size = size
        self._map = _anonymous_sparse(size)
        self.data: ByteArray = np.frombuffer(self._map, dtype=np.uint8)
        self.u32 = self.data.view(np.uint32)
        self.u64 = self.data.view(np.uint64)
        self.view = memoryview(self._map)

    def contains(self, offset: int, length: int) -> bool:
        return offset >= 0 and length >= 0 and offset + length <= self.size

    def read(self, offset: int, length: int) -> bytes:
        return bytes(self.view[offset : offset + length])

    def write(self, offset: int, payload: bytes | bytearray | memoryview) -> None:
        self.view[offset : offset + len(payload)] = payload

    def fill(self, offset: int, length: int, pattern: int) -> None:
        """Fill ``length`` bytes with the little-endian 32-bit ``pattern`` (byte ``i`` = pattern byte ``i % 4``).

        A zero pattern is a plain memset, the fastest store the machine has.
        """
        if length <= 0:
            return
        if pattern == 0:
            self.data[offset : offset + length] = 0
            return
        if offset % 4 == 0 and length % 4 == 0:
            self.u32[offset // 4 : (offset + length) // 4] = pattern
            return
        word = np.frombuffer(int(pattern).to_bytes(4, "little"), dtype=np.uint8)
        self.data[offset : offset + length] = np.resize(word, length)

    def decommit(self, offset: int, length: int) -> None:
        """Zero a range, returning the whole pages inside it to the OS (the memory reads as zero afterwards)."""
        start, end = align_up(offset, PAGE_SIZE), align_down(offset + length, PAGE_SIZE)
        if end > start:
            self.data[offset:start] = 0
            self._map.madvise(mmap.MADV_DONTNEED, start, end - start)
            self.data[end : offset + length] = 0
        else:
            self.data[offset : offset + length] = 0


@final
class LocalMemory(PhysicalMemory):
    """The GPU's local video memory ("VRAM"): offset ``o`` is GPU physical address ``o``."""

    __slots__ = ()


@final
class SystemMemory(PhysicalMemory):
    """Host RAM as 4 KiB page frames: frame ``pfn`` holds bus addresses ``[pfn << 12, (pfn + 1) << 12)``.

    RAM starts at bus address 0, so the PFN of a byte is its offset ``>> 12``.
    """

    __slots__ = ()

    @property
    def page_count(self) -> int:
        return self.size >> PAGE_SHIFT

    def contains_bus(self, address: BusAddress, length: int) -> bool:
        return self.contains(address, length)

    def frame(self, pfn: Pfn) -> memoryview:
        """The 4 KiB of frame ``pfn``."""
        start = pfn << PAGE_SHIFT
        return self.view[start : start + PAGE_SIZE]
