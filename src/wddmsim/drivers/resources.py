"""What an application asks its user-mode driver for, in no driver's format.

A workload describes each resource with a :class:`ResourceDesc`; the user-mode half of the driver package it
runs on (:class:`~wddmsim.drivers.package.UserModeDriver`) encodes it into the private driver data of
``D3DDDI_ALLOCATIONINFO.pPrivateDriverData``, which only the kernel-mode half of the same package reads back in
``DxgkDdiCreateAllocation``.  VidMm never looks inside those bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ResourceKind(IntEnum):
    """What the resource is (a D3D buffer, a 2D surface, or a context image no application may ask for)."""

    BUFFER = 0
    SURFACE = 1
    CONTEXT = 2
    """A context image: made by the driver itself in ``DxgkDdiCreateContext``; ``DxgkDdiCreateAllocation``
    refuses it from user mode."""


class ResourceUsage(IntEnum):
    """Bits of :attr:`ResourceDesc.usage`: how the application will use the resource."""

    CPU_VISIBLE = 0x1
    SWIZZLED = 0x2
    ACCESSED_PHYSICALLY = 0x4
    EXPLICIT_RESIDENCY = 0x8
    APERTURE_ONLY = 0x10
    NO_APERTURE = 0x20
    """The hardware cannot use it over PCIe: never in the aperture segment."""
    CACHED = 0x40
    """The CPU maps it cacheable (``DXGK_ALLOCATIONINFOFLAGS.Cached``)."""
    NO_LARGE_PAGES = 0x80
    """``DXGK_ALLOCATIONINFOFLAGS_WDDM2_0.DisableLargePageMapping``: the allocation is never mapped by a large page."""


@dataclass(frozen=True, slots=True)
class ResourceDesc:
    """One resource: a buffer of ``size`` bytes, or a surface of ``height`` rows of ``width_bytes`` bytes with
    ``mip_levels`` levels; ``usage`` is an OR of :class:`ResourceUsage` bits."""

    kind: ResourceKind
    size: int = 0
    usage: int = 0
    width_bytes: int = 0
    height: int = 0
    mip_levels: int = 1


@dataclass(frozen=True, slots=True)
class SurfaceLevel:
    """One MIP level of a surface as the user-mode driver lays it out: ``rows`` rows of ``pitch`` bytes at
    ``offset`` into the allocation (what a lock shows of one level, what a tiled copy covers)."""

    offset: int
    pitch: int
    rows: int

    @property
    def size(self) -> int:
        return self.pitch * self.rows


__all__ = ["ResourceDesc", "ResourceKind", "ResourceUsage", "SurfaceLevel"]
