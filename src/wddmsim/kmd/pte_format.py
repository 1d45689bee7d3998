"""``DXGK_PTE`` -> the reference GPU's entry format: the one place the two meet.

Vectorised over arrays of ``DXGK_PTE_DTYPE``, through small lookup tables:

* ``Valid``/``Zero``/``ReadOnly``/``NoExecute``/``CacheCoherent`` (the low five bits) -> the hardware's low bits.
  ``Zero`` makes a valid zero page whether or not ``Valid`` is set (an invalid entry faults *unless* Zero).
* ``Segment`` -> ``Target`` and the base of the page: segment 0 is system memory at ``PageAddress << 12``
  (decision D4); memory segment ``s`` puts the page at local offset ``BaseAddress(s) + (PageAddress << 12)``
  (decision D3: ``PageAddress`` is a page number).  An aperture segment id is refused: the GPU reaches system
  pages directly, with segment 0.
* ``LargePage`` -> ``LargePage`` (never at level 0); ``PageTablePageSize`` -> ``Leaf64K`` (level 1 only, and
  ignored with dual PTEs, as documented).
* ``DriverProtection``'s low 8 bits -> the leaf entry's ``Key``; other levels get none.

``PhysicalAdapterIndex`` must be 0 (one physical adapter) and the reserved bits must be clear.
"""

from __future__ import annotations

from typing import Final, NoReturn

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.pte import DXGK_PTE, PteArray
from wddmsim.hw.pte import HW_PTE, Target
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.segments import SegmentKind, SegmentMap

U64 = npt.NDArray[np.uint64]

_D: Final = DXGK_PTE.layout()
_H: Final = HW_PTE


def _low_bits_table() -> U64:
    """hw bits for each combination of DXGK Valid, Zero, CacheCoherent, ReadOnly, NoExecute."""
    table = np.zeros(32, dtype=np.uint64)
    for low in range(32):
        valid, zero, coherent, read_only, no_execute = ((low >> b) & 1 for b in range(5))
        live = valid | zero
        table[low] = (
            _H.pack({"Valid": live, "Zero": zero, "ReadOnly": read_only, "NoExecute": no_execute, "Snoop": coherent})
            if live
            else 0
        )
    return table


_LOW_BITS: Final = _low_bits_table()
_SEGMENT_SHIFT: Final = np.uint64(_D["Segment"].lsb)
_SEGMENT_MASK: Final = np.uint64(_D["Segment"].mask)
_LARGE: Final = np.uint64(_D["LargePage"].shifted_mask)
_PT_PAGE_SIZE_SHIFT: Final = np.uint64(_D["PageTablePageSize"].lsb)
_FORBIDDEN: Final = np.uint64(
    _D["PhysicalAdapterIndex"].shifted_mask | _D["SystemReserved0"].shifted_mask | _D["Reserved"].shifted_mask
)
_HW_LARGE: Final = np.uint64(_H["LargePage"].shifted_mask)
_HW_LEAF64K: Final = np.uint64(_H["Leaf64K"].shifted_mask)
_HW_TARGET_SHIFT: Final = np.uint64(_H["Target"].lsb)
_HW_ADDRESS_SHIFT: Final = np.uint64(_H["Address"].lsb)
_HW_KEY_SHIFT: Final = np.uint64(_H["Key"].lsb)
_U64_MAX: Final = (1 << 64) - 1


class SegmentTables:
    """Per-segment-id lookup tables (target, base page), built once per segment map."""

    def __init__(self, segments: SegmentMap) -> None:
        self.base_pages = np.full(32, -1, dtype=np.int64)
        self.targets = np.zeros(32, dtype=np.uint64)
        self.base_pages[0] = 0
        self.targets[0] = np.uint64(Target.SYSTEM) << _HW_TARGET_SHIFT
        for s in segments.segments:
            if s.kind == SegmentKind.MEMORY:
                self.base_pages[s.segment_id] = s.base >> PAGE_SHIFT
                self.targets[s.segment_id] = np.uint64(Target.LOCAL) << _HW_TARGET_SHIFT
        self._translators: dict[tuple[int, bool, int], Translator] = {}

    def translator(self, level: int, dual: bool, driver_protection: int = 0) -> Translator:
        """The translator for tables at ``level`` (one per level kind, dual-PTE mode and leaf protection key)."""
        key = (driver_protection & 0xFF) << int(_HW_KEY_SHIFT) if level == 0 else 0
        cache_key = (min(level, 2), dual, key)  # the format differs at the leaf, at level 1 and above it
        found = self._translators.get(cache_key)
        if found is None:
            found = self._translators[cache_key] = Translator(self, level, dual, key)
        return found


