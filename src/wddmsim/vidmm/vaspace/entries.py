"""The leaf entries of a mapping, wherever its allocation is, and how they are written.

A mapping points its entries at its allocation's current place: pages of a memory segment, or -- when the
allocation is in an aperture segment -- its backing pages (segment 0, decision D4); invalid while it is not
resident.  Then, per the GPU's caps (wddm-spec.md section 2.7; decisions 0016, 0022):

- **large pages** (``LargePageSupported``): every 2 MiB of VA the mapping covers whole, whose pages are one
  physically contiguous, 2 MiB-aligned run of a memory segment, is mapped by its level-1 entry with
  ``LargePage`` -- unless the allocation has ``DisableLargePageMapping`` or the mapping a driver protection
  (which only leaf entries carry).  When the run moves or part of it is remapped, the level-1 entry points at
  the leaf tables again.
- **dual PTEs**: every whole, aligned, physically contiguous 64 KiB of a memory segment gets one 64 KB entry
  and its 4 KB entries stay invalid;
- **single PTE** (no ``DualPteSupported``): a 2 MiB range uses a 64 KB-page table while every entry written
  there can be one -- 64 KiB-aligned whole 64 KiB, of segments that ``Use64KBPages`` -- and is converted to a
  4 KB-page table, once, when one cannot (:meth:`.links.TableLinks.convert_to_4k`).
"""

from __future__ import annotations

from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.pte import DXGK_PTE, NOT_INVALID_FLAGS, PteArray, pte_array, pte_flags
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, ProcessTable, VaMapping
from wddmsim.vidmm.vaspace.tables import SIZE_64K
from wddmsim.vidmm.vaspace.tree import PageTables

_PTE = DXGK_PTE.layout()
_VALID: Final = np.uint64(_PTE["Valid"].shifted_mask)
_ZERO: Final = np.uint64(_PTE["Zero"].shifted_mask)
_SEGMENT_SHIFT: Final = np.uint64(_PTE["Segment"].lsb)
_SEGMENT_MASK: Final = np.uint64(_PTE["Segment"].mask)
PER_64K: Final = SIZE_64K // PAGE_SIZE


