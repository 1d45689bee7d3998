"""System-memory descriptors the DDI passes around: the MDL (WDM) and the ADL (``DXGK_ADL``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, pages_spanned

PfnArray = npt.NDArray[np.uint64]


@final
@dataclass(frozen=True, slots=True, eq=False)
class MDL:
    """A memory descriptor list: ``ByteCount`` bytes starting ``ByteOffset`` into the first of ``pfns``.

    Only what the display DDIs use of the WDM structure: the PFN array (``MmGetMdlPfnArray``), the byte offset
    and the byte count.  The PFN array is read-only.
    """

    pfns: PfnArray
    ByteCount: int
    ByteOffset: int = 0

    def __post_init__(self) -> None:
        if self.pfns.dtype != np.uint64 or self.pfns.ndim != 1:
            raise ValueError("MDL pfns must be a one-dimensional uint64 array")
        if not 0 <= self.ByteOffset < PAGE_SIZE:
            raise ValueError(f"MDL ByteOffset={self.ByteOffset:#x}: must be within the first page")
        if self.ByteCount < 0 or pages_spanned(self.ByteOffset + self.ByteCount) > self.pfns.shape[0]:
            raise ValueError(f"MDL ByteCount={self.ByteCount:#x}: more bytes than its {self.pfns.shape[0]} page(s)")
        self.pfns.setflags(write=False)

    @property
    def page_count(self) -> int:
        return int(self.pfns.shape[0])

    def __repr__(self) -> str:
        return f"MDL(pages={self.page_count}, ByteCount={self.ByteCount:#x}, ByteOffset={self.ByteOffset:#x})"


def MmGetMdlPfnArray(mdl: MDL) -> PfnArray:
    """``MmGetMdlPfnArray``: the MDL's PFNs; PFN of page ``i`` of an operation is ``[MdlOffset + i]``."""
    return mdl.pfns


def mdl_from_pfns(pfns: list[int] | PfnArray, byte_count: int | None = None) -> MDL:
    array = np.asarray(pfns, dtype=np.uint64).copy()
    return MDL(array, int(array.shape[0]) << PAGE_SHIFT if byte_count is None else byte_count)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_ADL_FLAGS(BitUnion):
    """``DXGK_ADL_FLAGS { UINT32 Contiguous : 1; UINT32 Reserved : 31; }``."""

    Contiguous: bool = flag(0)
    Reserved: int = bits(1, 31)


@final
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DXGK_ADL:
    """``DXGK_ADL``: ``PageCount`` pages, contiguous from ``BasePageNumber`` or listed in ``Pages``.

    Pages may be logical (IOMMU-remapped) page numbers; the reference platform has no IOMMU, so they are PFNs.
    """

    PageCount: int
    Flags: DXGK_ADL_FLAGS = field(default_factory=DXGK_ADL_FLAGS)
    BasePageNumber: int = 0
    Pages: PfnArray | None = None

    def __post_init__(self) -> None:
        if self.Flags.Contiguous == (self.Pages is not None):
            raise ValueError("DXGK_ADL: exactly one of Flags.Contiguous (with BasePageNumber) or Pages")
        if self.Pages is not None and self.Pages.shape[0] < self.PageCount:
            raise ValueError(f"DXGK_ADL PageCount={self.PageCount}: Pages holds only {self.Pages.shape[0]}")

    def page_numbers(self, first: int, count: int) -> PfnArray:
        """Page numbers ``[first, first + count)`` of the list."""
        if first < 0 or count < 0 or first + count > self.PageCount:
            raise IndexError(f"ADL pages [{first}, {first + count}) outside its {self.PageCount} page(s)")
        if self.Pages is None:
            return np.arange(self.BasePageNumber + first, self.BasePageNumber + first + count, dtype=np.uint64)
        out: PfnArray = self.Pages[first : first + count]
        return out