_Template = tuple[U64, U64 | None]
"""A uniform run's words are ``(PageAddress << 12) + add``, then ``| bits`` when ``bits`` is not None (0-d arrays:
a ufunc takes one faster than a NumPy scalar, which it converts on every call)."""
_SHIFT_0D: Final = np.array(int(_HW_ADDRESS_SHIFT), dtype=np.uint64)
_MAX_ROWS: Final = 64


def _u64(value: int) -> U64:
    return np.array(value, dtype=np.uint64)


class Translator:
    """``DXGK_PTE`` arrays -> hardware words for the tables of one level.

    VidMm maps a range of one allocation with one protection, so usually every entry of an update shares its
    flags word: then the words are two whole-array operations from a template worked out once per flags word.
    Entries with different flags go through the per-field lookup tables.
    """

    __slots__ = ("_rows", "_templates", "dual", "key", "level", "tables")

    def __init__(self, tables: SegmentTables, level: int, dual: bool, key: int) -> None:
        self.tables = tables
        self.level = level
        self.dual = dual
        self.key = key
        """``DriverProtection``'s bits, already in the ``Key`` field (level 0 only)."""
        self._rows: dict[tuple[int, int], bytes] = {}
        self._templates: dict[int, _Template] = {}
        """Per flags word of a live entry (at most one per combination of the bits that matter)."""

    def into(self, out: U64, entries: PteArray, argument: str = "pPageTableEntries") -> bool:
        """Write the hardware words of ``entries`` into ``out`` (e.g. a DMA buffer's inline words, so the words
        are built where they are sent from); a refused entry raises :class:`DriverContractError`, ``out`` may then
        hold part of the words.  Returns whether the entries (at least one) all share their flags word."""
        flags = entries["Flags"]
        count = flags.shape[0]
        if count == 0:
            return False
        first = flags.item(0)
        if count > 1 and flags.tobytes() != (self._rows.get((first, count)) or self._row(first, count)):
            out[:] = _translate_mixed(
                entries,
                flags,
                self.tables,
                level=self.level,
                dual=self.dual,
                key=np.uint64(self.key),
                argument=argument,
            )
            return False
        template = self.template(first, entries, argument)
        if template is None:  # invalid entries (their other bits do not matter, so they are not remembered)
            out.fill(0)
            return True
        add, bits = template
        np.left_shift(entries["PageAddress"], _SHIFT_0D, out)
        np.add(out, add, out)
        if bits is not None:
            np.bitwise_or(out, bits, out)
        return True

    def _row(self, flag_word: int, count: int) -> bytes:
        """``count`` copies of ``flag_word``'s bytes: what a uniform update's flags column holds (kept for the few
        (flags, count) pairs VidMm sends, so a call compares rather than builds them)."""
        key = (flag_word, count)
        row = self._rows.get(key)
        if row is None:
            if len(self._rows) >= _MAX_ROWS:
                self._rows.clear()
            row = self._rows[key] = flag_word.to_bytes(8, "little") * count
        return row

    def template(self, flag_word: int, entries: PteArray, argument: str) -> _Template | None:
        """The template of a uniform run of ``flag_word`` entries (``None``: invalid, every word is 0); a refused
        flags word raises, naming ``entries``' first entry."""
        template = self._templates.get(flag_word)
        if template is None:
            template = self._template(flag_word, entries, argument)
            if template is not None:
                self._templates[flag_word] = template
        return template

    def _template(self, flag_word: int, entries: PteArray, argument: str) -> _Template | None:
        low = int(_LOW_BITS[flag_word & 0x1F])
        if not low:
            return None  # invalid (and not Zero): the word is 0
        tables, level = self.tables, self.level
        segment = (flag_word >> int(_SEGMENT_SHIFT)) & int(_SEGMENT_MASK)
        base = int(tables.base_pages[segment])
        if base < 0 or flag_word & int(_FORBIDDEN) or (level == 0 and flag_word & int(_LARGE)):
            _explain(entries, tables, level, 0, argument)
        template = low | int(tables.targets[segment]) | int(_upper_bits(np.uint64(flag_word), level, self.dual))
        shifted_base = (base << int(_HW_ADDRESS_SHIFT)) & _U64_MAX
        if not self.key:
            # Only bits below the address: adding them is OR-ing them into its zero low bits.
            return _u64(shifted_base | template), None
        # The key sits above the address, where an oversized PageAddress would carry: OR it, as for mixed entries.
        return _u64(shifted_base), _u64(template | self.key)


