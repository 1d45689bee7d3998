"""The memory manager: MDLs of zeroed frames, contiguous allocations and kernel mappings.

Implements ``ddi.driver.SystemMemoryServices`` over the platform's RAM.
"""

from __future__ import annotations

from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, pages_spanned
from wddmsim.ddi.memory import MDL
from wddmsim.hw.bar import PciBar
from wddmsim.hw.memory import SystemMemory
from wddmsim.ntos.frames import FrameAllocator, OutOfFrames
from wddmsim.ntos.sysva import LockedPageViews
from wddmsim.ntos.views import UserAddressSpace

KERNEL_VA_BASE: Final = 0xFFFF_8000_0000_0000
RESERVED_FRAMES: Final = 1
"""Frame 0 is never handed out, so a zero PFN in a table always means a bug."""


@final
class MemoryManager:
    """``Mm`` for one machine."""

    def __init__(self, ram: SystemMemory, bar: PciBar | None = None) -> None:
        self.ram = ram
        self.bar = bar
        self.frames = FrameAllocator(RESERVED_FRAMES, ram.page_count - RESERVED_FRAMES)
        self._next_va = KERNEL_VA_BASE
        self.locked_views = LockedPageViews(ram)
        """Live ``MmMapLockedPagesSpecifyCache`` mappings: host addresses a native driver holds."""

    def _zero(self, pfns: npt.NDArray[np.uint64]) -> None:
        for start, length in _byte_runs(pfns):
            self.ram.decommit(start, length)

    def allocate_pages_for_mdl(self, byte_count: int, *, chunk: int = PAGE_SIZE) -> MDL:
        """``MmAllocatePagesForMdlEx`` (zeroed); ``chunk`` > 4 KiB: in physically contiguous, aligned chunks of
        that many bytes (the byte count rounded up to whole chunks; ``MM_ALLOCATE_REQUIRE_CONTIGUOUS_CHUNKS``)."""
        if byte_count <= 0:
            raise ValueError(f"byte_count={byte_count}: must be positive")
        if chunk > PAGE_SIZE:
            per = chunk // PAGE_SIZE
            pages = -(-pages_spanned(byte_count) // per) * per
            pfns = self.frames.allocate_chunks(pages, per)
            self._zero(pfns)
            return MDL(pfns, pages * PAGE_SIZE)
        pfns = self.frames.allocate(pages_spanned(byte_count))
        self._zero(pfns)
        return MDL(pfns, byte_count)

    def allocate_contiguous(self, byte_count: int) -> tuple[MDL, CpuMapping]:
        """``MmAllocateContiguousMemory`` (zeroed) and its kernel mapping."""
        if byte_count <= 0:
            raise ValueError(f"byte_count={byte_count}: must be positive")
        pages = pages_spanned(byte_count)
        first = self.frames.allocate_contiguous(pages)
        pfns = np.arange(first, first + pages, dtype=np.uint64)
        start = first << PAGE_SHIFT
        # One run: zeroed at once -- stored when short (a DMA buffer of a page or two, whose frames were most
        # likely this buffer's last time: releasing them would only fault them back in on the driver's write).
        self.ram.fill(start, pages * PAGE_SIZE, 0)
        mapping = CpuMapping(self._map_va(pages), self.ram.data[start : start + pages * PAGE_SIZE])
        return MDL(pfns, byte_count), mapping

    def _map_va(self, pages: int) -> CpuVa:
        va = self._next_va
        self._next_va += (pages + 1) * PAGE_SIZE  # one unmapped page between mappings
        return CpuVa(va)

    def create_address_space(self) -> UserAddressSpace:
        """A new process's user-mode CPU address space (views for locks)."""
        return UserAddressSpace(self.ram, self.bar)

    def map_io_space(self, bus_address: int, byte_count: int) -> CpuMapping:
        """``MmMapIoSpace``: a kernel mapping of a range of the device's BAR (linear; detiling windows not applied)."""
        bar = self.bar
        if bar is None or not bar.bus_base <= bus_address <= bus_address + byte_count <= bar.bus_base + bar.size:
            raise ValueError(f"bus address {bus_address:#x}+{byte_count:#x} is not in the device's BAR")
        start = bar.local_offset + bus_address - bar.bus_base
        return CpuMapping(self._map_va(pages_spanned(byte_count)), bar.local.data[start : start + byte_count])

    def MmMapLockedPagesSpecifyCache(self, mdl: MDL) -> int:
        """``MmMapLockedPagesSpecifyCache``: a host address through which native code reads and writes the MDL's
        bytes (its pages viewed contiguously; the address is the MDL's first byte).  See :class:`LockedPageViews`."""
        return self.locked_views.map(mdl)

    def MmUnmapLockedPages(self, address: int, mdl: MDL) -> None:
        """``MmUnmapLockedPages``: release a mapping made by :meth:`MmMapLockedPagesSpecifyCache`; an address that
        is not a live mapping of ``mdl`` is refused (``STATUS_INVALID_PARAMETER``) and nothing changes."""
        self.locked_views.unmap(address, mdl)

    def free_pages(self, mdl: MDL) -> None:
        self.frames.free(mdl.pfns)

    def read(self, mdl: MDL, offset: int, size: int) -> bytes:
        out = bytearray(size)
        view = memoryview(out)
        pos = 0
        for start, length in _mdl_runs(mdl, offset, size):
            view[pos : pos + length] = self.ram.view[start : start + length]
            pos += length
        return bytes(out)

    def write(self, mdl: MDL, offset: int, payload: bytes | bytearray | memoryview) -> None:
        src = memoryview(payload).cast("B")
        pos = 0
        for start, length in _mdl_runs(mdl, offset, len(src)):
            self.ram.view[start : start + length] = src[pos : pos + length]
            pos += length

    @property
    def free_bytes(self) -> int:
        return self.frames.free_frames * PAGE_SIZE


def _byte_runs(pfns: npt.NDArray[np.uint64]) -> list[tuple[int, int]]:
    p = pfns.astype(np.int64)
    breaks = np.flatnonzero(np.diff(p) != 1) + 1
    starts = np.concatenate(([0], breaks))
    counts = np.diff(np.concatenate((starts, [p.shape[0]])))
    return [
        (int(s) << PAGE_SHIFT, int(c) << PAGE_SHIFT) for s, c in zip(p[starts].tolist(), counts.tolist(), strict=True)
    ]


def _mdl_runs(mdl: MDL, offset: int, size: int) -> list[tuple[int, int]]:
    """Byte runs of RAM behind MDL bytes ``[offset, offset + size)``."""
    if offset < 0 or size < 0 or offset + size > mdl.ByteCount:
        raise IndexError(f"bytes [{offset:#x}, {offset + size:#x}) outside the MDL's {mdl.ByteCount:#x}")
    runs: list[tuple[int, int]] = []
    position = mdl.ByteOffset + offset
    remaining = size
    while remaining:
        page, within = divmod(position, PAGE_SIZE)
        length = min(PAGE_SIZE - within, remaining)
        start = (int(mdl.pfns[page]) << PAGE_SHIFT) + within
        if runs and runs[-1][0] + runs[-1][1] == start:
            runs[-1] = (runs[-1][0], runs[-1][1] + length)
        else:
            runs.append((start, length))
        position += length
        remaining -= length
    return runs


__all__ = ["MemoryManager", "OutOfFrames"]
