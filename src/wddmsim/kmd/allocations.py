"""The driver's allocation table and the private data its user-mode half sends in ``DxgkDdiCreateAllocation``.

The private data (``DXGK_ALLOCATIONINFO.pPrivateDriverData``) is this driver's own format: the kind of
resource, its size, and for 2D surfaces the pitch, height and MIP count.  VidMm never looks inside it; it sees
only the ``Size``, ``Alignment``, segment sets and flags the driver derives.

A surface's levels are stored one after another, each padded to whole tile rows (:mod:`wddmsim.hw.swizzle`),
so every level starts on a 4 KiB boundary and a tile row is a whole number of pages.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Final, final

from wddmsim.core.units import PAGE_SIZE, align_up
from wddmsim.ddi.allocation import (
    DXGK_ALLOCATIONINFO,
    DXGK_ALLOCATIONINFOFLAGS,
    DXGK_ALLOCATIONINFOFLAGS_WDDM2_0,
    DXGK_SEGMENTPREFERENCE,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage
from wddmsim.hw.swizzle import TILE_HEIGHT, TILE_WIDTH
from wddmsim.kmd.errors import DriverContractError

_MAGIC: Final = 0x4C414D57  # "WMAL"
_FORMAT: Final = struct.Struct("<IHHQIIIII")


AllocationUsage = ResourceUsage
"""Bits of the private data's ``usage`` word: the driver-neutral :class:`ResourceUsage`, unchanged."""


@dataclass(frozen=True, slots=True)
class SurfaceLevel:
    """One MIP level: ``rows`` rows of ``pitch`` bytes at ``offset`` into the allocation."""

    offset: int
    pitch: int
    rows: int

    @property
    def size(self) -> int:
        return self.pitch * self.rows

    @property
    def tile_row_size(self) -> int:
        return self.pitch * TILE_HEIGHT


@dataclass(frozen=True, slots=True)
class AllocationDesc:
    """What the user-mode half of the driver asks for; encoded into private driver data."""

    kind: ResourceKind
    size: int = 0
    usage: int = 0
    width_bytes: int = 0
    height: int = 0
    mip_levels: int = 1

    @staticmethod
    def of(desc: ResourceDesc) -> AllocationDesc:
        """This driver's description of a driver-neutral :class:`ResourceDesc` (the same fields)."""
        return AllocationDesc(desc.kind, desc.size, desc.usage, desc.width_bytes, desc.height, desc.mip_levels)

    def encode(self) -> bytes:
        return _FORMAT.pack(
            _MAGIC, 1, self.kind, self.size, self.usage, self.width_bytes, self.height, self.mip_levels, 0
        )

    @staticmethod
    def decode(data: bytes) -> AllocationDesc:
        if len(data) != _FORMAT.size:
            raise DriverContractError(
                "pPrivateDriverData", len(data), f"must be {_FORMAT.size} bytes of this driver's format"
            )
        magic, version, kind, size, usage, width, height, mips, reserved = _FORMAT.unpack(data)
        if magic != _MAGIC or version != 1 or reserved:
            raise DriverContractError("pPrivateDriverData", data[:8].hex(), "is not this driver's allocation format")
        try:
            resource = ResourceKind(kind)
        except ValueError:
            raise DriverContractError("pPrivateDriverData.kind", kind, "unknown resource kind") from None
        return AllocationDesc(resource, size, usage, width, height, mips)


def surface_levels(width_bytes: int, height: int, mip_levels: int) -> tuple[SurfaceLevel, ...]:
    """The level layout of a 2D surface (each level tile-aligned in both directions)."""
    if width_bytes <= 0 or height <= 0 or not 1 <= mip_levels <= 16:
        raise DriverContractError(
            "surface", (width_bytes, height, mip_levels), "needs width, height > 0 and 1-16 levels"
        )
    levels: list[SurfaceLevel] = []
    offset = 0
    for level in range(mip_levels):
        pitch = align_up(max(width_bytes >> level, 1), TILE_WIDTH)
        rows = align_up(max(height >> level, 1), TILE_HEIGHT)
        levels.append(SurfaceLevel(offset, pitch, rows))
        offset += pitch * rows
    return tuple(levels)


