"""The aperture and MMU halves of ``WDDMSIM_GPU_SERVICES`` (decisions 0103, 0128): where an executor's
``(SegmentId, ...)`` arguments land in the hardware, and ``DXGK_PTE`` <-> the reference GPU's entry.

A C executor names aperture pages and page tables the way the DDI names them to the driver: an aperture page by
its aperture segment and page index (``MapApertureSegment.SegmentId``/``OffsetInPages``), a page table by
``(SegmentId, SegmentOffset)`` as ``D3DGPU_PHYSICAL_ADDRESS`` gives it (segment 0: system memory by physical
address), entries as ``DXGK_PTE``.  This module turns those into GART pages, :class:`~wddmsim.hw.pte.TablePointer`
s and hardware words, refusing -- with :class:`Refused`, naming the argument, its value and the rule -- anything
that does not name exactly one place; nothing here touches memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.pte import DXGK_PTE
from wddmsim.hw.pte import HW_PTE, PTE_SIZE, TablePointer, Target, encode_pte, pte_address, pte_target

MAP_APERTURE_FLAGS_DEFINED: Final = 0x1
"""``DXGK_MAPAPERTUREFLAGS``: ``CacheCoherent`` (bit 0) is the only defined bit."""
_FORBIDDEN_FLAGS: Final = DXGK_PTE(PhysicalAdapterIndex=0x3F, SystemReserved0=True, Reserved=(1 << 44) - 1).Value
"""The bits of a ``DXGK_PTE`` flags word that must be clear: one physical adapter, nothing reserved."""


class Refused(Exception):
    """A services argument that names no place the hardware has: ``<argument>=<value>: <rule>``."""

    def __init__(self, argument: str, value: int, rule: str) -> None:
        super().__init__(f"{argument}={value:#x}: {rule}")
        self.argument = argument
        self.value = value
        self.rule = rule


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment as the bridge told the driver (``WDDMSIM_SEGMENT_DESC``)."""

    segment_id: int
    base: int
    size: int
    aperture: bool


