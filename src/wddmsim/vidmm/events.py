"""VidMm events, named after DxgKrnl's ETW events where the concept exists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from wddmsim.core.events import Event, quicken_events


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildPagingBuffer(Event):
    """One ``DxgkDdiBuildPagingBuffer`` call and what it returned."""

    NAME: ClassVar[str] = "BuildPagingBuffer"
    operation: str
    status: str
    multipass_offset: int
    bytes_written: int
    buffer_offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PagingOperation(Event):
    """A paging operation fully built (ETW ``PagingOp*``): ``name`` is set per operation."""

    NAME: ClassVar[str] = "PagingOp"
    operation: str
    allocation: int
    size: int
    source_segment: int
    destination_segment: int
    passes: int
    direction: str = ""
    """``TransferVirtual`` only: ``LOCAL_TO_SYSTEM``, ``SYSTEM_TO_LOCAL`` or ``LOCAL_TO_LOCAL``."""
    args: tuple[tuple[str, int], ...] = ()
    """The payload's scalar fields by their DDI names (``TransferOffset``, ``Source.SegmentAddress``, ...)."""

    def to_record(self) -> dict[str, object]:
        record = Event.to_record(self)
        record["event"] = PAGING_OP_NAMES.get(self.operation, "PagingOp")
        return record


