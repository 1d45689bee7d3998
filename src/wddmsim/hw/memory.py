"""Physical memories: local video memory and system RAM, both sparse.

Local memory is one anonymous mapping reserved without commit (``MAP_NORESERVE``), so an 80 GiB GPU fits on a
24 GiB machine: the kernel commits a page only when it is first written.  Its first byte is the one flat CPU
pointer a software GPU addresses its "VRAM" through (:attr:`PhysicalMemory.host_address`).

System RAM is a memory file (``memfd_create``, sized with ``ftruncate``: sparse too) mapped shared, so the same
page frames can be mapped again elsewhere -- a virtually contiguous view of scattered frames
(:meth:`SystemMemory.alias`) whose writes reach the frames themselves, what ``MmMapLockedPagesSpecifyCache``
gives a native driver.  Where memory files do not exist (not Linux) it falls back to a private mapping, and
aliasing is refused as unsupported.

The bytes of either are reachable as a numpy array (``data``) and a memoryview (``view``) over the same
mapping -- no copies.  An anonymous memory of at most :data:`DENSE_LIMIT` is *dense* (decision 0246): it asks
for huge pages (``MADV_HUGEPAGE``: a fault per 2 MiB touched) and its zero fills store zeros; a larger one stays
sparse, where a huge page would commit 2 MiB per touch.
"""

from __future__ import annotations

import mmap
import os
import sys
import weakref
from collections.abc import Sequence
from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import BusAddress, Pfn
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, align_down, align_up
from wddmsim.hw import hostmap
from wddmsim.hw.hostmap import AliasUnsupported, HostView, HostViewError

MAP_NORESERVE: Final = 0x4000
"""Linux's ``MAP_NORESERVE`` (Python 3.11's mmap module lacks the constant)."""
MADV_REMOVE: Final = 9
"""Linux's ``MADV_REMOVE``: free a shared mapping's pages, punching a hole in the file behind them."""


def _anonymous_sparse(size: int) -> mmap.mmap:
    if sys.platform.startswith("linux"):
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
    return mmap.mmap(-1, size)  # type: ignore[unreachable,unused-ignore]


def _memory_file(name: str, size: int) -> int | None:
    """A sparse memory file of ``size`` bytes, or ``None`` where the platform has none (or refuses one)."""
    create = getattr(os, "memfd_create", None)
    if create is None or not hostmap.supported():
        return None
    try:
        fd: int = create(name, getattr(os, "MFD_CLOEXEC", 1))
    except OSError:
        return None
    try:
        os.ftruncate(fd, size)
    except OSError:
        os.close(fd)
        return None
    return fd


_RELEASE_AT = 64 * 1024
"""A zero fill this long releases its whole pages instead of storing zeros, in a sparse memory (cheaper than a
memset: the pages need not be resident, and a page never touched again costs nothing)."""

DENSE_LIMIT = 64 << 20
"""An anonymous memory this small is *dense*: its zero fills store zeros, as the device's memory would, instead of
releasing pages.  A page released only to be written again soon -- VidMm zero-fills an allocation's pages on its
first page-in, and the application writes them next -- costs a page fault, several times a memset of a page held;
a page read before it is written, two (decision 0246).  Measured, that pays at the built-in scenarios' 32-64 MiB;
from 128 MiB up, holding every page cost more resident memory and more time than the faults it saved.  A larger
memory stays sparse: an 80 GiB GPU commits only what is written."""


_HOLES_FROM = 2 * PAGE_SIZE
"""A read from a memory file this long asks the file where its holes are (two system calls a stretch of pages
written, about a microsecond each, against a page fault and a page zeroed per 4 KiB of hole read through the
mapping)."""


def _next_data(fd: int, at: int, end: int) -> int:
    """The first byte at or after ``at`` that lies in a page the memory file holds, or ``end`` if none before it."""
    try:
        return min(os.lseek(fd, at, os.SEEK_DATA), end)
    except OSError:  # ENXIO: only holes from ``at`` to the end of the file
        return end


def _frozen(view: memoryview) -> ByteArray:
    """A read-only array over ``view`` (what a reader is handed must not become a way to write): made over a
    read-only buffer, so that no caller can set its ``writeable`` flag back, as it could on a view of ``data``."""
    out: ByteArray = np.frombuffer(view.toreadonly(), dtype=np.uint8)
    return out


