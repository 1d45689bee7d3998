"""The simple driver's private allocation data, its user-mode encoder, and its allocation table (decision 0075).

The private data (``D3DDDI_ALLOCATIONINFO.pPrivateDriverData`` -> ``DXGK_ALLOCATIONINFO.pPrivateDriverData``) is
32 little-endian bytes::

    0  char[4] magic "SGPU"        8  u32 width_bytes (surfaces)    16 u16 mip_levels   24 u64 size (buffers)
    4  u8  version (1)             12 u32 height (surfaces)         18 u16 reserved (0)
    5  u8  kind (0 buffer, 1 surface)                               20 u32 reserved (0)
    6  u16 usage (``ResourceUsage`` bits)

Every surface is stored linearly: level ``i`` has ``max(width >> i, 1)`` bytes per row rounded up to the GPU's
128-byte tile width and ``max(height >> i, 1)`` rows rounded up to its 32-row tile height, so every level is whole
4 KiB pages and a page lock never straddles two levels.  ``SWIZZLED`` is accepted and means nothing: the driver has
no swizzled layout, so it never sets ``DXGK_ALLOCATIONINFOFLAGS.Swizzled``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final, final

from wddmsim.core.units import PAGE_SIZE, align_up
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGK_ALLOCATIONINFOFLAGS, DXGK_SEGMENTPREFERENCE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.status import InvalidArgument
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage, SurfaceLevel
from wddmsim.drivers.simple.layout import APERTURE, LOCAL, VISIBLE
from wddmsim.hw.swizzle import TILE_HEIGHT, TILE_WIDTH

MAGIC: Final = b"SGPU"
VERSION: Final = 1
FORMAT: Final = struct.Struct("<4sBBHIIHHIQ")
UNDERSTOOD: Final = (
    ResourceUsage.CPU_VISIBLE
    | ResourceUsage.SWIZZLED
    | ResourceUsage.ACCESSED_PHYSICALLY
    | ResourceUsage.APERTURE_ONLY
    | ResourceUsage.NO_APERTURE
    | ResourceUsage.CACHED
)
"""Usage bits this driver honours.  ``EXPLICIT_RESIDENCY`` is refused (no ``NotifyResidency``);
``NO_LARGE_PAGES`` is a GpuMmu notion and refused too."""
MAX_MIP_LEVELS: Final = 16


@final
class SimpleUmd:
    """The user-mode half: encodes a :class:`ResourceDesc` into this driver's private data."""

    def encode(self, desc: ResourceDesc) -> bytes:
        return FORMAT.pack(
            MAGIC, VERSION, desc.kind, desc.usage, desc.width_bytes, desc.height, desc.mip_levels, 0, 0, desc.size
        )

    def surface_levels(self, desc: ResourceDesc) -> tuple[SurfaceLevel, ...]:
        """Where each MIP level of a surface lies in its allocation (what a lock shows, linear)."""
        return surface_levels(desc, "desc")


def decode(data: bytes, argument: str) -> ResourceDesc:
    """``DxgkDdiCreateAllocation``'s reading of the private data; a refusal names the field."""
    if len(data) != FORMAT.size:
        raise InvalidArgument(argument, len(data), f"must be the {FORMAT.size} bytes of this driver's format")
    magic, version, kind, usage, width, height, mips, reserved16, reserved32, size = FORMAT.unpack(data)
    if magic != MAGIC or version != VERSION:
        raise InvalidArgument(argument, data[:5].hex(), "is not this driver's format (magic SGPU, version 1)")
    if reserved16 or reserved32:
        raise InvalidArgument(f"{argument}.reserved", reserved16 | reserved32, "must be zero")
    if kind not in (ResourceKind.BUFFER, ResourceKind.SURFACE):
        raise InvalidArgument(
            f"{argument}.kind", kind, "is 0 (buffer) or 1 (surface): this driver has no context images"
        )
    if usage & ~UNDERSTOOD:
        raise InvalidArgument(f"{argument}.usage", usage, f"this driver understands only the bits {int(UNDERSTOOD):#x}")
    if usage & ResourceUsage.APERTURE_ONLY and usage & ResourceUsage.NO_APERTURE:
        raise InvalidArgument(f"{argument}.usage", usage, "APERTURE_ONLY and NO_APERTURE conflict")
    return ResourceDesc(ResourceKind(kind), size, usage, width, height, mips)


