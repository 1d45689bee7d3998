"""``RangeAllocator``: the address-space manager of one segment (and of a GPU VA space).

VidMm places each allocation at a range of a segment; a memory segment's ranges are memory, an aperture
segment's ranges are only addresses.  The allocator is a two-level segregated fit (TLSF): free blocks sit in
size classes (the power of two below the size, split in ``2**SL_BITS`` linear sub-classes), a bit map says
which classes are non-empty, and a request rounds its size up to the next class so that *any* block found
there fits.  Neighbouring free blocks are merged at once, so no two free blocks ever touch.

Allocation and free cost O(1) (amortized) in the number of live ranges: design section 5 asks for at least
0.5 M alloc+free per second at 100 000 live ranges, and no more than 2x slower than at 10 000.  At that size
the cost is memory traffic, not arithmetic -- each dict probe into a table of 10^5 entries is a few cache
misses -- so the state is laid out to be probed as little as possible (decision 0020):

* **One boundary dict** ``_rec``, keyed by granule, holds a record at the start of every block, allocated or
  free, and one at the end of the space.  A free block's record is ``-length``.  Any other record is
  ``units | before << _key``: the size of the range allocated there (0 at the end of the space) and the length
  of the free block that ends there (0 if none).  Freeing a range reads its own record and the next one:
  that is all it needs to merge with a free neighbour on either side.
* **Class stacks with lazy deletion**: each class is a stack (a deque) of free-block starts.  A block that
  leaves its class (absorbed by a neighbour, or grown into another class) is not looked for: its entry goes
  stale, and is dropped when it comes to the top of its stack (an allocation checks the record there) or
  when the stale entries pass twice the records: ``_compact`` then refiles every free block in one pass
  over the records, in memory order (amortized O(1) per stale entry, and no probes).
* **Size classes precomputed** (:mod:`.range_classes`): a block's class is a list index, not a call.
* **Bit scan on a Python int**: bit ``i`` of ``_bitmap`` is set exactly when class ``i``'s stack is non-empty;
  the next non-empty class at or above ``i`` is ``(m & -m).bit_length() - 1`` of ``m = _bitmap >> i``.

Addresses and sizes are byte offsets into the managed space; every request is a whole number of ``granule``
bytes (4 KiB pages by default) at an alignment that is a power of two and a multiple of the granule.

Why over 400 lines: one data structure on the hot path of every placement; its records, class stacks and bit map
are changed together by each operation, and splitting them would add a call to the O(1) path (the size-class
arithmetic alone lives in :mod:`.range_classes`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, final

from wddmsim.core.units import PAGE_SIZE
from wddmsim.vidmm.range_classes import CLASS as _CLASS
from wddmsim.vidmm.range_classes import FITTING as _FITTING
from wddmsim.vidmm.range_classes import MIN_CLASSES as _MIN_CLASSES
from wddmsim.vidmm.range_classes import TABLE_SIZE as _TABLE_SIZE
from wddmsim.vidmm.range_classes import class_of as _class_of
from wddmsim.vidmm.range_classes import fitting_class as _fitting_class


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


_UNUSED: Final[deque[int]] = deque(maxlen=0)
"""The stack of every class until a block is first filed there (a space has up to ~300 classes; a deque costs
~0.8 KB).  It is never appended to: filing checks for it on the empty-stack path, which it takes anyway."""


@final
class RangeAllocator:
    """Segregated fit over ``[0, size)`` in units of ``granule`` bytes (the layout: the module docstring)."""

    __slots__ = (
        "_allocated",
        "_bins",
        "_bitmap",
        "_key",
        "_limit",
        "_mask",
        "_order",
        "_rec",
        "_shift",
        "_stale",
        "_umask",
        "_used_units",
        "granule",
        "size",
    )

    def __init__(self, size: int, *, granule: int = PAGE_SIZE) -> None:
        if granule <= 0 or granule & (granule - 1):
            raise RangeError(f"granule={granule:#x}: must be a power of two")
        if size < 0 or size % granule:
            raise RangeError(f"size={size:#x}: must be a non-negative multiple of the {granule:#x}-byte granule")
        self.granule = granule
        self.size = size
        self._shift = granule.bit_length() - 1
        self._mask = granule - 1
        total = size >> self._shift
        self._key = max(total.bit_length(), 1)
        """Bit position of a record's ``before`` field: above every size the space can hold."""
        self._umask = (1 << self._key) - 1
        self._rec: dict[int, int] = {total: 0}
        """Granule -> the record of the block starting there (or, at ``total``, of the end of the space)."""
        self._bins: list[deque[int]] = [_UNUSED] * max(_class_of(total) + 1, _MIN_CLASSES)
        """Size class -> starts of its free blocks, newest last; an entry whose record is no longer a free block
        of the class is stale.  Deques: they grow and shrink without copying."""
        self._bitmap = 0
        """Bit ``i``: ``_bins[i]`` is non-empty."""
        self._stale = 0
        """Stale entries: the entries in ``_bins`` less the free blocks (every free block has an entry)."""
        self._limit = 1024
        """Compact the classes when ``_stale`` passes this (twice the record count at the last compaction)."""
        self._used_units = 0
        self._order: list[tuple[int, int]] | None = None
        """The records in address order, while no range was allocated or freed since they were sorted (the
        eviction scan and the bounded searches walk them many times between changes)."""
        self._allocated: list[tuple[int, int]] | None = None
        """:meth:`allocated_spans`, kept as :attr:`_order` is (the same object until a range changes)."""
        if total:
            self._link(0, total)

    # --- queries ---------------------------------------------------------------------------------------------

    @property
    def used_bytes(self) -> int:
        return self._used_units << self._shift

    @property
    def free_bytes(self) -> int:
        return self.size - (self._used_units << self._shift)

    def __len__(self) -> int:
        """The number of allocated ranges (O(number of classes))."""
        free_blocks = sum(map(len, self._bins)) - self._stale
        return len(self._rec) - 1 - free_blocks

    def __contains__(self, start: int) -> bool:
        return self._units_at(start) > 0

    def size_of(self, start: int) -> int:
        """The size of the range allocated at ``start``."""
        units = self._units_at(start)
        if not units:
            raise RangeError(f"start={start:#x}: no range is allocated there")
        return units << self._shift

    def largest_free(self) -> int:
        """The largest free block: found in the highest class that has one (O(that class's stack))."""
        bitmap = self._bitmap
        while bitmap:
            index = bitmap.bit_length() - 1
            lengths = [length for _, length in self._live(index)]
            if lengths:
                return max(lengths) << self._shift
            bitmap ^= 1 << index
        return 0

    def allocated(self) -> Iterator[Extent]:
        """Allocated ranges in address order."""
        return (Extent(start, size) for start, size in self.allocated_spans())

    def allocated_spans(self) -> list[tuple[int, int]]:
        """``(start, size)`` in bytes of every allocated range, in address order: the same list object until a
        range is allocated or freed (a caller may keep what it derives from it while ``allocated_spans() is``
        the list it derived it from); do not change it."""
        spans = self._allocated
        if spans is None:
            umask, shift = self._umask, self._shift
            spans = self._allocated = [
                (start << shift, (record & umask) << shift)
                for start, record in self._in_order()
                if record > 0 and record & umask
            ]
        return spans

    def fits_after_freeing(self, size: int, starts: Iterable[int], *, alignment: int = 0) -> bool:
        """Whether :meth:`allocate` of ``size`` bytes (``alignment`` 0: the granule) would succeed once the ranges
        allocated at ``starts`` were freed -- asked before freeing them, so that nothing leaves for a request its
        leaving cannot serve (decision 0218).  Nothing changes."""
        units, align = self._checked(size, alignment)
        shift = self._shift
        freed = []
        fits_alone = False
        for start in starts:
            length = self._units_at(start)
            if not length:
                raise RangeError(f"start={start:#x}: no range is allocated there")
            first = start >> shift
            freed.append((first, length))
            fits_alone = fits_alone or -(-first // align) * align + units <= first + length
        if fits_alone:  # one range freed is enough by itself: no need to lay them out
            return True
        run_start = run_end = -1
        for start, length in sorted([*self._free_blocks(), *freed]):
            if start != run_end:  # not adjacent to the run so far: that run is complete
                run_start = start
            run_end = start + length
            if -(-run_start // align) * align + units <= run_end:
                return True
        return False

    def free_extents(self) -> Iterator[Extent]:
        """Free blocks in address order."""
        for start, length in self._free_blocks():
            yield Extent(start << self._shift, length << self._shift)

    # --- allocate and free -----------------------------------------------------------------------------------

    def allocate(self, size: int, *, alignment: int = 0, from_end: bool = False) -> int | None:
        """The start of a new range of ``size`` bytes, or ``None`` when no free block can hold it.

        ``alignment`` 0 means the granule.  ``from_end`` carves the range from the top of the block it picks
        (``DXGK_ALLOCATIONINFOFLAGS.FromEndOfSegment``).
        """
        if alignment or from_end or size <= 0 or size & self._mask:
            units, align = self._checked(size, alignment)
            if align > 1 or from_end:
                return self._allocate_aligned(units, align, from_end)
        else:
            units = size >> self._shift
        # The hot path, written out (no calls): the newest block of the smallest class whose every block fits,
        # carved from its bottom.
        try:
            index = _FITTING[units]
        except IndexError:
            index = _fitting_class(units)
            if index >= len(self._bins):  # only the space's own class can hold it, if any can
                return self._allocate_aligned(units, 1, False)
        bins = self._bins
        rec = self._rec
        while True:
            stack = bins[index]
            if not stack:
                candidates = self._bitmap >> index
                if not candidates:
                    return self._allocate_aligned(units, 1, False)
                index += (candidates & -candidates).bit_length() - 1
                stack = bins[index]
            start = stack.pop()
            if not stack:
                self._bitmap ^= 1 << index
            try:
                length = -rec[start]
            except KeyError:
                length = 0
            # Live: a free block of this class starts there (a block that has grown into a larger class is
            # left to that class, as TLSF's good fit wants).
            if length > 0 and (_CLASS[length] if length < _TABLE_SIZE else _class_of(length)) == index:
                break
            self._stale -= 1
        rest = length - units
        self._used_units += units
        self._order = self._allocated = None
        end = start + length
        rec[start] = units
        if not rest:
            rec[end] &= self._umask  # no free block below the next one now
            return start << self._shift
        tail = start + units
        rec[tail] = -rest
        rec[end] -= units << self._key  # the free block below the next one is shorter by the range
        try:
            index = _CLASS[rest]
        except IndexError:
            index = _class_of(rest)
        stack = bins[index]
        if not stack:
            if stack is _UNUSED:
                stack = bins[index] = deque()
            self._bitmap |= 1 << index
        stack.append(tail)
        return start << self._shift

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
        for start, length in self._free_blocks():
            first = -(-max(start, first_unit) // align) * align
            if first + units <= min(start + length, last_unit):
                self._carve(start, length, first, units)
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
        record = self._rec.get(first, 0)
        if record < 0:  # a free block starts there: no search
            block_start, length = first, -record
        else:
            block_start = length = 0
            for candidate, record in self._rec.items():
                if record < 0 and candidate < first < candidate - record:
                    block_start, length = candidate, -record
                    break
        if first + units > block_start + length:
            raise RangeError(f"start={start:#x}: [{start:#x}, {start + size:#x}) is not entirely free")
        self._carve(block_start, length, first, units)

    def free(self, start: int) -> None:
        """Return the range allocated at ``start``; it merges with free neighbours."""
        first = start >> self._shift
        rec = self._rec
        try:
            record = rec[first]
        except KeyError:
            record = 0
        umask = self._umask
        units = record & umask if record > 0 else 0
        if not units or start & self._mask:
            raise RangeError(f"start={start:#x}: no range is allocated there (double free?)")
        if self._stale > self._limit:
            self._compact()
        self._order = self._allocated = None
        self._used_units -= units
        end = first + units
        after = rec[end]
        if after < 0:  # the free block above is absorbed: its record goes, its class entry goes stale
            del rec[end]
            end -= after
            after = rec[end]
            self._stale += 1
        if record > umask:  # the free block below grows over this range (and whatever it absorbed)
            del rec[first]
            before = record >> self._key
            first -= before
            length = end - first
            rec[first] = -length
            rec[end] = (after & umask) | length << self._key
            try:
                index = _CLASS[length]
                if index == _CLASS[before]:
                    return  # its class entry still holds
            except IndexError:
                index = _class_of(length)
                if index == _class_of(before):
                    return
            self._stale += 1
        else:
            length = end - first
            rec[first] = -length
            rec[end] = (after & umask) | length << self._key
            try:
                index = _CLASS[length]
            except IndexError:
                index = _class_of(length)
        stack = self._bins[index]
        if not stack:
            if stack is _UNUSED:
                stack = self._bins[index] = deque()
            self._bitmap |= 1 << index
        stack.append(first)

    # --- internals -------------------------------------------------------------------------------------------

    def _checked(self, size: int, alignment: int) -> tuple[int, int]:
        if size <= 0 or size % self.granule:
            raise RangeError(f"size={size:#x}: must be a positive multiple of the {self.granule:#x}-byte granule")
        alignment = alignment or self.granule
        if alignment & (alignment - 1) or alignment % self.granule:
            raise RangeError(f"alignment={alignment:#x}: must be a power of two and a multiple of the granule")
        return size >> self._shift, alignment >> self._shift

    def _units_at(self, start: int) -> int:
        """The size in granules of the range allocated at byte ``start``, or 0."""
        record = 0 if start & self._mask else self._rec.get(start >> self._shift, 0)
        return record & self._umask if record > 0 else 0

    def _free_blocks(self) -> Iterator[tuple[int, int]]:
        """``(start, length)`` of every free block in address order, in granules."""
        for start, record in self._in_order():
            if record < 0:
                yield start, -record

    def _in_order(self) -> list[tuple[int, int]]:
        order = self._order
        if order is None:
            order = self._order = sorted(self._rec.items())
        return order

    def _live(self, index: int) -> Iterator[tuple[int, int]]:
        """The free blocks of class ``index``, newest first, each once (its stale entries skipped).

        Stale entries on top of the stack are dropped first, as the O(1) path drops them: a block this search
        hands out goes stale where it lies, on top, and would otherwise be walked over again by every later
        search of the class until the next compaction (issue 24: the cost per frame grew with the run)."""
        stack, rec = self._bins[index], self._rec
        while stack:
            length = -rec.get(stack[-1], 0)
            if length > 0 and _class_of(length) == index:
                break
            stack.pop()
            self._stale -= 1
            if not stack:
                self._bitmap &= ~(1 << index)
        seen: set[int] = set()
        for start in reversed(stack):
            length = -self._rec.get(start, 0)
            if length > 0 and start not in seen and _class_of(length) == index:
                seen.add(start)
                yield start, length

    def _allocate_aligned(self, units: int, align: int, from_end: bool) -> int | None:
        """:meth:`allocate` for an aligned request, or for one the rounded-up class search could not place.

        A block of ``units + align - 1`` granules holds an aligned range wherever it starts, so the smallest
        class whose every block is that big is tried first.  Failing that, blocks in the classes the rounding
        up skipped may still fit: they are looked through, smallest class first.
        """
        need = units + align - 1
        index = _FITTING[need] if need < _TABLE_SIZE else _fitting_class(need)
        found = None
        candidates = self._bitmap >> index
        while candidates:
            index += (candidates & -candidates).bit_length() - 1
            found = next(self._live(index), None)
            if found is not None:
                break
            index += 1
            candidates = self._bitmap >> index
        if found is None:
            for index in range(_class_of(units), min(_class_of(need), len(self._bins) - 1) + 1):
                found = next(((s, n) for s, n in self._live(index) if -(-s // align) * align + units <= s + n), None)
                if found is not None:
                    break
            else:
                return None
        start, length = found
        end = start + length
        first = (end - units) & -align if from_end else -(-start // align) * align
        self._carve(start, length, first, units)
        return first << self._shift

    def _carve(self, start: int, length: int, first: int, units: int) -> None:
        """Allocate ``[first, first + units)`` out of the free block ``[start, start + length)``."""
        self._order = self._allocated = None
        self._unlink(start, length)
        self._rec[first] = units
        self._used_units += units
        if first > start:
            self._link(start, first - start)
        if first + units < start + length:
            self._link(first + units, start + length - first - units)

    def _link(self, start: int, length: int) -> None:
        """File ``[start, start + length)`` as a free block (its neighbours are allocated)."""
        rec = self._rec
        rec[start] = -length
        end = start + length
        rec[end] = (rec[end] & self._umask) | length << self._key
        self._file(start, length)

    def _unlink(self, start: int, length: int) -> None:
        """Take the free block ``[start, start + length)`` out (its class entry goes stale)."""
        rec = self._rec
        del rec[start]
        rec[start + length] &= self._umask
        self._stale += 1

    def _file(self, start: int, length: int) -> None:
        """Push the free block at ``start`` onto its class's stack."""
        index = _class_of(length)
        stack = self._bins[index]
        if stack is _UNUSED:
            stack = self._bins[index] = deque()
        stack.append(start)
        self._bitmap |= 1 << index

    def _compact(self) -> None:
        """Drop every stale entry: refile each free block once, from the records, in one pass over them in
        memory order (no probes), and rebuild the bit map.  Each class then holds its blocks in the records'
        order."""
        for stack in self._bins:
            stack.clear()
        self._bitmap = 0
        self._stale = 0
        for start, record in self._rec.items():
            if record < 0:
                self._file(start, -record)
        self._limit = 2 * len(self._rec) + 1024

    def check(self) -> None:
        """Invariants over the whole structure (raises ``AssertionError``).

        The records tile ``[0, size)``: each block's record starts where the previous block ends, no record
        lies inside a block, the end of the space has its record; no two free blocks touch; an allocated
        range's record (and the end's) names the length of the free block just below it, or 0.  Every free
        block has an entry in its class; the stale count is the entries less the free blocks; the bit map says
        which classes are non-empty; the used total is the ranges' sum.
        """
        rec, umask = self._rec, self._umask
        total = self.size >> self._shift
        if rec.get(total, -1) < 0 or rec[total] & umask:
            raise AssertionError(f"the end of the space (granule {total:#x}) has no end record")
        cursor = 0
        free_before = 0
        used = 0
        free_blocks: dict[int, int] = {}
        for start in sorted(rec):
            record = rec[start]
            if start != cursor:
                raise AssertionError(f"gap or overlap at granule {cursor:#x} (next record at {start:#x})")
            if record < 0:
                if free_before:
                    raise AssertionError(f"two free blocks touch at granule {start:#x}")
                free_before = -record
                free_blocks[start] = free_before
                cursor = start + free_before
                continue
            if record >> self._key != free_before:
                raise AssertionError(
                    f"the record at granule {start:#x} says {record >> self._key:#x} free granules lie below it,"
                    f" there are {free_before:#x}"
                )
            units = record & umask
            if not units and start != total:
                raise AssertionError(f"an empty range is allocated at granule {start:#x}")
            used += units
            free_before = 0
            cursor = start + (units or 1)
        if cursor != total + 1:
            raise AssertionError(f"blocks end at granule {cursor:#x}, the space at {total:#x}")
        if used != self._used_units:
            raise AssertionError(f"used_bytes counts {self._used_units:#x} granules, the ranges {used:#x}")
        entries = 0
        for index, stack in enumerate(self._bins):
            entries += len(stack)
            if bool(stack) != bool(self._bitmap >> index & 1):
                raise AssertionError(f"bitmap bit {index} disagrees with its class")
            for start in stack:
                if free_blocks.get(start, 0) and _class_of(free_blocks[start]) == index:
                    free_blocks[start] = 0
        if self._bitmap >> len(self._bins):
            raise AssertionError("the bitmap names a class past the largest")
        if _UNUSED or len(self._bins) <= _class_of(total):
            raise AssertionError("the classes do not cover the space, or a block was filed in the unused stack")
        unfiled = [start for start, length in free_blocks.items() if length]
        if unfiled:
            raise AssertionError(f"free block at granule {unfiled[0]:#x} is in no stack of its class")
        if self._stale != entries - len(free_blocks) or self._stale < 0:
            raise AssertionError(f"stale count {self._stale}, but {entries} entries for {len(free_blocks)} free blocks")
