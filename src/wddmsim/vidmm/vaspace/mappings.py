"""Installing and removing mappings: which pages of which allocation each VA maps, and its entries written.

A mapping installed in a region cuts what it covers out of earlier mappings there; an allocation's mappings are
recorded by allocation so that they follow its moves (:class:`~.spaces.GpuVaSpaces`, a move observer) and go when it
is destroyed (Windows frees the whole region).  A region released has its entries invalidated and flushed before
its range can be handed out again, and the tables no region needs any more are pruned (wddm-spec 2.2, 2.6).
``D3DGPU_UNIQUE_DRIVER_PROTECTION`` is kept across every mapping of the same pages (decision 0025).
"""

from __future__ import annotations

from typing import final

import numpy as np

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DGPU_UNIQUE_DRIVER_PROTECTION
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.vaspace.checks import bad
from wddmsim.vidmm.vaspace.choosing import VaChooser
from wddmsim.vidmm.vaspace.entries import Entries
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, Region, VaMapping
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT
from wddmsim.vidmm.vaspace.tree import PageTables


@final
class Mappings:
    """Every mapping of every VA space, by allocation; installs them, cuts them, releases their regions."""

    def __init__(self, tables: PageTables, entries: Entries, chooser: VaChooser) -> None:
        self.tables = tables
        self.entries = entries
        self.chooser = chooser
        self.by_allocation: dict[int, list[VaMapping]] = {}
        """Allocation handle -> the mappings of its pages, in every space."""

    def map(
        self,
        space: GpuVaSpace,
        allocation: VidMmAllocation,
        *,
        offset_pages: int = 0,
        pages: int | None = None,
        write: bool = True,
        execute: bool = False,
        base: int | None = None,
    ) -> VaMapping:
        """Map ``pages`` pages of ``allocation`` (default: all from ``offset_pages``) in a region of its own."""
        total = allocation.size // PAGE_SIZE
        count = total - offset_pages if pages is None else pages
        if not 0 <= offset_pages < total or not 0 < count <= total - offset_pages:
            raise bad("OffsetInPages", offset_pages, f"{count} page(s) from it leave the {total}-page allocation")
        size = count * PAGE_SIZE
        if base is not None and not self.chooser.is_free(space, base, size):
            raise bad("BaseAddress", base, f"[{base:#x}, {base + size:#x}) is not free")
        self.tables.ensure(space)
        va = self.chooser.place(
            space,
            base or 0,
            0,
            0,
            size,
            PAGE_SIZE if base else VA_ALIGNMENT,
            phase=(offset_pages * PAGE_SIZE) % VA_ALIGNMENT,
        )
        region = Region(va, size, from_map=True)
        space.regions[va] = region
        mapping = VaMapping(space, region, va, count, Kind.ALLOCATION, allocation, offset_pages, write, execute)
        self.install(mapping)
        return mapping

    def unmap(self, space: GpuVaSpace, va: int) -> None:
        """Free the region that starts at ``va``."""
        region = space.regions.get(va)
        if region is None:
            raise bad("BaseAddress", va, "is not a mapped range of the process")
        self.tables.ensure(space)
        self.release(space, region)

    def forget(self, allocation: VidMmAllocation) -> None:
        """The allocation is destroyed: every VA mapped to it is freed (its whole region, as Windows does)."""
        for mapping in list(self.by_allocation.get(allocation.handle, [])):
            mapping.space.pools.pop(allocation.handle, None)
            if mapping.region.base in mapping.space.regions:
                self.release(mapping.space, mapping.region)
        self.by_allocation.pop(allocation.handle, None)

    def unique_protections(self, allocation: VidMmAllocation) -> list[tuple[int, int, int]]:
        """``(first page, pages, DriverProtection)`` runs covering the allocation for its paging-process mappings:
        pages a GPU VA maps with a unique driver protection (``D3DGPU_UNIQUE_DRIVER_PROTECTION``) carry it, every
        other page 0 (DOC:driver-protection.md; decision 0025)."""
        total = allocation.size // PAGE_SIZE
        unique = [
            m
            for m in self.by_allocation.get(allocation.handle, [])
            if m.space.owner is None and m.driver_protection & D3DGPU_UNIQUE_DRIVER_PROTECTION
        ]
        if not unique:
            return [(0, total, 0)]  # the common case: one run, protection 0
        values = np.zeros(total, dtype=np.uint64)
        for m in unique:
            values[m.offset_pages : m.offset_pages + m.pages] = m.driver_protection
        edges = (np.flatnonzero(np.diff(values)) + 1).tolist()
        starts, ends = [0, *edges], [*edges, total]
        return [(s, e - s, int(values[s])) for s, e in zip(starts, ends, strict=True)]

    def check_unique_protection(self, a: VidMmAllocation, offset: int, pages: int, protection: int) -> None:
        """``D3DGPU_UNIQUE_DRIVER_PROTECTION``: every mapping of the same pages uses the same value."""
        for other in self.by_allocation.get(a.handle, []):
            if other.space.owner is not None:  # VidMm's own mapping of a tile pool (driver protection 0)
                continue
            overlap = other.offset_pages < offset + pages and offset < other.offset_pages + other.pages
            unique = (protection | other.driver_protection) & D3DGPU_UNIQUE_DRIVER_PROTECTION
            if overlap and unique and other.driver_protection != protection:
                raise InvalidArgument(
                    "DriverProtection",
                    protection,
                    f"pages of the allocation are mapped with unique driver protection {other.driver_protection:#x}",
                    NTSTATUS.STATUS_INVALID_PARAMETER,
                )

    def install(self, mapping: VaMapping, *, write_entries: bool = True, flush: bool = True) -> None:
        """Put ``mapping`` in its region (cutting what it covers out of earlier mappings) and write its entries
        (``write_entries`` False: they come from a copy the caller builds next, and no 64 KB entry or large page
        may cover them meanwhile)."""
        self.tables.ensure(mapping.space)
        region = mapping.region
        kept: list[VaMapping] = []
        replaced = region.zero  # Zero entries are valid: replacing them changes a translation
        pieces: list[VaMapping] = []
        for old in region.mappings:
            if old.end <= mapping.va or mapping.end <= old.va:
                kept.append(old)
                continue
            replaced = True
            self.detach(old)
            for lo, hi in ((old.va, mapping.va), (mapping.end, old.end)):
                if lo < hi:
                    piece = VaMapping(
                        old.space,
                        region,
                        GpuVa(lo),
                        (hi - lo) // PAGE_SIZE,
                        old.kind,
                        old.allocation,
                        old.offset_pages + (lo - old.va) // PAGE_SIZE,
                        old.write,
                        old.execute,
                        old.driver_protection,
                    )
                    kept.append(piece)
                    pieces.append(piece)
                    self.attach(piece)
        kept.append(mapping)
        region.mappings = kept
        self.attach(mapping)
        if write_entries:
            self.entries.write_mapping(mapping, resident=None)
        else:
            self.entries.clear_big(mapping.space, mapping.va, mapping.pages)
        for piece in pieces:  # a 64 KB entry the cut invalidated covered their pages too
            self.entries.write_mapping(piece, resident=None)
        if flush and (replaced or self.tables.flush_new or not write_entries):
            # decision D5: invalid -> valid alone needs no flush if the GPU does not cache invalid entries
            self.tables.flush_range(mapping.space, mapping.va, mapping.pages * PAGE_SIZE)

    def attach(self, mapping: VaMapping) -> None:
        """Record ``mapping`` as one of its allocation's (its entries follow the allocation's moves)."""
        if mapping.allocation is not None:
            self.by_allocation.setdefault(mapping.allocation.handle, []).append(mapping)

    def detach(self, mapping: VaMapping) -> None:
        """``mapping`` no longer follows its allocation."""
        if mapping.allocation is not None:
            self.by_allocation[mapping.allocation.handle].remove(mapping)

    def release(self, space: GpuVaSpace, region: Region) -> None:
        """The region goes: entries in leaf tables that stay (another region shares them) are invalidated; a
        table no region needs any more is freed after its parent entry is invalidated and flushed -- its own
        entries untouched unless the driver reports ``ExplicitPageTableInvalidation`` (wddm-spec 2.2, 2.6)."""
        for mapping in region.mappings:
            self.detach(mapping)
        region.mappings = []
        del space.regions[region.base]
        space.ranges.free(region.base)
        span = self.tables.span1
        at: int = region.base
        while at < region.end:
            end = min(region.end, (at // span + 1) * span)
            if self.tables.needed(space, at - at % span, at - at % span + span):
                self.entries.write_state(space, at, (end - at) // PAGE_SIZE, zero=False, protection=0)
            at = end
        self.tables.flush_range(space, region.base, region.size)
        self.tables.prune(space, region.base, region.end)

    @staticmethod
    def new_mapping(
        space: GpuVaSpace,
        region: Region,
        va: GpuVa,
        args: D3DDDI_MAPGPUVIRTUALADDRESS,
        allocation: VidMmAllocation | None,
    ) -> VaMapping:
        """What VidMm records of the mapping ``args`` asks for at ``va``."""
        p = args.Protection
        kind = Kind.ZERO if p.Zero else (Kind.NO_ACCESS if p.NoAccess else Kind.ALLOCATION)
        return VaMapping(
            space,
            region,
            va,
            args.SizeInPages,
            kind,
            allocation,
            args.OffsetInPages,
            bool(p.Write),
            bool(p.Execute),
            args.DriverProtection,
        )
