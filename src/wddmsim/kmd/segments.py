"""The driver's segment plan: how local memory and the aperture are presented as DXGK segments.

Segment ids are 1-based (decision D4: 0 is system memory).  By default:

1. a CPU-visible memory segment: local memory behind the BAR, ``CpuTranslatedAddress`` = BAR bus address;
2. a memory segment the CPU cannot see: the rest of local memory, less the driver's hidden region;
3. the aperture segment, mapped through the aperture table; CPU-visible (the CPU reaches its system pages).

The hidden region at the top of local memory holds the aperture table and is never reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import final

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4, DXGK_SEGMENTFLAGS
from wddmsim.hw.addressing import HW_ADDRESS, Space, hw_address
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.errors import DriverContractError

_GPU_PHYS = Space.GPU_PHYS
_ADDRESS_MASK = HW_ADDRESS["address"].mask


class SegmentKind(Enum):
    MEMORY = "memory"
    APERTURE = "aperture"


@dataclass(frozen=True, slots=True)
class DriverSegment:
    """One segment the driver reports in ``DXGKQAITYPE_QUERYSEGMENT``: its id, kind, base and size."""

    segment_id: int
    name: str
    kind: SegmentKind
    base: int
    """``BaseAddress``: the GPU physical address of offset 0."""
    size: int
    cpu_translated: int = 0
    cpu_visible: bool = False
    use_64k_pages: bool = False
    kept_in_standby: bool = False
    """A memory segment keeps its contents in standby (the GPU's local memory does)."""
    kept_in_hibernate: int = 0
    """Bytes of a memory segment, from offset 0, that keep their contents in hibernate."""

    def contains(self, address: int, size: int) -> bool:
        return self.base <= address and address + size <= self.base + self.size

    def descriptor(self) -> DXGK_SEGMENTDESCRIPTOR4:
        """The segment as reported; a memory segment's ``Preserved*`` flags say truthfully what the GPU keeps
        (``SystemMemoryEndAddress``: the last offset kept in hibernate, when only part of it is)."""
        standby = self.kind == SegmentKind.MEMORY and self.kept_in_standby
        partial = standby and 0 < self.kept_in_hibernate < self.size
        flags = DXGK_SEGMENTFLAGS(
            Aperture=self.kind == SegmentKind.APERTURE,
            CpuVisible=self.cpu_visible,
            CacheCoherent=self.kind == SegmentKind.APERTURE,
            PreservedDuringStandby=standby,
            PreservedDuringHibernate=standby and self.kept_in_hibernate >= self.size,
            PartiallyPreservedDuringHibernate=partial,
            Use64KBPages=self.use_64k_pages,
            LocalBudgetGroup=self.kind == SegmentKind.MEMORY,
            NonLocalBudgetGroup=self.kind == SegmentKind.APERTURE,
        )
        return DXGK_SEGMENTDESCRIPTOR4(
            Flags=flags,
            BaseAddress=self.base,
            Size=self.size,
            CommitLimit=self.size,
            SystemMemoryEndAddress=self.kept_in_hibernate - 1 if partial else 0,
            CpuTranslatedAddress=self.cpu_translated,
        )


@final
class SegmentMap:
    """The segments, and the translation of ``(SegmentId, SegmentAddress)`` into packet addresses."""

    def __init__(self, gpu: GpuConfig, *, use_64k_pages: bool = False) -> None:
        usable = gpu.aperture_table_offset
        standby = gpu.vram_kept_in_standby

        def kept(base: int, size: int) -> int:
            return min(max(gpu.vram_kept_in_hibernate - base, 0), size)

        self.segments = (
            DriverSegment(
                1,
                "local (CPU-visible)",
                SegmentKind.MEMORY,
                0,
                gpu.bar_size,
                gpu.bar_bus_base,
                True,
                use_64k_pages,
                standby,
                kept(0, gpu.bar_size),
            ),
            DriverSegment(
                2,
                "local",
                SegmentKind.MEMORY,
                gpu.bar_size,
                usable - gpu.bar_size,
                0,
                False,
                use_64k_pages,
                standby,
                kept(gpu.bar_size, usable - gpu.bar_size),
            ),
            # A linear aperture-space segment: the CPU reaches an allocation there through the system pages the
            # aperture maps (seed 004), so it is CPU-visible too.
            DriverSegment(3, "aperture", SegmentKind.APERTURE, gpu.aperture_base, gpu.aperture_size, cpu_visible=True),
        )
        self.aperture = self.segments[2]
        self.hidden_base = usable

    def get(self, segment_id: int, argument: str) -> DriverSegment:
        if not 1 <= segment_id <= len(self.segments):
            raise DriverContractError(
                argument, segment_id, f"no such segment (the driver reports 1..{len(self.segments)})"
            )
        return self.segments[segment_id - 1]

    def memory_segment(self, segment_id: int, argument: str) -> DriverSegment:
        segment = self.get(segment_id, argument)
        if segment.kind != SegmentKind.MEMORY:
            raise DriverContractError(argument, segment_id, "must be a memory segment, not an aperture segment")
        return segment

    def aperture_segment(self, segment_id: int, argument: str) -> DriverSegment:
        segment = self.get(segment_id, argument)
        if segment.kind != SegmentKind.APERTURE:
            raise DriverContractError(argument, segment_id, "must be an aperture segment")
        return segment

    def address(self, segment_id: int, segment_address: GpuPhysAddr, size: int, argument: str) -> int:
        """The packet address of ``size`` bytes at ``SegmentAddress`` of a segment (checked to lie inside it): a GPU
        physical address (``SegmentOffset + Segment.BaseAddress``), never a VA nor a segment offset."""
        segments = self.segments
        if not 1 <= segment_id <= len(segments):  # the argument's name is formatted only for the error
            self.get(segment_id, f"{argument}.SegmentId")
        segment = segments[segment_id - 1]
        if not (segment.base <= segment_address and segment_address + size <= segment.base + segment.size):
            raise DriverContractError(
                f"{argument}.SegmentAddress",
                segment_address,
                f"{size:#x} bytes from it leave segment {segment_id} "
                f"[{segment.base:#x}, {segment.base + segment.size:#x})",
            )
        # hw_address(GPU_PHYS, ...): that space is 0, so an address in range is its own word
        return segment_address if 0 <= segment_address <= _ADDRESS_MASK else hw_address(_GPU_PHYS, segment_address)

    def local_offset(self, segment_id: int, page_address: int) -> GpuPhysAddr:
        """Local-memory byte offset of page ``page_address`` of a memory segment (``DXGK_PTE`` decoding)."""
        segment = self.memory_segment(segment_id, "DXGK_PTE.Segment")
        return GpuPhysAddr(segment.base + (page_address << PAGE_SHIFT))
