"""The MMU's short-range translation: a few 4 KiB pages of one level-1 region, in plain Python.

A multi-page access usually follows a fresh walk (a flush forgets the region), so nothing about the region can
be worked out once and reused; what costs is the fixed price of each numpy operation on a handful of entries.
Below :data:`SHORT_PAGES` pages a loop over the entries as integers is cheaper.  It gives exactly what the
vector path in :mod:`.mmu` gives -- the same runs, the same faults in the same order (two valid entries of one
64 KiB first, then an invalid entry's re-walk, then rights, then a page outside memory) -- and a table-driven
test holds the two paths to that.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.memory import PhysicalMemory
from wddmsim.hw.pte import HW_PTE

SHORT_PAGES: Final = 128
"""Ranges of up to this many pages take the Python path (measured crossover with the vector path)."""

Run = tuple[PhysicalMemory | None, int, int]

_ADDRESS_LSB: Final = HW_PTE["Address"].lsb
_ADDRESS_BITS: Final = HW_PTE["Address"].mask
_TARGET_LSB: Final = HW_PTE["Target"].lsb
_ZERO: Final = HW_PTE["Zero"].shifted_mask
_READ_ONLY: Final = HW_PTE["ReadOnly"].shifted_mask
_NO_EXECUTE: Final = HW_PTE["NoExecute"].shifted_mask
_FLAGS: Final = ~HW_PTE["Address"].shifted_mask & 0xFFFF_FFFF_FFFF_FFFF
"""Every bit of an entry but its address."""
_PAGES_PER_64K: Final = 16
_WRITE: Final = AccessKind.WRITE
_EXECUTE: Final = AccessKind.EXECUTE


def _address(word: int) -> int:
    return ((word >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT


def uniform(
    small: npt.NDArray[np.uint64] | None,
    big: npt.NDArray[np.uint64] | None,
    ratio: int,
    first: int,
    last: int,
) -> int:
    """The entry mapping pages [first, last] when one stretch of physically consecutive memory does -- valid
    4 KB-kind entries, not Zero, alike but for addresses that step by one GPU page, no valid 64 KB entry beside
    them -- else -1.  Such a range is one run whose rights are the first entry's (the usual case: a copy)."""
    return _uniform(small, ratio, big, _PAGES_PER_64K, first, last)


def uniform64(
    small: npt.NDArray[np.uint64] | None,
    big: npt.NDArray[np.uint64] | None,
    ratio: int,
    first: int,
    last: int,
) -> int:
    """:func:`uniform` for a range the 64 KB-kind table maps: its entries one stretch (64 KiB a step), no valid
    4 KB-kind entry beside them (which would fault) -- else -1.  What a 64 KB-page allocation's copies take."""
    return _uniform(big, _PAGES_PER_64K, small, ratio, first, last)


