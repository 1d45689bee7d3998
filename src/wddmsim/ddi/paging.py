"""``DxgkDdiBuildPagingBuffer``'s argument block and every operation's payload (seeds 000/001/002).

``DXGKARG_BUILDPAGINGBUFFER`` keeps its C field names.  The C union of payloads becomes one ``payload`` value
whose type determines ``Operation``; the union members (``args.Transfer``, ``args.Fill`` ...) are available by
their C names and refuse to answer for the wrong operation, as reading the wrong union member would be a bug.

Payloads are frozen: VidMm fills them in and the driver only reads them.  In/out fields of the argument block
(``pDmaBuffer``, ``DmaSize``, ``pDmaBufferPrivateData``, ``DmaBufferPrivateDataSize``, ``MultipassOffset``) are
mutable, as in C.  The anonymous C structs get names of the form ``DXGK_BUILDPAGINGBUFFER_<MEMBER>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar, Final, Generic, TypeVar, get_args, overload

from wddmsim.core.pointer import CpuPointer
from wddmsim.core.quick_init import quick_factory, quick_init
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE, NULL
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MAPAPERTUREFLAGS,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_TRANSFERFLAGS,
    DXGK_TRANSFERVIRTUALFLAGS,
    DXGK_UPDATEPAGETABLEFLAGS,
)
from wddmsim.ddi.memory import DXGK_ADL, MDL
from wddmsim.ddi.pte import PteArray


class DXGK_BUILDPAGINGBUFFER_OPERATION(IntEnum):
    """``DXGK_BUILDPAGINGBUFFER_OPERATION`` (wddm-spec.md section 1.2).  0-17 are modelled; 18-25 only named."""

    DXGK_OPERATION_TRANSFER = 0
    DXGK_OPERATION_FILL = 1
    DXGK_OPERATION_DISCARD_CONTENT = 2
    DXGK_OPERATION_READ_PHYSICAL = 3
    DXGK_OPERATION_WRITE_PHYSICAL = 4
    DXGK_OPERATION_MAP_APERTURE_SEGMENT = 5
    DXGK_OPERATION_UNMAP_APERTURE_SEGMENT = 6
    DXGK_OPERATION_SPECIAL_LOCK_TRANSFER = 7
    DXGK_OPERATION_VIRTUAL_TRANSFER = 8
    DXGK_OPERATION_VIRTUAL_FILL = 9
    DXGK_OPERATION_INIT_CONTEXT_RESOURCE = 10
    DXGK_OPERATION_UPDATE_PAGE_TABLE = 11
    DXGK_OPERATION_FLUSH_TLB = 12
    DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION = 13
    DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES = 14
    DXGK_OPERATION_NOTIFY_RESIDENCY = 15
    DXGK_OPERATION_SIGNAL_MONITORED_FENCE = 16
    DXGK_OPERATION_MAP_APERTURE_SEGMENT2 = 17
    DXGK_OPERATION_NOTIFY_FENCE_RESIDENCY = 18
    DXGK_OPERATION_MAP_MMU = 19
    DXGK_OPERATION_UNMAP_MMU = 20
    DXGK_OPERATION_NOTIFY_RESIDENCY2 = 21
    DXGK_OPERATION_RESERVED22 = 22
    DXGK_OPERATION_TRANSFER2 = 23
    DXGK_OPERATION_FILL2 = 24
    DXGK_OPERATION_DISCARD_CONTENT2 = 25


Op = DXGK_BUILDPAGINGBUFFER_OPERATION
MODELLED_OPERATIONS = frozenset(op for op in Op if op <= Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT2)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_TRANSFER_LOCATION:
    """``Transfer.Source`` / ``.Destination``: ``SegmentId`` with ``SegmentAddress``, or 0 with ``pMdl``."""

    SegmentId: int
    SegmentAddress: int = 0
    """``SegmentOffset + Segment.BaseAddress`` (LARGE_INTEGER), when ``SegmentId`` is not 0."""
    pMdl: MDL | None = None
    """The system pages, when ``SegmentId`` is 0."""

    @staticmethod
    def segment(segment_id: int, address: int) -> DXGK_TRANSFER_LOCATION:
        return DXGK_TRANSFER_LOCATION(SegmentId=segment_id, SegmentAddress=address)

    @staticmethod
    def mdl(mdl: MDL) -> DXGK_TRANSFER_LOCATION:
        return DXGK_TRANSFER_LOCATION(SegmentId=0, pMdl=mdl)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_TRANSFER:
    """``Transfer`` (op 0): move ``TransferSize`` bytes of an allocation between segments and system memory.

    ``TransferOffset`` applies to the segment side only and is the same on every pass of a multipass transfer;
    ``MdlOffset`` counts system pages into the MDL.
    """

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_TRANSFER
    hAllocation: HANDLE = NULL
    TransferOffset: int = 0
    TransferSize: int
    Source: DXGK_TRANSFER_LOCATION
    Destination: DXGK_TRANSFER_LOCATION
    Flags: DXGK_TRANSFERFLAGS = field(default_factory=DXGK_TRANSFERFLAGS)
    MdlOffset: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_FILL_DESTINATION:
    """``Fill.Destination``: a segment location (never system memory, never an aperture segment)."""

    SegmentId: int
    SegmentAddress: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_FILL:
    """``Fill`` (op 1): fill ``FillSize`` bytes with the 32-bit ``FillPattern``."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_FILL
    hAllocation: HANDLE = NULL
    FillSize: int
    FillPattern: int
    Destination: DXGK_FILL_DESTINATION


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT:
    """``DiscardContent`` (op 2): the allocation leaves ``SegmentAddress`` without being copied back."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_DISCARD_CONTENT
    hAllocation: HANDLE = NULL
    Flags: DXGK_DISCARDCONTENTFLAGS = field(default_factory=DXGK_DISCARDCONTENTFLAGS)
    SegmentId: int
    SegmentAddress: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_READPHYSICAL:
    """``ReadPhysical`` (op 3): have the GPU read at ``PhysicalAddress`` of segment ``SegmentId``."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_READ_PHYSICAL
    SegmentId: int
    PhysicalAddress: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL:
    """``WritePhysical`` (op 4): have the GPU write at ``PhysicalAddress`` of segment ``SegmentId``."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_WRITE_PHYSICAL
    SegmentId: int
    PhysicalAddress: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT:
    """``MapApertureSegment`` (op 5): map ``NumberOfPages`` MDL pages from ``MdlOffset`` at ``OffsetInPages``."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT
    hDevice: HANDLE = NULL
    hAllocation: HANDLE = NULL
    SegmentId: int
    OffsetInPages: int
    NumberOfPages: int
    pMdl: MDL
    Flags: DXGK_MAPAPERTUREFLAGS = field(default_factory=DXGK_MAPAPERTUREFLAGS)
    MdlOffset: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT:
    """``UnmapApertureSegment`` (op 6): point every unmapped page at ``DummyPage`` (a physical address)."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT
    hDevice: HANDLE = NULL
    hAllocation: HANDLE = NULL
    SegmentId: int
    OffsetInPages: int
    NumberOfPages: int
    DummyPage: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER:
    """``SpecialLockTransfer`` (op 7): a Transfer from/to the alternate VA of a ``UseAlternateVA`` lock."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_SPECIAL_LOCK_TRANSFER
    hAllocation: HANDLE = NULL
    TransferOffset: int = 0
    TransferSize: int
    Source: DXGK_TRANSFER_LOCATION
    Destination: DXGK_TRANSFER_LOCATION
    Flags: DXGK_TRANSFERFLAGS = field(default_factory=DXGK_TRANSFERFLAGS)
    SwizzlingRangeId: int = 0
    SwizzlingRangeData: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_INITCONTEXTRESOURCE_DESTINATION:
    """``InitContextResource.Destination``: segment or MDL, plus the CPU VA and GPU VA of the allocation."""

    SegmentId: int
    SegmentAddress: int = 0
    pMdl: MDL | None = None
    VirtualAddress: CpuPointer | None = None
    GpuVirtualAddress: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE:
    """``InitContextResource`` (op 10): initialise a context allocation (``DxgkCbCreateContextAllocation``)."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_INIT_CONTEXT_RESOURCE
    hAllocation: HANDLE
    Destination: DXGK_INITCONTEXTRESOURCE_DESTINATION


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL:
    """``DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL`` (op 8): copy between two paging-process VAs.

    ``AllocationOffsetInBytes`` is the offset inside the allocation and is never added to the VAs.
    """

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_VIRTUAL_TRANSFER
    hAllocation: HANDLE = NULL
    AllocationOffsetInBytes: int = 0
    TransferSizeInBytes: int
    SourceVirtualAddress: int
    DestinationVirtualAddress: int
    SourcePageTable: int = 0
    TransferDirection: DXGK_MEMORY_TRANSFER_DIRECTION
    Flags: DXGK_TRANSFERVIRTUALFLAGS = field(default_factory=DXGK_TRANSFERVIRTUALFLAGS)
    DestinationPageTable: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL:
    """``DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL`` (op 9): fill at a paging-process VA with the UINT pattern."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_VIRTUAL_FILL
    hAllocation: HANDLE = NULL
    AllocationOffsetInBytes: int = 0
    FillSizeInBytes: int
    FillPattern: int
    DestinationVirtualAddress: int