@final
class GpuMaps:
    """The segment table of one adapter, and the aperture window's first GPU physical address."""

    def __init__(self, segments: list[Segment], aperture_base: int, system_size: int) -> None:
        self.segments = {s.segment_id: s for s in segments}
        self.aperture_base = aperture_base
        self.system_size = system_size

    # --- the aperture ---------------------------------------------------------------------------------------

    def aperture_page(self, segment_id: int, page_index: int) -> int:
        """The GART page behind page ``page_index`` of aperture segment ``segment_id``."""
        segment = self.segments.get(segment_id)
        if segment is None or not segment.aperture:
            apertures = sorted(s.segment_id for s in self.segments.values() if s.aperture)
            raise Refused("SegmentId", segment_id, f"must be an aperture segment {apertures}")
        pages = segment.size >> PAGE_SHIFT
        if not 0 <= page_index < pages:
            raise Refused("PageIndex", page_index, f"must be a page of aperture segment {segment_id}: [0, {pages:#x})")
        return ((segment.base - self.aperture_base) >> PAGE_SHIFT) + page_index

    @staticmethod
    def cache_coherent(flags: int) -> bool:
        """``MapApertureFlags``: ``CacheCoherent`` maps the page snooped, as the reference GPU's GART entry does."""
        if flags & ~MAP_APERTURE_FLAGS_DEFINED:
            raise Refused("MapApertureFlags", flags, "only CacheCoherent (bit 0) is defined; the other bits are 0")
        return bool(flags & MAP_APERTURE_FLAGS_DEFINED)

    # --- page tables ----------------------------------------------------------------------------------------

    def table(
        self, segment_id: int, offset: int, names: tuple[str, str] = ("SegmentId", "TableOffset")
    ) -> TablePointer:
        """The table at ``(segment_id, offset)``: segment 0 is system memory, any other a memory segment
        (``names``: how the call names the two arguments)."""
        segment_name, offset_name = names
        if offset % PTE_SIZE:
            raise Refused(offset_name, offset, f"page tables are {PTE_SIZE}-byte aligned")
        if segment_id == 0:
            if not 0 <= offset < self.system_size:
                raise Refused(offset_name, offset, f"must lie in system memory [0, {self.system_size:#x})")
            return TablePointer(Target.SYSTEM, offset)
        segment = self.segments.get(segment_id)
        if segment is None or segment.aperture:
            memory = sorted(s.segment_id for s in self.segments.values() if not s.aperture)
            raise Refused(segment_name, segment_id, f"must be 0 (system memory) or a memory segment {memory}")
        if not 0 <= offset < segment.size:
            raise Refused(offset_name, offset, f"must lie in segment {segment_id} [0, {segment.size:#x})")
        return TablePointer(Target.LOCAL, segment.base + offset)

    def entries(self, segment_id: int, offset: int, start: int, count: int) -> tuple[Target, int]:
        """``(target, address)`` of entries ``[start, start + count)`` of the table at ``(segment_id, offset)``,
        all inside the segment (or system memory)."""
        table = self.table(segment_id, offset)
        end = offset + (start + count) * PTE_SIZE
        limit = self.system_size if segment_id == 0 else self.segments[segment_id].size
        if end > limit:
            raise Refused(
                "Count",
                count,
                f"entries [{start}, {start + count}) of the table at offset {offset:#x} run past the end of "
                f"{'system memory' if segment_id == 0 else f'segment {segment_id}'} ({limit:#x} bytes)",
            )
        return table.target, table.address + start * PTE_SIZE

    def to_hardware(self, index: int, flags: int, page_address: int) -> int:
        """The hardware word of one ``DXGK_PTE``, as the reference driver translates it (``Zero`` makes a live
        zero page; ``CacheCoherent`` snoops; ``PageTablePageSize`` 64KB sets ``Leaf64K``)."""
        entry = DXGK_PTE.decode(flags, page_address)
        name = f"Entries[{index}]"
        if not (entry.Valid or entry.Zero):
            return 0  # an invalid entry: the walk faults on it whatever its other bits
        if flags & _FORBIDDEN_FLAGS:
            raise Refused(f"{name}.Flags", flags, "PhysicalAdapterIndex, SystemReserved0 and Reserved must be 0")
        if entry.PageTablePageSize > 1:
            raise Refused(f"{name}.PageTablePageSize", entry.PageTablePageSize, "must be 4KB (0) or 64KB (1)")
        target, address = self._page(name, entry)
        return encode_pte(
            target=target,
            address=address,
            zero=entry.Zero,
            read_only=entry.ReadOnly,
            no_execute=entry.NoExecute,
            snoop=entry.CacheCoherent,
            large_page=entry.LargePage,
            leaf_64k=entry.PageTablePageSize == 1,
        )

    def _page(self, name: str, entry: DXGK_PTE) -> tuple[Target, int]:
        if entry.Zero and not entry.Valid:
            return Target.LOCAL, 0  # a Zero page has no memory behind it
        address = entry.PageAddress << PAGE_SHIFT
        if entry.Segment == 0:
            if address >= self.system_size:
                raise Refused(f"{name}.PageAddress", entry.PageAddress, "must be a page of system memory")
            return Target.SYSTEM, address
        segment = self.segments.get(entry.Segment)
        if segment is None or segment.aperture:
            raise Refused(f"{name}.Segment", entry.Segment, "must be 0 (system memory) or a memory segment")
        if address >= segment.size:
            raise Refused(f"{name}.PageAddress", entry.PageAddress, f"must be a page of segment {entry.Segment}")
        return Target.LOCAL, segment.base + address

    def to_dxgk(self, index: int, word: int) -> tuple[int, int]:
        """``(Flags, PageAddress)`` of the ``DXGK_PTE`` a hardware word means (the inverse of :meth:`to_hardware`;
        the leaf ``Key`` is not a ``DXGK_PTE`` field and is not reported)."""
        if not HW_PTE["Valid"].get(word):
            return 0, 0
        zero = bool(HW_PTE["Zero"].get(word))
        segment_id, page = (0, 0) if zero else self._owner(index, word)
        entry = DXGK_PTE(
            Valid=True,
            Zero=zero,
            CacheCoherent=bool(HW_PTE["Snoop"].get(word)),
            ReadOnly=bool(HW_PTE["ReadOnly"].get(word)),
            NoExecute=bool(HW_PTE["NoExecute"].get(word)),
            Segment=segment_id,
            LargePage=bool(HW_PTE["LargePage"].get(word)),
            PageTablePageSize=HW_PTE["Leaf64K"].get(word),
        )
        return entry.Value, page

    def _owner(self, index: int, word: int) -> tuple[int, int]:
        address = pte_address(word)
        if pte_target(word) is Target.SYSTEM:
            return 0, address >> PAGE_SHIFT
        for segment in self.segments.values():
            if not segment.aperture and segment.base <= address < segment.base + segment.size:
                return segment.segment_id, (address - segment.base) >> PAGE_SHIFT
        raise Refused(
            f"entry {index}", word, f"local address {address:#x} lies in no memory segment: no DXGK_PTE says it"
        )


__all__ = ["MAP_APERTURE_FLAGS_DEFINED", "GpuMaps", "Refused", "Segment"]
