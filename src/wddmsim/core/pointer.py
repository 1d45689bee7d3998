"""CPU pointers into simulated memory.

The DDI hands the driver ``VOID*`` pointers (``DXGKARG_BUILDPAGINGBUFFER.pDmaBuffer``,
``pDmaBufferPrivateData``).  A :class:`CpuPointer` is that pointer: a position inside one kernel mapping,
with C pointer arithmetic (``p + n``, ``q - p``) and a way to reach the bytes it points at.  The mapping may
extend past the region the pointer was handed out for (a guard area), so a driver that writes past ``DmaSize``
corrupts the guard -- which the caller checks -- instead of crashing the simulator.
"""

from __future__ import annotations

from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import CpuVa

ByteArray = npt.NDArray[np.uint8]


@final
class CpuMapping:
    """A contiguous kernel virtual mapping of simulated memory: ``base`` is its CPU VA, ``data`` its bytes."""

    __slots__ = ("base", "data", "view", "words")

    def __init__(self, base: CpuVa, data: ByteArray) -> None:
        self.base = base
        self.data = data
        self.view = memoryview(data)  # type: ignore[arg-type]
        self.words: npt.NDArray[np.uint64] | None = (
            data.view("<u8") if data.shape[0] % 8 == 0 and data.ctypes.data % 8 == 0 else None
        )
        """The same bytes as little-endian 64-bit words (``None`` unless the mapping is whole aligned words)."""

    @property
    def size(self) -> int:
        return int(self.data.shape[0])

    def pointer(self, offset: int = 0) -> CpuPointer:
        return CpuPointer(self, offset)


@final
class CpuPointer:
    """A ``VOID*``: a mapping and a byte offset in it.  Immutable; arithmetic returns new pointers."""

    __slots__ = ("mapping", "offset")

    def __init__(self, mapping: CpuMapping, offset: int) -> None:
        self.mapping = mapping
        self.offset = offset

    @property
    def address(self) -> CpuVa:
        """The CPU virtual address this pointer holds."""
        return CpuVa(self.mapping.base + self.offset)

    def __add__(self, n: int) -> CpuPointer:
        return CpuPointer(self.mapping, self.offset + n)

    def __sub__(self, other: CpuPointer) -> int:
        if other.mapping is not self.mapping:
            raise ValueError("pointer difference across two mappings is undefined")
        return self.offset - other.offset

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CpuPointer) and other.mapping is self.mapping and other.offset == self.offset

    def __hash__(self) -> int:
        return hash((id(self.mapping), self.offset))

    def bytes(self, size: int) -> memoryview:
        """A writable view of ``size`` bytes at the pointer (bounded by the mapping, guard included)."""
        if self.offset < 0 or self.offset + size > self.mapping.size:
            raise IndexError(
                f"pointer {self.address:#x}+{size:#x} leaves its mapping "
                f"[{self.mapping.base:#x}, {self.mapping.base + self.mapping.size:#x})"
            )
        return self.mapping.view[self.offset : self.offset + size]

    def __repr__(self) -> str:
        return f"CpuPointer({self.address:#x})"
