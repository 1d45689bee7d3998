"""The privileged VA spaces: what VidMm maps there for good (DOC:per-process-gpu-virtual-address-spaces.md;
wddm-spec 2.6; decision 0024).

A process's privileged space is created with its first ``ReserveGpuVirtualAddress``.  Its quarters hold fixed
mappings: tile pools in the second (they follow the pool's moves like any mapping; the copy source of
``CopyPageTableEntries``), every page table of the application space and the monitored-fence pages in the third
(the paging companions update the tables through them).  The page-table tree tells this module of every table it
creates or frees (:class:`~.tables.TreeHooks`).
"""

from __future__ import annotations

from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import FenceArea
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.vaspace.entries import Entries
from wddmsim.vidmm.vaspace.mappings import Mappings
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, ProcessTable, Region, VaMapping
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT
from wddmsim.vidmm.vaspace.tree import PageTables

POOL_AREA: Final = 1
TABLE_AREA: Final = 2
"""Quarters of a privileged VA space: tile pools in the second, page tables and fences in the third."""


def _area(va_size: int, quarter: int) -> tuple[int, int]:
    return quarter * va_size // 4, (quarter + 1) * va_size // 4


@final
class PrivilegedSpaces:
    """Creates each process's privileged VA space and keeps its fixed mappings: tile pools, page tables, fences."""

    def __init__(
        self, tables: PageTables, entries: Entries, mappings: Mappings, fences: FenceArea, va_size: int
    ) -> None:
        self.tables = tables
        self.entries = entries
        self.mappings = mappings
        self.fences = fences
        """The monitored-fence pages (mapped into every privileged VA space)."""
        self.va_size = va_size

    def privileged(self, space: GpuVaSpace) -> GpuVaSpace:
        """The process's privileged VA space (DOC:per-process-gpu-virtual-address-spaces.md; wddm-spec 2.6),
        created with the first ``ReserveGpuVirtualAddress``: every page table of the application space, every
        tile pool and the monitored-fence pages are mapped there for good; only the paging companions' buffers
        (kernel-generated) run in it (decision 0024)."""
        if space.privileged is not None:
            return space.privileged
        priv = GpuVaSpace(space.process, RangeAllocator(self.va_size), owner=space)
        priv.ranges.reserve(0, VA_ALIGNMENT)
        space.privileged = priv
        with self.tables.hold(priv):
            self.tables.create_root(priv)
            priv.fence_base = self._map_pages(priv, TABLE_AREA, 0, self.fences.pfns).base
            for table in self.tables.all_tables(space):
                self.table_created(table)
        return priv

    def map_pool(self, space: GpuVaSpace, pool: VidMmAllocation) -> GpuVa:
        """The tile pool's VA in the privileged space (mapped on first use, for as long as it lives: it follows
        the pool's moves like any mapping; 4 KB entries, the copy source of ``CopyPageTableEntries``)."""
        priv = self.privileged(space)
        found = priv.pools.get(pool.handle)
        if found is not None:
            return found
        region = self._fixed_region(priv, POOL_AREA, pool.size, "tile pools")
        priv.pools[pool.handle] = region.base
        self.mappings.install(
            VaMapping(priv, region, region.base, pool.size // PAGE_SIZE, Kind.ALLOCATION, pool, 0, True, False)
        )
        return region.base

    def _fixed_region(self, priv: GpuVaSpace, area: int, size: int, what: str) -> Region:
        """A new region of ``size`` bytes in ``area`` of a privileged space, 64 KB aligned."""
        lo, hi = _area(self.va_size, area)
        base = priv.ranges.allocate_in(size, alignment=VA_ALIGNMENT, lo=lo, hi=hi)
        if base is None:
            raise VidMmError(f"the privileged VA space has no room left for {what}")
        region = Region(GpuVa(base), size, from_map=True)
        priv.regions[base] = region
        return region

    def _map_pages(self, priv: GpuVaSpace, area: int, segment_id: int, numbers: npt.NDArray[np.uint64]) -> Region:
        """Fixed pages VidMm maps into a privileged space (read-write), in ``area``, 64 KB aligned."""
        pages = int(numbers.shape[0])
        region = self._fixed_region(priv, area, pages * PAGE_SIZE, "page tables")
        mapping = VaMapping(
            priv, region, region.base, pages, Kind.PAGES, write=True, segment_id=segment_id, page_numbers=numbers
        )
        region.mappings.append(mapping)
        self.entries.write_mapping(mapping, resident=None)
        if self.tables.flush_new:
            self.tables.flush_range(priv, region.base, region.size)
        return region

    def table_created(self, table: ProcessTable) -> None:
        """Every table of an application space with a privileged space is mapped there; so is every leaf table
        of the privileged space that holds tile-pool entries (the companion copies them)."""
        space = table.space
        if space is None:
            return
        if space.owner is None:
            target = space.privileged
        else:
            lo, hi = _area(self.va_size, POOL_AREA)
            first, end = self.tables.coverage(table.level, table.key)
            target = space if table.level == 0 and not table.big and first < hi and lo < end else None
        if target is None or table.privileged is not None:
            return
        numbers = np.arange(table.size // PAGE_SIZE, dtype=np.uint64) + (table.offset >> PAGE_SHIFT)
        table.privileged = self._map_pages(target, TABLE_AREA, table.segment_id, numbers)

    def table_freed(self, table: ProcessTable) -> None:
        """Before a table's range is freed: its privileged mapping goes (invalidated and flushed first)."""
        region, table.privileged = table.privileged, None
        space = table.space
        if region is None or space is None:
            return
        target = space.privileged if space.owner is None else space
        if target is not None and region.base in target.regions:
            self.mappings.release(target, region)
