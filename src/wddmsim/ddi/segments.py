"""Segments as the driver reports them (``DXGKQAITYPE_QUERYSEGMENT*``; wddm-spec.md sections 4.1-4.3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.core.bits import BitUnion, bits, flag


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_SEGMENTFLAGS(BitUnion):
    """``DXGK_SEGMENTFLAGS`` bits 0-21 (wddm-spec.md section 4.2)."""

    Aperture: bool = flag(0)
    Agp: bool = flag(1)
    CpuVisible: bool = flag(2)
    UseBanking: bool = flag(3)
    CacheCoherent: bool = flag(4)
    PitchAlignment: bool = flag(5)
    PopulatedFromSystemMemory: bool = flag(6)
    PreservedDuringStandby: bool = flag(7)
    PreservedDuringHibernate: bool = flag(8)
    PartiallyPreservedDuringHibernate: bool = flag(9)
    DirectFlip: bool = flag(10)
    Use64KBPages: bool = flag(11)
    ReservedSysMem: bool = flag(12)
    SupportsCpuHostAperture: bool = flag(13)
    SupportsCachedCpuHostAperture: bool = flag(14)
    ApplicationTarget: bool = flag(15)
    VprSupported: bool = flag(16)
    VprPreservedDuringStandby: bool = flag(17)
    EncryptedPagingSupported: bool = flag(18)
    LocalBudgetGroup: bool = flag(19)
    NonLocalBudgetGroup: bool = flag(20)
    PopulatedByReservedDDRByFirmware: bool = flag(21)
    Reserved: int = bits(22, 10)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_CPUHOSTAPERTURE:
    """``DXGK_SEGMENTDESCRIPTOR3.CpuHostAperture``: where the CPU reaches the segment, in pages."""

    PhysicalAddress: int = 0
    SizeInPages: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_SEGMENTDESCRIPTOR:
    """``DXGK_SEGMENTDESCRIPTOR`` (``DXGKQAITYPE_QUERYSEGMENT``)."""

    BaseAddress: int
    CpuTranslatedAddress: int = 0
    Size: int
    NbOfBanks: int = 0
    pBankRangeTable: tuple[int, ...] = ()
    CommitLimit: int
    Flags: DXGK_SEGMENTFLAGS = field(default_factory=DXGK_SEGMENTFLAGS)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_SEGMENTDESCRIPTOR3:
    """``DXGK_SEGMENTDESCRIPTOR3`` (``DXGKQAITYPE_QUERYSEGMENT3``, WDDM 1.2+)."""

    Flags: DXGK_SEGMENTFLAGS = field(default_factory=DXGK_SEGMENTFLAGS)
    BaseAddress: int
    CpuTranslatedAddress: int = 0
    Size: int
    NbOfBanks: int = 0
    pBankRangeTable: tuple[int, ...] = ()
    CommitLimit: int
    SystemMemoryEndAddress: int = 0
    Reserved: int = 0


SEGMENTDESCRIPTOR4_SIZE = 96
"""``sizeof(DXGK_SEGMENTDESCRIPTOR4)`` on x64: the ``SegmentDescriptorStride`` a driver of this version reports
(the ``CpuHostAperture`` member of its union is 16 bytes; ``drivers/native/paging.py`` mirrors the layout and the
compile test checks it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_SEGMENTDESCRIPTOR4:
    """``DXGK_SEGMENTDESCRIPTOR4`` (``DXGKQAITYPE_QUERYSEGMENT4``, WDDM 2.0+)."""

    Flags: DXGK_SEGMENTFLAGS = field(default_factory=DXGK_SEGMENTFLAGS)
    BaseAddress: int
    Size: int
    CommitLimit: int
    SystemMemoryEndAddress: int = 0
    CpuTranslatedAddress: int = 0
    CpuHostAperture: DXGK_CPUHOSTAPERTURE = field(default_factory=DXGK_CPUHOSTAPERTURE)
    NumInvalidMemoryRanges: int = 0
    VprRangeStartOffset: int = 0
    VprRangeSize: int = 0
    VprAlignment: int = 0
    NumVprSupported: int = 0
    VprReserveSize: int = 0
    NumUEFIFrameBufferRanges: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_QUERYSEGMENTIN:
    """Input of ``DXGKQAITYPE_QUERYSEGMENT``: the AGP aperture (legacy, left at 0)."""

    AgpApertureBase: int = 0
    AgpApertureSize: int = 0
    AgpFlags: DXGK_SEGMENTFLAGS = field(default_factory=DXGK_SEGMENTFLAGS)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_QUERYSEGMENTIN4:
    """Input of ``DXGKQAITYPE_QUERYSEGMENT4``: which physical adapter is asked."""

    PhysicalAdapterIndex: int = 0


@dataclass(slots=True, kw_only=True)
class DXGK_QUERYSEGMENTOUT3:
    """Output of ``DXGKQAITYPE_QUERYSEGMENT(3)``: call once with ``pSegmentDescriptor`` None for the count."""

    NbSegment: int = 0
    pSegmentDescriptor: list[DXGK_SEGMENTDESCRIPTOR3] | None = None
    PagingBufferSegmentId: int = 0
    PagingBufferSize: int = 0
    PagingBufferPrivateDataSize: int = 0


@dataclass(slots=True, kw_only=True)
class DXGK_QUERYSEGMENTOUT4:
    """Output of ``DXGKQAITYPE_QUERYSEGMENT4``: call once with ``NbSegment`` 0 for the count, then again."""

    NbSegment: int = 0
    pSegmentDescriptor: list[DXGK_SEGMENTDESCRIPTOR4] | None = None
    SegmentDescriptorStride: int = 0
    PagingBufferSegmentId: int = 0
    PagingBufferSize: int = 0
    PagingBufferPrivateDataSize: int = 0