@dataclass(slots=True)
class KmdAllocation:
    """The driver's record of one allocation."""

    handle: HANDLE
    desc: AllocationDesc
    size: int
    levels: tuple[SurfaceLevel, ...] = ()
    resident_at: tuple[int, int] | None = None
    """Last ``(SegmentId, SegmentOffset)`` reported by NotifyResidency."""
    swizzling_ranges: dict[tuple[int, int], int] = field(default_factory=dict)
    """``(RangeId, PrivateDriverData)`` -> the detiling register holding that swizzling range."""

    @property
    def holds_detile_window(self) -> bool:
        return bool(self.swizzling_ranges)

    @property
    def swizzled(self) -> bool:
        return bool(self.desc.usage & AllocationUsage.SWIZZLED)


def segment_set(*segment_ids: int) -> int:
    """A segment-set bit mask: bit ``id - 1`` stands for segment ``id`` (ids are 1-based)."""
    mask = 0
    for segment in segment_ids:
        mask |= 1 << (segment - 1)
    return mask


_VIDMM_HANDLES: Final = 0x4000_0000
"""Where VidMm's handles begin (this table also answers to VidMm's handles of context allocations)."""


@final
class AllocationTable:
    """Handles the driver gave out in ``DxgkDdiCreateAllocation``."""

    def __init__(self) -> None:
        self._by_handle: dict[int, KmdAllocation] = {}
        self._next = 0x1000
        self.granule = PAGE_SIZE
        """Allocations are sized and aligned to this: 64 KiB when the memory segments ``Use64KBPages``."""

    def __len__(self) -> int:
        return len(self._by_handle)

    def add(self, desc: AllocationDesc) -> KmdAllocation:
        if desc.kind == ResourceKind.SURFACE:
            levels = surface_levels(desc.width_bytes, desc.height, desc.mip_levels)
            size = align_up(levels[-1].offset + levels[-1].size, self.granule)
        else:
            if desc.size <= 0:
                raise DriverContractError("pPrivateDriverData.size", desc.size, "must be positive")
            levels = ()
            size = align_up(desc.size, self.granule)
        if desc.usage & AllocationUsage.SWIZZLED and desc.kind != ResourceKind.SURFACE:
            raise DriverContractError("pPrivateDriverData.usage", desc.usage, "only surfaces can be swizzled")
        if desc.usage & AllocationUsage.APERTURE_ONLY and desc.usage & AllocationUsage.NO_APERTURE:
            raise DriverContractError("pPrivateDriverData.usage", desc.usage, "APERTURE_ONLY and NO_APERTURE conflict")
        both = AllocationUsage.CPU_VISIBLE | AllocationUsage.SWIZZLED | AllocationUsage.APERTURE_ONLY
        if desc.usage & both == both:
            # Seed 004: the bits of an aperture allocation already are system memory, which the application reads
            # directly -- so a CPU-accessible allocation there cannot be swizzled.  Use two allocations.
            raise DriverContractError(
                "pPrivateDriverData.usage",
                desc.usage,
                "a CPU-visible allocation that lives only in an aperture segment cannot be swizzled "
                "(create a swizzled and a linear allocation instead)",
            )
        if self._next >= _VIDMM_HANDLES:
            # VidMm's handles of context allocations are aliased into this table: never hand one of theirs out.
            raise DriverContractError("DxgkDdiCreateAllocation", self._next, "every allocation handle has been used")
        handle = HANDLE(self._next)
        self._next += 0x10  # handles only grow: a destroyed allocation's handle is never given again
        allocation = KmdAllocation(handle, desc, size, levels)
        self._by_handle[handle] = allocation
        return allocation

    def alias(self, handle: HANDLE, allocation: KmdAllocation) -> None:
        """Also answer to ``handle``: VidMm's handle of a context allocation (``DxgkCbCreateContextAllocation``)."""
        self._by_handle[handle] = allocation

    def get(self, handle: int, argument: str) -> KmdAllocation:
        allocation = self._by_handle.get(handle)
        if allocation is None:
            raise DriverContractError(argument, handle, "is not an allocation this driver created")
        return allocation

    def find(self, handle: int) -> KmdAllocation | None:
        return self._by_handle.get(handle)

    def remove(self, handle: int) -> KmdAllocation:
        allocation = self.get(handle, "hAllocation")
        del self._by_handle[handle]
        return allocation


