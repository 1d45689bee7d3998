"""Adapter capabilities (``DxgkDdiQueryAdapterInfo``; wddm-spec.md sections 2.1-2.3, 4.3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE


class DXGK_QUERYADAPTERINFOTYPE(IntEnum):
    DXGKQAITYPE_DRIVERCAPS = 1
    DXGKQAITYPE_QUERYSEGMENT = 2
    DXGKQAITYPE_QUERYSEGMENT3 = 5
    DXGKQAITYPE_QUERYSEGMENT4 = 11
    DXGKQAITYPE_SEGMENTMEMORYSTATE = 12
    DXGKQAITYPE_GPUMMUCAPS = 13
    DXGKQAITYPE_PAGETABLELEVELDESC = 14
    DXGKQAITYPE_PHYSICALADAPTERCAPS = 15


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_VIDMMCAPS(BitUnion):
    """``DXGK_VIDMMCAPS`` (``DXGK_DRIVERCAPS.MemoryManagementCaps``)."""

    OutOfOrderLock: bool = flag(0)
    DedicatedPagingEngine: bool = flag(1)
    PagingEngineCanSwizzle: bool = flag(2)
    SectionBackedPrimary: bool = flag(3)
    CrossAdapterResource: bool = flag(4)
    VirtualAddressingSupported: bool = flag(5)
    GpuMmuSupported: bool = flag(6)
    IoMmuSupported: bool = flag(7)
    ReplicateGdiContent: bool = flag(8)
    NonCpuVisiblePrimary: bool = flag(9)
    ParavirtualizationSupported: bool = flag(10)
    IoMmuSecureModeSupported: bool = flag(11)
    DisableSelfRefreshVRAMInS3: bool = flag(12)
    IoMmuSecureModeRequired: bool = flag(13)
    MapAperture2Supported: bool = flag(14)
    CrossAdapterResourceTexture: bool = flag(15)
    CrossAdapterResourceScanout: bool = flag(16)
    AlwaysPoweredVRAM: bool = flag(17)
    Reserved: int = bits(18, 14)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_DRIVERCAPS:
    """The fields of ``DXGK_DRIVERCAPS`` that concern memory management."""

    HighestAcceptableAddress: int = (1 << 64) - 1
    MaxAllocationListSlotId: int = 0
    ApertureSegmentCommitLimit: int = 0
    NumberOfSwizzlingRanges: int = 0
    MemoryManagementCaps: DXGK_VIDMMCAPS = field(default_factory=DXGK_VIDMMCAPS)
    PagingNode: int = 0
    """WDDM 1.x only (moved to ``DXGK_PHYSICALADAPTERCAPS`` in 2.x)."""
    InternalGpuVirtualAddressRangeStart: int = 0
    InternalGpuVirtualAddressRangeEnd: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_GPUMMUCAPS_FLAGS(BitUnion):
    """The capability bits of ``DXGK_GPUMMUCAPS`` (wddm-spec.md section 2.2)."""

    ReadOnlyMemorySupported: bool = flag(0)
    NoExecuteMemorySupported: bool = flag(1)
    ZeroInPteSupported: bool = flag(2)
    ExplicitPageTableInvalidation: bool = flag(3)
    CacheCoherentMemorySupported: bool = flag(4)
    PageTableUpdateRequireAddressSpaceIdle: bool = flag(5)
    LargePageSupported: bool = flag(6)
    DualPteSupported: bool = flag(7)
    AllowNonAlignedLargePageAddress: bool = flag(8)
    SysMem64KBPageSupported: bool = flag(9)
    InvalidTlbEntriesNotCached: bool = flag(10)
    SysMemLargePageSupported: bool = flag(11)
    CachedPageTables: bool = flag(12)
    PerPtePageSize: bool = flag(13)
    OpportunisticSysMem64KBPageSupported: bool = flag(14)
    Reserved: int = bits(15, 17)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_GPUMMUCAPS_LEGACYBEHAVIORS(BitUnion):
    """``DXGK_GPUMMUCAPS.LegacyBehaviors``: older behaviours a GpuMmu driver asks for."""

    SourcePageTableVaInTransfer: bool = flag(0)
    Reserved: int = bits(1, 31)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_GPUMMUCAPS:
    """``DXGK_GPUMMUCAPS`` (``DXGKQAITYPE_GPUMMUCAPS``)."""

    Flags: DXGK_GPUMMUCAPS_FLAGS = field(default_factory=DXGK_GPUMMUCAPS_FLAGS)
    PageTableUpdateMode: DXGK_PAGETABLEUPDATEMODE = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL
    VirtualAddressBitCount: int = 48
    LeafPageTableSizeFor64KPagesInBytes: int = 0
    PageTableLevelCount: int = 4
    LegacyBehaviors: DXGK_GPUMMUCAPS_LEGACYBEHAVIORS = field(default_factory=DXGK_GPUMMUCAPS_LEGACYBEHAVIORS)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_QUERYGPUMMUCAPSIN:
    """Input of ``DXGKQAITYPE_GPUMMUCAPS``: which physical adapter is asked."""

    PhysicalAdapterIndex: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_QUERYPAGETABLELEVELDESCIN:
    """Trust the header's field names (wddm-spec.md C6): ``WORD LevelIndex; WORD PhysicalAdapterIndex``."""

    LevelIndex: int
    PhysicalAdapterIndex: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_PAGE_TABLE_LEVEL_DESC:
    """Output of ``DXGKQAITYPE_PAGETABLELEVELDESC``: one page-table level's index bits, segments and size."""

    PageTableIndexBitCount: int
    PageTableSegmentId: int
    PagingProcessPageTableSegmentId: int
    PageTableSizeInBytes: int
    PageTableAlignmentInBytes: int = 0


DXGK_MIN_PAGE_TABLE_LEVEL_COUNT = 2
DXGK_MAX_PAGE_TABLE_LEVEL_COUNT = 6
