"""``VideoMemoryManager``: the composition root of VidMm -- adapter discovery, the GPU scheduler, the paging stream,
and every part built in dependency order (decision 0060).

At start it asks the driver what it is (``DXGKQAITYPE_DRIVERCAPS``) and what segments it has
(``DXGKQAITYPE_QUERYSEGMENT4``, the documented two-call protocol, :mod:`.discovery`), then sizes its paging buffers
from ``PagingBufferSize`` / ``PagingBufferPrivateDataSize``.

Why over 400 lines: besides the construction steps it keeps what belongs to the adapter as a whole -- the paging
buffer pools (resized, mapped into ``PagingBufferSegmentId``), contexts and their paging companions -- which no part
below owns.  What it is told beyond the driver's answers is :class:`~wddmsim.vidmm.config.VidMmConfig`.
"""

from __future__ import annotations

from typing import final

from wddmsim.core.clock import Clock
from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGKARG_CREATEALLOCATION, DXGKARG_DESTROYALLOCATION
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import (
    DXGK_CONTEXTINFO,
    DXGK_CREATECONTEXTFLAGS,
    DXGKARG_CREATECONTEXT,
)
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.config import VidMmConfig
from wddmsim.vidmm.cpu.locks import AllocationLocks
from wddmsim.vidmm.device import Device, FenceArea
from wddmsim.vidmm.discovery import query_caps, query_segments
from wddmsim.vidmm.events import AdapterAllocation
from wddmsim.vidmm.gpu.reset import ResetPath
from wddmsim.vidmm.gpu.scheduler import GpuScheduler
from wddmsim.vidmm.gpummu import GpuMmuDescription, query_gpummu
from wddmsim.vidmm.moves.causes import MoveObserver
from wddmsim.vidmm.moves.mover import Mover
from wddmsim.vidmm.moves.scratch import Scratch
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.buffers import PagingBufferPool
from wddmsim.vidmm.paging.home import AperturePagingBuffers, paging_segment
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.policy import eviction_policy, placement_policy
from wddmsim.vidmm.power import AdapterPower, PowerKind, PowerReport, check_segments
from wddmsim.vidmm.residency import ResidencyManager
from wddmsim.vidmm.segments import Segments, SegmentSpace, report_segments
from wddmsim.vidmm.teardown import Teardown
from wddmsim.vidmm.vaspace import GpuVaSpaces
from wddmsim.vidmm.wiring import LateCalls
from wddmsim.vidmm.work.callbacks import DxgkrnlCallbacks
from wddmsim.vidmm.work.render import RenderSubmitter
from wddmsim.vidmm.work.submit import WorkSubmitter