# Defaults of the page-table payloads, built on every update: frozen values, so one instance serves them all.
_NO_PHYSICAL_ADDRESS: Final = D3DGPU_PHYSICAL_ADDRESS()
_NO_UPDATEPAGETABLEFLAGS: Final = DXGK_UPDATEPAGETABLEFLAGS()


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_PAGETABLEUPDATEADDRESS:
    """The ``PageTableAddress`` union; which member is meaningful depends on ``UpdateMode``."""

    CpuVirtual: CpuPointer | None = None
    GpuVirtual: int = 0
    GpuPhysical: D3DGPU_PHYSICAL_ADDRESS = _NO_PHYSICAL_ADDRESS


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE:
    """``DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE`` (op 11; seed 002)."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_UPDATE_PAGE_TABLE
    PageTableLevel: int
    hAllocation: HANDLE = NULL
    PageTableAddress: DXGK_PAGETABLEUPDATEADDRESS
    pPageTableEntries: PteArray
    StartIndex: int
    NumPageTableEntries: int
    Reserved0: int = 0
    Flags: DXGK_UPDATEPAGETABLEFLAGS = _NO_UPDATEPAGETABLEFLAGS
    DriverProtection: int = 0
    AllocationOffsetInBytes: int = 0
    hProcess: HANDLE = NULL
    UpdateMode: DXGK_PAGETABLEUPDATEMODE
    pPageTableEntries64KB: PteArray | None = None
    FirstPteVirtualAddress: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_FLUSHTLB:
    """``DXGK_BUILDPAGINGBUFFER_FLUSHTLB`` (op 12): [Start, End] of the root's VAs; 0/0 = everything."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_FLUSH_TLB
    RootPageTableAddress: D3DGPU_PHYSICAL_ADDRESS
    hProcess: HANDLE = NULL
    StartVirtualAddress: int = 0
    EndVirtualAddress: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION:
    """``DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION`` (op 13): rewrite a context allocation by GPU VA."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION
    ContextAllocation: int
    ContextAllocationSize: int
    pDriverPrivateData: bytes = b""
    DriverPrivateDataSize: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_COPY_RANGE:
    """One range of ``CopyPageTableEntries``: page-table VAs are 64 KB aligned."""

    NumPageTableEntries: int
    SrcPageTableAddress: int
    DstPageTableAddress: int
    SrcStartPteIndex: int
    DstStartPteIndex: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES:
    """``DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES`` (op 14)."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES
    NumRanges: int
    pRanges: tuple[DXGK_BUILDPAGINGBUFFER_COPY_RANGE, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY:
    """``DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY`` (op 15): commit (``Resident=1``) or evict (0, address (0, 0))."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_NOTIFY_RESIDENCY
    hAllocation: HANDLE
    PhysicalAddress: D3DGPU_PHYSICAL_ADDRESS = field(default_factory=D3DGPU_PHYSICAL_ADDRESS)
    Resident: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE:
    """``DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE`` (op 16): write the 64-bit value to the fence's GPU VA."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_SIGNAL_MONITORED_FENCE
    MonitoredFenceGpuVa: int
    MonitoredFenceValue: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2:
    """``MapApertureSegment2`` (op 17): as op 5, from an ADL (``AdlOffset`` in pages)."""

    OPERATION: ClassVar[Op] = Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT2
    hDevice: HANDLE = NULL
    hAllocation: HANDLE = NULL
    SegmentId: int
    OffsetInPages: int
    NumberOfPages: int
    Adl: DXGK_ADL
    Flags: DXGK_MAPAPERTUREFLAGS = field(default_factory=DXGK_MAPAPERTUREFLAGS)
    AdlOffset: int = 0
    CpuVisibleAddress: CpuPointer | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_BUILDPAGINGBUFFER_UNMODELLED:
    """A payload for operations 18-25, whose fields the seeds do not give: the ``Reserved[64]`` words only."""

    Operation: Op
    Reserved: tuple[int, ...] = (0,) * 64


PagingPayload = (
    DXGK_BUILDPAGINGBUFFER_TRANSFER
    | DXGK_BUILDPAGINGBUFFER_FILL
    | DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT
    | DXGK_BUILDPAGINGBUFFER_READPHYSICAL
    | DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL
    | DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT
    | DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT
    | DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER
    | DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL
    | DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL
    | DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE
    | DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE
    | DXGK_BUILDPAGINGBUFFER_FLUSHTLB
    | DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION
    | DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES
    | DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY
    | DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE
    | DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2
    | DXGK_BUILDPAGINGBUFFER_UNMODELLED
)

PAYLOAD_TYPES: Final[tuple[type[Any], ...]] = get_args(PagingPayload)
"""Every payload type, in the union's order."""


def _quick_init(cls: type[Any]) -> None:
    """Give a frozen slotted payload class the quick ``__init__`` of :mod:`wddmsim.core.quick_init` (decision
    0203: about 40 % less per payload, and VidMm builds one per paging operation); the dataclass-made one is kept
    in :data:`DATACLASS_INITS`, and a test holds the two to the same instances and the same refusals."""
    DATACLASS_INITS[cls] = quick_init(cls)


DATACLASS_INITS: Final[dict[type[Any], Any]] = {}
"""The dataclass-made ``__init__`` of each type given a quick one (tests compare the two)."""

QUICK_INIT_TYPES: Final = (
    DXGK_TRANSFER_LOCATION,
    DXGK_FILL_DESTINATION,
    DXGK_INITCONTEXTRESOURCE_DESTINATION,
    DXGK_PAGETABLEUPDATEADDRESS,
    *PAYLOAD_TYPES,
)
for _type in QUICK_INIT_TYPES:
    _quick_init(_type)

make_update_page_table: Final = quick_factory(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE)
"""``DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(...)`` for the hot path: the same keywords and instance, without the
cost of a class call with keywords (decision 0233; VidMm builds one per UpdatePageTable call)."""
make_page_table_address: Final = quick_factory(DXGK_PAGETABLEUPDATEADDRESS)
"""``DXGK_PAGETABLEUPDATEADDRESS(...)`` likewise (decision 0233)."""


P = TypeVar("P")


class _UnionMember(Generic[P]):
    """A C union member of the argument block: readable only when ``Operation`` selects it."""

    def __init__(self, kind: type[P]) -> None:
        self.kind = kind
        self.name = kind.__name__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type[Any]) -> _UnionMember[P]: ...
    @overload
    def __get__(self, obj: DXGKARG_BUILDPAGINGBUFFER, objtype: type[Any] | None = None) -> P: ...
    def __get__(self, obj: DXGKARG_BUILDPAGINGBUFFER | None, objtype: type[Any] | None = None) -> P | _UnionMember[P]:
        if obj is None:
            return self
        payload = obj.payload
        if not isinstance(payload, self.kind):
            raise AttributeError(
                f"DXGKARG_BUILDPAGINGBUFFER.{self.name}: Operation is {obj.Operation.name}, which uses another member"
            )
        return payload


