"""``VideoMemoryManager``: a small coordinator -- adapter discovery, the GPU scheduler, the paging stream.

At start it asks the driver what it is (``DXGKQAITYPE_DRIVERCAPS``) and what segments it has
(``DXGKQAITYPE_QUERYSEGMENT4``, the documented two-call protocol), then sizes its paging buffers from
``PagingBufferSize`` / ``PagingBufferPrivateDataSize``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from wddmsim.core.clock import Clock
from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGKARG_CREATEALLOCATION, DXGKARG_DESTROYALLOCATION
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.caps import DXGK_DRIVERCAPS, DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.context import DXGK_CONTEXTINFO, DXGK_CREATECONTEXTFLAGS, DXGKARG_CREATECONTEXT
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO, KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTIN4, DXGK_QUERYSEGMENTOUT4, DXGK_SEGMENTDESCRIPTOR4
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.callbacks import DxgkrnlCallbacks
from wddmsim.vidmm.device import Device, FenceArea
from wddmsim.vidmm.events import AdapterAllocation, ReportSegment
from wddmsim.vidmm.gpummu import GpuMmuDescription, query_gpummu
from wddmsim.vidmm.lock import LockManager
from wddmsim.vidmm.mover import Mover
from wddmsim.vidmm.paging import PagingStream
from wddmsim.vidmm.paging_buffer import PagingBufferPool
from wddmsim.vidmm.paging_home import AperturePagingBuffers, paging_segment
from wddmsim.vidmm.paging_process import SystemPagingProcess
from wddmsim.vidmm.policy import EvictionPolicy, PlacementPolicy, eviction_policy, placement_policy
from wddmsim.vidmm.power import PowerKind, PowerManager, PowerReport, check_segments
from wddmsim.vidmm.render import RenderSubmitter
from wddmsim.vidmm.reset import ResetPath
from wddmsim.vidmm.residency import ResidencyManager
from wddmsim.vidmm.scheduler import GpuScheduler
from wddmsim.vidmm.scratch import Scratch
from wddmsim.vidmm.segments import Segments
from wddmsim.vidmm.teardown import Teardown
from wddmsim.vidmm.vaspace import VaManager
from wddmsim.vidmm.work import WorkSubmitter


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmConfig:
    paging_buffers: int = 4
    """How many paging buffers rotate (a new one is used only after its previous fence passed)."""
    paging_context: int = 1
    """``hSystemContext``: the driver's system context for paging."""
    paging_buffer_size: int | None = None
    """Override the driver's ``PagingBufferSize`` (tests sweep it)."""
    scratch_size: int = 16 * 1024 * 1024
    """The system paging process's scratch area (GpuMmu): content moves through it in chunks of half of it."""
    physical_moves: bool = False
    """Move content with physical ``Transfer``/``Fill`` even on a GpuMmu driver (decision 0014)."""
    eviction_policy: str | EvictionPolicy = "priority-lru"
    """The eviction policy: a name of :data:`wddmsim.vidmm.policy.registry.EVICTION`, ``module:Class``, or a
    policy object (an offline policy built with a recorded run's uses)."""
    placement_policy: str | PlacementPolicy = "ladder"
    """The placement policy: a name of :data:`wddmsim.vidmm.policy.registry.PLACEMENT`, ``module:Class``, or an
    object."""
    deferred_paging: bool = True
    """``MakeResident`` is admitted at the call and serviced by the paging worker, highest queue priority first
    (decision 0043); False services each request within its call (queue priorities then change nothing)."""


