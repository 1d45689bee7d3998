"""The flag unions and small enums of the paging operations (d3dkmddi.h; wddm-spec.md section 1.3).

Bit positions are exact; ``Value`` is the C union's ``UINT Value`` (``DXGK_TRANSFERVIRTUALFLAGS`` calls it
``Flags`` in C and ``DXGK_UPDATEPAGETABLEFLAGS`` has no union at all -- here both expose ``Value`` too, as the
word the bits form).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from wddmsim.core.bits import BitUnion, bits, flag


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_TRANSFERFLAGS(BitUnion):
    """``DXGK_TRANSFERFLAGS``: Swizzle 0x1, Unswizzle 0x2, AllocationIsIdle 0x4, TransferStart 0x8, TransferEnd 0x10."""

    Swizzle: bool = flag(0)
    Unswizzle: bool = flag(1)
    AllocationIsIdle: bool = flag(2)
    TransferStart: bool = flag(3)
    TransferEnd: bool = flag(4)
    Reserved: int = bits(5, 27)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_DISCARDCONTENTFLAGS(BitUnion):
    """``DXGK_DISCARDCONTENTFLAGS``: AllocationIsIdle 0x1."""

    AllocationIsIdle: bool = flag(0)
    Reserved: int = bits(1, 31)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_MAPAPERTUREFLAGS(BitUnion):
    """``DXGK_MAPAPERTUREFLAGS``: CacheCoherent 0x1."""

    CacheCoherent: bool = flag(0)
    Reserved: int = bits(1, 31)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_TRANSFERVIRTUALFLAGS(BitUnion):
    """``DXGK_TRANSFERVIRTUALFLAGS``: Src64KBPages 0x1, Dst64KBPages 0x2."""

    Src64KBPages: bool = flag(0)
    Dst64KBPages: bool = flag(1)
    Reserved: int = bits(2, 30)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_UPDATEPAGETABLEFLAGS(BitUnion):
    """``DXGK_UPDATEPAGETABLEFLAGS``: Repeat bit 0, InitialUpdate bit 1, NotifyEviction bit 2, Use64KBPages bit 3."""

    Repeat: bool = flag(0)
    InitialUpdate: bool = flag(1)
    NotifyEviction: bool = flag(2)
    Use64KBPages: bool = flag(3)
    Reserved: int = bits(4, 28)


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_SUBMITCOMMANDFLAGS(BitUnion):
    """``DXGK_SUBMITCOMMANDFLAGS``: only ``Paging`` (bit 0) is modelled; paging buffers are submitted with it."""

    Paging: bool = flag(0)
    Reserved: int = bits(1, 31)


class DXGK_MEMORY_TRANSFER_DIRECTION(IntEnum):
    LOCAL_TO_SYSTEM = 0
    SYSTEM_TO_LOCAL = 1
    LOCAL_TO_LOCAL = 2


class DXGK_PAGETABLEUPDATEMODE(IntEnum):
    """``DXGK_PAGETABLEUPDATEMODE`` (no initializers in the header: 0, 1, 2)."""

    DXGK_PAGETABLEUPDATE_CPU_VIRTUAL = 0
    DXGK_PAGETABLEUPDATE_GPU_VIRTUAL = 1
    DXGK_PAGETABLEUPDATE_GPU_PHYSICAL = 2
