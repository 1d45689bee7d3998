"""The residency contract between user mode and VidMm: paging queues, MakeResident, Evict, trimming, budgets,
offer and reclaim (wddm-spec.md sections 3.7-3.9).

These are the ``D3DDDI_*`` / ``D3DKMT_*`` structures of the user-mode callbacks (``pfnMakeResidentCb``,
``pfnEvictCb``, ``pfnCreatePagingQueueCb``, ...) and their kernel thunks, with their C field names.  ``[out]``
fields are mutable: VidMm writes them, as in C.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from wddmsim.core.addresses import FenceValue
from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.ddi.base import HANDLE, NO_FENCE, NULL


class D3DDDI_PAGINGQUEUE_PRIORITY(IntEnum):
    """``D3DDDI_PAGINGQUEUE_PRIORITY``: higher-priority queues are processed first."""

    D3DDDI_PAGINGQUEUE_PRIORITY_BELOW_NORMAL = -1
    D3DDDI_PAGINGQUEUE_PRIORITY_NORMAL = 0
    D3DDDI_PAGINGQUEUE_PRIORITY_ABOVE_NORMAL = 1


@dataclass(slots=True, kw_only=True)
class D3DDDI_CREATEPAGINGQUEUE:
    """``D3DDDI_CREATEPAGINGQUEUE`` (``pfnCreatePagingQueueCb``); the kernel form adds ``hDevice``."""

    hDevice: HANDLE = NULL
    Priority: D3DDDI_PAGINGQUEUE_PRIORITY = D3DDDI_PAGINGQUEUE_PRIORITY.D3DDDI_PAGINGQUEUE_PRIORITY_NORMAL
    hPagingQueue: HANDLE = NULL
    """[out]"""
    hSyncObject: HANDLE = NULL
    """[out] the queue's monitored fence."""
    FenceValueCPUVirtualAddress: object = None
    """[out] a read-only CPU mapping of the fence value (a :class:`~wddmsim.core.pointer.CpuPointer`)."""
    PhysicalAdapterIndex: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_MAKERESIDENT_FLAGS(BitUnion):
    """``D3DDDI_MAKERESIDENT_FLAGS``: ``CantTrimFurther`` bit 0, ``MustSucceed`` bit 1 (only with the former)."""

    CantTrimFurther: bool = flag(0)
    MustSucceed: bool = flag(1)
    Reserved: int = bits(2, 30)


@dataclass(slots=True, kw_only=True)
class D3DDDI_MAKERESIDENT:
    """``D3DDDI_MAKERESIDENT``: ``NumAllocations`` is in/out (out: how many were made resident)."""

    hPagingQueue: HANDLE
    NumAllocations: int
    AllocationList: tuple[HANDLE, ...]
    PriorityList: tuple[int, ...] | None = None
    """Currently ignored by VidMm (may be NULL)."""
    Flags: D3DDDI_MAKERESIDENT_FLAGS = field(default_factory=D3DDDI_MAKERESIDENT_FLAGS)
    PagingFenceValue: FenceValue = NO_FENCE
    """[out] wait for it on the queue's fence before using the allocations (``E_PENDING``)."""
    NumBytesToTrim: int = 0
    """[out] on ``E_OUTOFMEMORY``: the bytes over budget."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_EVICT_FLAGS(BitUnion):
    """``D3DDDI_EVICT_FLAGS``: ``EvictOnlyIfNecessary`` bit 0, ``NotWrittenTo`` bit 1."""

    EvictOnlyIfNecessary: bool = flag(0)
    NotWrittenTo: bool = flag(1)
    Reserved: int = bits(2, 30)


@dataclass(slots=True, kw_only=True)
class D3DDDICB_EVICT:
    """``D3DDDICB_EVICT`` (``pfnEvictCb``); the kernel form adds ``hDevice``."""

    hDevice: HANDLE = NULL
    NumAllocations: int
    AllocationList: tuple[HANDLE, ...]
    Flags: D3DDDI_EVICT_FLAGS = field(default_factory=D3DDDI_EVICT_FLAGS)
    NumBytesToTrim: int = 0
    """[out] how far the device's process still is over its budget."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_TRIMRESIDENCYSET_FLAGS(BitUnion):
    """``D3DDDI_TRIMRESIDENCYSET_FLAGS``: ``PeriodicTrim`` bit 0, ``RestartPeriodicTrim`` bit 1 (not with
    ``PeriodicTrim``), ``TrimToBudget`` bit 2."""

    PeriodicTrim: bool = flag(0)
    RestartPeriodicTrim: bool = flag(1)
    TrimToBudget: bool = flag(2)
    Reserved: int = bits(3, 29)


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDIARG_TRIMRESIDENCYSET:
    """``D3DDDIARG_TRIMRESIDENCYSET``: what VidMm asks of the user-mode driver's ``pfnTrimResidencySet``."""

    TrimFlags: D3DDDI_TRIMRESIDENCYSET_FLAGS
    NumBytesToTrim: int = 0


class D3DKMT_MEMORY_SEGMENT_GROUP(IntEnum):
    """``D3DKMT_MEMORY_SEGMENT_GROUP``: the budget groups of ``QueryVideoMemoryInfo``."""

    D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL = 0
    D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL = 1


