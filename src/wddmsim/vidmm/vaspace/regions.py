"""What a process's GPU VA space holds, as VidMm records it: regions, the mappings inside them, the tables.

A *region* is a range obtained from Reserve or from a Map on free VA -- the unit Free releases (decision 0016).
Inside a region, mappings are runs of pages: an allocation's pages, the Zero state or the Invalid state.  The
records are the truth the page tables are written from: a table's entries can always be recomputed from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import GpuVa, SegmentId, SegmentOffset
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.pte import PteArray
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.ranges import RangeAllocator

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Process


@dataclass(slots=True, eq=False)
class ProcessTable:
    """One table of a process's tree, placed in its level's segment."""

    level: int
    key: int
    segment_id: SegmentId
    offset: SegmentOffset
    size: int
    window: int = 0
    """Its VA in the paging process (``GPU_VIRTUAL`` updates), 0 otherwise."""
    cpu: CpuMapping | None = None
    """Its CPU mapping (``CPU_VIRTUAL`` updates)."""
    space: GpuVaSpace | None = None
    """The space whose tree it belongs to."""
    big: bool = False
    """A 64 KB-page leaf table."""
    entries: int = 0
    """How many entries it holds."""
    privileged: Region | None = None
    """The range of the process's privileged VA space the table is mapped at (the companion names it there)."""
    live: int = 0
    """A leaf table (either kind): bit ``i`` is set while the entry VidMm last wrote at index ``i`` is not the
    invalid one (Valid or Zero).  Every write to a leaf table is an ``UpdatePageTable`` VidMm builds, so it knows
    which entries a write of invalid ones would change, and builds no update for the others (decision 0198)."""

    def __repr__(self) -> str:
        return f"process level-{self.level} table #{self.key:#x}"


class Kind(Enum):
    """What a mapped run of pages shows."""

    ALLOCATION = "allocation"
    ZERO = "zero"
    NO_ACCESS = "no-access"
    PAGES = "pages"
    """Fixed pages VidMm maps for itself (privileged VA space: page tables, fences), read-write."""


@dataclass(slots=True, eq=False)
class VaMapping:
    """A run of ``pages`` pages at ``va``: an allocation's pages from ``offset_pages``, or the Zero or Invalid
    state.  Created by Map (or what is left of an earlier mapping a later Map covered in part)."""

    space: GpuVaSpace
    region: Region
    va: GpuVa
    pages: int
    kind: Kind = Kind.ALLOCATION
    allocation: VidMmAllocation | None = None
    offset_pages: int = 0
    write: bool = False
    execute: bool = False
    driver_protection: int = 0
    segment_id: int = 0
    """``Kind.PAGES``: the segment of :attr:`page_numbers` (0: system pages)."""
    page_numbers: npt.NDArray[np.uint64] | None = None
    """``Kind.PAGES``: ``DXGK_PTE.PageAddress`` of each page."""

    @property
    def end(self) -> int:
        return self.va + self.pages * PAGE_SIZE


@dataclass(frozen=True, slots=True)
class UpdateStep:
    """One checked operation of ``UpdateGpuVirtualAddress``, ready to apply."""

    address: int
    """The first VA it changes (a MAP's or UNMAP's base, a COPY's destination)."""
    size: int
    region: Region
    """The reserved range it changes: if that is freed before the step runs, the step is dropped."""
    pieces: tuple[VaMapping, ...] = ()
    """MAP, MAP_PROTECT, UNMAP: the mappings it installs, in order (one per tiling repeat)."""
    source: int | None = None
    """COPY: the first VA of the source range."""
    source_region: Region | None = None
    pool: VidMmAllocation | None = None
    """The allocation a MAP maps (a tile pool)."""
    plain_map: bool = False
    """A MAP (read-write, the reservation's driver protection), not a MAP_PROTECT."""


@dataclass(slots=True, eq=False)
class Region:
    """A range obtained from Reserve or Map: the unit Free releases.  Pages no mapping covers show the
    reservation's state (Invalid for ``NO_ACCESS``, zero for ``ZERO``)."""

    base: GpuVa
    size: int
    from_map: bool
    zero: bool = False
    driver_protection: int = 0
    mappings: list[VaMapping] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass(slots=True, eq=False)
class GpuVaSpace:
    """A process's GPU VA space: its regions, its tables."""

    process: Process
    ranges: RangeAllocator
    tables: dict[tuple[int, int], ProcessTable] = field(default_factory=dict)
    leaves64: dict[int, ProcessTable] = field(default_factory=dict)
    """64 KB-page leaf tables (dual PTEs), by the 2 MiB region they cover."""
    root_entries: int = 0
    """``NumEntries`` of the root (all of them, except for a 2-level root that grows with use)."""
    regions: dict[int, Region] = field(default_factory=dict)
    large: dict[int, PteArray] = field(default_factory=dict)
    """Level-1 entries that map a large page (``LargePage``), by the 2 MiB (level-1 key) they cover."""
    evicted: bool = False
    """The tree left its segment (decision 0021): only the records are kept; it comes back before use."""
    saved: set[tuple[int, int]] = field(default_factory=set)
    """While evicted: which tables to bring back (``(level, key)``; level -1 for 64 KB-page leaf tables)."""
    suspended: bool = False
    """Its contexts are held back until the page-table work built since has run."""
    busy: int = 0
    """VidMm is in the middle of changing the tree: it may not be evicted now."""
    last_use: int = 0
    owner: GpuVaSpace | None = None
    """A privileged VA space: the application space it belongs to (wddm-spec section 2.6)."""
    privileged: GpuVaSpace | None = None
    """An application space of a process using tiled resources: its privileged VA space."""
    companions: list[HANDLE] = field(default_factory=list)
    """A privileged VA space: the paging companion contexts that run in it."""
    pools: dict[int, GpuVa] = field(default_factory=dict)
    """A privileged VA space: tile pool (allocation handle) -> the VA it is mapped at for good."""
    fence_base: int = 0
    """A privileged VA space: where the monitored-fence pages are mapped."""

    @property
    def mappings(self) -> dict[int, VaMapping]:
        return {m.va: m for r in self.regions.values() for m in r.mappings}

    def region_at(self, va: int, size: int) -> Region | None:
        """The region holding all of ``[va, va + size)``, if one does."""
        for region in self.regions.values():
            if region.base <= va and va + size <= region.end:
                return region
        return None