def _uniform(
    table: npt.NDArray[np.uint64] | None,
    per: int,
    beside: npt.NDArray[np.uint64] | None,
    beside_per: int,
    first: int,
    last: int,
) -> int:
    """The first entry of ``table`` (``per`` 4 KiB pages an entry) over pages [first, last] if they are one
    stretch and no entry of the other table (``beside``, ``beside_per`` pages an entry) is valid there, else -1."""
    if table is None:
        return -1
    head = _one_stretch(table[first // per : last // per + 1], per << PAGE_SHIFT)
    if head < 0 or (beside is not None and (beside[first // beside_per : last // beside_per + 1] & 1).any()):
        return -1
    return head


def _one_stretch(words: npt.NDArray[np.uint64], step: int) -> int:
    """The first of ``words`` if they are valid, not Zero, alike but for addresses ``step`` bytes apart, else -1."""
    head = int(words[0])
    if not head & 1 or head & _ZERO:
        return -1
    count = words.shape[0]
    if count > 1:
        tail = int(words[-1])
        if (head ^ tail) & _FLAGS or tail - head != (count - 1) * step:
            return -1  # a cheap necessary test first; then every step, which also rules out a carry
        if not ((words[1:] - words[:-1]) == step).all():
            return -1
    return head


def effective(
    small: npt.NDArray[np.uint64] | None,
    big: npt.NDArray[np.uint64] | None,
    ratio: int,
    first: int,
    last: int,
    va: int,
    access: AccessKind,
) -> tuple[list[int], list[int]]:
    """Per 4 KiB page in [first, last] of a region: the entry that maps it and the page's byte address.

    Raises the fault of the first page whose 4 KB and 64 KB entries are both valid."""
    pages = range(first, last + 1)
    if small is not None:
        lo = first // ratio
        table = small[lo : last // ratio + 1].tolist()
        if ratio == 1:
            words = table
            addresses = [((w >> _ADDRESS_LSB) & _ADDRESS_BITS) << PAGE_SHIFT for w in table]
        else:
            words = [table[p // ratio - lo] for p in pages]
            addresses = [_address(w) + ((p % ratio) << PAGE_SHIFT) for w, p in zip(words, pages, strict=True)]
    else:
        words = [0] * len(pages)
        addresses = [0] * len(pages)
    if big is not None:
        lo = first // _PAGES_PER_64K
        table = big[lo : last // _PAGES_PER_64K + 1].tolist()
        for i, p in enumerate(pages):
            b = table[p // _PAGES_PER_64K - lo]
            if b & 1:
                if words[i] & 1:
                    raise GpuFault(
                        FaultKind.PAGE_FAULT,
                        (va & ~(PAGE_SIZE - 1)) + i * PAGE_SIZE,
                        "the 4 KB and 64 KB entries of one 64 KiB range are both valid",
                        access=access,
                        level=0,
                    )
                words[i] = b
                addresses[i] = _address(b) + ((p % _PAGES_PER_64K) << PAGE_SHIFT)
    return words, addresses


def any_invalid(words: list[int]) -> bool:
    return any(not w & 1 for w in words)


def check_rights(words: list[int], va: int, access: AccessKind) -> None:
    """The fault of the first page ``access`` may not make (invalid, read-only for a write, no-execute)."""
    for index, w in enumerate(words):
        if not w & 1:
            what = "invalid"
        elif access == _WRITE and w & _READ_ONLY and not w & _ZERO:
            what = "read-only"
        elif access == _EXECUTE and w & _NO_EXECUTE:
            what = "no-execute"
        else:
            continue
        fault_va = (va & ~(PAGE_SIZE - 1)) + index * PAGE_SIZE if index else va
        raise GpuFault(FaultKind.PAGE_FAULT, fault_va, f"leaf entry is {what}", access=access, level=0)


def runs(
    words: list[int],
    addresses: list[int],
    va: int,
    size: int,
    memories: tuple[PhysicalMemory, PhysicalMemory],
    out: list[Run],
) -> None:
    """Append the runs of the pages (each Zero page alone; others merged while physically next in one memory)."""
    count = len(words)
    skip = va & (PAGE_SIZE - 1)
    remaining = size
    i = 0
    while i < count:
        w = words[i]
        j = i + 1
        if w & _ZERO:
            length = min(PAGE_SIZE - skip, remaining)
            out.append((None, 0, length))
        else:
            target = (w >> _TARGET_LSB) & 1
            following = addresses[i] + PAGE_SIZE
            while j < count:
                v = words[j]
                if v & _ZERO or (v >> _TARGET_LSB) & 1 != target or addresses[j] != following:
                    break
                following += PAGE_SIZE
                j += 1
            mem = memories[target]
            length = min((j - i) * PAGE_SIZE - skip, remaining)
            base = addresses[i] + skip
            if base < 0 or base + length > mem.size:
                raise GpuFault(FaultKind.BUS_ERROR, base, f"page at {base:#x} is outside {mem.name}")
            out.append((mem, base, length))
        remaining -= length
        skip = 0
        i = j
