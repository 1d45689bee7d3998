"""The residency manager: processes, devices, paging queues, allocations, and where each allocation lives.

What it models (wddm-spec.md sections 3.7-3.9, decisions D4 and D7, decision 0013):

- ``MakeResident`` adds allocations to their device's residency list with a reference count and pages them in;
  it is atomic (on failure no count changes, ``NumBytesToTrim`` says by how much the budget is exceeded),
  returns ``S_OK`` with fence 0 when nothing had to move, ``E_PENDING`` with the queue's next fence value
  otherwise; ``CantTrimFurther`` lets it exceed the current budget (never the segments' capacity),
  ``MustSucceed`` puts the device in error when even that fails.  The paging itself is done by the
  :mod:`paging worker <wddmsim.vidmm.worker>`, highest queue priority first (decision 0043).
- ``Evict`` drops a reference; at zero the allocation leaves the list and is paged out, unless
  ``EvictOnlyIfNecessary`` defers that to the next memory pressure; ``NotWrittenTo`` lets the page-out discard.
- Placement tries the allocation's preferred segments, then the others it supports; room is made by evicting
  victims the :mod:`policy <wddmsim.vidmm.policy>` ranks (the ladder, the ranking, vetoes and the scan for a
  hole are the policies'; decision 0065), never one the same request needs, never a pinned
  one.  A victim some residency list still needs is demoted to an aperture segment when there is room there
  (it stays GPU-accessible), otherwise it goes to system memory and comes back before its device runs
  (:meth:`ResidencyManager.ensure_resident`).
- Budgets per process and segment group, ``QueryVideoMemoryInfo``, ``TrimResidencySet`` as a reference
  user-mode driver would answer it, offer and reclaim.

Errors follow the user-mode callbacks: an argument that breaks a rule raises
:class:`~wddmsim.ddi.status.InvalidArgument` with ``E_INVALIDARG`` and changes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar, final

import numpy as np

from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import (
    D3DDDI_ALLOCATIONPRIORITY_MAXIMUM,
    D3DDDICB_SETPRIORITY,
    DXGK_ALLOCATIONINFO,
    DXGKARG_CREATEALLOCATION,
    DXGKARG_DESTROYALLOCATION,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARGCB_CREATECONTEXTALLOCATION, DXGKARGCB_UPDATECONTEXTALLOCATION
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION,
)
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_MAKERESIDENT,
    D3DDDI_OFFER_PRIORITY,
    D3DDDI_PAGINGQUEUE_PRIORITY,
    D3DDDI_RECLAIM_RESULT,
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DDDICB_EVICT,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import HRESULT, NT_SUCCESS, NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.allocation import Content, VidMmAllocation
from wddmsim.vidmm.device import Device, FenceArea, MonitoredFence, PagingQueue, Process, SyncObject
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import (
    AdapterAllocation,
    PagingQueuePacket,
    PagingRequestServiced,
    VidMmEvict,
    VidMmMakeResident,
    VidMmPageIn,
)
from wddmsim.vidmm.mover import Mover
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_process import SystemPagingProcess
from wddmsim.vidmm.policy import (
    EvictionPolicy,
    InsertMode,
    Ladder,
    PlacementPolicy,
    RoomRequest,
    VictimClass,
    make_room,
)
from wddmsim.vidmm.scratch import Scratch
from wddmsim.vidmm.segments import Placement, Segments, SegmentSpace
from wddmsim.vidmm.vaspace import VaManager
from wddmsim.vidmm.worker import PagingRequest, PagingWorker

GROUPS = tuple(D3DKMT_MEMORY_SEGMENT_GROUP)


@dataclass(frozen=True, slots=True, kw_only=True)
class Residence:
    """The answer of :meth:`ResidencyManager.where`: one allocation's place, as the inspector shows it."""

    handle: int
    size: int
    segment_id: int
    """0: in system memory only (decision D4)."""
    offset: int | None
    segment_address: int | None
    """``SegmentAddress`` = ``BaseAddress`` + offset, as paging operations name it."""
    kind: str
    """``memory``, ``aperture`` or ``system``."""
    published: bool
    """The paging fence of the move that put it there has passed: the GPU may use it."""
    residency_count: int
    content: str
    backing_pfns: tuple[int, ...]
    """The first PFNs of the backing store (system pages)."""
    offered: bool


Victims = Callable[[VidMmAllocation], bool]
"""Which placed allocations a placement pass may evict."""


class CpuAccessHooks(Protocol):
    """What the lock manager (:mod:`wddmsim.vidmm.lock`) must hear of moves, so CPU views stay right."""

    def before_leave(self, a: VidMmAllocation, cause: str) -> tuple[bool, tuple[int, int] | None]:
        """``(unswizzle, special)`` for the transfer out; ``special`` is ``(RangeId, PrivateDriverData)`` of an
        alternate-VA lock (``SpecialLockTransfer``)."""
        ...

    def after_leave(self, a: VidMmAllocation) -> None: ...

    def may_enter(self, a: VidMmAllocation, space: SegmentSpace) -> bool: ...

    def forget(self, a: VidMmAllocation) -> None: ...


T = TypeVar("T")


def _live(table: dict[int, T], handle: int, argument: str, what: str) -> T:
    """The object a handle names, or ``E_INVALIDARG`` naming the argument (stale, forged or wrong-type handles)."""
    found = table.get(handle) if isinstance(handle, int) else None
    if found is None:
        raise _bad(argument, handle, f"is not a live {what}")
    return found


def _unreferenced(a: VidMmAllocation) -> bool:
    return a.residency_count == 0


def _anyone(a: VidMmAllocation) -> bool:
    return True


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def _reserved(argument: str, flags: object) -> None:
    """The reserved bits of a ``*_FLAGS`` union must be zero (they may mean something in a later WDDM)."""
    reserved = getattr(flags, "Reserved", None)
    if not isinstance(reserved, int) or isinstance(reserved, bool):
        raise _bad(argument, type(flags).__name__, "is not this call's flags union")
    if reserved:
        raise _bad(f"{argument}.Reserved", reserved, "must be zero")


def _integer(value: object) -> bool:
    """A C integer: an ``int`` that is not a ``bool`` (nor None, a float, a string ...)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _fence_value(value: object) -> int:
    """A monitored-fence value is a UINT64: checked before any work is done for the wait."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
        raise _bad("FenceValue", value, "must be a UINT64")
    return value


_CONTEXT_HANDLES = 0x8000_0000
"""Where the driver's context handles begin: VidMm's own handles stay below."""


