"""``ResidencyManager``: the documented residency calls, over the parts that model them (decision 0060).

What it models (wddm-spec.md sections 3.7-3.9, decisions D4 and D7, decision 0013), and where:

- ``MakeResident`` / ``Evict``: :mod:`.requests` (admitted, then serviced by the paging worker: :mod:`.servicing`).
- Where allocations go and the room made for them, every move told to the move observers: :mod:`.placement`.
- Budgets, ``QueryVideoMemoryInfo``, ``TrimResidencySet``: :mod:`.budgets`.
- Paging queues, their fences and sync objects: :mod:`.fences`; the CPU's waits for them: :mod:`.waits`.
- Offer and reclaim: :mod:`.offers`.  Context allocations: :mod:`.contexts`.
- Processes, devices and allocations from creation to destruction, and where one is: :mod:`.lifetimes`.
- Power transitions and adapter resets: :mod:`.outages`.
- The handles themselves: :class:`~wddmsim.vidmm.objects.ObjectTable`.

Errors follow the user-mode callbacks: an argument that breaks a rule raises
:class:`~wddmsim.ddi.status.InvalidArgument` with ``E_INVALIDARG`` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import D3DDDICB_SETPRIORITY
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_MAKERESIDENT,
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DDDICB_EVICT,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, FenceArea, PagingQueue, Process, SyncObject
from wddmsim.vidmm.events import ProcessLifetime
from wddmsim.vidmm.moves.causes import MoveObserver
from wddmsim.vidmm.moves.mover import Mover
from wddmsim.vidmm.moves.scratch import Scratch
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.policy import EvictionPolicy, PlacementPolicy
from wddmsim.vidmm.residency.budgets import Budgets
from wddmsim.vidmm.residency.contexts import ContextAllocations
from wddmsim.vidmm.residency.fences import PagingFences
from wddmsim.vidmm.residency.lifetimes import Lifetimes, Residence
from wddmsim.vidmm.residency.offers import Offers
from wddmsim.vidmm.residency.outages import Outages
from wddmsim.vidmm.residency.placement import Placer
from wddmsim.vidmm.residency.requests import Requests
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.residency.waits import Waits
from wddmsim.vidmm.residency.worker import PagingWorker
from wddmsim.vidmm.segments import IdleTables, Segments


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
        objects: ObjectTable,
        *,
        observers: tuple[MoveObserver, ...] = (),
        idle_tables: IdleTables | None = None,
        wait_companions: Callable[[Process], None] | None = None,
        system_chunk: int = PAGE_SIZE,
        gpu_fences: bool,
        scratch: Scratch | None = None,
        process: SystemPagingProcess | None = None,
        deferred: bool = True,
        placement: PlacementPolicy | None = None,
        budgets: str = "capacity",
    ) -> None:
        self.paging = paging
        self.segments = segments
        self.events = events
        self.objects = objects
        self.placement = Placer(
            segments,
            mover,
            policy,
            paging,
            mm,
            events,
            objects,
            observers=observers,
            idle_tables=idle_tables,
            system_chunk=system_chunk,
            placement=placement,
        )
        self.fences = PagingFences(paging, events, objects, fences, gpu_fences=gpu_fences)
        self.servicing = PagingService(objects, self.placement, self.fences, paging)
        self.waits = Waits(self.servicing, self.fences, paging, objects, wait_companions=wait_companions)
        self.budgets = Budgets(objects, segments, self.placement, self.servicing, paging, events, model=budgets)
        self.requests = Requests(
            objects, self.placement, self.servicing, self.waits, self.budgets, paging, events, deferred=deferred
        )
        self.offers = Offers(objects, self.placement, self.servicing, self.waits, mm, paging, system_chunk=system_chunk)
        self.lifetimes = Lifetimes(
            driver,
            mm,
            objects,
            self.placement,
            self.servicing,
            self.fences,
            self.budgets,
            paging,
            events,
            gpu_fences=gpu_fences,
        )
        self.system_device = self.lifetimes.create_device(self.lifetimes.create_process())
        """The system device: owner of context allocations created with ``hDevice`` NULL."""
        self.budgets.exempt = self.system_device.process
        self.placement.over_budget = self.budgets.is_over
        self.context_allocations = ContextAllocations(
            objects,
            self.placement,
            paging,
            mm,
            events,
            system_device=self.system_device,
            system_chunk=system_chunk,
            scratch=scratch,
            paging_process=process,
        )
        self.outages = Outages(objects, self.placement, self.servicing, paging)

    # --- the object table's tables, under their old names --------------------------------------------------

    @property
    def processes(self) -> dict[HANDLE, Process]:
        return self.objects.processes

    @property
    def devices(self) -> dict[HANDLE, Device]:
        return self.objects.devices

    @property
    def queues(self) -> dict[HANDLE, PagingQueue]:
        return self.objects.queues

    @property
    def allocations(self) -> dict[HANDLE, VidMmAllocation]:
        return self.objects.allocations

    @property
    def sync_objects(self) -> dict[HANDLE, SyncObject]:
        return self.objects.sync_objects

    @property
    def contexts(self) -> dict[HANDLE, Device]:
        return self.objects.contexts

    @property
    def worker(self) -> PagingWorker:
        """The paging worker's backlog (decision 0043)."""
        return self.servicing.worker

    # --- processes, devices, allocations --------------------------------------------------------------------

    def create_process(self) -> Process:
        """A process, its budgets at the groups' capacities (then shared, under the shared model)."""
        process = self.lifetimes.create_process()
        self.events.emit(ProcessLifetime(time=self.events.clock.now, process=int(process.handle), action="start"))
        self.budgets.rebalance("process-start")
        return process

    def create_device(self, process: Process) -> Device:
        return self.lifetimes.create_device(process)

    def create_allocations(
        self, device: Device, private_data: list[bytes], resource_data: bytes = b""
    ) -> list[VidMmAllocation]:
        """``pfnAllocateCb``: one ``DxgkDdiCreateAllocation`` call for all of them, then their backing stores."""
        return self.lifetimes.create_allocations(device, private_data, resource_data)

    def destroy_allocation(self, handle: HANDLE) -> None:
        """``pfnDeallocateCb`` for one allocation: its content is dropped, its range and backing store freed."""
        self.lifetimes.destroy_allocation(handle)
        self.budgets.usage_changed()

    def set_priority(self, device: Device, args: D3DDDICB_SETPRIORITY) -> HRESULT:
        """``pfnSetPriorityCb``."""
        return self.lifetimes.set_priority(device, args)

    def where(self, handle: HANDLE) -> Residence:
        """Where an allocation is, whether its placement is published yet, and who needs it."""
        return self.lifetimes.where(handle)

    # --- paging queues, residency, budgets ------------------------------------------------------------------

    def create_paging_queue(self, args: D3DDDI_CREATEPAGINGQUEUE) -> None:
        """``pfnCreatePagingQueueCb``."""
        self.fences.create_paging_queue(args)

    def destroy_paging_queue(self, handle: HANDLE) -> None:
        """``pfnDestroyPagingQueueCb``: the queue's work completes first."""
        self.waits.destroy_paging_queue(handle)

    def make_resident(self, args: D3DDDI_MAKERESIDENT) -> HRESULT:
        """``pfnMakeResidentCb`` / ``D3DKMTMakeResident``."""
        result = self.requests.make_resident(args)
        self.budgets.usage_changed()
        return result

    def evict(self, args: D3DDDICB_EVICT) -> HRESULT:
        """``pfnEvictCb`` / ``D3DKMTEvict``."""
        result = self.requests.evict(args)
        self.budgets.usage_changed()
        return result

    def trim_residency_set(self, device: Device, args: D3DDDIARG_TRIMRESIDENCYSET) -> int:
        """``pfnTrimResidencySet`` as a reference user-mode driver answers it; returns the bytes trimmed."""
        trimmed = self.budgets.trim_residency_set(device, args)
        self.budgets.usage_changed()
        return trimmed

    def query_video_memory_info(self, args: D3DKMT_QUERYVIDEOMEMORYINFO) -> None:
        """``D3DKMTQueryVideoMemoryInfo``."""
        self.budgets.query_video_memory_info(args)

    def offer(self, args: D3DKMT_OFFERALLOCATIONS) -> None:
        """``D3DKMTOfferAllocations``."""
        self.offers.offer(args)

    def reclaim(self, args: D3DKMT_RECLAIMALLOCATIONS2) -> HRESULT:
        """``D3DKMTReclaimAllocations2``."""
        return self.offers.reclaim(args)

    # --- fences and waits -----------------------------------------------------------------------------------

    def create_sync_object(self, device: Device) -> SyncObject:
        """A monitored fence (value 0) the device's work can wait on and signal."""
        return self.fences.create_sync_object(device)

    def signal_from_cpu(self, handle: HANDLE, value: FenceValue) -> None:
        """``SignalSynchronizationObjectFromCpu``."""
        self.fences.signal_from_cpu(handle, value)

    def wait(self, queue: PagingQueue, value: FenceValue) -> None:
        """Wait on the CPU until the paging queue's fence reaches ``value``."""
        self.waits.wait(queue, value)

    def wait_sync(self, sync: SyncObject, value: FenceValue) -> None:
        """Wait on the CPU until a monitored-fence sync object reaches ``value``."""
        self.waits.wait_sync(sync, value)

    def poll_fence_value(self, queue: PagingQueue) -> FenceValue:
        """The queue's fence as a CPU polling ``FenceValueCPUVirtualAddress`` reads it."""
        return self.waits.poll_fence_value(queue)

    def settle(self) -> None:
        """Service the admitted requests, submit what is built and wait until the paging engine has run it."""
        self.servicing.settle()
