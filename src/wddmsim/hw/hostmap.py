"""Host views: page frames of a memory file mapped again, contiguously, somewhere else in this process.

A native (C) driver reaches system memory through CPU pointers.  When the RAM is a memory file
(:class:`~.memory.SystemMemory`), any list of its frames can be given one virtually contiguous range: reserve
address space (``mmap`` with ``PROT_NONE``), then map each run of consecutive frames over it
(``mmap(MAP_FIXED | MAP_SHARED, fd, offset)``).  The view and the frames are the same pages, so a write through
either is seen through the other.  Python's mmap module cannot place a mapping at an address, so the C library
is called through ctypes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import sys
import weakref
from typing import Final, final

from wddmsim.core.units import PAGE_SIZE

_PROT_NONE: Final = 0
_PROT_RW: Final = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FIXED: Final = 0x10
"""Linux's ``MAP_FIXED`` (Python 3.11's mmap module lacks the constant)."""
_MAP_NORESERVE: Final = 0x4000
_MAP_FAILED: Final = ctypes.c_void_p(-1).value


class HostViewError(ValueError):
    """A host view asked for with a bad argument: the message is ``<argument>=<value>: <rule>``."""

    def __init__(self, argument: str, value: object, rule: str) -> None:
        shown = f"{value:#x}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        super().__init__(f"{argument}={shown}: {rule}")
        self.argument = argument
        self.value = value
        self.rule = rule


class AliasUnsupported(RuntimeError):
    """The platform cannot map the same frames twice (no memory files): host views are unsupported."""


def _load_libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64]
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


_LIBC: Final = _load_libc()


def supported() -> bool:
    """Whether host views can be made here (Linux with its C library)."""
    return _LIBC is not None


def _mmap(address: int | None, length: int, prot: int, flags: int, fd: int, offset: int) -> int:
    assert _LIBC is not None
    result = _LIBC.mmap(address, length, prot, flags, fd, offset)
    if result is None or result == _MAP_FAILED:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mmap of {length:#x} bytes failed")
    return int(result)


def _munmap(address: int, length: int) -> None:
    assert _LIBC is not None
    _LIBC.munmap(address, length)


def _frame_runs(frames: list[int]) -> list[tuple[int, int, int]]:
    """``(index in frames, first frame, count)`` for each run of consecutive frames."""
    runs: list[tuple[int, int, int]] = []
    for index, pfn in enumerate(frames):
        if runs and runs[-1][1] + runs[-1][2] == pfn:
            first_index, first, count = runs[-1]
            runs[-1] = (first_index, first, count + 1)
        else:
            runs.append((index, pfn, 1))
    return runs


@final
class HostView:
    """A contiguous host range over page frames: ``size`` bytes at ``address`` (a CPU address of this process).

    The reservation starts ``address - offset`` where ``offset`` is the byte offset into the first frame.
    :meth:`close` unmaps it (a view that is never closed is unmapped when collected).
    """

    __slots__ = ("__weakref__", "_unmap", "address", "base", "frames", "size")

    def __init__(self, base: int, frames: tuple[int, ...], byte_offset: int, size: int) -> None:
        self.base = base
        """Where the reservation starts: the first frame's first byte."""
        self.frames = frames
        self.address = base + byte_offset
        self.size = size
        self._unmap = weakref.finalize(self, _munmap, base, len(frames) * PAGE_SIZE)

    @property
    def closed(self) -> bool:
        return not self._unmap.alive

    def close(self) -> None:
        """Unmap the view (idempotent); its addresses then fault."""
        self._unmap()

    def _check(self, offset: int, length: int) -> None:
        if self.closed:
            raise HostViewError("view", f"{self.address:#x}", "is closed")
        if offset < 0 or length < 0 or offset + length > self.size:
            raise HostViewError(
                "offset", offset, f"[offset, offset + {length:#x}) must lie within the view's {self.size:#x} bytes"
            )

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``address + offset``, read through the view itself."""
        self._check(offset, length)
        return ctypes.string_at(self.address + offset, length)

    def write(self, offset: int, payload: bytes | bytearray) -> None:
        """Store ``payload`` at ``address + offset`` through the view itself."""
        self._check(offset, len(payload))
        ctypes.memmove(self.address + offset, bytes(payload), len(payload))

    def __repr__(self) -> str:
        state = "closed" if self.closed else "mapped"
        return f"HostView(address={self.address:#x}, size={self.size:#x}, frames={len(self.frames)}, {state})"


def map_frames(fd: int, frames: list[int], byte_offset: int, byte_count: int) -> HostView:
    """Map ``frames`` of the memory file ``fd`` end to end at a fresh address; the caller checked the arguments."""
    if _LIBC is None:
        raise AliasUnsupported("host views need Linux's mmap (MAP_FIXED over a memory file)")
    length = len(frames) * PAGE_SIZE
    base = _mmap(None, length, _PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE, -1, 0)
    try:
        for index, first, count in _frame_runs(frames):
            _mmap(
                base + index * PAGE_SIZE,
                count * PAGE_SIZE,
                _PROT_RW,
                mmap.MAP_SHARED | _MAP_FIXED,
                fd,
                first * PAGE_SIZE,
            )
    except OSError:
        _munmap(base, length)
        raise
    return HostView(base, tuple(frames), byte_offset, byte_count)