@final
class VideoMemoryManager:
    """The composition of VidMm's parts (decision 0060): each is built once, in dependency order, and handed what
    it needs at construction -- the calls into parts built after it through :class:`~wddmsim.vidmm.wiring.LateCalls`, the one place
    the run-time recursion between residency and its move observers is closed."""

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
        self._sizes: dict[HANDLE, int] = {}
        """Sizes of allocations created directly through :meth:`create_allocation` (paging stories)."""
        self.context_nodes: dict[int, int] = {}
        """Context -> the node its work runs on."""
        self.context_info: dict[int, DXGK_CONTEXTINFO] = {}
        """Context -> what the driver said of it in ``DxgkDdiCreateContext``."""
        self.objects = ObjectTable()
        """Every handle VidMm gave out and what it names (decision 0060)."""
        self._late = LateCalls(self)
        paging_home = self._discover_adapter()
        self._start_device()
        self._build_paging()
        self._build_observers()
        self.residency = self._build_residency()
        self._build_services()
        self.paging_home = self._build_paging_home(paging_home)
        """``PagingBufferSegmentId`` named an aperture segment: paging buffers are fetched through it."""

    # --- construction, in dependency order -------------------------------------------------------------------

    def _discover_adapter(self) -> SegmentSpace | None:
        """``DXGKQAITYPE_DRIVERCAPS``, the segments (``DXGKQAITYPE_QUERYSEGMENT4``), the GpuMmu description;
        returns the segment ``PagingBufferSegmentId`` names, if any."""
        self.caps = query_caps(self.driver)
        self.segments, self.paging_buffer_size, self.private_data_size, paging_segment_id = query_segments(self.driver)
        self._paging_segment_id = paging_segment_id
        if self.config.paging_buffer_size is not None:
            self.paging_buffer_size = self.config.paging_buffer_size
        self.spaces = Segments(self.segments, self.events, aperture_commit_limit=self.caps.ApertureSegmentCommitLimit)
        paging_home = paging_segment(self.spaces, paging_segment_id)
        check_segments(self.spaces)  # the power flags form valid combinations
        report_segments(self.spaces, self.events)
        self.gpummu: GpuMmuDescription | None = None
        if self.caps.MemoryManagementCaps.GpuMmuSupported:
            self.gpummu = query_gpummu(self.driver, self.segments)
        return paging_home

    def _start_device(self) -> None:
        """The scheduler, then ``DxgkDdiStartDevice`` with the ``DXGKRNL_INTERFACE`` callbacks."""
        self.scheduler = GpuScheduler(self.driver, self.clock, self.events, nodes=2)
        self.callbacks = DxgkrnlCallbacks(self.scheduler, self._late)
        self.driver.start_device(self.callbacks)

    def _build_paging(self) -> None:
        """The system paging process (GpuMmu), the reset path, the paging stream and its buffers, the dummy page,
        the monitored-fence area and the mover."""
        late = self._late
        self.paging_process: SystemPagingProcess | None = None
        if self.gpummu is not None:
            self.paging_process = SystemPagingProcess(
                self.driver,
                self.mm,
                self.gpummu,
                self.spaces,
                HANDLE(self.config.paging_context),
                make_room=late.make_room,
                before_cpu_write=late.settle_paging,
                scratch_size=self.config.scratch_size,
            )
        process = self.paging_process  # its tables come back first: every later step of the reset runs paging work
        before = [] if process is None else [process.before_reset]
        after = ([] if process is None else [process.after_reset]) + [late.after_adapter_reset]
        self.reset = ResetPath(self.driver, self.scheduler, self.events, before=before, after=after)
        self.pool = PagingBufferPool(
            self.mm,
            size=self.paging_buffer_size,
            private_size=self.private_data_size,
            count=1 if self.has_paging_home else self.config.paging_buffers,  # decision 0044: the bootstrap
        )
        self.paging = PagingStream(
            self.driver,
            self.scheduler,
            self.pool,
            self.reset,
            self.events,
            context=HANDLE(self.config.paging_context),
            node=self.caps.PagingNode,
            idle_waiter=late.quiesce_allocation,
            allocation_size=self._allocation_size,
        )
        page = self.gpu_page
        dummy = self.mm.allocate_pages_for_mdl(page, chunk=page)  # a whole GPU page (decision 0011)
        self.dummy_page = int(dummy.pfns[0]) << PAGE_SHIFT
        """The zeroed system page unmapped aperture pages point at (``UnmapApertureSegment.DummyPage``)."""
        self.fences = FenceArea(self.mm, self.paging_process)
        self.mover = Mover(
            self.paging,
            self.spaces,
            dummy_page=self.dummy_page,
            map_aperture2=bool(self.caps.MemoryManagementCaps.MapAperture2Supported),
            scratch=self._scratch(),
        )

    def _build_observers(self) -> None:
        """What hears of every move: the GPU VA services (GpuMmu), work submission, the CPU locks."""
        late = self._late
        self.va: GpuVaSpaces | None = None
        if self.gpummu is not None and self.paging_process is not None:
            self.va = GpuVaSpaces(
                self.driver,
                self.mm,
                self.paging,
                self.gpummu,
                self.spaces,
                self.paging_process,
                self.objects,
                self.fences,
                late,
                create_companion=self._create_companion,
                new_pool=late.new_companion_pool if self.has_paging_home else None,
            )
        self.work = WorkSubmitter(
            self.driver,
            self.mm,
            self.scheduler,
            self.objects,
            self.reset,
            self.context_nodes,
            ensure_resident=late.ensure_resident,
            va=self.va,
            paging_node=self.caps.PagingNode,
        )
        self.locks = AllocationLocks(
            self.driver,
            self.objects,
            late,
            self.paging,
            self.spaces,
            self.events,
            swizzling_ranges=self.caps.NumberOfSwizzlingRanges,
            segment_model=self.gpummu is None,
            gpu_busy=self.work.busy,
            gpu_idle=self.work.quiesce,
        )

    def _build_residency(self) -> ResidencyManager:
        """The residency manager, told of moves by its observers in this order (decision 0060): work completes,
        mappings are invalidated, CPU ranges go back -- the order of the calls before the first split."""
        observers: tuple[MoveObserver, ...] = (self.work, self.locks)
        if self.va is not None:
            observers = (self.work, self.va, self.locks)
        return ResidencyManager(
            self.driver,
            self.mm,
            self.paging,
            self.spaces,
            self.mover,
            self.fences,
            eviction_policy(self.config.eviction_policy),
            self.events,
            self.objects,
            observers=observers,
            idle_tables=None if self.va is None else self.va.evict_idle_tables,
            wait_companions=None if self.va is None else self.va.updates.wait_companions,
            system_chunk=self.gpu_page,
            gpu_fences=self.gpummu is not None,
            scratch=self.mover.scratch,
            process=self.paging_process,
            deferred=self.config.deferred_paging,
            placement=placement_policy(self.config.placement_policy),
            budgets=self.config.budgets,
        )

    def _build_services(self) -> None:
        """The calls built on residency: segment-model rendering, power transitions, teardown."""
        self.render = RenderSubmitter(
            self.driver, self.mm, self.objects, self.residency, self.work, segment_model=self.gpummu is None
        )
        self.power = AdapterPower(
            self.driver,
            self.spaces,
            self.residency,
            self.scheduler,
            self.work,
            self.events,
            va=self.va,
            paging_process=self.paging_process,
        )
        self.teardown = Teardown(
            self.driver,
            self.objects,
            self.residency,
            self.work,
            self.locks,
            self.va,
            forget_context=self._forget_context,
            free_pool=self._free_pool,
        )

    def _build_paging_home(self, space: SegmentSpace | None) -> AperturePagingBuffers | None:
        """Paging buffers fetched through the aperture segment ``PagingBufferSegmentId`` names (decision 0044):
        the bootstrap pool maps the real one."""
        if space is None:
            return None
        home = AperturePagingBuffers(
            space,
            dummy_page=self.dummy_page,
            map_aperture2=bool(self.caps.MemoryManagementCaps.MapAperture2Supported),
            make_room=self.residency.placement.make_room,
        )
        self.paging_home = home
        self._replace_pool(self.paging_buffer_size)
        return home

    @property
    def has_paging_home(self) -> bool:
        return self._paging_segment_id != 0

    @property
    def gpu_page(self) -> int:
        """The GPU page (decision 0011): ``PAGE_SIZE`` without a GpuMmu."""
        return PAGE_SIZE if self.gpummu is None else self.gpummu.page_size

    def power_transition(self, kind: PowerKind | str) -> PowerReport:
        """The system goes to ``standby``, ``hibernate`` or ``hybrid_sleep`` and wakes (decision 0045): what a
        purge would lose is moved out before ``DxgkDdiSetPowerState(PowerDeviceD3)``, the paging process's
        tables are restored after ``PowerDeviceD0``; every allocation reads back as before."""
        return self.power.transition(kind)

    def _allocation_size(self, handle: HANDLE) -> int:
        found = self.objects.allocations.get(handle)
        return found.size if found is not None else self._sizes.get(handle, 0)

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
            protections=self._late.unique_protections,  # paging mappings carry unique driver protections
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

    def new_companion_pool(self, count: int) -> PagingBufferPool:
        """``count`` paging buffers for a paging companion (``PagingBufferSegmentId`` says where)."""
        return self._new_pool(self.paging_buffer_size, count)

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
        self.pool = self._new_pool(size, self.config.paging_buffers)
        self.paging.use_pool(self.pool)
        self.paging_buffer_size = size
        self._free_pool(old)

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
        self.residency.context_allocations.initialize_contexts()
        self.objects.register_context(args.hContext, owner)
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
        self.residency.context_allocations.initialize_contexts()
        return args.hContext, node

    # --- the end of what user mode created (vidmm/teardown.py) ----------------------------------------------

    def destroy_context(self, hContext: HANDLE) -> None:
        """``D3DKMTDestroyContext``: idle first, then ``DxgkDdiDestroyContext`` (its paging companion too)."""
        self.teardown.destroy_context(hContext)

    def destroy_sync_object(self, handle: HANDLE) -> None:
        """``D3DKMTDestroySynchronizationObject``."""
        self.teardown.destroy_sync_object(handle)

    def destroy_device(self, handle: HANDLE) -> None:
        """``D3DKMTDestroyDevice``: everything the device owns goes."""
        self.teardown.destroy_device(handle)

    def destroy_process(self, handle: HANDLE) -> None:
        """The process exits or is killed: its devices, its VA spaces, the process."""
        self.teardown.destroy_process(handle)

    def _forget_context(self, hContext: HANDLE) -> None:
        self.context_nodes.pop(hContext, None)
        self.context_info.pop(hContext, None)
        self.work.forget_context(hContext)

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
