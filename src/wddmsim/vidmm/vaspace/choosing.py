"""Choosing VAs: which ranges of a space are free, and where a new region goes (wddm-spec 3.1-3.3).

Reserve and Map name a base (it must be free, or -- Map -- lie in one reserved or mapped region) or let VidMm
place the range between ``MinimumAddress`` and ``MaximumAddress``; a mapping VidMm places keeps the low 16 bits
of its pages' place in the allocation (decision 0040).  The first 64 KB are never handed out: a NULL GPU VA
always faults.
"""

from __future__ import annotations

from typing import final

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.vaspace.checks import bad
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Region
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT


@final
class VaChooser:
    """Free ranges and the place of new regions in the VA spaces of one adapter (``va_size`` bytes each)."""

    def __init__(self, va_size: int) -> None:
        self.va_size = va_size

    def is_free(self, space: GpuVaSpace, va: int, size: int) -> bool:
        """``[va, va + size)`` lies in the space, above the never-mapped first 64 KB, and in no region."""
        return (
            va + size <= self.va_size
            and all(r.end <= va or va + size <= r.base for r in space.regions.values())
            and not (va < VA_ALIGNMENT)
        )

    def place(
        self, space: GpuVaSpace, base: int, lo: int, hi: int, size: int, alignment: int, *, phase: int | None = None
    ) -> GpuVa:
        """The start of a new region: ``base`` if given (and free), else a free range in ``[lo, hi)``.

        ``phase`` (bytes, below 64 KB; for a mapping of an allocation): a VidMm-chosen start is wanted at ``phase``
        past a 64 KB boundary, so that the mapped pages keep the low 16 bits of their place in the allocation
        (decision 0040); when no such range is free, any ``alignment``-aligned one does.
        """
        if not base and phase is not None:
            phased = self._place_phased(space, lo, hi or self.va_size, size, phase)
            if phased is not None:
                return phased
        if base:
            if base + size > self.va_size or not self.is_free(space, base, size):
                raise bad("BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free")
            space.ranges.reserve(base, size)
            return GpuVa(base)
        top = hi or self.va_size
        if lo >= top or size > top - lo:
            raise bad("MaximumAddress", hi, f"no {size:#x}-byte range fits in [{lo:#x}, {top:#x})")
        start = space.ranges.allocate_in(size, alignment=alignment, lo=lo, hi=top)
        if start is None:
            raise InvalidArgument(
                "Size",
                size,
                f"no free range of the VA space in [{lo:#x}, {top:#x}) is that large",
                HRESULT.E_OUTOFMEMORY,
            )
        return GpuVa(start)

    def _place_phased(self, space: GpuVaSpace, lo: int, top: int, size: int, phase: int) -> GpuVa | None:
        """A free range in ``[lo, top)`` starting ``phase`` bytes past a 64 KB boundary, or None."""
        if lo >= top or size + phase > top - lo:
            return None
        start = space.ranges.allocate_in(size + phase, alignment=VA_ALIGNMENT, lo=lo, hi=top)
        if start is None:
            return None
        if phase:
            space.ranges.free(start)
            space.ranges.reserve(start + phase, size)
        return GpuVa(start + phase)

    def named_region(self, space: GpuVaSpace, args: D3DDDI_MAPGPUVIRTUALADDRESS, size: int) -> Region | None:
        """``BaseAddress`` given: the one reserved or mapped region the range lies in, or None if the range is
        free; refused when it leaves the VA space or straddles regions."""
        base = args.BaseAddress
        if base + size > self.va_size:
            raise bad("BaseAddress", base, f"{size:#x} bytes from it leave the {self.va_size:#x}-byte VA space")
        region = space.region_at(base, size)
        if region is None and not self.is_free(space, base, size):
            raise bad(
                "BaseAddress",
                base,
                f"[{base:#x}, {base + size:#x}) is neither free nor inside one reserved or mapped range",
            )
        p = args.Protection
        if region is not None and region.from_map and (p.Zero or p.NoAccess):
            raise bad("Protection", p.Value, "Zero and NoAccess may not be placed on a range obtained by Map")
        return region

    def map_region(
        self, space: GpuVaSpace, args: D3DDDI_MAPGPUVIRTUALADDRESS, allocation: VidMmAllocation | None
    ) -> Region:
        """The region the mapping lands in: the reserved or mapped one ``BaseAddress`` falls in, else a new one
        (at ``BaseAddress`` when that range is free, or placed between Minimum and MaximumAddress)."""
        size = args.SizeInPages * PAGE_SIZE
        region = self.named_region(space, args, size) if args.BaseAddress else None
        if region is not None:
            return region
        base = self.place(
            space,
            args.BaseAddress,
            args.MinimumAddress,
            args.MaximumAddress,
            size,
            PAGE_SIZE,
            phase=None if allocation is None else (args.OffsetInPages * PAGE_SIZE) % VA_ALIGNMENT,
        )
        region = Region(base, size, from_map=True)
        space.regions[base] = region
        return region
