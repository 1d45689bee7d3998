"""``RangeAllocator``: the address-space manager of one segment (and, later, of a GPU VA space).

VidMm places each allocation at a range of a segment; a memory segment's ranges are memory, an aperture
segment's ranges are only addresses.  The allocator is a two-level segregated fit (TLSF): free blocks sit in
size classes (the power of two below the size, split in ``2**_SL_BITS`` linear sub-classes), a bit map says
which classes are non-empty, and a request rounds its size up to the next class so that *any* block found
there fits.  Allocation and free are O(1) in the number of live ranges (design section 5: it must not slow
down from 10 000 to 100 000 live ranges).  Neighbouring free blocks are merged at once, so no two free
blocks ever touch.

Addresses and sizes are byte offsets into the managed space; every request is a whole number of ``granule``
bytes (4 KiB pages by default) at an alignment that is a power of two and a multiple of the granule.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, final

from wddmsim.core.units import PAGE_SIZE

_SL_BITS: Final = 3
_SL_COUNT: Final = 1 << _SL_BITS


@dataclass(frozen=True, slots=True)
class Extent:
    """``[start, start + size)``."""

    start: int
    size: int

    @property
    def end(self) -> int:
        return self.start + self.size


class RangeError(ValueError):
    """A request breaks the allocator's rules (the message names the argument, its value and the rule)."""


def _class_of(size: int) -> int:
    """The size class a block of ``size`` granules is filed in (it holds sizes in [class floor, next floor))."""
    if size < _SL_COUNT:
        return size
    fl = size.bit_length() - 1
    sl = (size >> (fl - _SL_BITS)) - _SL_COUNT
    return (fl - _SL_BITS + 1) * _SL_COUNT + sl


def _class_floor(index: int) -> int:
    """The smallest size filed in class ``index`` (the inverse of :func:`_class_of` on class floors)."""
    if index < _SL_COUNT:
        return index
    fl = index // _SL_COUNT + _SL_BITS - 1
    sl = index % _SL_COUNT
    return (_SL_COUNT + sl) << (fl - _SL_BITS)


def _fitting_class(units: int) -> int:
    """The smallest class whose every block holds ``units`` granules."""
    index = _class_of(units)
    return index + 1 if _class_floor(index) < units else index


_TABLE_SIZE: Final = 1 << 12
_CLASS: Final = [_class_of(n) for n in range(_TABLE_SIZE)]
""":func:`_class_of` precomputed for blocks below 16 MiB (of 4 KiB granules): a list index, not a call."""
_FITTING: Final = [_fitting_class(n) for n in range(_TABLE_SIZE)]