class DXGKARG_BUILDPAGINGBUFFER:
    """``DXGKARG_BUILDPAGINGBUFFER``: one operation, the paging buffer's free space, and the multipass state."""

    __slots__ = (
        "DmaBufferGpuVirtualAddress",
        "DmaBufferPrivateDataSize",
        "DmaBufferWriteOffset",
        "DmaSize",
        "MultipassOffset",
        "hSystemContext",
        "pDmaBuffer",
        "pDmaBufferPrivateData",
        "payload",
    )

    Transfer = _UnionMember(DXGK_BUILDPAGINGBUFFER_TRANSFER)
    Fill = _UnionMember(DXGK_BUILDPAGINGBUFFER_FILL)
    DiscardContent = _UnionMember(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT)
    ReadPhysical = _UnionMember(DXGK_BUILDPAGINGBUFFER_READPHYSICAL)
    WritePhysical = _UnionMember(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL)
    MapApertureSegment = _UnionMember(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT)
    UnmapApertureSegment = _UnionMember(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT)
    SpecialLockTransfer = _UnionMember(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER)
    InitContextResource = _UnionMember(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE)
    TransferVirtual = _UnionMember(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL)
    FillVirtual = _UnionMember(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL)
    UpdatePageTable = _UnionMember(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE)
    FlushTlb = _UnionMember(DXGK_BUILDPAGINGBUFFER_FLUSHTLB)
    CopyPageTableEntries = _UnionMember(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES)
    UpdateContextAllocation = _UnionMember(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION)
    NotifyResidency = _UnionMember(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY)
    SignalMonitoredFence = _UnionMember(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE)
    MapApertureSegment2 = _UnionMember(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2)
    Reserved = _UnionMember(DXGK_BUILDPAGINGBUFFER_UNMODELLED)

    def __init__(
        self,
        payload: PagingPayload,
        *,
        pDmaBuffer: CpuPointer | None,
        DmaSize: int,
        pDmaBufferPrivateData: CpuPointer | None = None,
        DmaBufferPrivateDataSize: int = 0,
        MultipassOffset: int = 0,
        hSystemContext: HANDLE = NULL,
        DmaBufferGpuVirtualAddress: int = 0,
        DmaBufferWriteOffset: int = 0,
    ) -> None:
        self.payload = payload
        self.pDmaBuffer = pDmaBuffer
        """[in/out] First free byte of the paging buffer (``None`` only for the forced CPU_VIRTUAL path)."""
        self.DmaSize = DmaSize
        """[in/out] Bytes available at ``pDmaBuffer``."""
        self.pDmaBufferPrivateData = pDmaBufferPrivateData
        self.DmaBufferPrivateDataSize = DmaBufferPrivateDataSize
        self.MultipassOffset = MultipassOffset
        """[in/out] Zero before the first call of an operation; only the driver changes it."""
        self.hSystemContext = hSystemContext
        self.DmaBufferGpuVirtualAddress = DmaBufferGpuVirtualAddress
        self.DmaBufferWriteOffset = DmaBufferWriteOffset

    @property
    def Operation(self) -> Op:
        """[in] Which union member is meaningful (derived from the payload, so they always agree)."""
        payload = self.payload
        if isinstance(payload, DXGK_BUILDPAGINGBUFFER_UNMODELLED):
            return payload.Operation
        return payload.OPERATION

    def __repr__(self) -> str:
        return (
            f"DXGKARG_BUILDPAGINGBUFFER({self.Operation.name}, pDmaBuffer={self.pDmaBuffer!r}, "
            f"DmaSize={self.DmaSize:#x}, MultipassOffset={self.MultipassOffset})"
        )