PAGING_OP_NAMES = {
    "DXGK_OPERATION_TRANSFER": "PagingOpTransfer",
    "DXGK_OPERATION_FILL": "PagingOpFill",
    "DXGK_OPERATION_DISCARD_CONTENT": "PagingOpDiscard",
    "DXGK_OPERATION_READ_PHYSICAL": "PagingOpReadPhysical",
    "DXGK_OPERATION_WRITE_PHYSICAL": "PagingOpWritePhysical",
    "DXGK_OPERATION_MAP_APERTURE_SEGMENT": "PagingOpMapApertureSegment",
    "DXGK_OPERATION_UNMAP_APERTURE_SEGMENT": "PagingOpUnmapApertureSegment",
    "DXGK_OPERATION_SPECIAL_LOCK_TRANSFER": "PagingOpSpecialLockTransfer",
    "DXGK_OPERATION_VIRTUAL_TRANSFER": "PagingOpVirtualTransfer",
    "DXGK_OPERATION_VIRTUAL_FILL": "PagingOpVirtualFill",
    "DXGK_OPERATION_INIT_CONTEXT_RESOURCE": "PagingOpInitContextResource",
    "DXGK_OPERATION_UPDATE_PAGE_TABLE": "PagingOpUpdatePageTable",
    "DXGK_OPERATION_FLUSH_TLB": "PagingOpFlushTlb",
    "DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION": "PagingOpUpdateContextAllocation",
    "DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES": "PagingOpCopyPageTableEntries",
    "DXGK_OPERATION_NOTIFY_RESIDENCY": "PagingOpNotifyResidency",
    "DXGK_OPERATION_SIGNAL_MONITORED_FENCE": "PagingOpSignalMonitoredFence",
    "DXGK_OPERATION_MAP_APERTURE_SEGMENT2": "PagingOpMapApertureSegment2",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PagingBufferSubmitted(Event):
    """A paging buffer (or part of one) handed to ``DxgkDdiSubmitCommand`` (ETW ``DmaPacket``-like)."""

    NAME: ClassVar[str] = "PagingBufferSubmitted"
    node: int
    fence: int
    start: int
    end: int
    operations: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuFaultReported(Event):
    """A fault the driver reported through ``DxgkCbNotifyInterrupt`` (``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` or
    ``DXGK_INTERRUPT_DMA_FAULTED``): the faulted fence, the address and why."""

    NAME: ClassVar[str] = "GpuFaultReported"
    interrupt: str
    fence: int
    address: int
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterReset(Event):
    """The TDR path ran (``DxgkDdiResetFromTimeout``)."""

    NAME: ClassVar[str] = "AdapterReset"
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterPowerState(Event):
    """``DxgkDdiSetPowerState`` is about to put the adapter in ``D3`` (``allocations``/``bytes``: what left the
    ranges the transition purges), or has put it back in ``D0`` (``allocations``: placed again at once)."""

    NAME: ClassVar[str] = "AdapterPowerState"
    state: str
    kind: str
    """``standby``, ``hibernate`` or ``hybrid_sleep``."""
    allocations: int
    bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterAllocation(Event):
    """An allocation created or destroyed (ETW ``AdapterAllocation``)."""

    NAME: ClassVar[str] = "AdapterAllocation"
    allocation: int
    size: int
    action: str
    """``create`` or ``destroy``."""
    process: int = 0
    """The owning process's handle (0: the driver's own, outside every process)."""
    group: int = 0
    """The segment group it is charged to (``D3DKMT_MEMORY_SEGMENT_GROUP``, decision 0013)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectDestroyed(Event):
    """A context, synchronisation object, device or process destroyed (decision 0046): everything it owned is
    reclaimed by then."""

    NAME: ClassVar[str] = "ObjectDestroyed"
    kind: str
    """``context``, ``sync_object``, ``device`` or ``process``."""
    handle: int
    owner: int
    """The device (a context, a synchronisation object) or process (a device) it belonged to; 0 for a process."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmMakeResident(Event):
    """One ``MakeResident`` (ETW ``VidMmMakeResident``) and its outcome."""

    NAME: ClassVar[str] = "VidMmMakeResident"
    device: int
    allocations: int
    result: str
    paging_fence: int
    bytes_to_trim: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmEvict(Event):
    """An allocation leaving a segment (ETW ``VidMmEvict``): ``cause`` is ``evict``, ``pressure``, ``trim``,
    ``offer``, ``destroy``, ``reset``, ``power`` (out of a range a power transition purges), ``lock`` (to make a
    lock succeed, or a range taken from a lock) or ``compact`` (its device's list packed anew: decision 0172)."""

    NAME: ClassVar[str] = "VidMmEvict"
    allocation: int
    segment: int
    size: int
    cause: str
    destination: str
    """``system``, ``aperture`` or ``discarded``."""
    policy: str
    """The eviction policy that chose the victim (decision 0140); "" when no policy did (the cause decided, or
    the mechanism's offer rule)."""
    reason: str
    """Why: the policy's score or rule (:meth:`~wddmsim.vidmm.policy.interface.BaseEviction.explain`), or the
    rule of the cause."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmPageIn(Event):
    """An allocation placed in a segment: ``how`` is ``fill``, ``transfer`` or ``map``."""

    NAME: ClassVar[str] = "VidMmPageIn"
    allocation: int
    segment: int
    offset: int
    size: int
    how: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TotalBytesResidentInSegment(Event):
    """Bytes placed in a segment after a change (ETW ``TotalBytesResidentInSegment``)."""

    NAME: ClassVar[str] = "TotalBytesResidentInSegment"
    segment: int
    bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportSegment(Event):
    """A driver segment as VidMm learnt it at start (ETW ``ReportSegment``)."""

    NAME: ClassVar[str] = "ReportSegment"
    segment: int
    base_address: int
    size: int
    commit_limit: int
    cpu_translated_address: int
    flags: int
    """``DXGK_SEGMENTFLAGS.Value``."""
    group: int
    """``D3DKMT_MEMORY_SEGMENT_GROUP``: 0 local, 1 non-local."""
    aperture: bool
    cpu_visible: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentRange(Event):
    """A range of a segment taken or given back -- by an allocation or by one of VidMm's own objects (a page
    table).  What the segment viewer replays; ``action`` is ``allocate`` or ``free``."""

    NAME: ClassVar[str] = "SegmentRange"
    segment: int
    offset: int
    size: int
    action: str
    owner: str
    """``allocation``, ``page-table`` or ``other``."""
    allocation: int
    """The allocation's handle (0 for VidMm's own objects)."""
    process: int
    """The owning process's handle (0 for VidMm's own objects)."""
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PagingQueuePacket(Event):
    """Work given a paging queue's next fence value (ETW ``PagingQueuePacket``): it is complete when paging
    buffer ``submission`` (a fence of the paging node) completes."""

    NAME: ClassVar[str] = "PagingQueuePacket"
    queue: int
    device: int
    value: int
    submission: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PagingRequestServiced(Event):
    """The paging worker serviced an admitted ``MakeResident`` (decision 0043): ``placed`` of its allocations
    paged in now; ``unplaced`` still listed but not resident (they come back before the device runs)."""

    NAME: ClassVar[str] = "PagingRequestServiced"
    queue: int
    device: int
    value: int
    priority: int
    allocations: int
    placed: int
    unplaced: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CpuLockEvent(Event):
    """A CPU view of an allocation changing (no ETW counterpart is documented): ``action`` is ``lock``, ``relock``, ``lock2``, ``unlock`` or
    ``rotate`` (the allocation moved under a lock; the view now shows system pages)."""

    NAME: ClassVar[str] = "CpuLock"
    allocation: int
    action: str
    address: int
    """The view's CPU virtual address (``pData``)."""
    target: str
    """``bus`` (the BAR) or ``pages`` (system pages)."""
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AddressSpaceSuspended(Event):
    """Every context of a process is idle and held back while VidMm changes its page tables: ``reason`` is
    ``PageTableUpdateRequireAddressSpaceIdle``, ``64KB->4KB`` (single-PTE conversion) or ``page-table move``."""

    NAME: ClassVar[str] = "AddressSpaceSuspended"
    process: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AddressSpaceResumed(Event):
    """The process's contexts may run again: the page-table work built while they were suspended has run."""

    NAME: ClassVar[str] = "AddressSpaceResumed"
    process: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PageTablesEvicted(Event):
    """An idle process's page tables left their segment under memory pressure (decision 0021)."""

    NAME: ClassVar[str] = "PageTablesEvicted"
    process: int
    tables: int
    bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PageTablesRestored(Event):
    """A process's page tables are back (new places, parents and roots re-pointed) before it uses them."""

    NAME: ClassVar[str] = "PageTablesRestored"
    process: int
    tables: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PageTableConverted(Event):
    """Single-PTE mode: the leaf table of a range went from 64 KB pages to 4 KB pages (never back)."""

    NAME: ClassVar[str] = "PageTableConverted"
    process: int
    va: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmNoRoom(Event):
    """VidMm could not make room for an allocation and the request that needed it fails (no ETW counterpart;
    decision 0158): the request, every candidate segment's free bytes, and every range in them that was not a
    victim, with why."""

    NAME: ClassVar[str] = "VidMmNoRoom"
    allocation: int
    size: int
    device: int
    operation: str
    """What needed the room: ``MakeResident``, ``residency list before a context runs``, ``VidMm's own hold``."""
    segments: tuple[tuple[int, int, int, int, int], ...]
    """Per candidate segment: (segment, size, free bytes, largest hole, longest run of free or evictable
    ranges)."""
    blockers: tuple[tuple[int, int, int, int, str], ...]
    """Per range placed in a candidate segment: (allocation handle -- 0 for VidMm's own objects --, segment,
    offset, size, reasons joined by "; ")."""
    diagnosis: str
    """The same as one paragraph of text."""