@final
class VideoMemoryManager:
    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        clock: Clock,
        events: EventLog,
        config: VidMmConfig | None = None,
    ) -> None:
        self.config = config or VidMmConfig()
        self.driver = driver
        self.mm = mm
        self.clock = clock
        self.events = events
        self.caps = self._query_caps()
        self.segments, self.paging_buffer_size, self.private_data_size, paging_segment_id = self._query_segments()
        if self.config.paging_buffer_size is not None:
            self.paging_buffer_size = self.config.paging_buffer_size
        self.spaces = Segments(self.segments, events, aperture_commit_limit=self.caps.ApertureSegmentCommitLimit)
        paging_home = paging_segment(self.spaces, paging_segment_id)
        check_segments(self.spaces)  # the power flags form valid combinations
        self._report_segments()
        self.gpummu: GpuMmuDescription | None = None
        self.paging_process: SystemPagingProcess | None = None
        if self.caps.MemoryManagementCaps.GpuMmuSupported:
            self.gpummu = query_gpummu(driver, self.segments)
        self.scheduler = GpuScheduler(driver, clock, events, nodes=2)
        self.callbacks = DxgkrnlCallbacks(self.scheduler)
        driver.start_device(self.callbacks)
        if self.gpummu is not None:
            self.paging_process = SystemPagingProcess(
                driver,
                mm,
                self.gpummu,
                self.spaces,
                HANDLE(self.config.paging_context),
                scratch_size=self.config.scratch_size,
            )
        self.reset = ResetPath(driver, self.scheduler, events)
        self.pool = PagingBufferPool(
            mm,
            size=self.paging_buffer_size,
            private_size=self.private_data_size,
            count=1 if paging_home is not None else self.config.paging_buffers,  # decision 0044: the bootstrap
        )
        self.paging = PagingStream(
            driver,
            self.scheduler,
            self.pool,
            self.reset,
            events,
            context=HANDLE(self.config.paging_context),
            node=self.caps.PagingNode,
        )
        if self.paging_process is not None:
            self.paging_process.before_cpu_write = self._settle_paging
        page = PAGE_SIZE if self.gpummu is None else self.gpummu.page_size
        dummy = mm.allocate_pages_for_mdl(page, chunk=page)  # a whole GPU page (decision 0011)
        self.dummy_page = int(dummy.pfns[0]) << PAGE_SHIFT
        """The zeroed system page unmapped aperture pages point at (``UnmapApertureSegment.DummyPage``)."""
        self.fences = FenceArea(mm, self.paging_process)
        self.mover = Mover(
            self.paging,
            self.spaces,
            dummy_page=self.dummy_page,
            map_aperture2=bool(self.caps.MemoryManagementCaps.MapAperture2Supported),
            scratch=self._scratch(),
        )
        self.residency = ResidencyManager(
            driver,
            mm,
            self.paging,
            self.spaces,
            self.mover,
            self.fences,
            eviction_policy(self.config.eviction_policy),
            events,
            gpu_fences=self.gpummu is not None,
            scratch=self.mover.scratch,
            process=self.paging_process,
            deferred=self.config.deferred_paging,
            placement=placement_policy(self.config.placement_policy),
        )
        self.paging.allocation_size = self._allocation_size
        if self.paging_process is not None:  # its tables first: every later step of the reset runs paging work
            self.reset.before.append(self._save_paging_tables)
            self.reset.listeners.append(self._restore_paging_tables)
        self.reset.listeners.append(self.residency.on_adapter_reset)
        self.residency.system_chunk = page
        self.callbacks.residency = self.residency
        self.va: VaManager | None = None
        if self.gpummu is not None and self.paging_process is not None:
            self.va = VaManager(driver, mm, self.paging, self.gpummu, self.spaces, self.paging_process)
            self.residency.va = self.va
            self.residency.evict_idle_tables = self.va.evict_idle_tables
            self.va.residency = self.residency
            self.paging_process.make_room = self.residency.make_room
            if self.mover.scratch is not None:  # paging mappings carry unique driver protections
                self.mover.scratch.protections = self.va.unique_protections
        self._sizes: dict[int, int] = {}
        self._reset_tables: dict[tuple[int, int], bytes] = {}
        """The paging process's tables while an adapter reset runs."""
        """Sizes of allocations created directly through :meth:`create_allocation` (paging stories)."""
        self.context_nodes: dict[int, int] = {}
        """Context -> the node its work runs on."""
        self.context_info: dict[int, DXGK_CONTEXTINFO] = {}
        """Context -> what the driver said of it in ``DxgkDdiCreateContext``."""
        if self.va is not None:
            self.va.create_companion = self._create_companion
            self.reset.listeners.append(self.va.on_adapter_reset)
        self.work = WorkSubmitter(
            driver, mm, self.scheduler, self.residency, self.reset, self.context_nodes, paging_node=self.caps.PagingNode
        )
        self.locks = LockManager(
            driver,
            self.residency,
            swizzling_ranges=self.caps.NumberOfSwizzlingRanges,
            segment_model=self.gpummu is None,
            gpu_busy=self.work.busy,
            gpu_idle=self.work.quiesce,
        )
        self.paging.idle_waiter = self.work.quiesce_allocation
        self.render = RenderSubmitter(driver, mm, self.residency, self.work, segment_model=self.gpummu is None)
        self.power = PowerManager(
            driver,
            self.spaces,
            self.residency,
            self.scheduler,
            self.work,
            events,
            va=self.va,
            paging_process=self.paging_process,
        )
        self.teardown = Teardown(
            driver,
            self.residency,
            self.work,
            self.locks,
            self.va,
            forget_context=self._forget_context,
            free_pool=self._free_pool,
        )
        self.paging_home: AperturePagingBuffers | None = None
        """``PagingBufferSegmentId`` named an aperture segment: paging buffers are fetched through it."""
        if paging_home is not None:
            self.paging_home = AperturePagingBuffers(
                paging_home,
                dummy_page=self.dummy_page,
                map_aperture2=bool(self.caps.MemoryManagementCaps.MapAperture2Supported),
            )
            self.paging_home.make_room = self.residency.make_room
            self._replace_pool(self.paging_buffer_size)
            if self.va is not None:
                self.va.new_pool = lambda count: self._new_pool(self.paging_buffer_size, count)

    def power_transition(self, kind: PowerKind | str) -> PowerReport:
        """The system goes to ``standby``, ``hibernate`` or ``hybrid_sleep`` and wakes (decision 0045): what a
        purge would lose is moved out before ``DxgkDdiSetPowerState(PowerDeviceD3)``, the paging process's
        tables are restored after ``PowerDeviceD0``; every allocation reads back as before."""
        return self.power.transition(kind)

    def _report_segments(self) -> None:
        """``ReportSegment`` for each driver segment, as VidMm learnt it."""
        for space in self.spaces:
            d = space.descriptor
            self.events.emit(
                ReportSegment(
                    time=self.clock.now,
                    segment=space.id,
                    base_address=int(d.BaseAddress),
                    size=space.size,
                    commit_limit=int(d.CommitLimit),
                    cpu_translated_address=int(d.CpuTranslatedAddress),
                    flags=d.Flags.Value,
                    group=int(space.group),
                    aperture=space.aperture,
                    cpu_visible=space.cpu_visible,
                )
            )

    def _allocation_size(self, handle: int) -> int:
        found = self.residency.allocations.get(handle)
        return found.size if found is not None else self._sizes.get(handle, 0)

    def _settle_paging(self) -> None:
        """Submit what is built and wait for the paging queue to drain."""
        self.paging.wait(self.paging.flush())

    def _scratch(self) -> Scratch | None:
        """GpuMmu drivers get content moved through the paging process's scratch area (unless configured off)."""
        if self.paging_process is None or self.gpummu is None or self.config.physical_moves:
            return None
        caps = self.gpummu.caps
        return Scratch(
            self.paging,
            self.paging_process,
            caps.PageTableUpdateMode,
            page_table_vas=bool(caps.LegacyBehaviors.SourcePageTableVaInTransfer),
        )

    def resize_paging_buffers(self, size: int) -> None:
        """Replace the paging-buffer pool with buffers of ``size`` bytes (after the GPU went idle).

        For sweeps over ``DmaSize``; the driver's ``PagingBufferSize`` is what a normal run uses.  Refused while
        an operation is being built (a ``DxgkDdiBuildPagingBuffer`` call, or a multipass operation waiting for
        its next buffer): the buffer the driver writes, and ``MultipassOffset``, belong to the pool in use.
        """
        if self.paging.building or self.paging.continuing:
            raise InvalidArgument(
                "size", size, "the paging buffers cannot be replaced while an operation is being built"
            )
        self.paging.flush()
        self.scheduler.wait_idle()
        self._replace_pool(size)

    def _new_pool(self, size: int, count: int) -> PagingBufferPool:
        """``count`` paging buffers of ``size`` bytes, mapped into the ``PagingBufferSegmentId`` segment if
        there is one (through the pool in use)."""
        pool = PagingBufferPool(self.mm, size=size, private_size=self.private_data_size, count=count)
        if self.paging_home is not None:
            try:
                self.paging_home.place(pool, self.paging)
            except BaseException:
                for mdl in pool.mdls():
                    self.mm.free_pages(mdl)
                raise
        return pool

    def _replace_pool(self, size: int) -> None:
        """The system paging stream moves to a new pool; the old one is unmapped (through the new) and freed."""
        old = self.pool
        self.pool = self.paging.pool = self._new_pool(size, self.config.paging_buffers)
        self.paging_buffer_size = size
        self._free_pool(old)

    def _query_caps(self) -> DXGK_DRIVERCAPS:
        args = DXGKARG_QUERYADAPTERINFO(Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_DRIVERCAPS)
        self.driver.query_adapter_info(args)
        if not isinstance(args.pOutputData, DXGK_DRIVERCAPS):
            raise TypeError("DXGKQAITYPE_DRIVERCAPS must answer a DXGK_DRIVERCAPS")
        return args.pOutputData

    def _query_segments(self) -> tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int]:
        """The two-call protocol: first ``NbSegment`` only, then the descriptors; with them ``PagingBufferSize``,
        ``PagingBufferPrivateDataSize`` and ``PagingBufferSegmentId``."""
        kind = DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4
        count = DXGK_QUERYSEGMENTOUT4()
        self.driver.query_adapter_info(
            DXGKARG_QUERYADAPTERINFO(Type=kind, pInputData=DXGK_QUERYSEGMENTIN4(), pOutputData=count)
        )
        if count.NbSegment <= 0 or count.pSegmentDescriptor is not None:
            raise TypeError("the first QUERYSEGMENT4 call must report NbSegment only")
        out = DXGK_QUERYSEGMENTOUT4(NbSegment=count.NbSegment)
        self.driver.query_adapter_info(
            DXGKARG_QUERYADAPTERINFO(Type=kind, pInputData=DXGK_QUERYSEGMENTIN4(), pOutputData=out)
        )
        descriptors = out.pSegmentDescriptor
        if descriptors is None or len(descriptors) != out.NbSegment:
            raise TypeError("the second QUERYSEGMENT4 call must fill NbSegment descriptors")
        return list(descriptors), out.PagingBufferSize, out.PagingBufferPrivateDataSize, out.PagingBufferSegmentId

    def segment(self, segment_id: int) -> DXGK_SEGMENTDESCRIPTOR4:
        if not 1 <= segment_id <= len(self.segments):
            raise InvalidArgument("SegmentId", segment_id, f"segments are 1..{len(self.segments)} (0 is system memory)")
        return self.segments[segment_id - 1]

    def create_allocation(self, private_data: bytes) -> DXGK_ALLOCATIONINFO:
        """``DxgkDdiCreateAllocation`` for one allocation described by the UMD's private data."""
        info = DXGK_ALLOCATIONINFO(pPrivateDriverData=private_data, PrivateDriverDataSize=len(private_data))
        self.driver.create_allocation(DXGKARG_CREATEALLOCATION(NumAllocations=1, pAllocationInfo=[info]))
        if info.hAllocation:
            self._sizes[info.hAllocation] = info.Size
            self.events.emit(
                AdapterAllocation(time=self.clock.now, allocation=info.hAllocation, size=info.Size, action="create")
            )
        return info

    def create_context(self, device: Device | None = None, *, node: int = 1) -> HANDLE:
        """``DxgkDdiCreateContext`` on behalf of ``device`` (the system device when None) on ``node`` (the
        compute engine by default); the driver asks back for the context's image with
        ``DxgkCbCreateContextAllocation``.  On GpuMmu the context gets its process's root page table."""
        owner = device or self.residency.system_device
        if device is not None and node == self.caps.PagingNode:
            raise InvalidArgument(
                "NodeOrdinal",
                node,
                "is the paging node (DXGK_DRIVERCAPS.PagingNode): VidMm's paging buffers run there, and the engine "
                "reset after an application's fault would drop them with its work",
            )
        args = DXGKARG_CREATECONTEXT(hDevice=owner.handle if device is not None else HANDLE(0), NodeOrdinal=node)
        status = self.driver.create_context(args)
        if status != NTSTATUS.STATUS_SUCCESS:
            raise DdiError(NTSTATUS(status), "DxgkDdiCreateContext failed")
        self.residency.initialize_contexts()
        self.residency.register_context(args.hContext, owner)
        self.context_nodes[args.hContext] = node
        self.context_info[args.hContext] = args.ContextInfo
        if self.va is not None:
            self.va.set_root(self.va.create_space(owner.process), args.hContext)
        return args.hContext

    def _create_companion(self, context: HANDLE, device: Device) -> tuple[HANDLE, int]:
        """The paging companion of ``context`` (wddm-spec section 3.4): a system context (``SystemContext``, of
        the system device: its image is VidMm's, not charged to the application) on the node the driver named in
        ``DXGK_CONTEXTINFO.PagingCompanionNodeId``.  It runs only kernel-generated buffers, in the process's
        privileged VA space (VidMm sets its root)."""
        node = self.context_info[context].PagingCompanionNodeId
        args = DXGKARG_CREATECONTEXT(
            hDevice=HANDLE(0), NodeOrdinal=node, Flags=DXGK_CREATECONTEXTFLAGS(SystemContext=True)
        )
        status = self.driver.create_context(args)
        if status != NTSTATUS.STATUS_SUCCESS:
            raise DdiError(NTSTATUS(status), "DxgkDdiCreateContext (paging companion) failed")
        self.residency.initialize_contexts()
        return args.hContext, node

    # --- the end of what user mode created (vidmm/teardown.py) ----------------------------------------------

    def destroy_context(self, hContext: HANDLE) -> None:
        """``D3DKMTDestroyContext``: idle first, then ``DxgkDdiDestroyContext`` (its paging companion too)."""
        self.teardown.destroy_context(hContext)

    def destroy_sync_object(self, handle: int) -> None:
        """``D3DKMTDestroySynchronizationObject``."""
        self.teardown.destroy_sync_object(handle)

    def destroy_device(self, handle: int) -> None:
        """``D3DKMTDestroyDevice``: everything the device owns goes."""
        self.teardown.destroy_device(handle)

    def destroy_process(self, handle: int) -> None:
        """The process exits or is killed: its devices, its VA spaces, the process."""
        self.teardown.destroy_process(handle)

    def _save_paging_tables(self) -> None:
        """Before ``DxgkDdiResetFromTimeout``: the paging process's tables, written by the CPU alone, copied out."""
        assert self.paging_process is not None
        self._reset_tables = self.paging_process.save_tables(lambda segment, offset, size: True)

    def _restore_paging_tables(self, reason: str) -> None:
        """After ``DxgkDdiRestartFromTimeout``: written back before any paging buffer runs again."""
        assert self.paging_process is not None
        saved, self._reset_tables = self._reset_tables, {}
        self.paging_process.restore_tables(saved)

    def _forget_context(self, hContext: HANDLE) -> None:
        self.context_nodes.pop(hContext, None)
        self.context_info.pop(hContext, None)
        self.work.forget(hContext)

    def _free_pool(self, pool: PagingBufferPool) -> None:
        """A pool no stream uses any more: unmapped from ``PagingBufferSegmentId`` (if mapped), then freed."""
        if self.paging_home is not None:
            self.paging_home.release(pool, self.paging)
        for mdl in pool.mdls():
            self.mm.free_pages(mdl)

    def destroy_allocation(self, handle: HANDLE) -> None:
        self.driver.destroy_allocation(DXGKARG_DESTROYALLOCATION(NumAllocations=1, pAllocationList=(handle,)))
        size = self._sizes.pop(handle, None)
        if size is not None:
            self.events.emit(AdapterAllocation(time=self.clock.now, allocation=handle, size=size, action="destroy"))
