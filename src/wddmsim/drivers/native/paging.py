"""The ctypes mirror of ``wddmsim/ddk.h``'s paging DDI: the flag unions, ``DXGK_PTE``, ``DXGK_ADL``, every operation
payload of ``DXGKARG_BUILDPAGINGBUFFER`` (seeds 000-002) and the ``DxgkDdiQueryAdapterInfo`` GpuMmu queries.

The enumerations are :mod:`wddmsim.ddi`'s own ``IntEnum`` classes, re-exported (``Op.DXGK_OPERATION_FILL`` is the
number ``Operation`` holds).  The anonymous C structs of the union have the names ``wddmsim.ddi.paging`` gives them
(decision 0100): ``args.Transfer`` is a ``DXGK_BUILDPAGINGBUFFER_TRANSFER``.
"""

from __future__ import annotations

from ctypes import POINTER, Structure, Union, c_uint16, c_uint32
from typing import Any

from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE as DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.flags import DXGK_MEMORY_TRANSFER_DIRECTION as DXGK_MEMORY_TRANSFER_DIRECTION
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE as DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_OPERATION as DXGK_BUILDPAGINGBUFFER_OPERATION
from wddmsim.ddi.pte import DXGK_PTE_PAGE_SIZE as DXGK_PTE_PAGE_SIZE
from wddmsim.drivers.native.kernel import (
    D3DGPU_PHYSICAL_ADDRESS,
    D3DGPU_SIZE_T,
    D3DGPU_VIRTUAL_ADDRESS,
    DXGK_PAGE_NUMBER,
    ENUM,
    HANDLE,
    LARGE_INTEGER,
    PHYSICAL_ADDRESS,
    PMDL,
    PVOID,
    SIZE_T,
    UINT,
    UINT64,
    ULONG,
    ULONGLONG,
)


def _bits(name: str, word: Any, fields: list[tuple[str, int]]) -> type[Structure]:
    """An anonymous C struct of bit-fields of type ``word``, LSB first (the order of ``fields``)."""
    return type(name, (Structure,), {"_fields_": [(n, word, w) for n, w in fields]})


def _word_union(name: str, word_name: str, word: Any, fields: list[tuple[str, int]]) -> type[Union]:
    """``union { struct { <bit-fields> }; <word> <word_name>; }`` with the bit-fields reachable directly."""
    return type(
        name,
        (Union,),
        {"_anonymous_": ("_bits",), "_fields_": [("_bits", _bits(name + "_BITS", word, fields)), (word_name, word)]},
    )


class DXGK_TRANSFERFLAGS(Structure):
    """``DXGK_TRANSFERFLAGS``: Swizzle, Unswizzle, AllocationIsIdle, TransferStart, TransferEnd (bits 0-4)."""

    _anonymous_ = ("_u",)
    _fields_ = [
        (
            "_u",
            _word_union(
                "_DXGK_TRANSFERFLAGS_U",
                "Value",
                UINT,
                [
                    ("Swizzle", 1),
                    ("Unswizzle", 1),
                    ("AllocationIsIdle", 1),
                    ("TransferStart", 1),
                    ("TransferEnd", 1),
                    ("Reserved", 27),
                ],
            ),
        )
    ]


class DXGK_DISCARDCONTENTFLAGS(Structure):
    """``DXGK_DISCARDCONTENTFLAGS``: AllocationIsIdle (bit 0)."""

    _anonymous_ = ("_u",)
    _fields_ = [
        ("_u", _word_union("_DXGK_DISCARDCONTENTFLAGS_U", "Value", UINT, [("AllocationIsIdle", 1), ("Reserved", 31)]))
    ]


class DXGK_MAPAPERTUREFLAGS(Structure):
    """``DXGK_MAPAPERTUREFLAGS``: CacheCoherent (bit 0)."""

    _anonymous_ = ("_u",)
    _fields_ = [
        ("_u", _word_union("_DXGK_MAPAPERTUREFLAGS_U", "Value", UINT, [("CacheCoherent", 1), ("Reserved", 31)]))
    ]


