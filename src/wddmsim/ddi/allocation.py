"""Allocations as the driver describes them (``DxgkDdiCreateAllocation``; wddm-spec.md section 4.8)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.ddi.base import HANDLE, NULL


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_ALLOCATIONINFOFLAGS(BitUnion):
    """``DXGK_ALLOCATIONINFOFLAGS`` (WDDM 1.x names; bit 7 is ``Swizzled``, bit 10 ``UseAlternateVA``)."""

    CpuVisible: bool = flag(0)
    PermanentSysMem: bool = flag(1)
    Cached: bool = flag(2)
    Protected: bool = flag(3)
    ExistingSysMem: bool = flag(4)
    ExistingKernelSysMem: bool = flag(5)
    FromEndOfSegment: bool = flag(6)
    Swizzled: bool = flag(7)
    Overlay: bool = flag(8)
    Capture: bool = flag(9)
    UseAlternateVA: bool = flag(10)
    SynchronousPaging: bool = flag(11)
    LinkMirrored: bool = flag(12)
    LinkInstanced: bool = flag(13)
    HistoryBuffer: bool = flag(14)
    AccessedPhysically: bool = flag(15)
    ExplicitResidencyNotification: bool = flag(16)
    HardwareProtected: bool = flag(17)
    CpuVisibleOnDemand: bool = flag(18)
    Reserved: int = bits(19, 13)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_ALLOCATIONINFOFLAGS_WDDM2_0(BitUnion):
    """``DXGK_ALLOCATIONINFOFLAGS_WDDM2_0`` (bit 7 ``DisableLargePageMapping``, bit 13 ``MapApertureCpuVisible``)."""

    CpuVisible: bool = flag(0)
    PermanentSysMem: bool = flag(1)
    Cached: bool = flag(2)
    Protected: bool = flag(3)
    ExistingSysMem: bool = flag(4)
    ExistingKernelSysMem: bool = flag(5)
    FromEndOfSegment: bool = flag(6)
    DisableLargePageMapping: bool = flag(7)
    Overlay: bool = flag(8)
    Capture: bool = flag(9)
    CreateInVpr: bool = flag(10)
    Reserved00: bool = flag(11)
    Reserved01: bool = flag(12)
    MapApertureCpuVisible: bool = flag(13)
    HistoryBuffer: bool = flag(14)
    AccessedPhysically: bool = flag(15)
    ExplicitResidencyNotification: bool = flag(16)
    HardwareProtected: bool = flag(17)
    CpuVisibleOnDemand: bool = flag(18)
    Reserved: int = bits(19, 13)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_SEGMENTPREFERENCE(BitUnion):
    """``DXGK_SEGMENTPREFERENCE``: up to five segment ids, most preferred first (0 ends the list)."""

    SegmentId0: int = bits(0, 5)
    Direction0: bool = flag(5)
    SegmentId1: int = bits(6, 5)
    Direction1: bool = flag(11)
    SegmentId2: int = bits(12, 5)
    Direction2: bool = flag(17)
    SegmentId3: int = bits(18, 5)
    Direction3: bool = flag(23)
    SegmentId4: int = bits(24, 5)
    Direction4: bool = flag(29)
    Reserved: int = bits(30, 2)

    def segment_ids(self) -> list[int]:
        ids = [self.SegmentId0, self.SegmentId1, self.SegmentId2, self.SegmentId3, self.SegmentId4]
        out: list[int] = []
        for segment in ids:
            if segment == 0:
                break
            out.append(segment)
        return out


D3DDDI_ALLOCATIONPRIORITY_MINIMUM: Final = 0x28000000
D3DDDI_ALLOCATIONPRIORITY_LOW: Final = 0x50000000
D3DDDI_ALLOCATIONPRIORITY_NORMAL: Final = 0x78000000
D3DDDI_ALLOCATIONPRIORITY_HIGH: Final = 0xA0000000
D3DDDI_ALLOCATIONPRIORITY_MAXIMUM: Final = 0xC8000000


@dataclass(slots=True, kw_only=True)
class DXGK_ALLOCATIONINFO:
    """One allocation of ``DxgkDdiCreateAllocation``: the UMD's private data in, the driver's description out."""

    pPrivateDriverData: bytes = b""
    PrivateDriverDataSize: int = 0
    Alignment: int = 0
    Size: int = 0
    PitchAlignedSize: int = 0
    HintedBank: int = 0
    PreferredSegment: DXGK_SEGMENTPREFERENCE = field(default_factory=DXGK_SEGMENTPREFERENCE)
    SupportedReadSegmentSet: int = 0
    SupportedWriteSegmentSet: int = 0
    EvictionSegmentSet: int = 0
    MaximumRenamingListLength: int = 0
    hAllocation: HANDLE = NULL
    Flags: DXGK_ALLOCATIONINFOFLAGS = field(default_factory=DXGK_ALLOCATIONINFOFLAGS)
    FlagsWddm2: DXGK_ALLOCATIONINFOFLAGS_WDDM2_0 = field(default_factory=DXGK_ALLOCATIONINFOFLAGS_WDDM2_0)
    AllocationPriority: int = D3DDDI_ALLOCATIONPRIORITY_NORMAL


@dataclass(slots=True, kw_only=True)
class DXGKARG_CREATEALLOCATION:
    """``DxgkDdiCreateAllocation``'s argument block: the driver fills in each ``DXGK_ALLOCATIONINFO``."""

    pPrivateDriverData: bytes = b""
    PrivateDriverDataSize: int = 0
    NumAllocations: int = 0
    pAllocationInfo: list[DXGK_ALLOCATIONINFO] = field(default_factory=list)
    hResource: HANDLE = NULL


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGKARG_DESTROYALLOCATION:
    """``DxgkDdiDestroyAllocation``'s argument block: the allocations to release."""

    NumAllocations: int
    pAllocationList: tuple[HANDLE, ...]
    hResource: HANDLE = NULL


