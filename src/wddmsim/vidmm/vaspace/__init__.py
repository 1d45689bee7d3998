"""GPU virtual address spaces: one per process, with a page-table tree VidMm places and keeps.

What each module models:

- :mod:`.regions` -- what VidMm records of a space: its regions (reserved, mapped), its tables, its state.
- The page-table tree (wddm-spec sections 2.3, 2.5-2.8), one class built in layers, each module one layer:
  :mod:`.tables` -- the trees' shared state, their geometry, the contexts using a space (held idle around
  updates), and the DDI operations every step builds (``UpdatePageTable`` in the driver's update mode,
  ``FlushTlb``, ``SetRootPageTable``); :mod:`.placement` -- where one table lives (placed in its level's
  segment, reached through a paging-process window or a CPU mapping, initialised, freed); :mod:`.links` -- the
  tree's shape (each level pointing at the one below, large pages, 64 KB -> 4 KB conversion, the resizable root,
  pruning tables no region needs); :mod:`.tree` -- the whole tree moving (evicted under pressure, restored,
  destroyed): its :class:`~.tree.PageTables` is the tree the other modules use.
- :mod:`.entries` -- the leaf entries of a mapping wherever its allocation is.
- :mod:`.update` -- ``UpdateGpuVirtualAddress``: operations queued behind a fence, applied by a paging companion
  (or the CPU); :mod:`.update_checks` -- what the call refuses, checked whole before anything changes.
- :mod:`.choosing` -- choosing VAs: which ranges are free, where a new region goes, the region a Map lands in.
- :mod:`.mappings` -- installing and removing mappings: a mapping cut into earlier ones, an allocation's mappings
  recorded so that they follow it, a released region's entries invalidated and its unneeded tables pruned.
- :mod:`.privileged` -- the privileged VA spaces and what VidMm maps there for good: tile pools, every page table
  of the application space, the monitored-fence pages.
- :mod:`.spaces` -- ``GpuVaSpaces``: the DDI calls (Reserve, Map, Free, Update), the spaces' lifetime, and the
  hooks the residency core calls on every move (a ``MoveObserver``).  It builds the parts above in dependency
  order and is the tree's :class:`~.tables.TreeHooks` (decision 0060).
"""

from __future__ import annotations

from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, ProcessTable, Region, UpdateStep, VaMapping
from wddmsim.vidmm.vaspace.spaces import GpuVaSpaces
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT, WINDOW_SIZE

__all__ = [
    "VA_ALIGNMENT",
    "WINDOW_SIZE",
    "GpuVaSpace",
    "GpuVaSpaces",
    "Kind",
    "ProcessTable",
    "Region",
    "UpdateStep",
    "VaMapping",
]