def translate(
    entries: PteArray,
    tables: SegmentTables,
    *,
    level: int,
    dual: bool,
    driver_protection: int = 0,
    argument: str = "pPageTableEntries",
) -> U64:
    """Hardware words for ``entries`` of a table at ``level``."""
    out: U64 = np.empty(entries.shape[0], dtype=np.uint64)
    tables.translator(level, dual, driver_protection).into(out, entries, argument)
    return out


def _translate_mixed(
    entries: PteArray, flags: U64, tables: SegmentTables, *, level: int, dual: bool, key: np.uint64, argument: str
) -> U64:
    """Entries with different flags words, each through the lookup tables."""
    pages = entries["PageAddress"]
    flags = flags.astype(np.uint64)
    low = _LOW_BITS[(flags & np.uint64(0x1F)).astype(np.intp)]
    live = low != 0
    segment = ((flags >> _SEGMENT_SHIFT) & _SEGMENT_MASK).astype(np.intp)
    base = tables.base_pages[segment]
    bad = live & ((base < 0) | ((flags & _FORBIDDEN) != 0))
    if level == 0:
        bad |= live & ((flags & _LARGE) != 0)
    if bad.any():
        _explain(entries, tables, level, int(np.flatnonzero(bad)[0]), argument)
    words = low | tables.targets[segment] | ((pages.astype(np.uint64) + base.astype(np.uint64)) << _HW_ADDRESS_SHIFT)
    words |= _upper_bits(flags, level, dual) | key
    out: U64 = np.where(live, words, np.uint64(0))
    return out


def _upper_bits(flags: U64 | np.uint64, level: int, dual: bool) -> U64 | np.uint64:
    """``LargePage`` above the leaf, ``PageTablePageSize`` -> ``Leaf64K`` at level 1 without dual PTEs."""
    bits = np.uint64(0) * flags
    if level > 0:
        bits = bits | (((flags & _LARGE) != 0) * _HW_LARGE)
    if level == 1 and not dual:
        bits = bits | (((flags >> _PT_PAGE_SIZE_SHIFT) & np.uint64(1)) * _HW_LEAF64K)
    return bits


def _explain(entries: PteArray, tables: SegmentTables, level: int, index: int, argument: str) -> NoReturn:
    entry = DXGK_PTE.decode(int(entries["Flags"][index]), int(entries["PageAddress"][index]))
    name = f"{argument}[{index}]"
    if tables.base_pages[entry.Segment] < 0:
        raise DriverContractError(f"{name}.Segment", entry.Segment, "must be 0 (system memory) or a memory segment")
    if entry.PhysicalAdapterIndex:
        raise DriverContractError(
            f"{name}.PhysicalAdapterIndex", entry.PhysicalAdapterIndex, "one physical adapter: must be 0"
        )
    if entry.LargePage and level == 0:
        raise DriverContractError(f"{name}.LargePage", 1, "LargePage is never set in a leaf (level 0) entry")
    raise DriverContractError(f"{name}.Flags", entry.Flags, "reserved bits (SystemReserved0, Reserved) must be zero")