@final
class Entries:
    """Computes and writes the entries of mappings and of reservation states."""

    def __init__(self, tables: PageTables, *, use_64k_ptes: bool = True) -> None:
        self.tables = tables
        self.use_64k = use_64k_ptes
        """Map whole, aligned, physically contiguous 64 KiB with 64 KB PTEs where the GPU allows it."""

    # --- what the entries are --------------------------------------------------------------------------------

    def write_mapping(self, mapping: VaMapping, *, resident: bool | None, clip: tuple[int, int] | None = None) -> None:
        """Entries of ``mapping``: its allocation's pages where they are (``resident`` None: as they are now);
        only those in ``clip`` if given."""
        lo: int = mapping.va
        hi = mapping.end
        if clip is not None:
            lo, hi = max(lo, clip[0]), min(hi, clip[1])
            if lo >= hi:
                return
        if mapping.kind == Kind.PAGES:
            assert mapping.page_numbers is not None
            entries = pte_array((hi - lo) // PAGE_SIZE)
            entries["Flags"] = pte_flags(Valid=1, Segment=mapping.segment_id, NoExecute=1)
            first = (lo - mapping.va) // PAGE_SIZE
            entries["PageAddress"] = mapping.page_numbers[first : first + entries.shape[0]]
            self.write(mapping.space, lo, entries, 0)
            return
        if mapping.kind != Kind.ALLOCATION:
            self.write_state(
                mapping.space,
                lo,
                (hi - lo) // PAGE_SIZE,
                zero=mapping.kind == Kind.ZERO,
                protection=mapping.driver_protection,
            )
            return
        a = mapping.allocation
        assert a is not None
        placed = a.placement is not None if resident is None else resident
        if placed:  # the entries name its pages: it may not move while they are written (tables make room)
            a.pin_count += 1
            try:
                self._write_placed(mapping, lo, hi)
            finally:
                a.pin_count -= 1
            return
        self.write(mapping.space, lo, pte_array((hi - lo) // PAGE_SIZE), mapping.driver_protection)

    def _write_placed(self, mapping: VaMapping, lo: int, hi: int) -> None:
        a = mapping.allocation
        assert a is not None
        entries = pte_array(mapping.pages)
        big: dict[int, PteArray] = {}
        large: dict[int, PteArray] = {}
        segment_id, numbers = self.targets(mapping)
        rights = {"ReadOnly": int(not mapping.write), "NoExecute": int(not mapping.execute)}
        flags = pte_flags(Valid=1, Segment=segment_id, **rights)
        entries["Flags"] = flags
        entries["PageAddress"] = numbers
        four_k_only = mapping.space.owner is not None  # privileged space: the copy source of 4 KB entries
        if self.tables.dual and segment_id and self.use_64k and not four_k_only:
            big = self.big_pages(mapping.va, int(numbers[0]), flags, entries)  # segment pages: consecutive
        if self._large_allowed(mapping, segment_id) and not four_k_only:
            large = self.large_pages(mapping, segment_id, numbers, pte_flags(LargePage=1, **rights) | flags)
            for key in large:  # the leaf entries under a large page stay invalid
                start = key * self.tables.span1
                i = (start - mapping.va) // PAGE_SIZE
                entries[i : i + self.tables.span1 // PAGE_SIZE] = pte_array(self.tables.span1 // PAGE_SIZE)
                big = {c: e for c, e in big.items() if not start <= c < start + self.tables.span1}
        first, last = (lo - mapping.va) // PAGE_SIZE, (hi - mapping.va) // PAGE_SIZE
        big = {c: e for c, e in big.items() if lo <= c < hi}
        large = {k: e for k, e in large.items() if lo <= k * self.tables.span1 < hi}
        source = (int(a.handle), (mapping.offset_pages + first) * PAGE_SIZE)
        self.write(
            mapping.space, lo, entries[first:last], mapping.driver_protection, big=big, large=large, source=source
        )

    def big_pages(self, va: int, first_page: int, flags: int, entries: PteArray) -> dict[int, PteArray]:
        """64 KB entries for every whole 64 KiB of the range from ``va`` whose pages are one aligned 64 KiB of a
        segment, the range mapping the consecutive pages from ``first_page`` (one entry of ``entries`` each):
        either every whole 64 KiB qualifies or none does.  Their 4 KB entries become invalid (the two kinds of one
        range are never both valid)."""
        first = -(-va // SIZE_64K) * SIZE_64K
        skip = (first - va) // PAGE_SIZE
        count = (int(entries.shape[0]) - skip) // PER_64K
        if count <= 0 or (first_page + skip) % PER_64K:
            return {}
        out = pte_array(count)
        out["Flags"] = flags
        out["PageAddress"] = np.arange(count, dtype=np.uint64) * np.uint64(PER_64K) + np.uint64(first_page + skip)
        entries[skip : skip + count * PER_64K] = pte_array(count * PER_64K)  # their 4 KB entries: invalid
        return {first + c * SIZE_64K: out[c : c + 1] for c in range(count)}

    def _large_allowed(self, mapping: VaMapping, segment_id: int) -> bool:
        a = mapping.allocation
        return (
            self.tables.large_pages
            and segment_id != 0  # system memory: SysMemLargePageSupported is not modelled
            and a is not None
            and not a.large_pages_disabled
            and mapping.driver_protection == 0  # driver protection lives in leaf entries only
        )

    def large_pages(
        self, mapping: VaMapping, segment_id: int, numbers: npt.NDArray[np.uint64], flags: int
    ) -> dict[int, PteArray]:
        """Level-1 ``LargePage`` entries, by level-1 key, for every whole level-1 range of the mapping whose
        pages are one physically contiguous run aligned to that range (no ``AllowNonAlignedLargePageAddress``)."""
        span = self.tables.span1
        per = span // PAGE_SIZE
        base_page = self.tables.segments.get(segment_id).base >> PAGE_SHIFT
        out: dict[int, PteArray] = {}
        first = -(-mapping.va // span) * span
        for chunk in range(first, mapping.end - span + 1, span):
            i = (chunk - mapping.va) // PAGE_SIZE
            run = numbers[i : i + per]
            if (int(run[0]) + base_page) % per or int(run[-1]) - int(run[0]) != per - 1:
                continue
            entry = pte_array(1)
            entry["Flags"] = flags
            entry["PageAddress"] = run[0]
            out[chunk // span] = entry
        return out

    def clear_big(self, space: GpuVaSpace, va: int, pages: int) -> None:
        """No 64 KB entry nor large page covers ``[va, va + pages)`` any more (their 4 KB entries come next)."""
        if space.evicted:
            return
        end = va + pages * PAGE_SIZE
        if self.tables.dual and space.leaves64:
            self.write64(space, list(range(va - va % SIZE_64K, end, SIZE_64K)), None, 0)
        for key in range(self.tables.key(0, va), self.tables.key(0, end - 1) + 1):
            self.tables.clear_large(space, key)

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

    def render(self, space: GpuVaSpace, lo: int, hi: int) -> None:
        """Every entry of ``[lo, hi)`` from the records: the Zero state of ``ZERO`` reservations, then every
        mapping (a table just created is all invalid, so nothing else needs writing)."""
        inside = [r for r in space.regions.values() if r.base < hi and lo < r.end]  # sort only those
        for region in sorted(inside, key=lambda r: r.base):
            a, b = max(region.base, lo), min(region.end, hi)
            if region.zero:
                self.write_state(space, a, (b - a) // PAGE_SIZE, zero=True, protection=region.driver_protection)
            for mapping in sorted(region.mappings, key=lambda m: m.va):
                self.write_mapping(mapping, resident=None, clip=(a, b))

    # --- writing them ----------------------------------------------------------------------------------------

    def write(
        self,
        space: GpuVaSpace,
        va: int,
        entries: PteArray,
        protection: int,
        *,
        big: dict[int, PteArray] | None = None,
        large: dict[int, PteArray] | None = None,
        source: tuple[int, int] | None = None,
    ) -> None:
        """``UpdatePageTable`` of the leaf entries from ``va``, one call per leaf table; 64 KB entries for the
        chunks in ``big``; level-1 large pages for the keys in ``large`` (other keys written here that were
        large go back to their leaf tables).  ``source``: the allocation the entries map and the byte offset in it
        of the page at ``va`` -- each call carries them as ``hAllocation``/``AllocationOffsetInBytes`` (the pages
        of one range are sequential in the allocation).  Order keeps the two kinds of one 64 KiB never both valid: 64 KB
        entries that no longer apply are invalidated first, then the 4 KB entries are written, then the new
        64 KB entries; leaf entries are written before a level-1 entry points at them.

        An evicted tree is not written (its records are; it is rebuilt from them), and invalid entries are not
        written into a range that has no leaf table (nothing can translate there)."""
        tables = self.tables
        if space.evicted:
            return
        big = big or {}
        large = large or {}
        end = va + int(entries.shape[0]) * PAGE_SIZE
        spans = self._spans(va, entries)
        if tables.dual:
            self._leaves_first(space, spans, big)
        if tables.dual and space.leaves64:
            self.write64(space, self._live_chunks(space, va, end, big), None, protection)
        self._write_leaves(space, va, entries, spans, protection, source)
        if big:
            self.write64(
                space, sorted(big), big, protection, source=None if source is None else (source[0], source[1] - va)
            )
        for key in range(tables.key(0, va), tables.key(0, end - 1) + 1):
            if key in large:
                tables.set_large(space, key, large[key])
            elif key in space.large:
                tables.clear_large(space, key)

    def _any_live(self, space: GpuVaSpace, key: int, va: int, pages: int) -> bool:
        """Some leaf entry of the ``pages`` 4 KiB from ``va`` (inside leaf ``key``) is not the invalid one: the
        4 KB table's, or -- single PTE -- the 64 KB-page table's that maps the range instead (decision 0198)."""
        tables = self.tables
        table = space.tables.get((0, key))
        if table is not None:
            return _live(table, tables.mmu.index(va, 0), pages)
        if tables.dual:
            return False
        chunks = -(-(va % SIZE_64K + pages * PAGE_SIZE) // SIZE_64K)
        return _live(space.leaves64.get(key), (va // SIZE_64K) % tables.entries64(), chunks)

    def _live_chunks(self, space: GpuVaSpace, va: int, end: int, big: dict[int, PteArray]) -> list[int]:
        """The 64 KiB chunks of ``[va, end)`` whose 64 KB entry is not the invalid one, less those ``big`` writes
        anew: a 4 KB write of their 64 KiB must invalidate them first (an invalid one needs no update, decision
        0198).  Read from the live bitmaps, a leaf table at a time."""
        tables = self.tables
        per = tables.entries64()
        out: list[int] = []
        chunk = va - va % SIZE_64K
        while chunk < end:
            key = tables.key(0, chunk)
            stop = min(end, (key + 1) * tables.span1)
            table = space.leaves64.get(key)
            if table is not None and table.live:
                bits = table.live >> ((chunk >> 16) % per) & ((1 << -(-(stop - chunk) // SIZE_64K)) - 1)
                while bits:
                    low = bits & -bits
                    live = chunk + (low.bit_length() - 1) * SIZE_64K
                    if live not in big:
                        out.append(live)
                    bits ^= low
            chunk = (key + 1) * tables.span1
        return out

    def _spans(self, va: int, entries: PteArray) -> list[tuple[int, int, int, bool]]:
        """``(VA, first entry, count, whether one is valid or Zero)`` of the entries from ``va``, a leaf table at a
        time (worked out once: creating the tables and writing them both ask)."""
        span = self.tables.span1
        total = int(entries.shape[0])
        out: list[tuple[int, int, int, bool]] = []
        done = 0
        while done < total:
            at = va + done * PAGE_SIZE
            count = min(total - done, (span - at % span) // PAGE_SIZE)
            out.append((at, done, count, bool((entries[done : done + count]["Flags"] & NOT_INVALID_FLAGS).any())))
            done += count
        return out

    def _leaves_first(
        self, space: GpuVaSpace, spans: list[tuple[int, int, int, bool]], big: dict[int, PteArray]
    ) -> None:
        """Dual PTEs: every leaf table the write needs -- 4 KB ones for valid or Zero 4 KB entries (``spans``:
        :meth:`_spans`), 64 KB ones for the chunks in ``big`` -- is created (invalid, pointed at) before the first
        entry changes.  Placing a table may wait for the paging engine (making room, mapping it into the privileged
        space); a wait between invalidating entries and the ``FlushTlb`` that follows them would leave the GPU idle
        with translations still cached that the tables no longer give (reliability-plan I4)."""
        tables = self.tables
        for at, _, _, live in spans:
            if live:
                tables.leaf(space, at)
        done_key = None
        for chunk in sorted(big):
            key = tables.key(0, chunk)
            if key != done_key:  # one 64 KB-page table per 2 MiB: the later chunks there find it
                tables.leaf64(space, chunk)
                done_key = key

    def _write_leaves(
        self,
        space: GpuVaSpace,
        va: int,
        entries: PteArray,
        spans: list[tuple[int, int, int, bool]],
        protection: int,
        source: tuple[int, int] | None,
    ) -> None:
        """The 4 KB entries from ``va``, one ``UpdatePageTable`` per leaf table (``spans``: :meth:`_spans`; single
        PTE: as 64 KB entries of a 64 KB-page table where the range may have one); invalid entries where no leaf
        table exists are skipped."""
        tables = self.tables
        for at, done, count, live in spans:
            chunk = entries[done : done + count]
            key = tables.key(0, at)
            if not live and not self._any_live(space, key, at, count):
                continue  # no leaf table there, or every entry it has in the range is invalid already
            of = None if source is None else (source[0], source[1] + (at - va))
            as64 = None if tables.dual else self.as64(space, at, chunk)
            if as64 is not None:
                table = tables.leaf64(space, at)
                start = (at // SIZE_64K) % tables.entries64()
                tables.update(table, start, as64, protection=protection, use_64k=True, source=of)
            else:
                leaf = tables.leaf(space, at)  # single PTE: a 64 KB-page range is converted first
                tables.update(leaf, tables.mmu.index(at, 0), chunk, protection=protection, source=of)

    def as64(self, space: GpuVaSpace, va: int, chunk: PteArray) -> PteArray | None:
        """Single-PTE mode: ``chunk`` as 64 KB entries if its range uses (or, new, may use) a 64 KB-page table
        and every entry can be one; None: 4 KB entries (the range is or becomes a 4 KB-page one)."""
        if not self.use_64k or self.tables.kind64(space, va) is False:
            return None
        n = int(chunk.shape[0])
        if va % SIZE_64K or n % PER_64K:
            return None
        groups = chunk.reshape(-1, PER_64K)
        flags = groups["Flags"]
        pages = groups["PageAddress"]
        if (flags != flags[:, :1]).any():
            return None
        head = flags[:, 0]
        live = ((head & _VALID) != 0) & ((head & _ZERO) == 0)
        if live.any():
            for segment_id in np.unique((head[live] >> _SEGMENT_SHIFT) & _SEGMENT_MASK).tolist():
                if segment_id == 0 or not self.tables.segments.get(int(segment_id)).descriptor.Flags.Use64KBPages:
                    return None
            runs = pages[live]
            if (runs[:, 0] % PER_64K).any() or (runs - runs[:, :1] != np.arange(PER_64K, dtype=np.uint64)).any():
                return None
        out = pte_array(n // PER_64K)
        out["Flags"] = head
        out["PageAddress"] = np.where(live, pages[:, 0], 0)
        return out

    def write64(
        self,
        space: GpuVaSpace,
        chunks: list[int],
        values: dict[int, PteArray] | None,
        protection: int,
        *,
        source: tuple[int, int] | None = None,
    ) -> None:
        """64 KB leaf entries of ``chunks`` (64 KiB-aligned VAs): ``values`` or invalid; one call per run.
        ``source``: the allocation mapped and the byte offset in it of VA 0 (a chunk's offset is that plus its
        VA)."""
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
            run = pte_array(j - i + 1) if values is None else np.concatenate([values[c] for c in chunks[i : j + 1]])
            start = (chunks[i] >> 16) % tables.entries64()
            of = None if source is None or values is None else (source[0], source[1] + chunks[i])
            tables.update(table, start, run, protection=protection, use_64k=True, source=of)
            i = j + 1


def _live(table: ProcessTable | None, first: int, count: int) -> bool:
    """Some of entries ``[first, first + count)`` of ``table`` are live (``ProcessTable.live``, decision 0198)."""
    return table is not None and bool(table.live >> first & ((1 << count) - 1))
