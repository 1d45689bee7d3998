"""The aperture: a window of GPU physical addresses redirected, page by page, to system RAM through a table.

The table (the GART) lives in local memory, in a region the driver keeps for itself, one 64-bit entry per
4 KiB aperture page.  The GPU reads it on every aperture access: a change is visible to the next packet
(there is no aperture TLB to flush).  An entry that is not valid makes the access a bus error.
"""

from __future__ import annotations

from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.bits import BitLayout
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.memory import LocalMemory

GART_ENTRY: Final = BitLayout("GartEntry", 64, [("Valid", 0, 1), ("Snoop", 1, 1), ("Pfn", 12, 40)])
GART_ENTRY_SIZE: Final = 8
_VALID: Final = np.uint64(GART_ENTRY["Valid"].shifted_mask)
_PFN_SHIFT: Final = np.uint64(GART_ENTRY["Pfn"].lsb)
_PFN_MASK: Final = np.uint64(GART_ENTRY["Pfn"].mask)


def gart_entry(pfn: int, *, snoop: bool = False) -> int:
    """A valid entry pointing at system page ``pfn``."""
    return GART_ENTRY.pack({"Valid": 1, "Snoop": int(snoop), "Pfn": pfn})


@final
class Aperture:
    """``size`` bytes of GPU physical space at ``base``; entry ``i`` of the table maps page ``i``."""

    __slots__ = ("base", "entries", "local", "size", "table_offset")

    def __init__(self, base: int, size: int, local: LocalMemory, table_offset: int) -> None:
        self.base = base
        self.size = size
        self.local = local
        self.table_offset = table_offset
        count = size >> PAGE_SHIFT
        if table_offset % GART_ENTRY_SIZE or not local.contains(table_offset, count * GART_ENTRY_SIZE):
            raise ValueError(f"aperture table at {table_offset:#x} does not fit local memory")
        self.entries = local.u64[table_offset // 8 : table_offset // 8 + count]

    @property
    def page_count(self) -> int:
        return int(self.entries.shape[0])

    @property
    def table_size(self) -> int:
        return self.page_count * GART_ENTRY_SIZE

    def contains(self, address: int) -> bool:
        return self.base <= address < self.base + self.size

    def pfns(self, offset: int, size: int, access: AccessKind) -> npt.NDArray[np.uint64]:
        """System PFNs behind aperture bytes ``[offset, offset + size)`` (one per page touched)."""
        if size <= 0:
            return np.zeros(0, dtype=np.uint64)
        if offset < 0 or offset + size > self.size:
            raise GpuFault(FaultKind.BUS_ERROR, self.base + offset, "access runs past the aperture", access=access)
        first, last = offset >> PAGE_SHIFT, (offset + size - 1) >> PAGE_SHIFT
        entries = self.entries[first : last + 1]
        invalid = np.flatnonzero((entries & _VALID) == 0)
        if invalid.shape[0]:
            page = first + int(invalid[0])
            raise GpuFault(
                FaultKind.BUS_ERROR, self.base + page * PAGE_SIZE, f"aperture page {page} is not mapped", access=access
            )
        pfns: npt.NDArray[np.uint64] = (entries >> _PFN_SHIFT) & _PFN_MASK
        return pfns
