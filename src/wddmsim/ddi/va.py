"""The GPU VA calls of user mode (seed 003 and wddm-spec.md sections 3.1-3.6): reserve, map, update, free.

``D3DDDI_*`` structures shared by the user-mode callbacks (``pfnReserveGpuVirtualAddressCb`` ...) and the kernel
thunks, with their C field names; ``[out]`` fields are mutable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.ddi.base import HANDLE, NO_FENCE, NULL

D3DGPU_UNIQUE_DRIVER_PROTECTION: Final = 0x8000000000000000
"""Every mapping of the same allocation range must then use the same driver protection."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(BitUnion):
    """``D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE`` (UINT64): read is always granted; Write and Execute add."""

    WIDTH = 64
    Write: bool = flag(0)
    Execute: bool = flag(1)
    Zero: bool = flag(2)
    """Reads return zero, writes are dropped; ``hAllocation`` must be NULL."""
    NoAccess: bool = flag(3)
    """The pages are Invalid; ``hAllocation`` must be NULL."""
    SystemUseOnly: bool = flag(4)
    """Not for user mode."""
    Reserved: int = bits(5, 59)


class D3DDDIGPUVIRTUALADDRESS_RESERVATION_TYPE(IntEnum):
    D3DDDIGPUVIRTUALADDRESS_RESERVE_NO_ACCESS = 0
    D3DDDIGPUVIRTUALADDRESS_RESERVE_ZERO = 1
    D3DDDIGPUVIRTUALADDRESS_RESERVE_NO_COMMIT = 2
    """Reserved for system use."""


@dataclass(slots=True, kw_only=True)
class D3DDDI_RESERVEGPUVIRTUALADDRESS:
    """``D3DDDI_RESERVEGPUVIRTUALADDRESS``: addresses and size 64 KB aligned; VA only, no memory."""

    hPagingQueue: HANDLE = NULL
    BaseAddress: int = 0
    MinimumAddress: int = 0
    MaximumAddress: int = 0
    Size: int = 0
    ReservationType: int = D3DDDIGPUVIRTUALADDRESS_RESERVATION_TYPE.D3DDDIGPUVIRTUALADDRESS_RESERVE_NO_ACCESS
    DriverProtection: int = 0
    """Inherited by later updates of the range."""
    VirtualAddress: int = 0
    """[out]"""
    PagingFenceValue: FenceValue = NO_FENCE
    """[out]"""


@dataclass(slots=True, kw_only=True)
class D3DDDI_MAPGPUVIRTUALADDRESS:
    """``D3DDDI_MAPGPUVIRTUALADDRESS`` (seed 003)."""

    hPagingQueue: HANDLE = NULL
    BaseAddress: int = 0
    """4 KB aligned; the range must be free or inside one range obtained from Reserve or Map."""
    MinimumAddress: int = 0
    MaximumAddress: int = 0
    hAllocation: HANDLE = NULL
    OffsetInPages: int = 0
    SizeInPages: int = 0
    Protection: D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE = field(default_factory=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE)
    DriverProtection: int = 0
    Reserved0: int = 0
    Reserved1: int = 0
    VirtualAddress: int = 0
    """[out]"""
    PagingFenceValue: FenceValue = NO_FENCE
    """[out] 0: already complete."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_FREEGPUVIRTUALADDRESS:
    """``D3DDDICB_FREEGPUVIRTUALADDRESS``: a range obtained from Reserve or Map, 4 KB aligned; synchronous."""

    BaseAddress: int
    Size: int


class D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE(IntEnum):
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP = 0
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP = 1
    D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY = 2
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP:
    """``Map``: read-write; ``AllocationSizeInBytes`` 0 means ``SizeInBytes``, smaller repeats the range."""

    BaseAddress: int
    SizeInBytes: int
    hAllocation: HANDLE
    AllocationOffsetInBytes: int = 0
    AllocationSizeInBytes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT:
    """``MapProtect``: as ``Map``, with an explicit protection and driver protection."""

    BaseAddress: int
    SizeInBytes: int
    hAllocation: HANDLE
    AllocationOffsetInBytes: int = 0
    AllocationSizeInBytes: int = 0
    Protection: D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE = field(default_factory=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE)
    DriverProtection: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP:
    """``Unmap``: the range goes to the Zero or the NoAccess state."""

    BaseAddress: int
    SizeInBytes: int
    Protection: D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY:
    """``Copy``: the *mappings* of the source range (not the data) to the destination; they may overlap."""

    SourceAddress: int
    SizeInBytes: int
    DestAddress: int


UpdateOperationPayload = (
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP
    | D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT
    | D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP
    | D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY
)


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION:
    """``OperationType`` and the union member it selects (``Map``, ``Unmap``, ``Copy`` or ``MapProtect``)."""

    OperationType: int
    payload: UpdateOperationPayload


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS(BitUnion):
    """``D3DDDICB_UPDATEGPUVIRTUALADDRESS.Flags``: ``DoNotWait``."""

    DoNotWait: bool = flag(0)
    Reserved: int = bits(1, 31)


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_UPDATEGPUVIRTUALADDRESS:
    """``D3DDDICB_UPDATEGPUVIRTUALADDRESS``: applied once ``hFenceObject`` reaches ``FenceValue`` (unless
    ``DoNotWait``), in order; then ``FenceValue + 1`` is signalled."""

    hContext: HANDLE
    hFenceObject: HANDLE
    NumOperations: int
    Operations: tuple[D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION, ...]
    Reserved0: int = 0
    Reserved1: int = 0
    FenceValue: int = 0
    Flags: D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS = field(default_factory=D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS)
