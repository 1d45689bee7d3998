"""How an ``UPDATE_PAGE_TABLE`` operation's entries map onto the hardware words of one page table.

A leaf module: :mod:`.state` caches the shapes per (level, 64 KB-page leaf) and :mod:`.paging.page_table` works
them out and uses them, so the shape lives below both (it used to live in ``page_table``, which imports
``state``: the two imported each other).
"""

from __future__ import annotations

from dataclasses import dataclass

from wddmsim.hw.mmu import PAGES_PER_64K, MmuLayout


@dataclass(frozen=True, slots=True)
class Geometry:
    """How the update's entries map onto hardware words of the table."""

    entries_in_table: int
    words_per_entry: int
    """2 for dual level-1 entries, else 1."""
    ratio: int
    """4 KiB entries per hardware entry (> 1 only for leaf tables of pages larger than 4 KiB)."""
    alignment_pages: int
    """The page alignment a valid leaf entry's address must have."""


def table_geometry(layout: MmuLayout, level: int, use_64k: bool) -> Geometry:
    """The geometry of a level-``level`` table of ``layout`` (``use_64k``: a 64 KB-page leaf table)."""
    if use_64k:
        return Geometry(layout.leaf64_entries, 1, 1, PAGES_PER_64K)
    if level == 0:
        return Geometry(layout.entries(0), 1, layout.gpu_page_ratio, layout.gpu_page_ratio)
    if not 0 < level < layout.levels:
        return Geometry(0, 1, 1, 1)  # no such level: page_table's checks name it
    return Geometry(layout.entries(level), 2 if layout.dual_pte and level == 1 else 1, 1, 1)
