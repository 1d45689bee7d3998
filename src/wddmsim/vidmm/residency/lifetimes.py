"""Processes, devices and allocations from creation to destruction, and where an allocation is
(:class:`Residence`, as the inspector shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import (
    D3DDDICB_SETPRIORITY,
    DXGK_ALLOCATIONINFO,
    DXGKARG_CREATEALLOCATION,
    DXGKARG_DESTROYALLOCATION,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.status import HRESULT, NT_SUCCESS, NTSTATUS, DdiError
from wddmsim.vidmm.accounting import ProcessAccount
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, Process
from wddmsim.vidmm.move_kinds import Destination, MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.budgets import GROUPS, Budgets
from wddmsim.vidmm.residency.checks import bad
from wddmsim.vidmm.residency.fences import PagingFences
from wddmsim.vidmm.residency.placement import Placer
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.segments import SegmentSpace


@dataclass(frozen=True, slots=True, kw_only=True)
class Residence:
    """The answer of :meth:`Lifetimes.where`: one allocation's place, as the inspector shows it."""

    handle: int
    size: int
    segment_id: int
    """0: in system memory only (decision D4)."""
    offset: int | None
    segment_address: int | None
    """``SegmentAddress`` = ``BaseAddress`` + offset, as paging operations name it."""
    kind: str
    """``memory``, ``aperture`` or ``system`` (a :class:`~wddmsim.vidmm.moves.causes.Destination` value)."""
    published: bool
    """The paging fence of the move that put it there has passed: the GPU may use it."""
    residency_count: int
    content: str
    backing_pfns: tuple[int, ...]
    """The first PFNs of the backing store (system pages)."""
    offered: bool


def _kind(space: SegmentSpace | None) -> Destination:
    """Where an allocation in ``space`` (None: no segment) is."""
    if space is None:
        return Destination.SYSTEM
    return Destination.APERTURE if space.aperture else Destination.MEMORY