class PhysicalMemory:
    """A sparse, zero-initialised byte array of ``size`` bytes (a multiple of 4 KiB)."""

    __slots__ = ("__weakref__", "_fd", "_map", "data", "dense", "name", "size", "u32", "u64", "view")

    def __init__(self, name: str, size: int, *, shared: bool = False) -> None:
        if size <= 0 or size % PAGE_SIZE:
            raise ValueError(f"{name} size={size:#x}: must be a positive multiple of {PAGE_SIZE:#x}")
        self.name = name
        self.size = size
        fd = _memory_file(name, size) if shared else None
        self._fd: int | None = fd
        self.dense = fd is None and size <= DENSE_LIMIT
        """Zero fills store zeros (:data:`DENSE_LIMIT`)."""
        if fd is None:
            self._map = _anonymous_sparse(size)
            if self.dense and hasattr(mmap, "MADV_HUGEPAGE"):
                self._map.madvise(mmap.MADV_HUGEPAGE)  # held whole anyway: a fault per 2 MiB, not per 4 KiB
        else:
            # mmap keeps its own duplicate of the descriptor; ours stays open for aliases and is closed with us.
            self._map = mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
            weakref.finalize(self, os.close, fd)
        self.data: ByteArray = np.frombuffer(self._map, dtype=np.uint8)
        self.u32 = self.data.view(np.uint32)
        self.u64 = self.data.view(np.uint64)
        self.view = memoryview(self._map)

    @property
    def host_address(self) -> int:
        """The host (CPU) address of byte 0: the memory is one flat range ``[host_address, host_address + size)``
        of this process, valid while the object lives."""
        return int(self.data.ctypes.data)

    def contains(self, offset: int, length: int) -> bool:
        return offset >= 0 and length >= 0 and offset + length <= self.size

    def read(self, offset: int, length: int) -> bytes:
        return bytes(self.view[offset : offset + length])

    def read_into(self, offset: int, out: memoryview) -> None:
        """``len(out)`` bytes from ``offset`` into ``out`` (a writable byte buffer).  In a memory file, a read of
        more than a page stores zeros for the stretches the file holds no page for (released, never written since)
        instead of reading them through the mapping: a read there makes the OS allocate and zero a page of the file
        per 4 KiB, only to read zeros (the bytes are the same either way)."""
        length = len(out)
        if self._fd is None or length < _HOLES_FROM:
            out[:] = self.view[offset : offset + length]
            return
        if offset < 0 or offset + length > self.size:  # the file's holes would read past the end as zeros
            raise ValueError(f"{self.name}: read_into offset={offset:#x} length={length:#x} leaves [0, {self.size:#x})")
        at = offset
        for start, stop in self.stored(offset, length):
            if start > at:
                np.frombuffer(out, dtype=np.uint8)[at - offset : start - offset] = 0
            out[start - offset : stop - offset] = self.view[start:stop]
            at = stop
        if at < offset + length:
            np.frombuffer(out, dtype=np.uint8)[at - offset :] = 0

    def spans(self, offset: int, length: int) -> list[ByteArray | int]:
        """``length`` bytes from ``offset`` where they lie, laid end to end: read-only views of the memory (valid
        until it is next written), and for a stretch a memory file holds no page for, its length (it reads zero;
        nothing is mapped in to say so, as in :meth:`read_into`)."""
        if not self.contains(offset, length):
            raise ValueError(f"{self.name}: spans offset={offset:#x} length={length:#x} leave [0, {self.size:#x})")
        if self._fd is None or length < _HOLES_FROM:
            return [_frozen(self.view[offset : offset + length])] if length else []
        out: list[ByteArray | int] = []
        at = offset
        for start, stop in self.stored(offset, length):
            if start > at:
                out.append(start - at)
            out.append(_frozen(self.view[start:stop]))
            at = stop
        if at < offset + length:
            out.append(offset + length - at)
        return out

    def stored(self, offset: int, length: int) -> list[tuple[int, int]]:
        """The stretches ``(start, end)`` of ``[offset, offset + length)`` that lie in pages the memory holds, in
        order; every byte between them reads zero.  Only a memory file can tell (two system calls a stretch):
        anonymous memory answers the whole range."""
        end = offset + length
        fd = self._fd
        if fd is None:
            return [(offset, end)] if length > 0 else []
        out: list[tuple[int, int]] = []
        at = offset
        while at < end:
            data = _next_data(fd, at, end)
            if data == end:
                break
            hole = min(os.lseek(fd, data, os.SEEK_HOLE), end)
            out.append((data, hole))
            at = hole
        return out

    def write(self, offset: int, payload: bytes | bytearray | memoryview) -> None:
        self.view[offset : offset + len(payload)] = payload

    def fill(self, offset: int, length: int, pattern: int) -> None:
        """Fill ``length`` bytes with the little-endian 32-bit ``pattern`` (byte ``i`` = pattern byte ``i % 4``).

        A zero pattern is a plain memset, the fastest store the machine has.
        """
        if length <= 0:
            return
        if pattern == 0:
            if length < _RELEASE_AT or self.dense:
                self.data[offset : offset + length] = 0
            else:
                self.decommit(offset, length)  # whole pages go back to the OS: no store, no page touched
            return
        if offset % 4 == 0 and length % 4 == 0:
            self.u32[offset // 4 : (offset + length) // 4] = pattern
            return
        word = np.frombuffer(int(pattern).to_bytes(4, "little"), dtype=np.uint8)
        self.data[offset : offset + length] = np.resize(word, length)

    def decommit(self, offset: int, length: int) -> None:
        """Zero a range, returning the whole pages inside it to the OS (the memory reads as zero afterwards).

        A shared file mapping keeps its pages in the file, which ``MADV_DONTNEED`` would not free: there the
        pages are removed from the file (a hole, which reads as zero through every mapping of it).
        """
        start, end = align_up(offset, PAGE_SIZE), align_down(offset + length, PAGE_SIZE)
        if end > start:
            self.data[offset:start] = 0
            self._map.madvise(mmap.MADV_DONTNEED if self._fd is None else MADV_REMOVE, start, end - start)
            self.data[end : offset + length] = 0
        else:
            self.data[offset : offset + length] = 0


@final
class LocalMemory(PhysicalMemory):
    """The GPU's local video memory ("VRAM"): offset ``o`` is GPU physical address ``o``.

    :attr:`host_address` is the one flat CPU pointer a software GPU's driver addresses its video memory through
    (``VideoMemory + SegmentAddress``); untouched pages cost nothing, so an 80 GiB memory is cheap.
    """

    __slots__ = ()


@final
class SystemMemory(PhysicalMemory):
    """Host RAM as 4 KiB page frames: frame ``pfn`` holds bus addresses ``[pfn << 12, (pfn + 1) << 12)``.

    RAM starts at bus address 0, so the PFN of a byte is its offset ``>> 12``.  Backed by a memory file where the
    platform has them, so frames can be aliased (:meth:`alias`).
    """

    __slots__ = ()

    def __init__(self, name: str, size: int) -> None:
        super().__init__(name, size, shared=True)

    @property
    def page_count(self) -> int:
        return self.size >> PAGE_SHIFT

    @property
    def aliasable(self) -> bool:
        """Whether :meth:`alias` can map frames elsewhere (a memory file backs the RAM)."""
        return self._fd is not None

    def contains_bus(self, address: BusAddress, length: int) -> bool:
        return self.contains(address, length)

    def frame(self, pfn: Pfn) -> memoryview:
        """The 4 KiB of frame ``pfn``."""
        start = pfn << PAGE_SHIFT
        return self.view[start : start + PAGE_SIZE]

    def alias(self, pfns: Sequence[int] | npt.NDArray[np.uint64], byte_offset: int, byte_count: int) -> HostView:
        """A virtually contiguous host view of frames ``pfns`` (in that order): byte ``i`` of the view is byte
        ``byte_offset + i`` of the frames laid end to end.  Writes through the view reach the frames and the
        other way round; :meth:`HostView.close` unmaps it.

        Raises :class:`HostViewError` naming the bad argument (nothing is mapped), :class:`AliasUnsupported`
        where the RAM is not a memory file.
        """
        frames = [int(p) for p in pfns]
        _check_alias(frames, byte_offset, byte_count, self.page_count)
        if self._fd is None:
            raise AliasUnsupported(
                f"{self.name}: aliasing frames needs a memory file (memfd_create on Linux); this platform has none"
            )
        spanned = -(-(byte_offset + byte_count) // PAGE_SIZE)
        return hostmap.map_frames(self._fd, frames[:spanned], byte_offset, byte_count)


def _check_alias(frames: list[int], byte_offset: int, byte_count: int, page_count: int) -> None:
    """The rules of :meth:`SystemMemory.alias`, each naming its argument."""
    if not 0 <= byte_offset < PAGE_SIZE:
        raise HostViewError("byte_offset", byte_offset, f"must be within the first page [0, {PAGE_SIZE:#x})")
    if byte_count <= 0:
        raise HostViewError("byte_count", byte_count, "must be positive")
    spanned = -(-(byte_offset + byte_count) // PAGE_SIZE)
    if spanned > len(frames):
        raise HostViewError(
            "byte_count", byte_count, f"byte_offset + byte_count spans {spanned} page(s), pfns lists {len(frames)}"
        )
    for index, pfn in enumerate(frames[:spanned]):
        if not 0 <= pfn < page_count:
            raise HostViewError(f"pfns[{index}]", pfn, f"must be a frame of RAM [0, {page_count:#x})")


__all__ = [
    "AliasUnsupported",
    "HostView",
    "HostViewError",
    "LocalMemory",
    "PhysicalMemory",
    "SystemMemory",
]
