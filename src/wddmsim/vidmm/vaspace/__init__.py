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
- :mod:`.manager` -- ``VaManager``: Reserve, Map, Free, and the hooks the residency manager calls on every move.
"""

from __future__ import annotations

from wddmsim.vidmm.vaspace.manager import VaManager
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, ProcessTable, Region, UpdateStep, VaMapping
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT, WINDOW_SIZE

__all__ = [
    "VA_ALIGNMENT",
    "WINDOW_SIZE",
    "GpuVaSpace",
    "Kind",
    "ProcessTable",
    "Region",
    "UpdateStep",
    "VaManager",
    "VaMapping",
]
