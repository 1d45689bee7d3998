"""``DXGK_PTE``: the OS-side page-table entry VidMm hands the driver (d3dukmdt.h; wddm-spec.md section 2.4).

Sixteen bytes: a 64-bit flags word and a 64-bit ``PageAddress``.  Decision D3: ``PageAddress`` is a page number
(``address >> 12``), an offset from the start of segment ``Segment`` -- or a system page number when ``Segment``
is 0 (decision D4).  Arrays of entries (``pPageTableEntries``) are numpy arrays of :data:`DXGK_PTE_DTYPE`, the
exact C layout, so VidMm can build and the driver can translate hundreds of thousands of entries per call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

import numpy as np
import numpy.typing as npt

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.core.units import PAGE_SHIFT


class DXGK_PTE_PAGE_SIZE(IntEnum):
    DXGK_PTE_PAGE_TABLE_PAGE_4KB = 0
    DXGK_PTE_PAGE_TABLE_PAGE_64KB = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_PTE(BitUnion):
    """One ``DXGK_PTE``; the bit fields form ``Flags``, ``PageAddress`` is the second word."""

    WIDTH = 64
    Valid: bool = flag(0)
    Zero: bool = flag(1)
    CacheCoherent: bool = flag(2)
    ReadOnly: bool = flag(3)
    NoExecute: bool = flag(4)
    Segment: int = bits(5, 5)
    LargePage: bool = flag(10)
    PhysicalAdapterIndex: int = bits(11, 6)
    PageTablePageSize: int = bits(17, 2)
    SystemReserved0: bool = flag(19)
    Reserved: int = bits(20, 44)
    PageAddress: int = 0

    @property
    def Flags(self) -> int:
        """The first ULONGLONG (the C union member ``Flags``)."""
        return self.Value

    @property
    def PageTableAddress(self) -> int:
        """The second word's other union name, used when the entry points at a page table."""
        return self.PageAddress

    def __post_init__(self) -> None:
        BitUnion.__post_init__(self)
        if not 0 <= self.PageAddress < 1 << 64:
            raise ValueError(f"DXGK_PTE.PageAddress={self.PageAddress:#x}: does not fit 64 bits")

    @classmethod
    def decode(cls, flags: int, page_address: int) -> DXGK_PTE:
        """An entry from its two words."""
        return dataclasses.replace(cls.from_value(flags), PageAddress=page_address)


_PTE_LAYOUT: Final = DXGK_PTE.layout()

DXGK_PTE_DTYPE: Final = np.dtype([("Flags", "<u8"), ("PageAddress", "<u8")])
"""The C layout of ``DXGK_PTE`` (16 bytes), for arrays of entries."""

PteArray = npt.NDArray[np.void]

NOT_INVALID_FLAGS: Final = np.uint64(_PTE_LAYOUT["Valid"].shifted_mask | _PTE_LAYOUT["Zero"].shifted_mask)
"""An entry whose flags have either bit set is not the invalid one: it translates (``Valid``) or reads zeros
(``Zero``); VidMm must write it invalid before the range may read as unmapped (decision 0198)."""


def pte_array(count: int) -> PteArray:
    """``count`` zeroed (invalid) entries."""
    return np.zeros(count, dtype=DXGK_PTE_DTYPE)


def pte_flags(**fields: int) -> int:
    """A flags word from named fields, e.g. ``pte_flags(Valid=1, Segment=2)``."""
    return _PTE_LAYOUT.pack(fields)


def to_array(entries: list[DXGK_PTE]) -> PteArray:
    out = pte_array(len(entries))
    out["Flags"] = [e.Flags for e in entries]
    out["PageAddress"] = [e.PageAddress for e in entries]
    return out


def from_array(entries: PteArray) -> list[DXGK_PTE]:
    return [
        DXGK_PTE.decode(int(f), int(a))
        for f, a in zip(entries["Flags"].tolist(), entries["PageAddress"].tolist(), strict=True)
    ]


def page_number(byte_address: int) -> int:
    """Decision D3: the value stored in ``PageAddress`` for a 4 KiB-aligned byte address."""
    if byte_address % (1 << PAGE_SHIFT):
        raise ValueError(f"address={byte_address:#x}: DXGK_PTE addresses are 4 KiB aligned")
    return byte_address >> PAGE_SHIFT