@final
class RangeAllocator:
    """First fit by size class over ``[0, size)`` in units of ``granule`` bytes."""

    def __init__(self, size: int, *, granule: int = PAGE_SIZE) -> None:
        if granule <= 0 or granule & (granule - 1):
            raise RangeError(f"granule={granule:#x}: must be a power of two")
        if size < 0 or size % granule:
            raise RangeError(f"size={size:#x}: must be a non-negative multiple of the {granule:#x}-byte granule")
        self.granule = granule
        self._shift = granule.bit_length() - 1
        self.size = size
        self._free_at: dict[int, int] = {}
        """Free block start (granules) -> its size (granules)."""
        self._free_end: dict[int, int] = {}
        """Free block end (granules) -> its start."""
        self._bins: dict[int, dict[int, None]] = {}
        """Size class -> starts of its free blocks (a dict: ordered, so reuse is deterministic)."""
        self._bitmap = 0
        self._used: dict[int, int] = {}
        """Allocated start (granules) -> size (granules)."""
        self.used_bytes = 0
        if size:
            self._insert(0, size >> self._shift)

    # --- queries ---------------------------------------------------------------------------------------------

    @property
    def free_bytes(self) -> int:
        return self.size - self.used_bytes

    def __len__(self) -> int:
        """The number of allocated ranges."""
        return len(self._used)

    def __contains__(self, start: int) -> bool:
        return start % self.granule == 0 and (start >> self._shift) in self._used

    def size_of(self, start: int) -> int:
        """The size of the range allocated at ``start``."""
        units = self._used.get(start >> self._shift) if start % self.granule == 0 else None
        if units is None:
            raise RangeError(f"start={start:#x}: no range is allocated there")
        return units << self._shift

    def largest_free(self) -> int:
        return max(self._free_at.values(), default=0) << self._shift

    def allocated(self) -> Iterator[Extent]:
        """Allocated ranges in address order."""
        for start in sorted(self._used):
            yield Extent(start << self._shift, self._used[start] << self._shift)

    def free_extents(self) -> Iterator[Extent]:
        """Free blocks in address order."""
        for start in sorted(self._free_at):
            yield Extent(start << self._shift, self._free_at[start] << self._shift)

    # --- allocate and free -----------------------------------------------------------------------------------

    def allocate(self, size: int, *, alignment: int = 0, from_end: bool = False) -> int | None:
        """The start of a new range of ``size`` bytes, or ``None`` when no free block can hold it.

        ``alignment`` 0 means the granule.  ``from_end`` carves the range from the top of the block it picks
        (``DXGK_ALLOCATIONINFOFLAGS.FromEndOfSegment``).
        """
        if alignment or size <= 0 or size & (self.granule - 1):
            units, align = self._checked(size, alignment)
        else:
            units, align = size >> self._shift, 1
        block = self._take(units + align - 1)
        if block is None:
            block = self._scan_near_classes(units, align)
            if block is None:
                return None
            self._remove(*block)
        start, length = block
        end = start + length
        first = (end - units) & ~(align - 1) if from_end else -(-start // align) * align
        if first > start:
            self._insert(start, first - start)
        if first + units < end:
            self._insert(first + units, end - first - units)
        self._used[first] = units
        self.used_bytes += units << self._shift
        return first << self._shift

    def allocate_in(self, size: int, *, alignment: int = 0, lo: int = 0, hi: int | None = None) -> int | None:
        """As :meth:`allocate`, but the range must lie in ``[lo, hi)`` (lowest address first).

        Unbounded requests take the O(1) path; bounded ones look through the free blocks in address order.
        """
        top = self.size if hi is None else min(hi, self.size)
        if lo <= 0 and top >= self.size:
            return self.allocate(size, alignment=alignment)
        units, align = self._checked(size, alignment)
        first_unit = -(-lo // self.granule)
        last_unit = top >> self._shift
        for start in sorted(self._free_at):
            length = self._free_at[start]
            first = -(-max(start, first_unit) // align) * align
            if first + units <= min(start + length, last_unit):
                self.reserve(first << self._shift, units << self._shift)
                return first << self._shift
            if start >= last_unit:
                break
        return None

    def reserve(self, start: int, size: int) -> None:
        """Take ``[start, start + size)`` out of the free space (it must be free): a fixed placement."""
        units, _ = self._checked(size, 0)
        if start % self.granule or start < 0 or start + size > self.size:
            raise RangeError(f"start={start:#x}: must be granule-aligned with the range inside [0, {self.size:#x})")
        first = start >> self._shift
        for block_start, length in self._free_at.items():
            if block_start <= first and first + units <= block_start + length:
                break
        else:
            raise RangeError(f"start={start:#x}: [{start:#x}, {start + size:#x}) is not entirely free")
        self._remove(block_start, length)
        if first > block_start:
            self._insert(block_start, first - block_start)
        if first + units < block_start + length:
            self._insert(first + units, block_start + length - first - units)
        self._used[first] = units
        self.used_bytes += size

    def free(self, start: int) -> None:
        """Return the range allocated at ``start``; it merges with free neighbours."""
        first = start >> self._shift
        units = self._used.pop(first, None) if start % self.granule == 0 else None
        if units is None:
            raise RangeError(f"start={start:#x}: no range is allocated there (double free?)")
        self.used_bytes -= units << self._shift
        end = first + units
        before = self._free_end.get(first)
        if before is not None:
            self._remove(before, first - before)
            first = before
        after = self._free_at.get(end)
        if after is not None:
            self._remove(end, after)
            end += after
        self._insert(first, end - first)

    # --- internals -------------------------------------------------------------------------------------------

    def _checked(self, size: int, alignment: int) -> tuple[int, int]:
        if size <= 0 or size % self.granule:
            raise RangeError(f"size={size:#x}: must be a positive multiple of the {self.granule:#x}-byte granule")
        alignment = alignment or self.granule
        if alignment & (alignment - 1) or alignment % self.granule:
            raise RangeError(f"alignment={alignment:#x}: must be a power of two and a multiple of the granule")
        return size >> self._shift, alignment >> self._shift

    def _take(self, units: int) -> tuple[int, int] | None:
        """Remove and return a free block of at least ``units``: the newest in the smallest class whose every
        block is big enough (newest first: ``popitem`` is O(1), where peeking at the oldest would walk past
        the dict's deleted slots)."""
        index = _FITTING[units] if units < _TABLE_SIZE else _fitting_class(units)
        candidates = self._bitmap >> index
        if not candidates:
            return None
        index += (candidates & -candidates).bit_length() - 1
        bucket = self._bins[index]
        start, _ = bucket.popitem()
        if not bucket:
            self._bitmap &= ~(1 << index)
        length = self._free_at.pop(start)
        del self._free_end[start + length]
        return start, length

    def _scan_near_classes(self, units: int, align: int) -> tuple[int, int] | None:
        """Blocks in the classes the rounding up skipped (``units``' own, and for an aligned request those up
        to ``units + align - 1``) may still fit: look through them, smallest class first."""
        for index in range(_class_of(units), _class_of(units + align - 1) + 1):
            for start in self._bins.get(index, ()):
                length = self._free_at[start]
                first = -(-start // align) * align
                if first + units <= start + length:
                    return start, length
        return None

    def _insert(self, start: int, length: int) -> None:
        self._free_at[start] = length
        self._free_end[start + length] = start
        index = _CLASS[length] if length < _TABLE_SIZE else _class_of(length)
        bucket = self._bins.get(index)
        if bucket is None:
            bucket = self._bins[index] = {}
        bucket[start] = None
        self._bitmap |= 1 << index

    def _remove(self, start: int, length: int) -> None:
        del self._free_at[start]
        del self._free_end[start + length]
        index = _CLASS[length] if length < _TABLE_SIZE else _class_of(length)
        bucket = self._bins[index]
        del bucket[start]
        if not bucket:
            self._bitmap &= ~(1 << index)

    def check(self) -> None:
        """Invariants: allocated and free blocks tile ``[0, size)`` exactly; no two free blocks touch."""
        pieces = sorted(
            [(s, n, True) for s, n in self._used.items()] + [(s, n, False) for s, n in self._free_at.items()]
        )
        cursor = 0
        previous_free = False
        for start, length, used in pieces:
            if start != cursor or length <= 0:
                raise AssertionError(f"gap or overlap at granule {cursor:#x} (next block at {start:#x})")
            if not used and previous_free:
                raise AssertionError(f"two free blocks touch at granule {start:#x}")
            previous_free = not used
            cursor = start + length
        if cursor != self.size >> self._shift:
            raise AssertionError(f"blocks end at granule {cursor:#x}, the space at {self.size >> self._shift:#x}")
        if sum(self._used.values()) << self._shift != self.used_bytes:
            raise AssertionError("used_bytes disagrees with the allocated ranges")
        for index, bucket in self._bins.items():
            for start in bucket:
                if _class_of(self._free_at[start]) != index:
                    raise AssertionError(f"free block at {start:#x} filed in the wrong class")
            if bool(bucket) != bool(self._bitmap >> index & 1):
                raise AssertionError(f"bitmap bit {index} disagrees with its class")