@dataclass(slots=True, kw_only=True)
class DXGKARG_ACQUIRESWIZZLINGRANGE:
    """``DxgkDdiAcquireSwizzlingRange`` (WDDM 1.x): ``CPUTranslatedAddress`` is in/out."""

    hAllocation: HANDLE
    PrivateDriverData: int = 0
    RangeId: int = 0
    SegmentId: int
    RangeSize: int
    CPUTranslatedAddress: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGKARG_RELEASESWIZZLINGRANGE:
    """``DxgkDdiReleaseSwizzlingRange``'s argument block: the range an allocation gives back."""

    hAllocation: HANDLE
    PrivateDriverData: int = 0
    RangeId: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_ALLOCATIONINFOFLAGS(BitUnion):
    """``D3DDDI_ALLOCATIONINFO.Flags`` (d3dukmdt.h): ``Primary`` bit 0, ``Stereo`` bit 1."""

    Primary: bool = flag(0)
    Stereo: bool = flag(1)
    Reserved: int = bits(2, 30)


@dataclass(slots=True, kw_only=True)
class D3DDDI_ALLOCATIONINFO:
    """One allocation of ``pfnAllocateCb``: the user-mode driver's private data in, the handle out."""

    hAllocation: HANDLE = NULL
    """[out]"""
    pSystemMem: object = None
    """Existing system memory to use (not modelled: must be NULL)."""
    pPrivateDriverData: bytes = b""
    PrivateDriverDataSize: int = 0
    VidPnSourceId: int = 0
    Flags: D3DDDI_ALLOCATIONINFOFLAGS = field(default_factory=D3DDDI_ALLOCATIONINFOFLAGS)


@dataclass(slots=True, kw_only=True)
class D3DDDICB_ALLOCATE:
    """``D3DDDICB_ALLOCATE`` (``pfnAllocateCb``): ``NumAllocations`` allocations created together (one
    ``DxgkDdiCreateAllocation`` call), all or none -- the two-allocation pattern of seed 004 uses 2."""

    pPrivateDriverData: bytes = b""
    PrivateDriverDataSize: int = 0
    hResource: HANDLE = NULL
    hKMResource: HANDLE = NULL
    """[out]"""
    NumAllocations: int = 0
    pAllocationInfo: list[D3DDDI_ALLOCATIONINFO] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_DEALLOCATE:
    """``D3DDDICB_DEALLOCATE`` (``pfnDeallocateCb``)."""

    hResource: HANDLE = NULL
    NumAllocations: int = 0
    HandleList: tuple[HANDLE, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_SETPRIORITY:
    """``D3DDDICB_SETPRIORITY`` (``pfnSetPriorityCb``): one ``UINT`` eviction priority per listed allocation
    (``D3DDDI_ALLOCATIONPRIORITY_MINIMUM`` ... ``_MAXIMUM`` are the documented landmarks; higher stays longer)."""

    hResource: HANDLE = NULL
    NumAllocations: int = 0
    phAllocationList: tuple[HANDLE, ...] = ()
    pPriorities: tuple[int, ...] = ()