@final
class Lifetimes:
    """Create and destroy processes, devices and allocations; pin, prioritise and locate allocations."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        objects: ObjectTable,
        placement: Placer,
        servicing: PagingService,
        fences: PagingFences,
        budgets: Budgets,
        paging: PagingStream,
        events: EventLog,
        *,
        gpu_fences: bool,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.objects = objects
        self.placement = placement
        self.segments = placement.segments
        self.system_chunk = placement.system_chunk
        self.servicing = servicing
        self.fences = fences
        self.budgets = budgets
        self.paging = paging
        self.events = events
        self.gpu_fences = gpu_fences

    def create_process(self) -> Process:
        handle = self.objects.new_handle()
        apertures = frozenset(s.id for s in self.segments if s.aperture)
        account = ProcessAccount(int(handle), apertures, self.events)
        process = Process(handle, self.mm.create_address_space(), account=account)
        for group in GROUPS:
            process.budgets[group] = self.budgets.capacity(group)
        self.objects.processes[process.handle] = process
        return process

    def create_device(self, process: Process) -> Device:
        if process.handle not in self.objects.processes:
            raise bad("hProcess", int(process.handle), "is not a live process")
        device = Device(self.objects.new_handle(), process)
        self.objects.devices[device.handle] = device
        return device

    def create_allocation(self, device: Device, private_data: bytes) -> VidMmAllocation:
        """``DxgkDdiCreateAllocation`` for one allocation, then its backing store (committed now, zeroed)."""
        return self.create_allocations(device, [private_data])[0]

    def create_allocations(
        self, device: Device, private_data: list[bytes], resource_data: bytes = b""
    ) -> list[VidMmAllocation]:
        """One ``DxgkDdiCreateAllocation`` call for every allocation of a ``pfnAllocateCb`` (the driver sees them
        together), then their backing stores: all of them, or none and nothing kept."""
        if device.handle not in self.objects.devices:
            raise bad("hDevice", int(device.handle), "is not a live device")
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
            self.objects.allocations[a.handle] = a
            device.process.account.created(a)
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

    def destroy_allocation(self, handle: HANDLE) -> None:
        """Destroy: the content is dropped (no copy), the range and the backing store are freed."""
        a = self.objects.allocation(handle)
        if a.pin_count:
            raise bad("hAllocation", handle, "is pinned (a lock or paging operation is under way)")
        self.servicing.service()
        for observer in self.placement.observers:
            observer.may_forget(a)  # the locks refuse a locked allocation
        # Work in flight may still use it: it completes before its VAs go (CPU_VIRTUAL page-table updates are
        # written at once, not queued behind it) -- a free while the GPU is busy waits for the fence.  Then every
        # VA mapped to it is freed, then its swizzling ranges and CPU view go.
        for observer in self.placement.observers:
            observer.forget(a)
        if a.placement is not None:
            self.placement.leave(a, cause=MoveCause.DESTROY, keep_content=False)
        self.paging.wait(self.paging.flush())
        if a.backing is not None:
            self.mm.free_pages(a.backing)
            a.backing = None
        del self.objects.allocations[handle]
        self.placement.policy.freed(a)
        self.driver.destroy_allocation(DXGKARG_DESTROYALLOCATION(NumAllocations=1, pAllocationList=(a.handle,)))
        a.device.process.account.destroyed(a)

    def set_priority(self, device: Device, args: D3DDDICB_SETPRIORITY) -> HRESULT:
        """``pfnSetPriorityCb``: each listed allocation's eviction priority (what ``priority-lru`` ranks by); all
        checked before any changes."""
        if args.NumAllocations != len(args.phAllocationList) or not args.phAllocationList:
            raise bad(
                "NumAllocations",
                args.NumAllocations,
                f"must be positive and match phAllocationList ({len(args.phAllocationList)})",
            )
        if len(args.pPriorities) != len(args.phAllocationList):
            raise bad("pPriorities", len(args.pPriorities), "needs one priority per allocation")
        listed = [self.objects.allocation(h, f"phAllocationList[{i}]") for i, h in enumerate(args.phAllocationList)]
        for i, (a, priority) in enumerate(zip(listed, args.pPriorities, strict=True)):
            if a.device is not device:
                raise bad(f"phAllocationList[{i}]", a.handle, "belongs to another device")
            if not isinstance(priority, int) or not 0 <= priority <= 0xFFFF_FFFF:
                raise bad(f"pPriorities[{i}]", priority, "is a UINT")
        for a, priority in zip(listed, args.pPriorities, strict=True):
            a.priority = priority
        return HRESULT.S_OK

    def pin(self, handle: HANDLE) -> None:
        """Pin an allocation where it is (the kernel holds it, e.g. for scan-out): it is never a victim, and a
        lock that would have to evict it fails with ``CANTEVICTPINNEDALLOCATION``."""
        a = self.objects.allocation(handle)
        self.servicing.service()
        a.pin_count += 1

    def unpin(self, handle: HANDLE) -> None:
        a = self.objects.allocation(handle)
        if a.pin_count <= 0:
            raise bad("hAllocation", handle, "is not pinned")
        a.pin_count -= 1

    def where(self, handle: HANDLE) -> Residence:
        """Where an allocation is, whether its placement is published yet, and who needs it."""
        a = self.objects.allocation(handle)
        space = None if a.placement is None else self.segments.get(a.placement.segment_id)
        published = True
        if a.ready_fence:
            queue = next((q for q in a.device.queues if q.issued >= a.ready_fence), None)
            published = queue is None or self.fences.fence_value(queue) >= a.ready_fence
        return Residence(
            handle=a.handle,
            size=a.size,
            segment_id=0 if a.placement is None else a.placement.segment_id,
            offset=None if a.placement is None else a.placement.offset,
            segment_address=None if space is None or a.placement is None else space.base + a.placement.offset,
            kind=_kind(space).value,
            published=published,
            residency_count=a.residency_count,
            content=a.content.value,
            backing_pfns=() if a.backing is None else tuple(int(p) for p in a.backing.pfns[:8]),
            offered=a.offered is not None,
        )