class DXGK_TRANSFERVIRTUALFLAGS(Structure):
    """``DXGK_TRANSFERVIRTUALFLAGS``: Src64KBPages, Dst64KBPages (bits 0-1); the word is named ``Flags``."""

    _anonymous_ = ("_u",)
    _fields_ = [
        (
            "_u",
            _word_union(
                "_DXGK_TRANSFERVIRTUALFLAGS_U",
                "Flags",
                UINT,
                [("Src64KBPages", 1), ("Dst64KBPages", 1), ("Reserved", 30)],
            ),
        )
    ]


class DXGK_UPDATEPAGETABLEFLAGS(Structure):
    """``DXGK_UPDATEPAGETABLEFLAGS``: a plain bit-field struct (Repeat, InitialUpdate, NotifyEviction, Use64KBPages)."""

    _fields_ = [
        ("Repeat", UINT, 1),
        ("InitialUpdate", UINT, 1),
        ("NotifyEviction", UINT, 1),
        ("Use64KBPages", UINT, 1),
        ("Reserved", UINT, 28),
    ]


class DXGK_ADL_FLAGS(Structure):
    """``DXGK_ADL_FLAGS { UINT32 Contiguous : 1; UINT32 Reserved : 31; }``."""

    _fields_ = [("Contiguous", UINT, 1), ("Reserved", UINT, 31)]


class _DXGK_PTE_ADDRESS(Union):
    _fields_ = [("PageAddress", ULONGLONG), ("PageTableAddress", ULONGLONG)]


class DXGK_PTE(Structure):
    """``DXGK_PTE`` (16 bytes): the bit-fields over the ``Flags`` word, then ``PageAddress`` (a page number)."""

    _anonymous_ = ("_flags", "_address")
    _fields_ = [
        (
            "_flags",
            _word_union(
                "_DXGK_PTE_FLAGS",
                "Flags",
                ULONGLONG,
                [
                    ("Valid", 1),
                    ("Zero", 1),
                    ("CacheCoherent", 1),
                    ("ReadOnly", 1),
                    ("NoExecute", 1),
                    ("Segment", 5),
                    ("LargePage", 1),
                    ("PhysicalAdapterIndex", 6),
                    ("PageTablePageSize", 2),
                    ("SystemReserved0", 1),
                    ("Reserved", 44),
                ],
            ),
        ),
        ("_address", _DXGK_PTE_ADDRESS),
    ]


class _DXGK_ADL_PAGES(Union):
    _fields_ = [("BasePageNumber", DXGK_PAGE_NUMBER), ("Pages", POINTER(DXGK_PAGE_NUMBER))]


class DXGK_ADL(Structure):
    """``DXGK_ADL``: ``PageCount`` pages from ``BasePageNumber`` (``Flags.Contiguous``) or listed at ``Pages``."""

    _anonymous_ = ("_pages",)
    _fields_ = [("PageCount", UINT), ("Flags", DXGK_ADL_FLAGS), ("_pages", _DXGK_ADL_PAGES)]


class _SEGMENT_OR_MDL(Union):
    _fields_ = [("SegmentAddress", LARGE_INTEGER), ("pMdl", PMDL)]


class DXGK_TRANSFER_LOCATION(Structure):
    """``Transfer.Source`` / ``.Destination``: ``SegmentId`` and ``SegmentAddress``, or 0 and ``pMdl``."""

    _anonymous_ = ("_where",)
    _fields_ = [("SegmentId", UINT), ("_where", _SEGMENT_OR_MDL)]


class DXGK_FILL_DESTINATION(Structure):
    _fields_ = [("SegmentId", UINT), ("SegmentAddress", LARGE_INTEGER)]


