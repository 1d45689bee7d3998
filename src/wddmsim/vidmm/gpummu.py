"""What VidMm learns about the GPU's MMU: ``DXGKQAITYPE_GPUMMUCAPS`` and one ``PAGETABLELEVELDESC`` per level.

The answers are checked against the documented rules before VidMm relies on them (wddm-spec section 2.2-2.3,
5.3): a level count of 2 to 6, index bits that add up to the VA width, table sizes that are whole CPU pages, no
system-memory table above 4 KiB, a 64 KB leaf-table size that is a whole page, and no ``CPU_VIRTUAL`` updates of
tables in a memory segment the CPU cannot reach.  A driver that breaks one gets an error naming it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.caps import (
    DXGK_GPUMMUCAPS,
    DXGK_MAX_PAGE_TABLE_LEVEL_COUNT,
    DXGK_MIN_PAGE_TABLE_LEVEL_COUNT,
    DXGK_PAGE_TABLE_LEVEL_DESC,
    DXGK_QUERYADAPTERINFOTYPE,
    DXGK_QUERYGPUMMUCAPSIN,
    DXGK_QUERYPAGETABLELEVELDESCIN,
)
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO, KernelModeDriver
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.ddi.status import NTSTATUS, InvalidArgument


@dataclass(frozen=True, slots=True)
class GpuMmuDescription:
    """The driver's GpuMmu: its caps (``DXGK_GPUMMUCAPS``) and its page-table levels, as VidMm reads them."""

    caps: DXGK_GPUMMUCAPS
    levels: tuple[DXGK_PAGE_TABLE_LEVEL_DESC, ...]
    """Level 0 (the leaf) first."""
    _shifts: tuple[int, ...] = dataclasses.field(init=False, repr=False, compare=False)
    """:meth:`shift` of every level and one past the root, worked out once (every VA walk asks for them)."""

    def __post_init__(self) -> None:
        shifts = [PAGE_SHIFT]
        for d in self.levels:
            shifts.append(shifts[-1] + d.PageTableIndexBitCount)
        object.__setattr__(self, "_shifts", tuple(shifts))

    @property
    def level_count(self) -> int:
        return len(self.levels)

    @property
    def page_size(self) -> int:
        """The GPU page every page VidMm maps itself honours (decision 0011): the largest
        ``PageTableAlignmentInBytes`` the driver asked for (tables are mapped through whole GPU pages), at least
        4 KiB.  Leaf entries still describe 4 KiB each; only their alignment and grouping follow this."""
        return max([PAGE_SIZE, *(d.PageTableAlignmentInBytes for d in self.levels)])

    @property
    def resizable_root(self) -> bool:
        """Only a 2-level layout has a root that grows and shrinks (``DxgkDdiGetRootPageTableSize``)."""
        return self.level_count == 2

    def shift(self, level: int) -> int:
        """log2 of the VA range one entry at ``level`` covers (leaf entries cover 4 KiB)."""
        return self._shifts[level]

    def index(self, va: int, level: int) -> int:
        shifts = self._shifts
        return (va >> shifts[level]) & ((1 << (shifts[level + 1] - shifts[level])) - 1)


def _refuse(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, NTSTATUS.STATUS_INVALID_PARAMETER)


def query_gpummu(driver: KernelModeDriver, segments: list[DXGK_SEGMENTDESCRIPTOR4]) -> GpuMmuDescription:
    """Ask the driver for its GpuMmu capabilities and page-table levels, and check them."""
    args = DXGKARG_QUERYADAPTERINFO(
        Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_GPUMMUCAPS, pInputData=DXGK_QUERYGPUMMUCAPSIN()
    )
    driver.query_adapter_info(args)
    caps = args.pOutputData
    if not isinstance(caps, DXGK_GPUMMUCAPS):
        raise TypeError("DXGKQAITYPE_GPUMMUCAPS must answer a DXGK_GPUMMUCAPS")
    count = caps.PageTableLevelCount
    if not DXGK_MIN_PAGE_TABLE_LEVEL_COUNT <= count <= DXGK_MAX_PAGE_TABLE_LEVEL_COUNT:
        raise _refuse("DXGK_GPUMMUCAPS.PageTableLevelCount", count, "must lie in [2, 6]")
    if caps.LeafPageTableSizeFor64KPagesInBytes % PAGE_SIZE:
        raise _refuse(
            "DXGK_GPUMMUCAPS.LeafPageTableSizeFor64KPagesInBytes",
            caps.LeafPageTableSizeFor64KPagesInBytes,
            "must be a multiple of 4096",
        )
    levels = []
    for level in range(count):
        query = DXGKARG_QUERYADAPTERINFO(
            Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_PAGETABLELEVELDESC,
            pInputData=DXGK_QUERYPAGETABLELEVELDESCIN(LevelIndex=level),
        )
        driver.query_adapter_info(query)
        desc = query.pOutputData
        if not isinstance(desc, DXGK_PAGE_TABLE_LEVEL_DESC):
            raise TypeError("DXGKQAITYPE_PAGETABLELEVELDESC must answer a DXGK_PAGE_TABLE_LEVEL_DESC")
        _check_level(desc, level, count, segments, caps)
        levels.append(desc)
    bits = 12 + sum(d.PageTableIndexBitCount for d in levels)
    if bits > caps.VirtualAddressBitCount or (count > 2 and bits != caps.VirtualAddressBitCount):
        raise _refuse(
            "DXGK_GPUMMUCAPS.VirtualAddressBitCount",
            caps.VirtualAddressBitCount,
            f"12 offset bits plus the levels' index bits make {bits}",
        )
    return GpuMmuDescription(caps, tuple(levels))


def _check_level(
    desc: DXGK_PAGE_TABLE_LEVEL_DESC,
    level: int,
    count: int,
    segments: list[DXGK_SEGMENTDESCRIPTOR4],
    caps: DXGK_GPUMMUCAPS,
) -> None:
    name = f"DXGK_PAGE_TABLE_LEVEL_DESC[{level}]"
    root = level == count - 1
    if desc.PageTableSizeInBytes % PAGE_SIZE or (desc.PageTableSizeInBytes == 0 and not (root and count == 2)):
        raise _refuse(
            f"{name}.PageTableSizeInBytes", desc.PageTableSizeInBytes, "must be a positive multiple of the CPU page"
        )
    alignment = desc.PageTableAlignmentInBytes
    if alignment and (alignment % PAGE_SIZE or alignment & (alignment - 1) or desc.PageTableSizeInBytes % alignment):
        raise _refuse(
            f"{name}.PageTableAlignmentInBytes",
            alignment,
            "must be 0 or a power of two multiple of the CPU page that divides PageTableSizeInBytes",
        )
    for field in ("PageTableSegmentId", "PagingProcessPageTableSegmentId"):
        segment_id = getattr(desc, field)
        if segment_id == 0:
            if desc.PageTableSizeInBytes > PAGE_SIZE:
                raise _refuse(
                    f"{name}.PageTableSizeInBytes",
                    desc.PageTableSizeInBytes,
                    f"tables in system memory ({field} 0) cannot exceed 4 KB",
                )
            continue
        if not 1 <= segment_id <= len(segments) or segments[segment_id - 1].Flags.Aperture:
            raise _refuse(f"{name}.{field}", segment_id, "must be 0 (system memory) or a memory segment")
        if (
            field == "PageTableSegmentId"
            and caps.PageTableUpdateMode == DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
            and not segments[segment_id - 1].Flags.CpuVisible
        ):
            raise _refuse(f"{name}.{field}", segment_id, "CPU_VIRTUAL updates need tables the CPU can reach")
