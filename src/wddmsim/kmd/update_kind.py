"""What an ``UPDATE_PAGE_TABLE`` operation's level, leaf kind, ``Repeat`` flag and leaf protection fix: the
table's shape, the entry translator, and the checks of the words it makes.

Worked out once per combination and kept in the driver's state (:mod:`.state`), so the most frequent DDI call
looks its kind up instead of building it; :mod:`.paging.page_table` makes them.  A leaf module below both.
"""

from __future__ import annotations

from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.pte import PteArray
from wddmsim.hw.pte import HW_PTE
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.pte_format import Translator
from wddmsim.kmd.table_geometry import Geometry

U64 = npt.NDArray[np.uint64]
_ZERO = np.uint64(HW_PTE["Zero"].shifted_mask)
_ADDRESS_SHIFT = np.uint64(HW_PTE["Address"].lsb)
_ADDRESS_MASK = np.uint64(HW_PTE["Address"].mask)
_LEAF64K = np.uint64(HW_PTE["Leaf64K"].shifted_mask)
_OR = np.bitwise_or


@final
class UpdateKind:
    """What an update's level, leaf kind, ``Repeat`` and leaf protection fix: the table's shape, the entry
    translator and the checks of the words (worked out once per combination, kept in the driver's state)."""

    __slots__ = ("alignment", "alignment_mask", "entries_in_table", "leaf64k", "plain", "repeat", "shape", "translator")

    def __init__(self, shape: Geometry, translator: Translator, *, leaf64k: bool, repeat: bool) -> None:
        self.shape = shape
        self.translator = translator
        self.leaf64k = leaf64k
        """Level-1 entries of a single-PTE MMU pointing at 64 KB-page leaf tables."""
        self.alignment = shape.alignment_pages
        self.alignment_mask = (self.alignment - 1) << int(_ADDRESS_SHIFT)
        """The address bits a valid entry's word must have clear (0: any page will do)."""
        self.entries_in_table = shape.entries_in_table
        self.repeat = repeat
        self.plain = shape.words_per_entry == 1 and shape.ratio == 1 and not repeat
        """Entry ``i`` becomes word ``StartIndex + i``, one for one (the common case)."""

    def translate_into(self, out: U64, source: PteArray, argument: str) -> None:
        """The hardware words of ``source`` entries, written into ``out``."""
        self.translator.into(out, source, argument)
        if self.leaf64k:
            out |= np.where(out != 0, _LEAF64K, np.uint64(0))
        if self.alignment_mask and int(_OR.reduce(out)) & self.alignment_mask:  # one pass: no misaligned bit at all
            _check_alignment(out, self.alignment, argument)


def _check_alignment(words: U64, pages: int, argument: str) -> None:
    """Valid, non-Zero entries must map pages aligned to ``pages`` 4 KiB pages (invalid entries are all zero)."""
    mask = (pages - 1) << int(_ADDRESS_SHIFT)
    if not int(np.bitwise_or.reduce(words)) & mask:
        return  # no word has a misaligned address bit: one pass over the words
    misaligned = (words & np.uint64(mask)) != 0
    bad = np.flatnonzero(misaligned & ((words & _ZERO) == 0))
    if bad.shape[0]:
        index = int(bad[0])
        address = int((words[index] >> _ADDRESS_SHIFT) & _ADDRESS_MASK) << PAGE_SHIFT
        raise DriverContractError(
            f"{argument}[{index}].PageAddress",
            address,
            f"a page of this table must be {pages << PAGE_SHIFT:#x}-byte aligned",
        )


__all__ = ["UpdateKind"]