@dataclass(slots=True, kw_only=True)
class D3DKMT_QUERYVIDEOMEMORYINFO:
    """``D3DKMT_QUERYVIDEOMEMORYINFO``: a process's budget and use of one segment group."""

    hProcess: HANDLE = NULL
    hAdapter: HANDLE = NULL
    MemorySegmentGroup: D3DKMT_MEMORY_SEGMENT_GROUP = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL
    Budget: int = 0
    """[out]"""
    CurrentUsage: int = 0
    """[out]"""
    CurrentReservation: int = 0
    """[out]"""
    AvailableForReservation: int = 0
    """[out]"""
    PhysicalAdapterIndex: int = 0


@dataclass(slots=True, kw_only=True)
class D3DKMT_CHANGEVIDEOMEMORYRESERVATION:
    """``D3DKMT_CHANGEVIDEOMEMORYRESERVATION`` (``D3DKMTChangeVideoMemoryReservation``, behind DXGI's
    ``SetVideoMemoryReservation``): the memory of a segment group the process cannot go without, at most what
    ``QueryVideoMemoryInfo`` reports as ``AvailableForReservation``."""

    hProcess: HANDLE = NULL
    hAdapter: HANDLE = NULL
    MemorySegmentGroup: D3DKMT_MEMORY_SEGMENT_GROUP = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL
    Reservation: int = 0
    PhysicalAdapterIndex: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DKMT_TRIMNOTIFICATION:
    """``D3DKMT_TRIMNOTIFICATION``: what a trim-notification callback is given -- the ``Context`` it registered,
    the ``D3DDDI_TRIMRESIDENCYSET_FLAGS`` and, with ``TrimToBudget``, the bytes to evict to meet the budget."""

    Context: object = None
    Flags: D3DDDI_TRIMRESIDENCYSET_FLAGS = field(default_factory=D3DDDI_TRIMRESIDENCYSET_FLAGS)
    NumBytesToTrim: int = 0


TrimNotificationCallback = Callable[[D3DKMT_TRIMNOTIFICATION], None]
"""``PFND3DKMT_TRIMNOTIFICATIONCALLBACK``."""


@dataclass(slots=True, kw_only=True)
class D3DKMT_REGISTERTRIMNOTIFICATION:
    """``D3DKMT_REGISTERTRIMNOTIFICATION`` (``D3DKMTRegisterTrimNotification``): a device's callback for the
    trim notifications VidMm sends its process."""

    AdapterLuid: int = 0
    hDevice: HANDLE = NULL
    Callback: TrimNotificationCallback | None = None
    Context: object = None
    Handle: int = 0
    """[out] the registration, for ``D3DKMTUnregisterTrimNotification``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DKMT_UNREGISTERTRIMNOTIFICATION:
    """``D3DKMT_UNREGISTERTRIMNOTIFICATION`` (``D3DKMTUnregisterTrimNotification``)."""

    Handle: int = 0
    Callback: TrimNotificationCallback | None = None


class D3DKMT_SCHEDULINGPRIORITYCLASS(IntEnum):
    """``D3DKMT_SCHEDULINGPRIORITYCLASS`` (``D3DKMTSetProcessSchedulingPriorityClass``): a process's GPU
    scheduling class; the budget model weighs processes by it (decision 0169)."""

    D3DKMT_SCHEDULINGPRIORITYCLASS_IDLE = 0
    D3DKMT_SCHEDULINGPRIORITYCLASS_BELOW_NORMAL = 1
    D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL = 2
    D3DKMT_SCHEDULINGPRIORITYCLASS_ABOVE_NORMAL = 3
    D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH = 4
    D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME = 5


class D3DDDI_OFFER_PRIORITY(IntEnum):
    """``D3DDDI_OFFER_PRIORITY``: ``NONE`` must not be used when offering."""

    D3DDDI_OFFER_PRIORITY_NONE = 0
    D3DDDI_OFFER_PRIORITY_LOW = 1
    D3DDDI_OFFER_PRIORITY_NORMAL = 2
    D3DDDI_OFFER_PRIORITY_HIGH = 3
    D3DDDI_OFFER_PRIORITY_AUTO = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DKMT_OFFER_FLAGS(BitUnion):
    """``D3DKMT_OFFER_FLAGS`` (WDDM 2.0): ``OfferImmediately`` bit 0, ``AllowDecommit`` bit 1."""

    OfferImmediately: bool = flag(0)
    AllowDecommit: bool = flag(1)
    Reserved: int = bits(2, 30)


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DKMT_OFFERALLOCATIONS:
    """``D3DKMT_OFFERALLOCATIONS``: exactly one of ``pResources`` / ``HandleList`` (here: ``HandleList``)."""

    hDevice: HANDLE
    HandleList: tuple[HANDLE, ...]
    NumAllocations: int
    Priority: D3DDDI_OFFER_PRIORITY
    Flags: D3DKMT_OFFER_FLAGS = field(default_factory=D3DKMT_OFFER_FLAGS)


class D3DDDI_RECLAIM_RESULT(IntEnum):
    """``D3DDDI_RECLAIM_RESULT``."""

    D3DDDI_RECLAIM_RESULT_OK = 0
    D3DDDI_RECLAIM_RESULT_DISCARDED = 1
    D3DDDI_RECLAIM_RESULT_NOT_COMMITTED = 2


@dataclass(slots=True, kw_only=True)
class D3DKMT_RECLAIMALLOCATIONS2:
    """``D3DKMT_RECLAIMALLOCATIONS2``: ``pResults`` and ``PagingFenceValue`` are [out]."""

    hPagingQueue: HANDLE
    NumAllocations: int
    HandleList: tuple[HANDLE, ...]
    pResults: list[D3DDDI_RECLAIM_RESULT] = field(default_factory=list)
    PagingFenceValue: FenceValue = NO_FENCE
