"""``DXGK_PTE`` -> the reference GPU's entry format: the one place the two meet.

Vectorised over arrays of ``DXGK_PTE_DTYPE``.  ``Segment`` 0 is system memory (decision D4) and
``PageAddress`` a page number (decision D3): the entry's target is system RAM at ``PageAddress << 12``;
a memory segment ``s`` puts the page at local offset ``base(s) + (PageAddress << 12)``.  ``Zero`` makes a
valid zero page whether or not ``Valid`` is set (an invalid entry faults *unless* Zero is set).
``DriverProtection``'s low 8 bits become the leaf entry's ``Key``; other levels get none.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from wddmsim.ddi.pte import DXGK_PTE, PteArray
from wddmsim.hw.pte import HW_PTE, Target
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.segments import SegmentKind, SegmentMap

U64 = npt.NDArray[np.uint64]

_D: Final = DXGK_PTE.layout()
_H: Final = HW_PTE


def _bit(word: U64, layout_field: str) -> U64:
    f = _D[layout_field]
    return (word >> np.uint64(f.lsb)) & np.uint64(f.mask)


def _put(value: U64, field: str) -> U64:
    f = _H[field]
    return (value & np.uint64(f.mask)) << np.uint64(f.lsb)


def translate(entries: PteArray, segments: SegmentMap, *, level: int, driver_protection: int = 0) -> U64:
    """Hardware words for ``entries`` at page-table ``level``."""
    flags = entries["Flags"].astype(np.uint64)
    pages = entries["PageAddress"].astype(np.uint64)
    valid, zero = _bit(flags, "Valid"), _bit(flags, "Zero")
    segment = _bit(flags, "Segment").astype(np.int64)
    bases = np.full(32, -1, dtype=np.int64)
    bases[0] = 0
    for s in segments.segments:
        if s.kind == SegmentKind.MEMORY:
            bases[s.segment_id] = s.base
    live = (valid | zero) != 0
    bad = live & (bases[segment] < 0)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise DriverContractError(
            f"pPageTableEntries[{index}].Segment", int(segment[index]), "must be 0 (system memory) or a memory segment"
        )
    target = np.where(segment == 0, np.uint64(Target.SYSTEM), np.uint64(Target.LOCAL)).astype(np.uint64)
    address_pages = pages + (bases[segment].astype(np.uint64) >> np.uint64(12))
    words = (
        _put(np.uint64(1) * (live.astype(np.uint64)), "Valid")
        | _put(zero, "Zero")
        | _put(_bit(flags, "ReadOnly"), "ReadOnly")
        | _put(_bit(flags, "NoExecute"), "NoExecute")
        | _put(_bit(flags, "CacheCoherent"), "Snoop")
        | _put(target, "Target")
        | _put(_bit(flags, "LargePage"), "LargePage")
        | _put(_bit(flags, "PageTablePageSize"), "Leaf64K")
        | _put(address_pages, "Address")
    )
    if level == 0 and driver_protection:
        words |= _put(np.full_like(words, driver_protection & 0xFF), "Key")
    words[~live] = 0
    out: U64 = words.astype(np.uint64)
    return out