def describe(
    allocation: KmdAllocation,
    info: DXGK_ALLOCATIONINFO,
    *,
    cpu_segment: int,
    local_segment: int,
    aperture_segment: int,
    alternate_va: bool = False,
    alignment: int = PAGE_SIZE,
) -> None:
    """Fill the driver's outputs of ``DXGK_ALLOCATIONINFO`` for ``allocation``.

    ``alternate_va``: the driver supports ``UseAlternateVA`` locks (WDDM 1.x) and says so for CPU-visible
    swizzled surfaces, the allocations such locks are for.
    """
    usage = allocation.desc.usage
    cpu_visible = bool(usage & AllocationUsage.CPU_VISIBLE)
    if usage & AllocationUsage.APERTURE_ONLY:
        segments = segment_set(aperture_segment)
        preferred = DXGK_SEGMENTPREFERENCE(SegmentId0=aperture_segment)
    elif cpu_visible:
        segments = segment_set(cpu_segment, aperture_segment)
        preferred = DXGK_SEGMENTPREFERENCE(SegmentId0=cpu_segment, SegmentId1=aperture_segment)
    else:
        segments = segment_set(cpu_segment, local_segment, aperture_segment)
        preferred = DXGK_SEGMENTPREFERENCE(SegmentId0=local_segment, SegmentId1=cpu_segment)
    if usage & AllocationUsage.NO_APERTURE:
        segments &= ~segment_set(aperture_segment)
        kept = [s for s in preferred.segment_ids() if s != aperture_segment] + [0, 0]
        preferred = DXGK_SEGMENTPREFERENCE(SegmentId0=kept[0], SegmentId1=kept[1])
    info.Size = allocation.size
    info.Alignment = alignment  # with Use64KBPages segments a multiple of 64 KB (wddm-spec section 2.7)
    info.PitchAlignedSize = allocation.size
    info.PreferredSegment = preferred
    info.SupportedReadSegmentSet = segments
    info.SupportedWriteSegmentSet = segments
    info.EvictionSegmentSet = 0
    info.hAllocation = allocation.handle
    info.Flags = DXGK_ALLOCATIONINFOFLAGS(
        CpuVisible=cpu_visible,
        Swizzled=allocation.swizzled,
        AccessedPhysically=bool(usage & AllocationUsage.ACCESSED_PHYSICALLY),
        ExplicitResidencyNotification=bool(usage & AllocationUsage.EXPLICIT_RESIDENCY),
        UseAlternateVA=alternate_va and cpu_visible and allocation.swizzled,
        Cached=bool(usage & AllocationUsage.CACHED),
    )
    info.FlagsWddm2 = DXGK_ALLOCATIONINFOFLAGS_WDDM2_0(
        CpuVisible=cpu_visible,
        Cached=bool(usage & AllocationUsage.CACHED),
        AccessedPhysically=bool(usage & AllocationUsage.ACCESSED_PHYSICALLY),
        ExplicitResidencyNotification=bool(usage & AllocationUsage.EXPLICIT_RESIDENCY),
        DisableLargePageMapping=bool(usage & AllocationUsage.NO_LARGE_PAGES),
    )


__all__ = [
    "AllocationDesc",
    "AllocationTable",
    "AllocationUsage",
    "KmdAllocation",
    "ResourceKind",
    "SurfaceLevel",
    "describe",
    "segment_set",
    "surface_levels",
]