@final
class ResidencyManager:
    """Where every allocation lives, and the user-mode residency calls that change it."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        paging: PagingStream,
        segments: Segments,
        mover: Mover,
        fences: FenceArea,
        policy: EvictionPolicy,
        events: EventLog,
        *,
        gpu_fences: bool,
        scratch: Scratch | None = None,
        process: SystemPagingProcess | None = None,
        deferred: bool = True,
        placement: PlacementPolicy | None = None,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.paging = paging
        self.segments = segments
        self.mover = mover
        self.fences = fences
        self.policy = policy
        self.placement = placement or Ladder()
        """Which segments, in which order, with which victims; where in a segment (decision 0065)."""
        self.events = events
        self.gpu_fences = gpu_fences
        """The driver signals paging fences from the paging buffer (``SignalMonitoredFence``, WDDM 2.2+)."""
        self.deferred = deferred
        """``MakeResident`` is admitted at the call and serviced by the paging worker (decision 0043); False: each
        request is serviced within its call."""
        self.system_chunk = PAGE_SIZE
        """The GPU page (set by the composition; decision 0011): backing stores come in contiguous, aligned chunks
        of it, and every allocation is whole GPU pages placed on one, so that no GPU page maps two of them."""
        self.worker = PagingWorker(self._serve)
        self.processes: dict[int, Process] = {}
        self.devices: dict[int, Device] = {}
        self.queues: dict[int, PagingQueue] = {}
        self.allocations: dict[int, VidMmAllocation] = {}
        self._next_handle = 0x4000_0000
        self._clock = 0
        """The use counter: every reference bumps it (the eviction policies' notion of time)."""
        self._moved = False
        """Whether the request in progress built any paging operation."""
        self._resetting = False
        self._entering: set[HANDLE] = set()
        self.scratch = scratch
        self.paging_process = process
        self.pending_contexts: list[VidMmAllocation] = []
        self.sync_objects: dict[int, SyncObject] = {}
        self.contexts: dict[int, Device] = {}
        self.before_move: Callable[[Device], None] | None = None
        """Called before an allocation of a device leaves its range: the device's work in flight completes."""
        self.va: VaManager | None = None
        """GPU VA spaces (GpuMmu): told of every move so that mappings follow their allocations."""
        self.cpu: CpuAccessHooks | None = None
        """CPU locks: told of every move so that views follow their allocations."""
        self.evict_idle_tables: Callable[[SegmentSpace, int, object, int, bool], int | None] | None = None
        """Room from VidMm's own movable objects (page tables of idle processes), asked before allocations
        a residency list needs are evicted."""
        self.system_device = self.create_device(self.create_process())
        """The system device: owner of context allocations created with ``hDevice`` NULL."""

    # --- handles and objects ---------------------------------------------------------------------------------

    def _handle(self) -> HANDLE:
        """A handle never given before: one counter for processes, devices, queues, fences and allocations, so a
        destroyed object's handle is never reused and no two kinds of object share one."""
        if self._next_handle + 4 >= _CONTEXT_HANDLES:
            raise DdiError(NTSTATUS.STATUS_NO_MEMORY, "every VidMm handle has been used")
        self._next_handle += 4
        return HANDLE(self._next_handle)

    def create_process(self) -> Process:
        process = Process(self._handle(), self.mm.create_address_space())
        for group in GROUPS:
            process.budgets[group] = self.capacity(group)
        self.processes[process.handle] = process
        return process

    def create_device(self, process: Process) -> Device:
        if process.handle not in self.processes:
            raise _bad("hProcess", int(process.handle), "is not a live process")
        device = Device(self._handle(), process)
        self.devices[device.handle] = device
        return device

    def device(self, handle: int, argument: str = "hDevice") -> Device:
        return _live(self.devices, handle, argument, "device")

    def allocation(self, handle: int, argument: str = "hAllocation") -> VidMmAllocation:
        return _live(self.allocations, handle, argument, "allocation")

    def create_paging_queue(self, args: D3DDDI_CREATEPAGINGQUEUE) -> None:
        """``pfnCreatePagingQueueCb``: a queue and its monitored fence (value 0, CPU-readable)."""
        device = self.device(args.hDevice)
        try:
            if not _integer(args.Priority):
                raise ValueError(args.Priority)
            priority = D3DDDI_PAGINGQUEUE_PRIORITY(args.Priority)
        except ValueError:
            raise _bad("Priority", args.Priority, "must be BELOW_NORMAL (-1), NORMAL (0) or ABOVE_NORMAL (1)") from None
        if args.PhysicalAdapterIndex != 0:
            raise _bad("PhysicalAdapterIndex", args.PhysicalAdapterIndex, "the adapter has one physical adapter")
        queue = PagingQueue(self._handle(), device, priority, MonitoredFence(self.fences), self._handle())
        device.queues.append(queue)
        self.queues[queue.handle] = queue
        args.hPagingQueue = queue.handle
        args.hSyncObject = queue.sync_object
        args.FenceValueCPUVirtualAddress = queue.fence.cpu

    def destroy_paging_queue(self, handle: int) -> None:
        """``pfnDestroyPagingQueueCb``: the queue's work completes first."""
        queue = self.queue(handle)
        self.wait(queue, queue.issued)
        self.close_queue(queue)

    def cancel_requests(self, device: Device) -> int:
        """The device is being destroyed: requests its queues admitted that the worker has not serviced are
        forgotten (their allocations go with the device; nothing will wait for their values).  Returns how many."""
        return len(self.worker.cancel({q.handle for q in device.queues}))

    def close_queue(self, queue: PagingQueue) -> None:
        """The queue goes once the paging work already built for it has run (it writes the queue's fence, whose
        slot is then freed); values of cancelled requests are never signalled."""
        submission = max(queue.pending.values(), default=0)
        if submission:
            self.paging.wait(submission)
        self._retire(queue)
        queue.device.queues.remove(queue)
        del self.queues[queue.handle]
        queue.fence.release()

    # --- synchronisation objects and contexts ------------------------------------------------------------

    def create_sync_object(self, device: Device) -> SyncObject:
        """A monitored fence (value 0) the device's work can wait on and signal."""
        if self.devices.get(device.handle) is not device:
            raise _bad("hDevice", int(device.handle), "is not a live device")
        sync = SyncObject(self._handle(), device, MonitoredFence(self.fences))
        self.sync_objects[sync.handle] = sync
        return sync

    def sync_object(self, handle: int, argument: str = "hFenceObject") -> SyncObject:
        return _live(self.sync_objects, handle, argument, "monitored fence")

    def signal_from_cpu(self, handle: int, value: int) -> None:
        """``SignalSynchronizationObjectFromCpu``: the fence takes ``value`` (never lower); work waiting for it runs."""
        sync = self.sync_object(handle)
        if not 0 <= value < 1 << 64 or value < sync.fence.value:
            raise _bad("Value", value, f"a monitored fence only grows (it is at {sync.fence.value})")
        sync.fence.cpu_signal(value)
        self.release(sync)

    def release(self, sync: SyncObject) -> None:
        """Run, in order, the work whose value the fence has reached (or will, in paging-engine order)."""
        while sync.waiting and sync.waiting[0].value <= sync.reached:
            sync.waiting.pop(0).run()

    def register_context(self, context: HANDLE, device: Device) -> None:
        self.contexts[context] = device

    def context_device(self, handle: int) -> Device:
        return _live(self.contexts, handle, "hContext", "context")

    def queue(self, handle: int) -> PagingQueue:
        return _live(self.queues, handle, "hPagingQueue", "paging queue")

    # --- allocations -------------------------------------------------------------------------------------------

    def create_allocation(self, device: Device, private_data: bytes) -> VidMmAllocation:
        """``DxgkDdiCreateAllocation`` for one allocation, then its backing store (committed now, zeroed)."""
        return self.create_allocations(device, [private_data])[0]

    def create_allocations(
        self, device: Device, private_data: list[bytes], resource_data: bytes = b""
    ) -> list[VidMmAllocation]:
        """One ``DxgkDdiCreateAllocation`` call for every allocation of a ``pfnAllocateCb`` (the driver sees them
        together), then their backing stores: all of them, or none and nothing kept."""
        if device.handle not in self.devices:
            raise _bad("hDevice", int(device.handle), "is not a live device")
        infos = [DXGK_ALLOCATIONINFO(pPrivateDriverData=d, PrivateDriverDataSize=len(d)) for d in private_data]
        status = self.driver.create_allocation(
            DXGKARG_CREATEALLOCATION(
                pPrivateDriverData=resource_data,
                PrivateDriverDataSize=len(resource_data),
                NumAllocations=len(infos),
                pAllocationInfo=infos,
            )
        )
        if not NT_SUCCESS(status):
            raise DdiError(NTSTATUS(status), "DxgkDdiCreateAllocation failed")
        made: list[VidMmAllocation] = []
        try:
            for info in infos:
                made.append(self._record(device, info))
        except BaseException:
            for a in made:
                if a.backing is not None:
                    self.mm.free_pages(a.backing)
            handles = tuple(info.hAllocation for info in infos)
            self.driver.destroy_allocation(
                DXGKARG_DESTROYALLOCATION(NumAllocations=len(handles), pAllocationList=handles)
            )
            raise
        for a in made:
            self.allocations[a.handle] = a
            self.events.emit(
                AdapterAllocation(time=self.events.clock.now, allocation=a.handle, size=a.size, action="create")
            )
        return made

    def _record(self, device: Device, info: DXGK_ALLOCATIONINFO) -> VidMmAllocation:
        if info.Size <= 0 or info.Size % PAGE_SIZE:
            raise DdiError(
                NTSTATUS.STATUS_INVALID_PARAMETER, f"the driver described Size={info.Size:#x}: not whole pages"
            )
        if info.Size % self.system_chunk:
            raise DdiError(
                NTSTATUS.STATUS_INVALID_PARAMETER,
                f"the driver described Size={info.Size:#x}: not whole GPU pages of {self.system_chunk:#x} bytes "
                "(a GPU page mapping its last bytes would reach into whatever is placed after it)",
            )
        usable = info.SupportedReadSegmentSet & info.SupportedWriteSegmentSet
        ids = self.segments.ids_in(usable)
        if not ids:
            raise DdiError(
                NTSTATUS.STATUS_INVALID_PARAMETER,
                f"the driver described segment sets read={info.SupportedReadSegmentSet:#x} "
                f"write={info.SupportedWriteSegmentSet:#x}: no segment is both",
            )
        preferred = [s for s in info.PreferredSegment.segment_ids() if s in ids]
        group = self.segments.get(preferred[0] if preferred else ids[0]).group
        try:
            backing = self.mm.allocate_pages_for_mdl(info.Size, chunk=self.system_chunk)
        except (MemoryError, ValueError) as error:
            raise DdiError(
                NTSTATUS.STATUS_NO_MEMORY, f"no system memory for a {info.Size:#x}-byte backing store: {error}"
            ) from None
        return VidMmAllocation.from_info(info, device, group, backing, segment_model=not self.gpu_fences)

    def destroy_allocation(self, handle: int) -> None:
        """Destroy: the content is dropped (no copy), the range and the backing store are freed."""
        a = self.allocation(handle)
        if a.pin_count:
            raise _bad("hAllocation", handle, "is pinned (a lock or paging operation is under way)")
        self.service()
        if self.cpu is not None:
            self.cpu.forget(a)  # refuses a locked allocation; gives its swizzling ranges back
        if self.before_move is not None and not self._resetting:
            # Work in flight may still use it: it completes before its VAs go (CPU_VIRTUAL page-table updates are
            # written at once, not queued behind it) -- a free while the GPU is busy waits for the fence.
            self.before_move(a.device)
        if self.va is not None:
            self.va.forget(a)  # destroying an allocation frees every VA mapped to it
        if a.placement is not None:
            self._leave(a, cause="destroy", keep_content=False)
        self.paging.wait(self.paging.flush())
        if a.backing is not None:
            self.mm.free_pages(a.backing)
            a.backing = None
        del self.allocations[handle]
        self.policy.freed(a)
        self.driver.destroy_allocation(DXGKARG_DESTROYALLOCATION(NumAllocations=1, pAllocationList=(a.handle,)))
        self.events.emit(
            AdapterAllocation(time=self.events.clock.now, allocation=a.handle, size=a.size, action="destroy")
        )

    # --- context allocations (DxgkCbCreateContextAllocation and friends) -------------------------------------

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbCreateContextAllocation``: place the allocation, ``InitContextResource`` it, return its handle
        in ``args.hAllocation`` once initialised.  It stays in its device's residency list until destroyed."""
        device = self.system_device if not args.hDevice else self.device(args.hDevice, "hDevice")
        ids = self.segments.ids_in(args.SupportedSegmentSet)
        if args.Size <= 0 or not ids or args.PhysicalAdapterIndex:
            raise InvalidArgument(
                "Size" if args.Size <= 0 else ("SupportedSegmentSet" if not ids else "PhysicalAdapterIndex"),
                args.Size if args.Size <= 0 else (args.SupportedSegmentSet if not ids else args.PhysicalAdapterIndex),
                "a context allocation needs a size, at least one segment, and the one physical adapter",
                NTSTATUS.STATUS_INVALID_PARAMETER,
            )
        size = -(-args.Size // self.system_chunk) * self.system_chunk  # whole GPU pages, as every allocation
        preferred = [s for s in args.PreferredSegment.segment_ids() if s in ids]
        backing = self._commit_backing_of(size)
        a = VidMmAllocation(
            handle=self._handle(),
            device=device,
            size=size,
            alignment=args.Alignment,
            preferred=tuple(preferred),
            read_set=args.SupportedSegmentSet,
            write_set=args.SupportedSegmentSet,
            eviction_set=args.EvictionSegmentSet,
            flags=args.Flags,
            priority=D3DDDI_ALLOCATIONPRIORITY_MAXIMUM,
            group=self.segments.get(preferred[0] if preferred else ids[0]).group,
            backing=backing,
            context=True,
        )
        self.allocations[a.handle] = a
        a.residency_count = 1
        self.pending_contexts.append(a)
        args.hAllocation = a.handle
        self.events.emit(
            AdapterAllocation(time=self.events.clock.now, allocation=a.handle, size=a.size, action="create")
        )
        return NTSTATUS.STATUS_SUCCESS

    def initialize_contexts(self) -> None:
        """Place and ``InitContextResource`` the context allocations created since the last call.

        The driver learns an allocation's handle only when ``DxgkCbCreateContextAllocation`` returns, and
        ``InitContextResource`` names it by that handle: so VidMm initialises it after the callback, before the
        context can run (:meth:`VideoMemoryManager.create_context` calls this when the driver returned).
        """
        pending, self.pending_contexts = self.pending_contexts, []
        for a in pending:
            if a.placement is None and not self._place(a, {a.handle}, cause="pressure"):
                raise DdiError(
                    NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                    f"no segment can hold context allocation {int(a.handle):#x}",
                )
        self.paging.wait(self.paging.flush())

    def _commit_backing_of(self, size: int) -> MDL:
        try:
            return self.mm.allocate_pages_for_mdl(size, chunk=self.system_chunk)
        except (MemoryError, ValueError) as error:
            raise DdiError(
                NTSTATUS.STATUS_NO_MEMORY, f"no system memory for a {size:#x}-byte backing store: {error}"
            ) from None

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbUpdateContextAllocation``: map the allocation into the paging process's scratch area, issue
        ``UpdateContextAllocation`` with its VA there, and return once it executed."""
        a = self.allocation(args.hAllocation)
        if not a.context:
            raise InvalidArgument(
                "hAllocation", args.hAllocation, "is not a context allocation", NTSTATUS.STATUS_INVALID_PARAMETER
            )
        if self.scratch is None or self.paging_process is None:
            return NTSTATUS.STATUS_NOT_SUPPORTED  # a WDDM 2.0 operation: GpuMmu drivers only
        if args.PrivateDriverDataSize != len(args.pPrivateDriverData):
            raise InvalidArgument(
                "PrivateDriverDataSize",
                args.PrivateDriverDataSize,
                "must equal the data's length",
                NTSTATUS.STATUS_INVALID_PARAMETER,
            )
        if a.placement is None and not self._place(a, {a.handle}, cause="pressure"):
            return NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY
        placement = a.placement
        assert placement is not None
        assert a.backing is not None
        space = self.segments.get(placement.segment_id)
        pages = a.size // PAGE_SIZE
        if space.aperture:
            self.scratch.map_pages(self.paging_process.scratch_base, 0, a.backing.pfns[:pages])
        else:
            first = placement.offset // PAGE_SIZE
            self.scratch.map_pages(
                self.paging_process.scratch_base, space.id, np.arange(first, first + pages, dtype=np.uint64)
            )
        va = self.paging_process.scratch_base
        self.scratch.flush_range(va, va + a.size)
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION(
                ContextAllocation=va,
                ContextAllocationSize=a.size,
                pDriverPrivateData=args.pPrivateDriverData,
                DriverPrivateDataSize=args.PrivateDriverDataSize,
            )
        )
        self.paging.wait(self.paging.flush())
        return NTSTATUS.STATUS_SUCCESS

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS:
        """``DxgkCbDestroyContextAllocation``: the range and the backing store are freed (no copy)."""
        a = self.allocation(hAllocation)
        if not a.context:
            raise InvalidArgument(
                "hAllocation", hAllocation, "is not a context allocation", NTSTATUS.STATUS_INVALID_PARAMETER
            )
        if a.placement is not None:
            self._leave(a, cause="destroy", keep_content=False)
        self.paging.wait(self.paging.flush())
        if a.backing is not None:
            self.mm.free_pages(a.backing)
        del self.allocations[a.handle]
        self.policy.freed(a)
        self.events.emit(
            AdapterAllocation(time=self.events.clock.now, allocation=a.handle, size=a.size, action="destroy")
        )
        return NTSTATUS.STATUS_SUCCESS

    # --- budgets ---------------------------------------------------------------------------------------------

    def capacity(self, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> int:
        """Bytes of the segments in ``group``: the maximum budget."""
        return sum(s.size for s in self.segments if s.group == group)

    def usage(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> int:
        """Bytes of the process's allocations that residency lists hold, charged to ``group``."""
        return sum(
            a.size
            for a in self.allocations.values()
            if a.residency_count and a.group == group and a.device.process is process
        )

    def set_budget(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP, budget: int) -> None:
        """Impose a budget (the OS does so under pressure): at most the group's capacity."""
        if not 0 <= budget <= self.capacity(group):
            raise _bad("Budget", budget, f"must lie in [0, {self.capacity(group):#x}] (the group's capacity)")
        process.budgets[group] = budget

    def query_video_memory_info(self, args: D3DKMT_QUERYVIDEOMEMORYINFO) -> None:
        """``D3DKMTQueryVideoMemoryInfo``: Budget, CurrentUsage, CurrentReservation, AvailableForReservation."""
        process = self.processes.get(args.hProcess)
        if process is None:
            raise _bad("hProcess", args.hProcess, "is not a live process")
        try:
            group = D3DKMT_MEMORY_SEGMENT_GROUP(args.MemorySegmentGroup)
        except ValueError:
            raise _bad("MemorySegmentGroup", args.MemorySegmentGroup, "must be LOCAL (0) or NON_LOCAL (1)") from None
        args.Budget = process.budgets[group]
        args.CurrentUsage = self.usage(process, group)
        args.CurrentReservation = process.reservations.get(group, 0)
        args.AvailableForReservation = args.Budget // 2

    def _over_budget(self, device: Device, wanted: Iterable[VidMmAllocation], hard: bool) -> int:
        """Bytes by which adding ``wanted`` to the residency lists exceeds the budget (hard: the capacity)."""
        process = device.process
        worst = 0
        for group in GROUPS:
            new = sum(a.size for a in wanted if a.group == group and a.residency_count == 0)
            if not new:
                continue
            limit = self.capacity(group) if hard else process.budgets[group]
            worst = max(worst, self.usage(process, group) + new - limit)
        return worst

    # --- MakeResident and Evict ----------------------------------------------------------------------------

    def make_resident(self, args: D3DDDI_MAKERESIDENT) -> HRESULT:
        """``pfnMakeResidentCb`` / ``D3DKMTMakeResident``."""
        queue = self.queue(args.hPagingQueue)
        device = queue.device
        _reserved("Flags", args.Flags)
        wanted = self._listed(args.NumAllocations, args.AllocationList, device)
        self._check_priorities(args)
        if args.Flags.MustSucceed and not args.Flags.CantTrimFurther:
            raise _bad("Flags.MustSucceed", 1, "is valid only with Flags.CantTrimFurther")
        if device.removed is not None:
            raise DdiError(
                HRESULT.D3DDDIERR_DEVICEREMOVED, f"hDevice={int(device.handle):#x} was removed: {device.removed}"
            )
        over = self._over_budget(device, wanted, hard=False)
        if over > 0 and args.Flags.CantTrimFurther:
            over = self._over_budget(device, wanted, hard=True)
        if over > 0:
            return self._refuse(args, device, over, "over budget")
        if self.deferred:
            return self._admit(args, queue, wanted)
        self._moved = False
        protected = {a.handle for a in wanted}
        for a in wanted:
            self._use(a)
            if a.placement is None and not self._place(a, protected, cause="pressure"):
                missing = sum(x.size for x in wanted if x.placement is None)
                return self._refuse(args, device, missing, "segments full")
        for a in wanted:
            if a.residency_count == 0:
                a.backing_current = False  # a new period of use: the GPU may write it again
            a.residency_count += 1
        args.NumAllocations = len(wanted)
        args.PagingFenceValue = self.signal(queue) if self._moved else 0
        for a in wanted:
            if self._moved:
                a.ready_fence = max(a.ready_fence, args.PagingFenceValue)
        result = HRESULT.E_PENDING if self._moved else HRESULT.S_OK
        self._emit_make_resident(device, len(wanted), result, args.PagingFenceValue, 0)
        return result

    @staticmethod
    def _check_priorities(args: D3DDDI_MAKERESIDENT) -> None:
        """``PriorityList`` is NULL or one UINT priority per listed allocation (ignored by VidMm, but checked)."""
        if args.PriorityList is None:
            return
        if not isinstance(args.PriorityList, (tuple, list)) or len(args.PriorityList) != args.NumAllocations:
            raise _bad(
                "PriorityList", args.PriorityList, f"must be NULL or hold NumAllocations ({args.NumAllocations})"
            )
        for i, priority in enumerate(args.PriorityList):
            if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 0xFFFF_FFFF:
                raise _bad(f"PriorityList[{i}]", priority, "is a UINT")

    def _admit(self, args: D3DDDI_MAKERESIDENT, queue: PagingQueue, wanted: list[VidMmAllocation]) -> HRESULT:
        """The deferred form (decision 0043): the counts are taken now; what must move is queued for the paging
        worker under the queue's next fence value (``E_PENDING``); ``S_OK`` with 0 if everything is in place."""
        device = queue.device
        unplaced = self._unplaceable(wanted)
        if unplaced:
            return self._refuse(args, device, unplaced, "segments full")
        for a in wanted:
            self._use(a)
            if a.residency_count == 0:
                a.backing_current = False  # a new period of use: the GPU may write it again
            a.residency_count += 1
        args.NumAllocations = len(wanted)
        result = HRESULT.S_OK
        args.PagingFenceValue = 0
        if any(a.placement is None for a in wanted):
            queue.issued += 1
            args.PagingFenceValue = queue.issued
            for a in wanted:
                a.ready_fence = max(a.ready_fence, queue.issued)
            result = HRESULT.E_PENDING
            self.worker.admit(PagingRequest(queue, queue.issued, tuple(wanted)))
        self._emit_make_resident(device, len(wanted), result, args.PagingFenceValue, 0)
        return result

    def _unplaceable(self, wanted: list[VidMmAllocation]) -> int:
        """Bytes of ``wanted`` that no segment could hold even with every allocation it may evict gone: the
        request is refused at once (``E_OUTOFMEMORY``) rather than admitted to fail in the worker."""
        taken: dict[int, int] = {}
        missing = 0
        for a in sorted((a for a in wanted if a.placement is None), key=lambda x: -x.size):
            room = {s.id: self._evictable_room(s, wanted, a) - taken.get(s.id, 0) for s in self._candidates(a)}
            if not room:
                missing += a.size
                continue
            best = max(room, key=room.__getitem__)
            missing += max(0, a.size - max(room[best], 0))
            taken[best] = taken.get(best, 0) + a.size
        return missing

    def _evictable_room(self, space: SegmentSpace, wanted: list[VidMmAllocation], a: VidMmAllocation) -> int:
        """What ``space`` could give ``a``: its free bytes plus what the policy may evict for ``wanted``."""
        keep = {a.handle for a in wanted}
        request = RoomRequest(
            segment=space.id, size=a.size, alignment=a.alignment, from_end=False, owner=a, cause="pressure"
        )
        movable = sum(
            v.size
            for v in self.residents(space)
            if v.handle not in keep and v.pin_count == 0 and self.policy.may_evict(v, request)
        )
        return space.ranges.free_bytes + movable

    def service(self) -> None:
        """Let the paging worker catch up: every admitted request is serviced, highest queue priority first."""
        self.worker.service()

    def _serve(self, request: PagingRequest) -> None:
        """Service one admitted ``MakeResident``: page in what the device still lists, then signal its value.
        What cannot be placed now stays listed and not resident -- it is paged in before the device's work runs
        (:meth:`ensure_resident`), as a victim of pressure is.  An allocation offered since is left out: no work may
        use it until it is reclaimed, and Reclaim pages it in then."""
        listed = [a for a in request.allocations if a.handle in self.allocations and _in_use(a)]
        protected = {a.handle for a in listed}
        placed = 0
        for a in listed:
            if a.placement is None and not a.device.removed and self._place(a, protected, cause="pressure"):
                placed += 1
        self._signal_value(request.queue, request.value)
        self.events.emit(
            PagingRequestServiced(
                time=self.events.clock.now,
                queue=request.queue.handle,
                device=request.queue.device.handle,
                value=request.value,
                priority=int(request.queue.priority),
                allocations=len(request.allocations),
                placed=placed,
                unplaced=sum(1 for a in listed if a.placement is None),
            )
        )

    def _refuse(self, args: D3DDDI_MAKERESIDENT, device: Device, over: int, why: str) -> HRESULT:
        """``E_OUTOFMEMORY``: no count changed; ``MustSucceed`` puts the device in error."""
        args.NumBytesToTrim = over
        args.NumAllocations = 0
        args.PagingFenceValue = 0
        if args.Flags.MustSucceed:
            device.removed = f"MakeResident with MustSucceed could not be satisfied ({why}, {over:#x} bytes)"
        self.paging.flush()
        self._emit_make_resident(device, 0, HRESULT.E_OUTOFMEMORY, 0, over)
        return HRESULT.E_OUTOFMEMORY

    def _emit_make_resident(self, device: Device, count: int, result: HRESULT, fence: int, trim: int) -> None:
        self.events.emit(
            VidMmMakeResident(
                time=self.events.clock.now,
                device=device.handle,
                allocations=count,
                result=result.name,
                paging_fence=fence,
                bytes_to_trim=trim,
            )
        )

    def _listed(self, count: int, handles: tuple[HANDLE, ...], device: Device) -> list[VidMmAllocation]:
        if not isinstance(count, int) or count != len(handles) or count <= 0:
            raise _bad("NumAllocations", count, f"must be positive and match AllocationList ({len(handles)} handles)")
        out: list[VidMmAllocation] = []
        seen: set[int] = set()
        for i, handle in enumerate(handles):
            a = self.allocation(handle, f"AllocationList[{i}]")
            if a.device is not device:
                raise _bad(f"AllocationList[{i}]", handle, "belongs to another device than the paging queue's")
            if a.offered is not None:
                raise _bad(f"AllocationList[{i}]", handle, "is offered: reclaim it first")
            if handle not in seen:
                seen.add(handle)
                out.append(a)
        return out

    def evict(self, args: D3DDDICB_EVICT) -> HRESULT:
        """``pfnEvictCb`` / ``D3DKMTEvict``: drop one residency reference per listed allocation."""
        device = self.device(args.hDevice)
        _reserved("Flags", args.Flags)
        if (
            not isinstance(args.NumAllocations, int)
            or args.NumAllocations != len(args.AllocationList)
            or not args.AllocationList
        ):
            raise _bad(
                "NumAllocations",
                args.NumAllocations,
                f"must be positive and match AllocationList ({len(args.AllocationList)} handles)",
            )
        listed = [self.allocation(h, f"AllocationList[{i}]") for i, h in enumerate(args.AllocationList)]
        self.service()
        drops: dict[int, int] = {}
        for i, a in enumerate(listed):
            if a.device is not device:
                raise _bad(f"AllocationList[{i}]", a.handle, "belongs to another device")
            drops[a.handle] = drops.get(a.handle, 0) + 1
            if drops[a.handle] > a.residency_count:
                raise _bad(f"AllocationList[{i}]", a.handle, "is evicted more times than it was made resident")
        for a in listed:
            a.residency_count -= 1
            if a.residency_count == 0 and args.Flags.NotWrittenTo:
                # The GPU has not written in this period of use and may not before another MakeResident: the backing
                # is as good as the segment if it was when the period began (a page-in copied or zero-filled from
                # it) -- not if an earlier period's writes never left the segment (an EvictOnlyIfNecessary).
                a.backing_current = a.clean_start
            elif a.residency_count == 0:
                a.clean_start = False  # the period ends without the hint: the GPU may have written the placement
            if a.residency_count == 0 and a.placement is not None and not args.Flags.EvictOnlyIfNecessary:
                self._leave(a, cause="evict")
        self.paging.flush()
        args.NumBytesToTrim = max(0, self._trim_need(device.process))
        return HRESULT.S_OK

    def _trim_need(self, process: Process) -> int:
        return max(self.usage(process, g) - process.budgets[g] for g in GROUPS)

    def ensure_resident(self, device: Device) -> int:
        """Before any context of ``device`` runs: page in whatever its residency list holds that left (a
        victim of pressure).  Offered allocations stay out (``pfnOfferAllocationsCb``: no work may use them until
        they are reclaimed; with ``AllowDecommit`` they have no backing store to page in from).  Returns the paging
        fence to wait for (0: nothing moved)."""
        self.service()
        wanted = [a for a in self.allocations.values() if a.device is device and _in_use(a)]
        wanted.sort(key=lambda a: -a.size)  # largest first: the fewest ranges left too small to use
        protected = {a.handle for a in wanted}
        self._moved = False
        for a in wanted:
            if a.placement is None and not self._place(a, protected, cause="pressure"):
                raise DdiError(
                    NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                    f"device {int(device.handle):#x}'s residency list ({sum(x.size for x in wanted):#x} bytes) "
                    "does not fit the segments it may use",
                )
        if not self._moved:
            return 0
        fence = self.paging.flush()
        self.paging.wait(fence)
        return fence

    def settle(self) -> None:
        """Service the admitted requests, submit what is built and wait until the paging engine has run it."""
        self.service()
        self.paging.wait(self.paging.flush())

    def paging_done(self, a: VidMmAllocation, *, wait: bool) -> bool:
        """Whether the paging work queued on ``a`` -- a move built by an ``Evict`` or a ``MakeResident`` nobody
        waited for, and anything the worker had still to service -- has run; with ``wait`` it runs first.  Every
        CPU view of ``a``'s bytes asks this before it shows them (decision 0058): a view of the backing store
        before the page-out copy ran would show old bytes, and what the CPU wrote there would be overwritten."""
        self.service()
        ticket = a.paging
        if ticket is None:
            return True
        if not self.paging.done(ticket, wait=wait):
            return False
        a.paging = None
        return True

    def bring_into_memory(self, a: VidMmAllocation, *, cause: str) -> bool:
        """Put ``a`` in a memory segment (out of an aperture or system memory) and wait for the move; False -- with
        ``a`` where it was -- if no memory segment can take it, even by evicting what ``a`` does not need."""
        self.service()
        if a.placement is not None and not self.segments.get(a.placement.segment_id).aperture:
            return True
        memory = [s for s in self._candidates(a) if not s.aperture]
        usable = {s.id: s for s in memory}
        for rung in self.placement.rungs(a, memory):  # the placement policy's ladder, over memory segments only
            for space in (usable[i] for i in rung.segments if i in usable):
                offset = self._room(space, a, {a.handle}, _VICTIMS[rung.victims], cause)
                if offset is None:
                    continue
                if a.placement is not None:  # the range is held: now leave the aperture for it
                    self._leave(a, cause=cause)
                self._enter(a, Placement(space.id, offset))
                self.settle()
                return True
        return False

    def place_for_submission(self, allocations: list[VidMmAllocation], *, protected: set[HANDLE]) -> bool:
        """Place every one of ``allocations`` (the allocation list of a segment-model submission), evicting only
        what ``protected`` does not name; False, with what could be placed left placed, if one does not fit."""
        self.service()
        self._moved = False
        for a in sorted(allocations, key=lambda x: -x.size):  # largest first: the fewest ranges left too small
            if a.placement is None and not self._place(a, protected, cause="pressure"):
                return False
        return True

    def evict_for_cpu(self, a: VidMmAllocation, *, discard: bool) -> None:
        """Take ``a`` to system memory now for a CPU lock (cause ``lock``) and wait until its bytes are there;
        ``discard``: the lock may drop the content (``Discard``), so nothing is copied."""
        self.service()
        if a.placement is not None:
            self._leave(a, cause="lock", keep_content=not discard)
        self.settle()

    def pin(self, handle: int) -> None:
        """Pin an allocation where it is (the kernel holds it, e.g. for scan-out): it is never a victim, and a
        lock that would have to evict it fails with ``CANTEVICTPINNEDALLOCATION``."""
        a = self.allocation(handle)
        self.service()
        a.pin_count += 1

    def unpin(self, handle: int) -> None:
        a = self.allocation(handle)
        if a.pin_count <= 0:
            raise _bad("hAllocation", handle, "is not pinned")
        a.pin_count -= 1

    def hold(self, a: VidMmAllocation) -> None:
        """VidMm's own residency reference (a tile pool that queued updates map): resident until :meth:`unhold`."""
        a.residency_count += 1
        if a.placement is None and not self._place(a, {a.handle}, cause="pressure"):
            a.residency_count -= 1
            raise DdiError(NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY, f"no segment can hold {a!r}")
        self.paging.flush()

    def unhold(self, a: VidMmAllocation) -> None:
        """Drop a reference :meth:`hold` took; the allocation stays where it is until pressure wants the room."""
        if a.handle in self.allocations and a.residency_count > 0:
            a.residency_count -= 1

    def set_priority(self, device: Device, args: D3DDDICB_SETPRIORITY) -> HRESULT:
        """``pfnSetPriorityCb``: each listed allocation's eviction priority (what ``priority-lru`` ranks by); all
        checked before any changes."""
        if args.NumAllocations != len(args.phAllocationList) or not args.phAllocationList:
            raise _bad(
                "NumAllocations",
                args.NumAllocations,
                f"must be positive and match phAllocationList ({len(args.phAllocationList)})",
            )
        if len(args.pPriorities) != len(args.phAllocationList):
            raise _bad("pPriorities", len(args.pPriorities), "needs one priority per allocation")
        listed = [self.allocation(h, f"phAllocationList[{i}]") for i, h in enumerate(args.phAllocationList)]
        for i, (a, priority) in enumerate(zip(listed, args.pPriorities, strict=True)):
            if a.device is not device:
                raise _bad(f"phAllocationList[{i}]", a.handle, "belongs to another device")
            if not isinstance(priority, int) or not 0 <= priority <= 0xFFFF_FFFF:
                raise _bad(f"pPriorities[{i}]", priority, "is a UINT")
        for a, priority in zip(listed, args.pPriorities, strict=True):
            a.priority = priority
        return HRESULT.S_OK

    def touch(self, allocations: Iterable[VidMmAllocation]) -> None:
        """Record a use (GPU work referencing them): the recency the eviction policies see."""
        for a in allocations:
            self._use(a)

    def _use(self, a: VidMmAllocation) -> None:
        self._clock += 1
        a.last_use = self._clock
        self.policy.used(a)  # after the stamp: a policy may read last_use

    # --- placement -------------------------------------------------------------------------------------------

    def _candidates(self, a: VidMmAllocation) -> list[SegmentSpace]:
        usable = set(self.segments.ids_in(a.usable_set))
        order = [s for s in a.preferred if s in usable]
        order += [s for s in sorted(usable) if s not in order]
        spaces = [self.segments.get(s) for s in order]
        if self.cpu is not None:
            spaces = [s for s in spaces if self.cpu.may_enter(a, s)]
        return spaces

    def _place(self, a: VidMmAllocation, protected: set[HANDLE], *, cause: str) -> bool:
        """Find ``a`` a range (evicting as the policy ranks) and page it in; False if nothing can hold it."""
        candidates = self._candidates(a)
        usable = {s.id: s for s in candidates}
        for rung in self.placement.rungs(a, candidates):  # the ladder is the placement policy's (decision 0065)
            for space in (usable[i] for i in rung.segments if i in usable):
                offset = self._room(space, a, protected, _VICTIMS[rung.victims], cause)
                if offset is not None:
                    self._enter(a, Placement(space.id, offset))
                    return True
        return False

    def _room(
        self, space: SegmentSpace, a: VidMmAllocation, protected: set[HANDLE], victims: Victims | None, cause: str
    ) -> int | None:
        """A range of ``space`` for ``a``: free room, else (with ``victims``) room made by evicting them."""
        alignment = max(a.alignment, self.system_chunk)  # on a GPU page: PTEs map whole ones (decision 0011)
        alignment = alignment if alignment > PAGE_SIZE else 0
        from_end = self.placement.insert_mode(a, space) == InsertMode.HIGH
        return self._carve(space, a.size, a, alignment, from_end, protected, victims, cause)

    def _carve(
        self,
        space: SegmentSpace,
        size: int,
        owner: object,
        alignment: int,
        from_end: bool,
        protected: set[HANDLE],
        victims: Victims | None,
        cause: str,
    ) -> int | None:
        offset = space.allocate(size, owner, alignment=alignment, from_end=from_end)
        if offset is not None or victims is None:
            return offset
        if victims is _anyone and self.evict_idle_tables is not None:
            offset = self.evict_idle_tables(space, size, owner, alignment, from_end)
            if offset is not None:
                return offset
        protected = protected | self._entering
        candidates = [v for v in self.residents(space) if v.handle not in protected and v.pin_count == 0 and victims(v)]
        request = RoomRequest(
            segment=space.id, size=size, alignment=alignment, from_end=from_end, owner=owner, cause=cause
        )

        def evict(victim: VidMmAllocation) -> None:
            if victim.offered is not None:
                self._drop_offered(victim)
            else:
                self._leave(victim, cause=cause, protected=protected)

        def allocate(hole: int | None) -> int | None:
            return space.allocate(size, owner, alignment=alignment, from_end=from_end, at=hole)

        free = space.ranges.free_bytes
        return make_room(space, request, candidates, self.policy, free_bytes=free, allocate=allocate, evict=evict)

    def make_room(self, space: SegmentSpace, size: int, owner: object, *, alignment: int = 0) -> int | None:
        """A range for one of VidMm's own objects (a page table): free room at the top of the segment, else room
        made by evicting -- what no residency list needs first, then anyone but the allocations being moved."""
        for victims in (None, _unreferenced, _anyone):
            offset = self._carve(space, size, owner, alignment, True, set(), victims, "pressure")
            if offset is not None:
                return offset
        return None

    def residents(self, space: SegmentSpace) -> Iterator[VidMmAllocation]:
        for owner in list(space.owners.values()):
            if isinstance(owner, VidMmAllocation):
                yield owner

    def _enter(self, a: VidMmAllocation, placement: Placement) -> None:
        a.placement = placement  # first: an adapter reset during the page-in finds the range and frees it
        how = self.mover.page_in(a, placement)
        if self.va is not None:
            self._entering.add(a.handle)  # page tables its mappings need never evict it
            try:
                self.va.after_enter(a)
            finally:
                self._entering.discard(a.handle)
        a.content = Content.DATA
        a.backing_current = False
        a.clean_start = True  # the placement equals the backing store; what the GPU writes next, NotWrittenTo says
        a.moves += 1
        self._clock += 1
        a.placed_at = self._clock
        self._moved = True
        self.policy.placed(a, placement)
        self.events.emit(
            VidMmPageIn(
                time=self.events.clock.now,
                allocation=a.handle,
                segment=placement.segment_id,
                offset=placement.offset,
                size=a.size,
                how=how,
            )
        )

    def _leave(
        self, a: VidMmAllocation, *, cause: str, keep_content: bool = True, protected: set[HANDLE] | None = None
    ) -> None:
        """Take ``a`` out of its segment: to system memory, or -- for a victim a residency list still needs -- to
        an aperture segment with free room."""
        placement = a.placement
        assert placement is not None
        if self.before_move is not None and not self._resetting:
            self.before_move(a.device)  # pinned while its device's work is in flight
        if self.va is not None:
            self.va.before_leave(a)  # no mapping reaches the range once the next operation may reuse it
        unswizzle, special = (False, None) if self.cpu is None else self.cpu.before_leave(a, cause)
        destination = self.mover.page_out(a, placement, keep_content=keep_content, unswizzle=unswizzle, special=special)
        self.segments.get(placement.segment_id).free(placement.offset)
        a.placement = None
        self._moved = True
        self.policy.evicted(a, placement, cause)
        if destination == "discarded":
            a.content = Content.DISCARDED
        if self.cpu is not None:
            self.cpu.after_leave(a)
        demoted = False
        if cause == "pressure" and a.residency_count and not self.segments.get(placement.segment_id).aperture:
            demoted = self._demote(a)
        self.events.emit(
            VidMmEvict(
                time=self.events.clock.now,
                allocation=a.handle,
                segment=placement.segment_id,
                size=a.size,
                cause=cause,
                destination="aperture" if demoted else destination,
            )
        )

    def _demote(self, a: VidMmAllocation) -> bool:
        candidates = self._candidates(a)
        usable = {s.id: s for s in candidates}
        for space in (usable[i] for i in self.placement.demotion(a, candidates) if i in usable):
            offset = space.allocate(a.size, a)
            if offset is not None:
                self._enter(a, Placement(space.id, offset))
                return True
        return False

    # --- paging fences ---------------------------------------------------------------------------------------

    def signal(self, queue: PagingQueue) -> int:
        """Give the work just built the queue's next fence value and submit it (after the requests admitted
        before it: a queue's values signal in order)."""
        self.service()
        queue.issued += 1
        self._signal_value(queue, queue.issued)
        return queue.issued

    def _signal_value(self, queue: PagingQueue, value: int) -> None:
        """Signal ``value`` on ``queue`` after the work built so far."""
        if self.gpu_fences:
            self.paging.build(
                DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
                    MonitoredFenceGpuVa=queue.fence.gpu_va, MonitoredFenceValue=value
                )
            )
        queue.pending[value] = submission = self.paging.flush()
        self.events.emit(
            PagingQueuePacket(
                time=self.events.clock.now,
                queue=queue.handle,
                device=queue.device.handle,
                value=value,
                submission=submission,
            )
        )

    def fence_value(self, queue: PagingQueue) -> int:
        """The queue's monitored fence as the CPU reads it now (the GPU runs only when someone waits)."""
        self._retire(queue)
        return queue.fence.value

    def poll_fence_value(self, queue: PagingQueue) -> int:
        """The queue's fence as a CPU polling ``FenceValueCPUVirtualAddress`` reads it: the paging worker services
        what it admitted, built work is submitted, the value is read, and then time passes
        (:meth:`GpuScheduler.poll`), so a client that polls instead of waiting sees its value after finitely many
        polls."""
        self.service()
        self.paging.flush()
        value = self.fence_value(queue)
        self.poll()
        return value

    def poll(self) -> None:
        """Time passes for a CPU that polls (a ``DonotWait`` lock, a fence read): the GPU runs one more event."""
        self.paging.scheduler.poll()

    def _retire(self, queue: PagingQueue) -> None:
        for value, submission in sorted(queue.pending.items()):
            if not self.paging.scheduler.is_complete(self.paging.node, submission):
                break
            if not self.gpu_fences:
                queue.fence.cpu_signal(max(value, queue.fence.value))
            del queue.pending[value]

    def wait(self, queue: PagingQueue, value: int) -> None:
        """Wait on the CPU until the queue's fence reaches ``value`` (0 returns at once).  The paging worker
        catches up first -- all of it, in priority order -- and the paging engine then runs only as far as the
        work that signals ``value``."""
        _fence_value(value)
        if value > queue.issued:
            raise _bad("FenceValue", value, f"the queue has issued values up to {queue.issued} only")
        self.service()
        submission = max((s for v, s in queue.pending.items() if v <= value), default=0)
        if submission:
            self.paging.wait(submission)
        self._retire(queue)
        if queue.fence.value < value:
            raise AssertionError(f"paging fence {value} completed but the fence reads {queue.fence.value}")

    def wait_sync(self, sync: SyncObject, value: int) -> None:
        """Wait on the CPU until a monitored-fence sync object reaches ``value`` (``hFenceObject`` of
        ``UpdateGpuVirtualAddress``): the paging work queued to signal it runs first.  A value that neither
        the fence nor any queued work reaches is refused -- with one CPU thread, nothing else could signal it,
        so the wait would never return."""
        _fence_value(value)
        if sync.fence.value >= value:
            return
        self.service()
        if sync.promised < value:
            raise _bad(
                "FenceValue",
                value,
                f"nothing will signal it: the fence is at {sync.fence.value} and queued work reaches {sync.promised}",
            )
        self.settle()  # the paging engine runs in order: the work that signals ``promised`` completes
        if self.va is not None:  # tiled updates signal from their paging companion contexts
            self.va.updates.wait_companions(sync.device.process)
        if sync.fence.value < value:
            raise AssertionError(f"monitored fence promised {sync.promised} but reads {sync.fence.value}")

    # --- offer and reclaim -----------------------------------------------------------------------------------

    def offer(self, args: D3DKMT_OFFERALLOCATIONS) -> None:
        """``D3DKMTOfferAllocations``: VidMm may drop the content under pressure until reclaimed."""
        device = self.device(args.hDevice)
        _reserved("Flags", args.Flags)
        offerable = {int(p) for p in D3DDDI_OFFER_PRIORITY} - {D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_NONE}
        if not _integer(args.Priority) or args.Priority not in offerable:
            raise _bad(
                "Priority",
                args.Priority,
                "must be LOW (1) .. AUTO (4): D3DDDI_OFFER_PRIORITY_NONE must not be used when offering",
            )
        self.service()
        if args.NumAllocations != len(args.HandleList) or not args.HandleList:
            raise _bad(
                "NumAllocations", args.NumAllocations, f"must be positive and match HandleList ({len(args.HandleList)})"
            )
        listed = [self.allocation(h, f"HandleList[{i}]") for i, h in enumerate(args.HandleList)]
        for i, a in enumerate(listed):
            if a.device is not device:
                raise _bad(f"HandleList[{i}]", a.handle, "belongs to another device")
            if a.offered is not None:
                raise _bad(f"HandleList[{i}]", a.handle, "is already offered")
            if a.handle in args.HandleList[:i]:
                raise _bad(f"HandleList[{i}]", a.handle, "lists the allocation twice")
            if a.lock is not None or a.pin_count:
                raise _bad(f"HandleList[{i}]", a.handle, "is locked (or pinned): unlock it before offering it")
        for a in listed:
            a.offered = args.Priority
            a.allow_decommit = bool(args.Flags.AllowDecommit)
        if args.Flags.OfferImmediately:
            for a in listed:
                self._drop_offered(a)
            self.paging.flush()

    def _drop_offered(self, a: VidMmAllocation) -> None:
        """What pressure does to an offered allocation: its content goes, and with AllowDecommit its pages."""
        if a.placement is not None:
            self._leave(a, cause="offer", keep_content=False)
        a.content = Content.DISCARDED
        if a.allow_decommit and a.backing is not None:
            self.paging.wait(self.paging.flush())
            self.mm.free_pages(a.backing)
            a.backing = None

    def reclaim(self, args: D3DKMT_RECLAIMALLOCATIONS2) -> HRESULT:
        """``D3DKMTReclaimAllocations2``: OK, DISCARDED or NOT_COMMITTED per allocation; pages in what a
        residency list holds."""
        queue = self.queue(args.hPagingQueue)
        self.service()
        if args.NumAllocations != len(args.HandleList) or not args.HandleList:
            raise _bad(
                "NumAllocations", args.NumAllocations, f"must be positive and match HandleList ({len(args.HandleList)})"
            )
        listed = [self.allocation(h, f"HandleList[{i}]") for i, h in enumerate(args.HandleList)]
        for i, a in enumerate(listed):
            if a.offered is None:
                raise _bad(f"HandleList[{i}]", a.handle, "is not offered")
        fresh = self._commit_backing([a for a in listed if a.backing is None])
        results: list[D3DDDI_RECLAIM_RESULT] = []
        self._moved = False
        for a in listed:
            if a.handle in fresh:
                a.backing = fresh[a.handle]
                a.content = Content.ZERO
                results.append(D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_NOT_COMMITTED)
            elif a.content == Content.DISCARDED:
                # Undefined for the application; zeros for everyone else (no stale byte is ever shown).  A copy
                # into the backing store still queued (an Evict nobody waited for) runs first, or it would land
                # over the zeros.
                assert a.backing is not None
                self.paging_done(a, wait=True)
                self.mm.write(a.backing, 0, bytes(a.size))
                a.content = Content.ZERO
                results.append(D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_DISCARDED)
            else:
                results.append(D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_OK)
            a.offered = None
            a.allow_decommit = False
        protected = {a.handle for a in listed}
        for a in listed:
            if a.residency_count and a.placement is None:
                self._place(a, protected, cause="pressure")
        args.pResults = results
        args.PagingFenceValue = self.signal(queue) if self._moved else 0
        return HRESULT.E_PENDING if self._moved else HRESULT.S_OK

    def _commit_backing(self, allocations: list[VidMmAllocation]) -> dict[HANDLE, MDL]:
        """Fresh backing stores for ``allocations``, all or none (``STATUS_NO_MEMORY``, nothing kept)."""
        fresh: dict[HANDLE, MDL] = {}
        try:
            for a in allocations:
                fresh[a.handle] = self.mm.allocate_pages_for_mdl(a.size, chunk=self.system_chunk)
        except (MemoryError, ValueError) as error:
            for mdl in fresh.values():
                self.mm.free_pages(mdl)
            raise DdiError(
                NTSTATUS.STATUS_NO_MEMORY, f"no system memory to recommit offered allocations: {error}"
            ) from None
        return fresh

    # --- power transitions (decision 0045) --------------------------------------------------------------------

    def power_down(self, purged: Callable[[int, int, int], bool]) -> list[VidMmAllocation]:
        """Before the adapter powers down: every allocation in a range the transition purges leaves for its
        backing store (cause ``power``; content that may be dropped is dropped, as for any eviction) and the
        copies run.  Returns those allocations."""
        self.service()
        gone = [
            a
            for a in self.allocations.values()
            if a.placement is not None and purged(a.placement.segment_id, a.placement.offset, a.size)
        ]
        for a in gone:
            self._leave(a, cause="power")
        self.settle()
        return gone

    def power_up(self, moved: list[VidMmAllocation]) -> int:
        """After the adapter is back in D0: what the kernel holds -- pinned allocations and context images --
        is placed again at once (the rest returns when its device next needs it).  Returns how many."""
        wanted = sorted(
            (a for a in moved if a.handle in self.allocations and a.placement is None and (a.pin_count or a.context)),
            key=lambda a: -a.size,
        )
        protected = {a.handle for a in wanted}
        for a in wanted:
            if not self._place(a, protected, cause="pressure"):
                raise DdiError(
                    NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY, f"no segment can take {a!r} back after the wake"
                )
        self.settle()
        return len(wanted)

    # --- adapter reset (decision D6) ---------------------------------------------------------------------------

    def on_adapter_reset(self, reason: str) -> None:
        """After ``DxgkDdiResetFromTimeout``: memory segments lost their contents.

        Each allocation that was in a memory segment is reported evicted by a ``Transfer`` of size 0 and goes
        back to its backing store as it was (whatever was last paged out: the segment's bytes are gone); each
        aperture placement is unmapped to the dummy page (its bytes were the backing store's all along); every
        device is put in error (``DEVICE_REMOVED``).  Paging buffers built here run on the restarted engine.
        """
        if self._resetting:  # the reset's own paging failed: the outer call finishes the bookkeeping
            return
        self._resetting = True
        self.worker.drop()  # their devices are removed; every value is retired below
        try:
            for device in self.devices.values():
                device.removed = device.removed or f"adapter reset: {reason}"
            lost = [(a, a.placement) for a in self.allocations.values() if a.placement is not None]
            for a, placement in lost:
                self.segments.get(placement.segment_id).free(placement.offset)
                a.placement = None
                a.ready_fence = 0
                self.policy.evicted(a, placement, "reset")
            for queue in self.queues.values():
                queue.pending.clear()
                queue.fence.cpu_signal(queue.issued)  # every value is retired: nothing waits forever
            with contextlib.suppress(DeviceRemoved):  # the engine failed again: reports lost, bookkeeping not
                self._report_reset(lost)
        finally:
            self._resetting = False

    def _report_reset(self, lost: list[tuple[VidMmAllocation, Placement]]) -> None:
        for a, placement in lost:
            if self.va is not None:
                self.va.before_leave(a)
            space = self.segments.get(placement.segment_id)
            if space.aperture:
                self.mover.page_out(a, placement)
            else:
                self.mover.report_lost(a, placement)
            self.events.emit(
                VidMmEvict(
                    time=self.events.clock.now,
                    allocation=a.handle,
                    segment=placement.segment_id,
                    size=a.size,
                    cause="reset",
                    destination="system" if space.aperture else "lost",
                )
            )
        self.paging.wait(self.paging.flush())

    # --- introspection -------------------------------------------------------------------------------------

    def where(self, handle: int) -> Residence:
        """Where an allocation is, whether its placement is published yet, and who needs it."""
        a = self.allocation(handle)
        space = None if a.placement is None else self.segments.get(a.placement.segment_id)
        published = True
        if a.ready_fence:
            queue = next((q for q in a.device.queues if q.issued >= a.ready_fence), None)
            published = queue is None or self.fence_value(queue) >= a.ready_fence
        return Residence(
            handle=a.handle,
            size=a.size,
            segment_id=0 if a.placement is None else a.placement.segment_id,
            offset=None if a.placement is None else a.placement.offset,
            segment_address=None if space is None or a.placement is None else space.base + a.placement.offset,
            kind="system" if space is None else ("aperture" if space.aperture else "memory"),
            published=published,
            residency_count=a.residency_count,
            content=a.content.value,
            backing_pfns=() if a.backing is None else tuple(int(p) for p in a.backing.pfns[:8]),
            offered=a.offered is not None,
        )

    # --- trimming --------------------------------------------------------------------------------------------

    def trim_residency_set(self, device: Device, args: D3DDDIARG_TRIMRESIDENCYSET) -> int:
        """What a reference user-mode driver does when VidMm calls ``pfnTrimResidencySet``: evicts (drops from
        the list and pages out) per the flags; returns the bytes trimmed."""
        if self.devices.get(device.handle) is not device:
            raise _bad("hDevice", int(device.handle), "is not a live device")
        flags = args.TrimFlags
        _reserved("TrimFlags", flags)
        if not isinstance(args.NumBytesToTrim, int) or not 0 <= args.NumBytesToTrim < 1 << 64:
            raise _bad("NumBytesToTrim", args.NumBytesToTrim, "must be a UINT64")
        self.service()
        if flags.PeriodicTrim and flags.RestartPeriodicTrim:
            raise _bad("TrimFlags", flags.Value, "RestartPeriodicTrim is not valid with PeriodicTrim")
        listed = sorted(
            (a for a in self.allocations.values() if a.device is device and a.residency_count),
            key=lambda a: a.last_use,
        )
        trimmed = 0
        if flags.RestartPeriodicTrim:
            device.periodic_trim_fence = self._clock
            return 0
        if flags.PeriodicTrim:
            for a in listed:
                if a.last_use <= device.periodic_trim_fence:
                    trimmed += self._trim(a)
            device.periodic_trim_fence = self._clock
        if flags.TrimToBudget:
            for a in listed:
                if trimmed >= args.NumBytesToTrim:
                    break
                if a.residency_count:
                    trimmed += self._trim(a)
        self.paging.flush()
        return trimmed

    def _trim(self, a: VidMmAllocation) -> int:
        a.residency_count = 0
        if a.placement is not None:
            self._leave(a, cause="trim")
        return a.size


_VICTIMS: dict[VictimClass, Victims | None] = {
    VictimClass.NONE: None,
    VictimClass.UNREFERENCED: _unreferenced,
    VictimClass.ANYONE: _anyone,
}


def _in_use(a: VidMmAllocation) -> bool:
    """Listed in its device's residency set and usable by its work: referenced and not offered."""
    return a.residency_count > 0 and a.offered is None
