"""What the driver knows while it builds: its configuration, segments, allocations and the hardware."""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.hw.bar import DetileWindow
from wddmsim.hw.gpu import Gpu
from wddmsim.kmd.allocations import AllocationTable, KmdAllocation
from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.kmd.pte_format import SegmentTables
from wddmsim.kmd.segments import SegmentMap
from wddmsim.kmd.table_geometry import Geometry
from wddmsim.kmd.update_kind import UpdateKind


@dataclass(slots=True)
class DriverState:
    """The kernel-mode driver's own state on one adapter: its GPU, configuration, segments and allocations."""

    gpu: Gpu
    config: DriverConfig
    segments: SegmentMap
    pte_tables: SegmentTables
    allocations: AllocationTable = field(default_factory=AllocationTable)
    pending_transfer: int | None = None
    """The allocation whose sub-transfers began with TransferStart and have not yet seen TransferEnd."""
    page_table_shapes: dict[tuple[int, bool], Geometry] = field(default_factory=dict)
    """UpdatePageTable's table geometry per (level, 64 KB-page leaf), worked out on first use."""
    update_kinds: dict[tuple[int, bool, bool, int], UpdateKind] = field(default_factory=dict)
    """UpdatePageTable's shape and translator per (level, Use64KBPages, Repeat, leaf protection key), kept from
    the first well-formed update of each (``kmd.paging.page_table``)."""

    wddm2: bool = field(init=False)
    """The driver presents the GpuMmu model (read on every build: kept as a plain field)."""

    def __post_init__(self) -> None:
        self.wddm2 = self.config.model == DriverModel.WDDM2

    def program_detile_window(
        self, allocation: KmdAllocation, key: tuple[int, int], index: int, window: DetileWindow
    ) -> None:
        """MMIO: give ``allocation``'s swizzling range ``key`` detiling register ``index``."""
        self.gpu.bar.program_window(index, window)
        allocation.swizzling_ranges[key] = index

    def release_detile_windows(self, allocation: KmdAllocation) -> None:
        """MMIO: take every detiling register of ``allocation`` back (only while the allocation is idle)."""
        for index in allocation.swizzling_ranges.values():
            self.gpu.bar.program_window(index, None)
        allocation.swizzling_ranges.clear()
