"""Contexts and their allocations: ``DxgkDdiCreateContext`` / ``DxgkDdiDestroyContext`` and the callbacks a driver
uses to have VidMm create, update and destroy a context allocation (``DxgkCbCreateContextAllocation``,
``DxgkCbUpdateContextAllocation``, ``DxgkCbDestroyContextAllocation``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFOFLAGS, DXGK_SEGMENTPREFERENCE
from wddmsim.ddi.base import HANDLE, NULL


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_CREATECONTEXTALLOCATIONFLAGS(BitUnion):
    """``DXGK_CREATECONTEXTALLOCATIONFLAGS``: ``SharedAcrossContexts`` bit 0, ``MapGpuVirtualAddress`` bit 1."""

    SharedAcrossContexts: bool = flag(0)
    MapGpuVirtualAddress: bool = flag(1)
    Reserved: int = bits(2, 30)


@dataclass(slots=True, kw_only=True)
class DXGKARGCB_CREATECONTEXTALLOCATION:
    """``DXGKARGCB_CREATECONTEXTALLOCATION``: ``hAllocation`` is [out] (VidMm's handle for the paging operations)."""

    ContextAllocationFlags: DXGK_CREATECONTEXTALLOCATIONFLAGS = field(default_factory=DXGK_CREATECONTEXTALLOCATIONFLAGS)
    hAdapter: HANDLE = NULL
    hDevice: HANDLE = NULL
    """NULL for the system device."""
    hContext: HANDLE = NULL
    """NULL with ``SharedAcrossContexts`` (a device allocation) and for the system context."""
    hDriverAllocation: HANDLE = NULL
    Size: int = 0
    Alignment: int = 0
    SupportedSegmentSet: int = 0
    EvictionSegmentSet: int = 0
    PreferredSegment: DXGK_SEGMENTPREFERENCE = field(default_factory=DXGK_SEGMENTPREFERENCE)
    HintedBank: int = 0
    Flags: DXGK_ALLOCATIONINFOFLAGS = field(default_factory=DXGK_ALLOCATIONINFOFLAGS)
    hAllocation: HANDLE = NULL
    PhysicalAdapterIndex: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGKARGCB_UPDATECONTEXTALLOCATION:
    """``DxgkCbUpdateContextAllocation``'s arguments: returns once the update has executed."""

    hAllocation: HANDLE
    pPrivateDriverData: bytes = b""
    PrivateDriverDataSize: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_CREATECONTEXTFLAGS(BitUnion):
    """``DXGK_CREATECONTEXTFLAGS``: ``SystemContext`` bit 0 ("a system context is created for the paging engine
    only"), ``GdiContext`` 1, ``VirtualAddressing`` 2, ``SystemProtectedContext`` 3, ``HwQueueSupported`` 4,
    ``TestContext`` 5."""

    SystemContext: bool = flag(0)
    GdiContext: bool = flag(1)
    VirtualAddressing: bool = flag(2)
    SystemProtectedContext: bool = flag(3)
    HwQueueSupported: bool = flag(4)
    TestContext: bool = flag(5)
    Reserved: int = bits(6, 26)


@dataclass(slots=True, kw_only=True)
class DXGK_CONTEXTINFO:
    """``DXGK_CONTEXTINFO`` (filled by the driver in ``DxgkDdiCreateContext``); ``Caps`` is not modelled.

    ``PagingCompanionNodeId``: the engine of the context's paging companion (WDDM 2.0), where VidMm runs the page
    table updates of ``UpdateGpuVirtualAddress``."""

    DmaBufferSize: int = 0
    DmaBufferSegmentSet: int = 0
    DmaBufferPrivateDataSize: int = 0
    AllocationListSize: int = 0
    PatchLocationListSize: int = 0
    Reserved: int = 0
    PagingCompanionNodeId: int = 0


@dataclass(slots=True, kw_only=True)
class DXGKARG_CREATECONTEXT:
    """``DxgkDdiCreateContext`` (the fields the paging path needs): ``hContext`` and ``ContextInfo`` are [out]."""

    hDevice: HANDLE = NULL
    NodeOrdinal: int = 0
    EngineAffinity: int = 0
    Flags: DXGK_CREATECONTEXTFLAGS = field(default_factory=DXGK_CREATECONTEXTFLAGS)
    hContext: HANDLE = NULL
    """[out] the driver's handle of the context."""
    ContextInfo: DXGK_CONTEXTINFO = field(default_factory=DXGK_CONTEXTINFO)
    """[out] what the driver says of the context."""
