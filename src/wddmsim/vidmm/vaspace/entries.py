"""The leaf entries of a mapping, wherever its allocation is, and how they are written.

A mapping points its entries at its allocation's current place: pages of a memory segment, or -- when the
allocation is in an aperture segment -- its backing pages (segment 0, decision D4); invalid while it is not
resident.  With dual PTEs every whole, aligned, physically contiguous 64 KiB of a memory segment gets one
64 KB entry and its 4 KB entries stay invalid (decision 0016).
"""

from __future__ import annotations

from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, VaMapping
from wddmsim.vidmm.vaspace.tables import SIZE_64K, PageTables


@final
class Entries:
    """Computes and writes the entries of mappings and of reservation states."""

    def __init__(self, tables: PageTables, *, use_64k_ptes: bool = True) -> None:
        self.tables = tables
        self.use_64k = use_64k_ptes
        """Map whole, aligned, physically contiguous 64 KiB with one 64 KB PTE (dual-PTE GPUs)."""

    def write_mapping(self, mapping: VaMapping, *, resident: bool | None) -> None:
        """Entries of ``mapping``: its allocation's pages where they are (``resident`` None: as they are now)."""
        if mapping.kind != Kind.ALLOCATION:
            self.write_state(
                mapping.space,
                mapping.va,
                mapping.pages,
                zero=mapping.kind == Kind.ZERO,
                protection=mapping.driver_protection,
            )
            return
        a = mapping.allocation
        assert a is not None
        placed = a.placement is not None if resident is None else resident
        entries = pte_array(mapping.pages)
        big: dict[int, PteArray] = {}
        if placed:
            segment_id, numbers = self.targets(mapping)
            flags = pte_flags(
                Valid=1, Segment=segment_id, ReadOnly=int(not mapping.write), NoExecute=int(not mapping.execute)
            )
            entries["Flags"] = flags
            entries["PageAddress"] = numbers
            if self.tables.dual and segment_id and self.use_64k:
                big = self.big_pages(mapping.va, numbers, flags, entries)
        self.write(mapping.space, mapping.va, entries, mapping.driver_protection, big=big)

    def big_pages(self, va: int, numbers: npt.NDArray[np.uint64], flags: int, entries: PteArray) -> dict[int, PteArray]:
        """64 KB entries for every whole 64 KiB of the range whose pages are one aligned 64 KiB of a segment;
        their 4 KB entries become invalid (the two kinds of one range are never both valid)."""
        out: dict[int, PteArray] = {}
        per = SIZE_64K // PAGE_SIZE
        first = -(-va // SIZE_64K) * SIZE_64K
        for chunk in range(first, va + numbers.shape[0] * PAGE_SIZE - SIZE_64K + 1, SIZE_64K):
            i = (chunk - va) // PAGE_SIZE
            run = numbers[i : i + per]
            if int(run[0]) % per or int(run[-1]) - int(run[0]) != per - 1:
                continue
            entry = pte_array(1)
            entry["Flags"] = flags
            entry["PageAddress"] = run[0]
            out[chunk] = entry
            entries[i : i + per] = pte_array(per)
        return out

    def write_state(self, space: GpuVaSpace, va: int, pages: int, *, zero: bool, protection: int) -> None:
        """Entries of pages in the Zero state (``zero``) or the Invalid state."""
        entries = pte_array(pages)
        if zero:
            entries["Flags"] = pte_flags(Zero=1)
        self.write(space, va, entries, protection)

    def targets(self, mapping: VaMapping) -> tuple[int, npt.NDArray[np.uint64]]:
        """``(Segment, PageAddress per page)`` of the mapping's pages where the allocation is now."""
        a = mapping.allocation
        assert a is not None
        placement = a.placement
        assert placement is not None
        space = self.tables.segments.get(placement.segment_id)
        if space.aperture:  # the GPU reaches the backing pages directly (segment 0)
            assert a.backing is not None
            return 0, a.backing.pfns[mapping.offset_pages : mapping.offset_pages + mapping.pages]
        first = (placement.offset >> PAGE_SHIFT) + mapping.offset_pages
        return placement.segment_id, np.arange(first, first + mapping.pages, dtype=np.uint64)

    def write(
        self, space: GpuVaSpace, va: int, entries: PteArray, protection: int, *, big: dict[int, PteArray] | None = None
    ) -> None:
        """``UpdatePageTable`` of the leaf entries from ``va``, one call per leaf table; 64 KB entries for the
        chunks in ``big``.  Order keeps the two kinds of one 64 KiB never both valid: 64 KB entries that no
        longer apply are invalidated first, then the 4 KB entries are written, then the new 64 KB entries."""
        tables = self.tables
        big = big or {}
        span = 1 << tables.mmu.shift(1)
        total = int(entries.shape[0])
        end = va + total * PAGE_SIZE
        if space.leaves64:
            stale = [c for c in range(va - va % SIZE_64K, end, SIZE_64K) if c not in big]
            self.write64(space, stale, None, protection)
        done = 0
        while done < total:
            at = va + done * PAGE_SIZE
            count = min(total - done, (span - at % span) // PAGE_SIZE)
            leaf = tables.leaf(space, at)
            tables.update(leaf, tables.mmu.index(at, 0), entries[done : done + count], protection=protection)
            done += count
        if big:
            self.write64(space, sorted(big), big, protection)

    def write64(
        self, space: GpuVaSpace, chunks: list[int], values: dict[int, PteArray] | None, protection: int
    ) -> None:
        """64 KB leaf entries of ``chunks`` (64 KiB-aligned VAs): ``values`` or invalid; one call per run."""
        tables = self.tables
        i = 0
        while i < len(chunks):
            key = tables.key(0, chunks[i])
            if values is None and key not in space.leaves64:
                i += 1
                continue
            j = i
            while j + 1 < len(chunks) and chunks[j + 1] == chunks[j] + SIZE_64K and tables.key(0, chunks[j + 1]) == key:
                j += 1
            table = tables.leaf64(space, chunks[i])
            run = pte_array(j - i + 1)
            if values is not None:
                for k in range(i, j + 1):
                    run[k - i] = values[chunks[k]][0]
            start = (chunks[i] >> 16) % tables.entries64()
            tables.update(table, start, run, protection=protection, use_64k=True)
            i = j + 1
