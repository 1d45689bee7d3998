"""Paging buffers: where operations are packed before submission.

Each buffer is a physically contiguous block of system memory (write-combined on real hardware).  With
``PagingBufferSegmentId`` 0 the GPU fetches it at its physical address; otherwise VidMm also maps it into a range of
that aperture segment (``MapApertureSegment``, :mod:`.paging_home`) and the GPU fetches it through the aperture, at
its segment address (``DXGKARG_SUBMITCOMMAND.DmaBufferSegmentId``).  A buffer is 4 KiB aligned when handed out fresh, is followed by a guard page filled with a
canary so a driver that writes past ``DmaSize`` is caught, and owns a private-data area of
``PagingBufferPrivateDataSize`` bytes zeroed once, at creation, and never touched by VidMm afterwards.
"""

from __future__ import annotations

from typing import Final, final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.pointer import CpuMapping, CpuPointer
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.driver import SystemMemoryServices
from wddmsim.ddi.memory import MDL

GUARD_SIZE: Final = PAGE_SIZE
CANARY: Final = bytes([0xA5, 0x5A, 0xC3, 0x3C]) * (GUARD_SIZE // 4)


@final
class PagingBuffer:
    """One paging buffer: ``size`` usable bytes, the bytes ``used`` so far, and the fence of its last use."""

    __slots__ = (
        "fence",
        "guard",
        "mapping",
        "mdl",
        "physical_address",
        "private",
        "private_cursor",
        "private_mdl",
        "segment_address",
        "segment_id",
        "size",
        "submitted",
        "used",
    )

    def __init__(self, mm: SystemMemoryServices, size: int, private_size: int) -> None:
        self.size = size
        self.mdl, self.mapping = mm.allocate_contiguous(size + GUARD_SIZE)
        self.mapping.view[size : size + GUARD_SIZE] = CANARY
        self.guard = self.mapping.view[size : size + GUARD_SIZE]
        """The page after the usable bytes, filled with :data:`CANARY`: a driver writing past ``DmaSize`` changes it."""
        self.private_mdl, self.private = mm.allocate_contiguous(max(private_size, 1))
        self.private_cursor = self.private.pointer(0)
        """``pDmaBufferPrivateData`` (pointers are values: one serves every call)."""
        self.used = 0
        """Bytes written by the driver."""
        self.submitted = 0
        """Bytes already submitted (partial submissions of one buffer are contiguous, in order)."""
        self.fence = FenceValue(0)
        """The paging-node submission fence of its last use (0: never submitted)."""
        self.physical_address = int(self.mdl.pfns[0]) << PAGE_SHIFT
        self.segment_id = 0
        """The aperture segment the buffer is mapped into (0: fetched from system memory directly)."""
        self.segment_address = 0
        """Where in that segment (``DmaBufferPhysicalAddress`` when ``segment_id`` is set)."""

    @property
    def address(self) -> int:
        """``DXGKARG_SUBMITCOMMAND.DmaBufferPhysicalAddress``: the segment address in an aperture segment, else
        the physical address."""
        return self.segment_address if self.segment_id else self.physical_address

    @property
    def cursor(self) -> CpuPointer:
        return self.mapping.pointer(self.used)

    @property
    def remaining(self) -> int:
        return self.size - self.used

    def guard_intact(self) -> bool:
        return self.guard.tobytes() == CANARY

    def reset(self) -> None:
        self.used = self.submitted = 0


@final
class PagingBufferPool:
    """A fixed set of buffers reused round-robin once their fences pass.

    Each buffer starts on a page, so a fresh buffer is 4 KiB aligned; its usable size may be any byte count
    (sweeps go down to a single packet).
    """

    def __init__(self, mm: SystemMemoryServices, *, size: int, private_size: int, count: int) -> None:
        if size <= 0:
            raise ValueError(f"paging buffer size={size}: must be positive")
        self.size = size
        self.private_size = private_size
        self.buffers = [PagingBuffer(mm, size, private_size) for _ in range(count)]
        self._next = 0

    def next_buffer(self) -> PagingBuffer:
        """The next buffer in rotation (the caller waits for its fence before reusing it)."""
        buffer = self.buffers[self._next]
        self._next = (self._next + 1) % len(self.buffers)
        return buffer

    def mdls(self) -> list[MDL]:
        return [b.mdl for b in self.buffers] + [b.private_mdl for b in self.buffers]

    def mappings(self) -> list[CpuMapping]:
        return [b.mapping for b in self.buffers]
