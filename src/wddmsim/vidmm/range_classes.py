"""The size classes of :class:`~wddmsim.vidmm.ranges.RangeAllocator` (a two-level segregated fit).

A free block of ``n`` granules is filed in the class of the power of two below ``n``, split in ``2**SL_BITS``
linear sub-classes; a request for ``n`` granules looks in the smallest class whose *every* block holds it.  The
allocator's hot path reads the two tables (:data:`CLASS`, :data:`FITTING`) by list index for blocks below 16 MiB
(of 4 KiB granules) and calls the functions only above that (decision 0020).
"""

from __future__ import annotations

from typing import Final

SL_BITS: Final = 3
SL_COUNT: Final = 1 << SL_BITS


def class_of(size: int) -> int:
    """The size class a block of ``size`` granules is filed in (it holds sizes in [class floor, next floor))."""
    if size < SL_COUNT:
        return size
    fl = size.bit_length() - 1
    sl = (size >> (fl - SL_BITS)) - SL_COUNT
    return (fl - SL_BITS + 1) * SL_COUNT + sl


def class_floor(index: int) -> int:
    """The smallest size filed in class ``index`` (the inverse of :func:`class_of` on class floors)."""
    if index < SL_COUNT:
        return index
    fl = index // SL_COUNT + SL_BITS - 1
    sl = index % SL_COUNT
    return (SL_COUNT + sl) << (fl - SL_BITS)


def fitting_class(units: int) -> int:
    """The smallest class whose every block holds ``units`` granules."""
    index = class_of(units)
    return index + 1 if class_floor(index) < units else index


TABLE_SIZE: Final = 1 << 12
CLASS: Final = [class_of(n) for n in range(TABLE_SIZE)]
""":func:`class_of` precomputed for blocks below 16 MiB (of 4 KiB granules): a list index, not a call."""
FITTING: Final = [fitting_class(n) for n in range(TABLE_SIZE)]
""":func:`fitting_class` precomputed the same way."""
MIN_CLASSES: Final = FITTING[-1] + 1
"""Every space has at least the classes the tables name, so a table lookup always indexes a class."""
