"""How the reference driver presents the GPU (design.md D1 and section 9)."""

from __future__ import annotations

from dataclasses import dataclass

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.drivers.package import DriverModel
from wddmsim.hw.commands import PACKET_ALIGNMENT, copy_length


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverConfig:
    """What the reference driver reports and how it builds: its model, paging buffers, page tables, limits."""

    model: DriverModel = DriverModel.WDDM2
    paging_buffer_size: int = 64 * KiB
    """``PagingBufferSize`` reported in ``DXGK_QUERYSEGMENTOUT4``."""
    paging_buffer_private_data_size: int = 64
    paging_buffers_in_aperture: bool = False
    """Report the aperture segment as ``PagingBufferSegmentId``: VidMm maps its paging buffers there and the GPU
    fetches them through the aperture (0, the default: contiguous system memory, as COS does)."""
    max_copy_bytes: int = 64 * MiB
    """The most bytes one COPY or FILL packet moves (a bound on non-preemptible work)."""
    map_aperture2: bool = False
    """Opt in to ``DXGK_OPERATION_MAP_APERTURE_SEGMENT2`` (``DXGK_VIDMMCAPS.MapAperture2Supported``)."""
    use_alternate_va: bool = True
    """Support ``UseAlternateVA`` locks (and so receive SpecialLockTransfer) in WDDM 1.x."""
    cpu_visible_64k_pages: bool = False
    """Report ``Use64KBPages`` on memory segments (allocations are then sized and aligned to 64 KB)."""
    large_pages: bool = True
    """Report ``DXGK_GPUMMUCAPS.LargePageSupported`` (the MMU walks ``LargePage`` entries above the leaf)."""
    explicit_page_table_invalidation: bool = False
    """Report ``DXGK_GPUMMUCAPS.ExplicitPageTableInvalidation``: VidMm invalidates every entry of a table before
    freeing it."""
    aperture_commit_limit: int = 0
    """``DXGK_DRIVERCAPS.ApertureSegmentCommitLimit`` in bytes (0: the whole aperture)."""
    source_page_table_va_in_transfer: bool = False
    """Report ``DXGK_GPUMMUCAPS.LegacyBehaviors.SourcePageTableVaInTransfer``: VidMm names, in each
    ``TransferVirtual``, the paging-process VA of the leaf table mapping each side."""
    page_table_update_requires_idle: bool = False
    """Report ``DXGK_GPUMMUCAPS.PageTableUpdateRequireAddressSpaceIdle``: VidMm suspends the contexts of an
    address space while it updates its PTEs or invalidates its TLB entries."""
    page_table_update_mode: DXGK_PAGETABLEUPDATEMODE = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL
    """``DXGK_GPUMMUCAPS.PageTableUpdateMode`` (design section 9: GPU_VIRTUAL)."""
    page_table_segment: int = 2
    """``PageTableSegmentId`` of every level: process page tables live in local memory the CPU cannot see."""
    paging_process_page_table_segment: int = 1
    """``PagingProcessPageTableSegmentId``: the paging process's tables are written by the CPU (forced
    CPU_VIRTUAL), so they live in the CPU-visible segment."""

    def validate(self) -> None:
        if self.paging_buffer_size < min_paging_buffer_size() or self.paging_buffer_size % PAGE_SIZE:
            raise ConfigurationError(
                "paging_buffer_size",
                self.paging_buffer_size,
                f"must be a multiple of {PAGE_SIZE} of at least {min_paging_buffer_size()} bytes",
            )
        if (
            self.page_table_update_mode == DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
            and self.page_table_segment not in (0, 1)
        ):
            raise ConfigurationError(
                "page_table_update_mode",
                self.page_table_update_mode.name,
                "CPU_VIRTUAL needs page tables the CPU can reach (segment 0 or the CPU-visible segment 1)",
            )
        if self.max_copy_bytes < PAGE_SIZE or self.max_copy_bytes % PAGE_SIZE:
            raise ConfigurationError("max_copy_bytes", self.max_copy_bytes, "must be a positive multiple of 4 KiB")


def min_paging_buffer_size() -> int:
    """The smallest paging buffer every operation can make progress in: one COPY with one extent, plus a SYNC."""
    return copy_length(1) + PACKET_ALIGNMENT


__all__ = ["DriverConfig", "DriverModel", "min_paging_buffer_size"]