def surface_levels(desc: ResourceDesc, argument: str) -> tuple[SurfaceLevel, ...]:
    """The linear level layout of a surface: each level whole rows of whole tiles, one after another."""
    if desc.width_bytes <= 0 or desc.height <= 0 or not 1 <= desc.mip_levels <= MAX_MIP_LEVELS:
        raise InvalidArgument(
            argument,
            (desc.width_bytes, desc.height, desc.mip_levels),
            f"a surface needs width_bytes > 0, height > 0 and 1..{MAX_MIP_LEVELS} MIP levels",
        )
    levels: list[SurfaceLevel] = []
    offset = 0
    for level in range(desc.mip_levels):
        pitch = align_up(max(desc.width_bytes >> level, 1), TILE_WIDTH)
        levels.append(SurfaceLevel(offset, pitch, align_up(max(desc.height >> level, 1), TILE_HEIGHT)))
        offset += levels[-1].size
    return tuple(levels)


def linear_size(desc: ResourceDesc, argument: str) -> int:
    """Bytes of the resource in this driver's linear layout, whole pages."""
    if desc.kind == ResourceKind.BUFFER:
        if desc.size <= 0:
            raise InvalidArgument(f"{argument}.size", desc.size, "a buffer must have a positive size")
        return align_up(desc.size, PAGE_SIZE)
    last = surface_levels(desc, argument)[-1]
    return align_up(last.offset + last.size, PAGE_SIZE)


@dataclass(frozen=True, slots=True)
class Allocation:
    handle: HANDLE
    desc: ResourceDesc
    size: int


def describe(allocation: Allocation, info: DXGK_ALLOCATIONINFO) -> None:
    """The outputs of ``DXGK_ALLOCATIONINFO``: size, segment sets and preferences, flags."""
    usage = allocation.desc.usage
    cpu_visible = bool(usage & ResourceUsage.CPU_VISIBLE)
    segments: tuple[int, ...]
    preferred: tuple[int, ...]
    if usage & ResourceUsage.APERTURE_ONLY:
        segments, preferred = (APERTURE,), (APERTURE,)
    elif cpu_visible:  # the CPU maps it in place: behind the BAR, or in the aperture's system pages
        segments, preferred = (VISIBLE, APERTURE), (VISIBLE, APERTURE)
    else:
        segments, preferred = (LOCAL, VISIBLE, APERTURE), (LOCAL, VISIBLE)
    if usage & ResourceUsage.NO_APERTURE:
        segments = tuple(s for s in segments if s != APERTURE)
        preferred = tuple(s for s in preferred if s != APERTURE)
    mask = sum(1 << (s - 1) for s in segments)
    info.Size = info.PitchAlignedSize = allocation.size
    info.Alignment = PAGE_SIZE
    first, second = (*preferred, 0, 0)[:2]
    info.PreferredSegment = DXGK_SEGMENTPREFERENCE(SegmentId0=first, SegmentId1=second)
    info.SupportedReadSegmentSet = info.SupportedWriteSegmentSet = mask
    info.EvictionSegmentSet = 0
    info.hAllocation = allocation.handle
    info.Flags = DXGK_ALLOCATIONINFOFLAGS(
        CpuVisible=cpu_visible,
        AccessedPhysically=bool(usage & ResourceUsage.ACCESSED_PHYSICALLY),
        Cached=bool(usage & ResourceUsage.CACHED),
    )


_FIRST_HANDLE: Final = 0x2000
_LAST_HANDLE: Final = 0x3FFF_FFFF
"""Handles stay below VidMm's own (which start at 0x4000_0000)."""


@final
class AllocationTable:
    """The handles ``DxgkDdiCreateAllocation`` gave out; handles only grow, so none is given twice."""

    def __init__(self) -> None:
        self._by_handle: dict[int, Allocation] = {}
        self._next = _FIRST_HANDLE

    def __len__(self) -> int:
        return len(self._by_handle)

    def add(self, desc: ResourceDesc, size: int) -> Allocation:
        if self._next > _LAST_HANDLE:
            raise InvalidArgument("DxgkDdiCreateAllocation", self._next, "every allocation handle has been used")
        allocation = Allocation(HANDLE(self._next), desc, size)
        self._next += 1
        self._by_handle[allocation.handle] = allocation
        return allocation

    def get(self, handle: int, argument: str) -> Allocation:
        allocation = self._by_handle.get(handle)
        if allocation is None:
            raise InvalidArgument(argument, handle, "is not an allocation this driver created")
        return allocation

    def find(self, handle: int) -> Allocation | None:
        return self._by_handle.get(handle)

    def remove(self, handle: int) -> None:
        del self._by_handle[handle]