# --- memory pressure on processes (issue 23) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmProcessBudgetChange(Event):
    """A process's budget in one segment group changed (ETW ``VidMmProcessBudgetChange``): what
    ``QueryVideoMemoryInfo`` reports as ``Budget`` from now on."""

    NAME: ClassVar[str] = "VidMmProcessBudgetChange"
    process: int
    group: int
    """``D3DKMT_MEMORY_SEGMENT_GROUP``: 0 local, 1 non-local."""
    budget: int
    previous: int
    cause: str
    """``process-start``, ``process-exit``, ``focus``, ``priority``, ``imposed`` (the OS set it), ``released``
    (the imposed budget lifted), ``reservation`` or ``usage`` (the others' usage changed the shares)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmProcessPriorityChange(Event):
    """A process gained or lost the foreground, or its scheduling priority class changed
    (``D3DKMTSetProcessSchedulingPriorityClass``): its weight in the sharing of budgets changes."""

    NAME: ClassVar[str] = "VidMmProcessPriorityChange"
    process: int
    priority_class: int
    """``D3DKMT_SCHEDULINGPRIORITYCLASS``: IDLE 0 ... REALTIME 5."""
    foreground: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmTrimNotification(Event):
    """VidMm asked a process to trim (the callback registered with ``D3DKMTRegisterTrimNotification``):
    ``flags`` are ``D3DDDI_TRIMRESIDENCYSET_FLAGS``; ``delivered``: how many registered callbacks it reached."""

    NAME: ClassVar[str] = "VidMmTrimNotification"
    process: int
    flags: int
    bytes_to_trim: int
    delivered: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessLifetime(Event):
    """A process started using the adapter (``action`` ``start``) or exited (``exit``, after
    :class:`ObjectDestroyed` of its devices and itself)."""

    NAME: ClassVar[str] = "ProcessLifetime"
    process: int
    action: str


# --- per-process accounting (issue 23; decision 0175) ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmProcessUsageChange(Event):
    """A process's ``CurrentUsage`` in one segment group changed (ETW ``VidMmProcessUsageChange``): ``bytes`` of
    its allocations its devices' residency lists hold, from now on."""

    NAME: ClassVar[str] = "VidMmProcessUsageChange"
    process: int
    group: int
    bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmProcessCommitmentChange(Event):
    """A process's committed bytes in one segment group changed (ETW ``VidMmProcessCommitmentChange``): the bytes
    of its live allocations charged to the group, from now on."""

    NAME: ClassVar[str] = "VidMmProcessCommitmentChange"
    process: int
    group: int
    bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmProcessDemotedCommitmentChange(Event):
    """A process's demoted bytes changed (ETW ``VidMmProcessDemotedCommitmentChange``): bytes charged to the
    local group that sit in an aperture segment, from now on."""

    NAME: ClassVar[str] = "VidMmProcessDemotedCommitmentChange"
    process: int
    group: int
    bytes: int


quicken_events(globals(), __name__)