class DXGK_INITCONTEXTRESOURCE_DESTINATION(Structure):
    _anonymous_ = ("_where",)
    _fields_ = [
        ("SegmentId", UINT),
        ("_where", _SEGMENT_OR_MDL),
        ("VirtualAddress", PVOID),
        ("GpuVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_TRANSFER(Structure):
    """``Transfer`` (op 0)."""

    _fields_ = [
        ("hAllocation", HANDLE),
        ("TransferOffset", UINT),
        ("TransferSize", SIZE_T),
        ("Source", DXGK_TRANSFER_LOCATION),
        ("Destination", DXGK_TRANSFER_LOCATION),
        ("Flags", DXGK_TRANSFERFLAGS),
        ("MdlOffset", UINT),
    ]


class DXGK_BUILDPAGINGBUFFER_FILL(Structure):
    """``Fill`` (op 1)."""

    _fields_ = [
        ("hAllocation", HANDLE),
        ("FillSize", SIZE_T),
        ("FillPattern", UINT),
        ("Destination", DXGK_FILL_DESTINATION),
    ]


class DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(Structure):
    """``DiscardContent`` (op 2)."""

    _fields_ = [
        ("hAllocation", HANDLE),
        ("Flags", DXGK_DISCARDCONTENTFLAGS),
        ("SegmentId", UINT),
        ("SegmentAddress", PHYSICAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_READPHYSICAL(Structure):
    """``ReadPhysical`` (op 3)."""

    _fields_ = [("SegmentId", UINT), ("PhysicalAddress", PHYSICAL_ADDRESS)]


class DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(Structure):
    """``WritePhysical`` (op 4)."""

    _fields_ = [("SegmentId", UINT), ("PhysicalAddress", PHYSICAL_ADDRESS)]


class DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(Structure):
    """``MapApertureSegment`` (op 5)."""

    _fields_ = [
        ("hDevice", HANDLE),
        ("hAllocation", HANDLE),
        ("SegmentId", UINT),
        ("OffsetInPages", SIZE_T),
        ("NumberOfPages", SIZE_T),
        ("pMdl", PMDL),
        ("Flags", DXGK_MAPAPERTUREFLAGS),
        ("MdlOffset", ULONG),
    ]


class DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(Structure):
    """``UnmapApertureSegment`` (op 6)."""

    _fields_ = [
        ("hDevice", HANDLE),
        ("hAllocation", HANDLE),
        ("SegmentId", UINT),
        ("OffsetInPages", SIZE_T),
        ("NumberOfPages", SIZE_T),
        ("DummyPage", PHYSICAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(Structure):
    """``SpecialLockTransfer`` (op 7)."""

    _fields_ = [
        ("hAllocation", HANDLE),
        ("TransferOffset", UINT),
        ("TransferSize", SIZE_T),
        ("Source", DXGK_TRANSFER_LOCATION),
        ("Destination", DXGK_TRANSFER_LOCATION),
        ("Flags", DXGK_TRANSFERFLAGS),
        ("SwizzlingRangeId", UINT),
        ("SwizzlingRangeData", UINT),
    ]


class DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(Structure):
    """``InitContextResource`` (op 10)."""

    _fields_ = [("hAllocation", HANDLE), ("Destination", DXGK_INITCONTEXTRESOURCE_DESTINATION)]


class DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(Structure):
    """``DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL`` (op 8)."""

    _fields_ = [
        ("hAllocation", HANDLE),
        ("AllocationOffsetInBytes", D3DGPU_SIZE_T),
        ("TransferSizeInBytes", D3DGPU_SIZE_T),
        ("SourceVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
        ("DestinationVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
        ("SourcePageTable", D3DGPU_VIRTUAL_ADDRESS),
        ("TransferDirection", ENUM),
        ("Flags", DXGK_TRANSFERVIRTUALFLAGS),
        ("DestinationPageTable", D3DGPU_VIRTUAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(Structure):
    """``DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL`` (op 9)."""

    _fields_ = [
        ("hAllocation", HANDLE),
        ("AllocationOffsetInBytes", D3DGPU_SIZE_T),
        ("FillSizeInBytes", D3DGPU_SIZE_T),
        ("FillPattern", UINT),
        ("DestinationVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    ]


class DXGK_PAGETABLEUPDATEADDRESS(Union):
    """``PageTableAddress``: ``CpuVirtual``, ``GpuPhysical`` or ``GpuVirtual`` by ``UpdateMode``."""

    _fields_ = [
        ("CpuVirtual", PVOID),
        ("GpuPhysical", D3DGPU_PHYSICAL_ADDRESS),
        ("GpuVirtual", D3DGPU_VIRTUAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(Structure):
    """``DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE`` (op 11; seed 002)."""

    _fields_ = [
        ("PageTableLevel", UINT),
        ("hAllocation", HANDLE),
        ("PageTableAddress", DXGK_PAGETABLEUPDATEADDRESS),
        ("pPageTableEntries", POINTER(DXGK_PTE)),
        ("StartIndex", UINT),
        ("NumPageTableEntries", UINT),
        ("Reserved0", UINT),
        ("Flags", DXGK_UPDATEPAGETABLEFLAGS),
        ("DriverProtection", UINT64),
        ("AllocationOffsetInBytes", UINT64),
        ("hProcess", HANDLE),
        ("UpdateMode", ENUM),
        ("pPageTableEntries64KB", POINTER(DXGK_PTE)),
        ("FirstPteVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_FLUSHTLB(Structure):
    """``DXGK_BUILDPAGINGBUFFER_FLUSHTLB`` (op 12)."""

    _fields_ = [
        ("RootPageTableAddress", D3DGPU_PHYSICAL_ADDRESS),
        ("hProcess", HANDLE),
        ("StartVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
        ("EndVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    ]


class DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION(Structure):
    """``DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION`` (op 13)."""

    _fields_ = [
        ("ContextAllocation", D3DGPU_VIRTUAL_ADDRESS),
        ("ContextAllocationSize", UINT64),
        ("pDriverPrivateData", PVOID),
        ("DriverPrivateDataSize", UINT),
    ]


class DXGK_BUILDPAGINGBUFFER_COPY_RANGE(Structure):
    """One range of ``CopyPageTableEntries``."""

    _fields_ = [
        ("NumPageTableEntries", UINT),
        ("SrcPageTableAddress", D3DGPU_VIRTUAL_ADDRESS),
        ("DstPageTableAddress", D3DGPU_VIRTUAL_ADDRESS),
        ("SrcStartPteIndex", UINT),
        ("DstStartPteIndex", UINT),
    ]


class DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(Structure):
    """``DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES`` (op 14)."""

    _fields_ = [("NumRanges", UINT), ("pRanges", POINTER(DXGK_BUILDPAGINGBUFFER_COPY_RANGE))]


class DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(Structure):
    """``DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY`` (op 15): ``Resident`` is bit 0 of the last word."""

    _anonymous_ = ("_u",)
    _fields_ = [
        ("hAllocation", HANDLE),
        ("PhysicalAddress", D3DGPU_PHYSICAL_ADDRESS),
        ("_u", _word_union("_DXGK_NOTIFYRESIDENCY_U", "Value", UINT, [("Resident", 1), ("Reserved", 31)])),
    ]


class DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(Structure):
    """``DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE`` (op 16)."""

    _fields_ = [("MonitoredFenceGpuVa", D3DGPU_VIRTUAL_ADDRESS), ("MonitoredFenceValue", UINT64)]


class DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2(Structure):
    """``MapApertureSegment2`` (op 17)."""

    _fields_ = [
        ("hDevice", HANDLE),
        ("hAllocation", HANDLE),
        ("SegmentId", UINT),
        ("OffsetInPages", SIZE_T),
        ("NumberOfPages", SIZE_T),
        ("Adl", DXGK_ADL),
        ("Flags", DXGK_MAPAPERTUREFLAGS),
        ("AdlOffset", ULONG),
        ("CpuVisibleAddress", PVOID),
    ]


class DXGK_BUILDPAGINGBUFFER_RESERVED(Structure):
    """``Reserved``: the union's largest arm, ``UINT Reserved[64]`` (256 bytes)."""

    _fields_ = [("Reserved", UINT * 64)]


class _OPERATION_UNION(Union):
    _fields_ = [
        ("Transfer", DXGK_BUILDPAGINGBUFFER_TRANSFER),
        ("Fill", DXGK_BUILDPAGINGBUFFER_FILL),
        ("DiscardContent", DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT),
        ("ReadPhysical", DXGK_BUILDPAGINGBUFFER_READPHYSICAL),
        ("WritePhysical", DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL),
        ("MapApertureSegment", DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT),
        ("UnmapApertureSegment", DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT),
        ("SpecialLockTransfer", DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER),
        ("InitContextResource", DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE),
        ("TransferVirtual", DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL),
        ("FillVirtual", DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL),
        ("UpdatePageTable", DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE),
        ("FlushTlb", DXGK_BUILDPAGINGBUFFER_FLUSHTLB),
        ("CopyPageTableEntries", DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES),
        ("UpdateContextAllocation", DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION),
        ("NotifyResidency", DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY),
        ("SignalMonitoredFence", DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE),
        ("MapApertureSegment2", DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2),
        ("Reserved", DXGK_BUILDPAGINGBUFFER_RESERVED),
    ]


class DXGKARG_BUILDPAGINGBUFFER(Structure):
    """``DXGKARG_BUILDPAGINGBUFFER`` (x64: 320 bytes, the operation union at 40, ``hSystemContext`` at 296)."""

    _anonymous_ = ("_op",)
    _fields_ = [
        ("pDmaBuffer", PVOID),
        ("DmaSize", UINT),
        ("pDmaBufferPrivateData", PVOID),
        ("DmaBufferPrivateDataSize", UINT),
        ("Operation", ENUM),
        ("MultipassOffset", UINT),
        ("_op", _OPERATION_UNION),
        ("hSystemContext", HANDLE),
        ("DmaBufferGpuVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
        ("DmaBufferWriteOffset", UINT),
    ]


# DxgkDdiQueryAdapterInfo, reduced to the GpuMmu queries (decision 0102).
class DXGK_QUERYADAPTERINFOFLAGS(Structure):
    _anonymous_ = ("_u",)
    _fields_ = [
        (
            "_u",
            _word_union("_DXGK_QUERYADAPTERINFOFLAGS_U", "Value", UINT, [("VirtualMachineData", 1), ("Reserved", 31)]),
        )
    ]


class DXGKARG_QUERYADAPTERINFO(Structure):
    """``DXGKARG_QUERYADAPTERINFO``: ``Type`` is a :class:`DXGK_QUERYADAPTERINFOTYPE`."""

    _fields_ = [
        ("Type", ENUM),
        ("pInputData", PVOID),
        ("InputDataSize", UINT),
        ("pOutputData", PVOID),
        ("OutputDataSize", UINT),
        ("Flags", DXGK_QUERYADAPTERINFOFLAGS),
        ("hKmdProcessHandle", HANDLE),
    ]


class DXGK_QUERYGPUMMUCAPSIN(Structure):
    _fields_ = [("PhysicalAdapterIndex", UINT)]


_GPUMMUCAPS_FLAGS = _word_union(
    "_DXGK_GPUMMUCAPS_FLAGS",
    "Value",
    UINT,
    [
        ("ReadOnlyMemorySupported", 1),
        ("NoExecuteMemorySupported", 1),
        ("ZeroInPteSupported", 1),
        ("ExplicitPageTableInvalidation", 1),
        ("CacheCoherentMemorySupported", 1),
        ("PageTableUpdateRequireAddressSpaceIdle", 1),
        ("LargePageSupported", 1),
        ("DualPteSupported", 1),
        ("AllowNonAlignedLargePageAddress", 1),
        ("SysMem64KBPageSupported", 1),
        ("InvalidTlbEntriesNotCached", 1),
        ("SysMemLargePageSupported", 1),
        ("CachedPageTables", 1),
        ("PerPtePageSize", 1),
        ("OpportunisticSysMem64KBPageSupported", 1),
        ("Reserved", 17),
    ],
)
_GPUMMUCAPS_LEGACY = _word_union(
    "_DXGK_GPUMMUCAPS_LEGACYBEHAVIORS", "Value", UINT, [("SourcePageTableVaInTransfer", 1), ("Reserved", 31)]
)


class DXGK_GPUMMUCAPS(Structure):
    """``DXGK_GPUMMUCAPS`` (24 bytes; ``DXGKQAITYPE_GPUMMUCAPS``)."""

    _fields_ = [
        ("Flags", _GPUMMUCAPS_FLAGS),
        ("PageTableUpdateMode", ENUM),
        ("VirtualAddressBitCount", UINT),
        ("LeafPageTableSizeFor64KPagesInBytes", UINT),
        ("PageTableLevelCount", UINT),
        ("LegacyBehaviors", _GPUMMUCAPS_LEGACY),
    ]


class DXGK_QUERYPAGETABLELEVELDESCIN(Structure):
    _fields_ = [("LevelIndex", c_uint16), ("PhysicalAdapterIndex", c_uint16)]


class DXGK_PAGE_TABLE_LEVEL_DESC(Structure):
    """``DXGK_PAGE_TABLE_LEVEL_DESC`` (20 bytes; ``DXGKQAITYPE_PAGETABLELEVELDESC``)."""

    _fields_ = [
        ("PageTableIndexBitCount", UINT),
        ("PageTableSegmentId", UINT),
        ("PagingProcessPageTableSegmentId", UINT),
        ("PageTableSizeInBytes", UINT),
        ("PageTableAlignmentInBytes", UINT),
    ]


_SEGMENT_FLAG_NAMES = (
    "Aperture",
    "Agp",
    "CpuVisible",
    "UseBanking",
    "CacheCoherent",
    "PitchAlignment",
    "PopulatedFromSystemMemory",
    "PreservedDuringStandby",
    "PreservedDuringHibernate",
    "PartiallyPreservedDuringHibernate",
    "DirectFlip",
    "Use64KBPages",
    "ReservedSysMem",
    "SupportsCpuHostAperture",
    "SupportsCachedCpuHostAperture",
    "ApplicationTarget",
    "VprSupported",
    "VprPreservedDuringStandby",
    "EncryptedPagingSupported",
    "LocalBudgetGroup",
    "NonLocalBudgetGroup",
    "PopulatedByReservedDDRByFirmware",
)


class DXGK_SEGMENTFLAGS(Structure):
    """``DXGK_SEGMENTFLAGS``: bits 0-21 (wddm-spec.md 4.2), then 10 reserved bits; or the whole ``Value``."""

    _anonymous_ = ("_u",)
    _fields_ = [
        (
            "_u",
            _word_union(
                "_DXGK_SEGMENTFLAGS_U", "Value", UINT, [*((n, 1) for n in _SEGMENT_FLAG_NAMES), ("Reserved", 10)]
            ),
        )
    ]


class DXGK_CPUHOSTAPERTURE(Structure):
    _fields_ = [("PhysicalAddress", UINT64), ("SizeInPages", c_uint32)]


class _SEGMENTDESCRIPTOR4_CPU(Union):
    _fields_ = [("CpuTranslatedAddress", PHYSICAL_ADDRESS), ("CpuHostAperture", DXGK_CPUHOSTAPERTURE)]


class DXGK_SEGMENTDESCRIPTOR4(Structure):
    """``DXGK_SEGMENTDESCRIPTOR4`` (96 bytes; ``DXGKQAITYPE_QUERYSEGMENT4``, walked with the reported stride)."""

    _anonymous_ = ("_cpu",)
    _fields_ = [
        ("Flags", DXGK_SEGMENTFLAGS),
        ("BaseAddress", PHYSICAL_ADDRESS),
        ("Size", SIZE_T),
        ("CommitLimit", SIZE_T),
        ("SystemMemoryEndAddress", SIZE_T),
        ("_cpu", _SEGMENTDESCRIPTOR4_CPU),
        ("NumInvalidMemoryRanges", UINT),
        ("VprRangeStartOffset", SIZE_T),
        ("VprRangeSize", SIZE_T),
        ("VprAlignment", UINT),
        ("NumVprSupported", UINT),
        ("VprReserveSize", UINT),
        ("NumUEFIFrameBufferRanges", UINT),
    ]


class DXGK_QUERYSEGMENTIN4(Structure):
    _fields_ = [("PhysicalAdapterIndex", UINT)]


class DXGK_QUERYSEGMENTOUT4(Structure):
    """``DXGK_QUERYSEGMENTOUT4`` (40 bytes): ``NbSegment`` 0 on the first call asks only for the count."""

    _fields_ = [
        ("NbSegment", UINT),
        ("pSegmentDescriptor", PVOID),
        ("SegmentDescriptorStride", SIZE_T),
        ("PagingBufferSegmentId", UINT),
        ("PagingBufferSize", UINT),
        ("PagingBufferPrivateDataSize", UINT),
    ]
