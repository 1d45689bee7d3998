"""GPU virtual address spaces: one per process, with a page-table tree VidMm places and keeps.

The package splits what the single module held: :mod:`.regions` (what VidMm records of a space),
:mod:`.tables` (the page-table tree: placing, reaching, writing tables), :mod:`.entries` (the leaf entries of a
mapping wherever its allocation is), :mod:`.update` (``UpdateGpuVirtualAddress``) and :mod:`.manager`
(``VaManager``: Reserve, Map, Free, and the hooks the residency manager calls on every move).
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
