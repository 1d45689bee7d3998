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


_Plan = tuple[bytes, U64 | None, U64 | None]
"""A uniform update's ``(flags column of a whole table, add, bits)``: its words are ``(PageAddress << 12) + add``,
then ``| bits`` unless ``bits`` is None; ``add`` None: invalid entries, every word 0 (see :class:`.Translator`).
An update of ``n`` entries is uniform when its flags column is the first ``8 n`` bytes of the plan's."""
_MAX_PLANS = 64
ADDRESS_SHIFT_0D = np.array(int(_ADDRESS_SHIFT), dtype=np.uint64)
"""The address shift as a 0-d array: a ufunc takes it without converting a Python int per call."""


@final
class UpdateKind:
    """What an update's level, leaf kind, ``Repeat`` and leaf protection fix: the table's shape, the entry
    translator and the checks of the words (worked out once per combination, kept in the driver's state)."""

    __slots__ = (
        "_lane",
        "_plans",
        "aligned_bytes",
        "alignment",
        "alignment_mask",
        "entries_in_table",
        "leaf64k",
        "plain",
        "quick",
        "quick_lane",
        "repeat",
        "shape",
        "translator",
    )

    def __init__(self, shape: Geometry, translator: Translator, *, leaf64k: bool, repeat: bool) -> None:
        self.shape = shape
        self.translator = translator
        self.leaf64k = leaf64k
        """Level-1 entries of a single-PTE MMU pointing at 64 KB-page leaf tables."""
        self.alignment = shape.alignment_pages
        self.alignment_mask = (self.alignment - 1) << int(_ADDRESS_SHIFT)
        """The address bits a valid entry's word must have clear (0: any page will do)."""
        self._lane, self.aligned_bytes = _byte_lane(self.alignment_mask)
        self.entries_in_table = shape.entries_in_table
        self.repeat = repeat
        self.plain = shape.words_per_entry == 1 and shape.ratio == 1 and not repeat
        """Entry ``i`` becomes word ``StartIndex + i``, one for one (the common case)."""
        self._plans: dict[int, _Plan] = {}
        """Per flags word of the uniform updates seen: VidMm sends a few, over and over, with any entry count."""
        self.quick: dict[int, tuple[bytes, U64, U64 | None]] = {}
        """The plans of live words (``add`` set) in a kind whose alignment test is one byte lane or none: the ones
        :func:`.paging.page_table._update_plain` applies itself."""
        self.quick_lane = self._lane if self.alignment_mask else -1
        """The byte lane of the alignment test of a quick plan's words (-1: no test)."""

    def translate_into(self, out: U64, source: PteArray, argument: str) -> None:
        """The hardware words of ``source`` entries, written into ``out`` (little-endian words, as packets hold them).

        An update whose entries all share a flags word seen before (with any count up to a whole table) is one
        comparison of the flags column and two or three whole-array operations (the ``Leaf64K`` bit is in its
        plan); anything else goes through :meth:`_translate_general`, which also makes the plan for next time."""
        flags = source["Flags"]
        count = flags.shape[0]
        plan = self._plans.get(flags.item(0)) if count else None
        if plan is None or (count > 1 and not plan[0].startswith(flags.tobytes())):
            self._translate_general(out, source, argument)
            return
        add = plan[1]
        if add is None:
            out.fill(0)
            return
        np.left_shift(source["PageAddress"], ADDRESS_SHIFT_0D, out)
        np.add(out, add, out)
        bits = plan[2]
        if bits is not None:
            np.bitwise_or(out, bits, out)
        if self.alignment_mask and (
            out.tobytes()[self._lane :: 8].translate(None, self.aligned_bytes)  # the bytes holding a misaligned bit
            if self._lane >= 0
            else int(_OR.reduce(out)) & self.alignment_mask
        ):
            _check_alignment(out, self.alignment, argument)

    def _translate_general(self, out: U64, source: PteArray, argument: str) -> None:
        """Any entries, through the translator; a uniform update that passes gets its plan."""
        uniform = self.translator.into(out, source, argument)
        if self.leaf64k:
            out |= np.where(out != 0, _LEAF64K, np.uint64(0))
        if self.alignment_mask and int(_OR.reduce(out)) & self.alignment_mask:
            _check_alignment(out, self.alignment, argument)
        if uniform:  # a first use, or more entries than a table holds; mixed flags make no plan
            first = int(source["Flags"].item(0))
            row = first.to_bytes(8, "little") * max(source.shape[0], self.entries_in_table)
            self._remember(first, row, self.translator.template(first, source, argument))

    def _remember(self, first: int, row: bytes, template: tuple[U64, U64 | None] | None) -> None:
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
            self.quick.clear()
        if template is None:
            self._plans[first] = (row, None, None)
            return
        add, bits = template
        if self.leaf64k:  # every word of a live uniform run is non-zero: its low bits hold Valid or Zero
            add = np.array(int(add) | int(_LEAF64K), dtype=np.uint64)
        self._plans[first] = (row, add, bits)
        if self._lane >= 0 or not self.alignment_mask:
            self.quick[first] = (row, add, bits)

    def refuse_misaligned(self, words: U64, argument: str) -> None:
        """The refusal of a quick plan's words whose lane test found a misaligned address bit (a Zero page may
        still pass: :func:`_check_alignment` decides)."""
        _check_alignment(words, self.alignment, argument)


def _byte_lane(mask: int) -> tuple[int, bytes]:
    """When every bit of ``mask`` lies in one byte of a word: that byte's index and the byte values with none of
    them set.  Deleting those values from that byte of every word leaves nothing exactly when no word has a masked
    bit -- for a 64 KB-page table's 32 words, a third of the cost of an OR-reduction.  ``(-1, b"")`` otherwise."""
    lane = (mask.bit_length() - 1) >> 3 if mask else -1
    if lane < 0 or mask & ~(0xFF << (8 * lane)):
        return -1, b""
    return lane, bytes(value for value in range(256) if not (value << (8 * lane)) & mask)


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
