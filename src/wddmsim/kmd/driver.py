"""``ReferenceDriver``: the DDI entry points of the reference driver (``ddi.driver.KernelModeDriver``).

Thin: each entry point validates, then hands the work to the module that owns it.  Failures that the DDI
documents as outcomes (``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER``, ``..._ALLOCATION_BUSY``,
``..._UNSWIZZLING_APERTURE_UNAVAILABLE``) are returned; a request that breaks the contract raises
:class:`~.errors.DriverContractError` with the argument, its value and the rule.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Final, assert_never, final

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import (
    DXGK_ALLOCATIONINFO,
    DXGK_SEGMENTPREFERENCE,
    DXGKARG_ACQUIRESWIZZLINGRANGE,
    DXGKARG_CREATEALLOCATION,
    DXGKARG_DESTROYALLOCATION,
    DXGKARG_RELEASESWIZZLINGRANGE,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.caps import (
    DXGK_DRIVERCAPS,
    DXGK_GPUMMUCAPS,
    DXGK_GPUMMUCAPS_FLAGS,
    DXGK_GPUMMUCAPS_LEGACYBEHAVIORS,
    DXGK_PAGE_TABLE_LEVEL_DESC,
    DXGK_QUERYADAPTERINFOTYPE,
    DXGK_QUERYPAGETABLELEVELDESCIN,
    DXGK_VIDMMCAPS,
)
from wddmsim.ddi.context import (
    DXGKARG_CREATECONTEXT,
    DXGKARGCB_CREATECONTEXTALLOCATION,
    DXGKARGCB_UPDATECONTEXTALLOCATION,
)
from wddmsim.ddi.driver import (
    DXGKARG_GETROOTPAGETABLESIZE,
    DXGKARG_QUERYADAPTERINFO,
    DXGKARG_SETROOTPAGETABLE,
    DxgkrnlInterface,
)
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER, PAYLOAD_TYPES, Op
from wddmsim.ddi.power import DEVICE_POWER_STATE, POWER_ACTION
from wddmsim.ddi.render import DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.segments import (
    DXGK_QUERYSEGMENTOUT3,
    DXGK_QUERYSEGMENTOUT4,
    DXGK_SEGMENTDESCRIPTOR3,
    SEGMENTDESCRIPTOR4_SIZE,
)
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.ddi.submit import (
    DXGK_DMA_COMPLETED,
    DXGK_INTERRUPT_TYPE,
    DXGKARG_RESETENGINE,
    DXGKARG_SUBMITCOMMAND,
    DXGKARGCB_NOTIFY_INTERRUPT_DATA,
)
from wddmsim.drivers.kit import render
from wddmsim.drivers.kit.engines import reset_engine
from wddmsim.drivers.kit.interrupts import interrupt_data
from wddmsim.drivers.kit.power import HiddenMemory, power_request
from wddmsim.drivers.package import DriverStatistics
from wddmsim.hw.addressing import HW_ADDRESS, Space, hw_address
from wddmsim.hw.bar import DetileWindow
from wddmsim.hw.engine import Executor, Interrupt, InterruptKind, Submission
from wddmsim.hw.gpu import PAGING_ENGINE, Gpu
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.kmd.allocations import AllocationDesc, KmdAllocation, ResourceKind, describe, segment_set
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.paging import aperture, context, fence, fill, notify, page_table, physical, transfer, virtual
from wddmsim.kmd.pte_format import SegmentTables
from wddmsim.kmd.segments import SegmentKind, SegmentMap
from wddmsim.kmd.state import DriverState

PAGING_CONTEXT: Final = HANDLE(0x1)
CONTEXT_IMAGE_SIZE: Final = 16 * 1024
"""Bytes of a context's saved image (a 64-byte header, then the driver's state)."""
"""The system context paging buffers run in (``hSystemContext``) -- bound to the paging engine."""

_FIRST_CONTEXT: Final = 0x8000_0001
_LAST_CONTEXT: Final = 0xFFFF_FFFF
"""Context handles are 32-bit, above every allocation and VidMm handle."""
_SYSTEM_WORD: Final = hw_address(Space.SYSTEM, 0)
_ADDRESS_MASK: Final = HW_ADDRESS["address"].mask
"""A system address in range is its space's word ORed with it (``hw_address`` without the call)."""
_COMPLETION: Final = InterruptKind.COMPLETION
_DMA_COMPLETED: Final = DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED
"""Read once: the interrupt routine translates a completion per submission."""

Builder = Callable[[DriverState, DXGKARG_BUILDPAGINGBUFFER], NTSTATUS]


def builder(op: Op) -> Builder | None:
    """The builder of ``DxgkDdiBuildPagingBuffer`` operation ``op``; None for the operations the model only names
    (18-25, design D2).  Exhaustive: mypy names an operation added to the enum without a case here."""
    match op:
        case Op.DXGK_OPERATION_TRANSFER:
            return transfer.build_transfer
        case Op.DXGK_OPERATION_FILL:
            return fill.build_fill
        case Op.DXGK_OPERATION_DISCARD_CONTENT:
            return notify.build_discard_content
        case Op.DXGK_OPERATION_READ_PHYSICAL:
            return physical.build_read_physical
        case Op.DXGK_OPERATION_WRITE_PHYSICAL:
            return physical.build_write_physical
        case Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT:
            return aperture.build_map_aperture_segment
        case Op.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT:
            return aperture.build_unmap_aperture_segment
        case Op.DXGK_OPERATION_SPECIAL_LOCK_TRANSFER:
            return transfer.build_special_lock_transfer
        case Op.DXGK_OPERATION_VIRTUAL_TRANSFER:
            return virtual.build_transfer_virtual
        case Op.DXGK_OPERATION_VIRTUAL_FILL:
            return virtual.build_fill_virtual
        case Op.DXGK_OPERATION_INIT_CONTEXT_RESOURCE:
            return context.build_init_context_resource
        case Op.DXGK_OPERATION_UPDATE_PAGE_TABLE:
            return page_table.build_update_page_table
        case Op.DXGK_OPERATION_FLUSH_TLB:
            return page_table.build_flush_tlb
        case Op.DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION:
            return context.build_update_context_allocation
        case Op.DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES:
            return page_table.build_copy_page_table_entries
        case Op.DXGK_OPERATION_NOTIFY_RESIDENCY:
            return notify.build_notify_residency
        case Op.DXGK_OPERATION_SIGNAL_MONITORED_FENCE:
            return fence.build_signal_monitored_fence
        case Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT2:
            return aperture.build_map_aperture_segment2
        case (
            Op.DXGK_OPERATION_NOTIFY_FENCE_RESIDENCY
            | Op.DXGK_OPERATION_MAP_MMU
            | Op.DXGK_OPERATION_UNMAP_MMU
            | Op.DXGK_OPERATION_NOTIFY_RESIDENCY2
            | Op.DXGK_OPERATION_RESERVED22
            | Op.DXGK_OPERATION_TRANSFER2
            | Op.DXGK_OPERATION_FILL2
            | Op.DXGK_OPERATION_DISCARD_CONTENT2
        ):
            return None
        case _:
            assert_never(op)


BUILDERS: Final[dict[Op, Builder]] = {op: found for op in Op if (found := builder(op)) is not None}
"""The builders by operation, looked up once per build (the modelled operations, 0-17)."""

BUILDERS_BY_PAYLOAD: Final[dict[type, Builder]] = {
    kind: BUILDERS[kind.OPERATION] for kind in PAYLOAD_TYPES if getattr(kind, "OPERATION", None) in BUILDERS
}
"""The same builders by payload type: one dictionary look-up on the payload's class, instead of working out
``Operation`` first (a payload of another type -- a subclass, or an unmodelled operation -- takes ``BUILDERS``)."""


@final
class ReferenceDriver:
    """The reference kernel-mode driver of the simulated GPU."""

    def __init__(self, gpu: Gpu, config: DriverConfig | None = None) -> None:
        self.config = config or DriverConfig()
        self.config.validate()
        self.gpu = gpu
        segments = SegmentMap(gpu.config, use_64k_pages=self.config.cpu_visible_64k_pages)
        self.state = DriverState(gpu, self.config, segments, SegmentTables(segments))
        if self.config.cpu_visible_64k_pages:
            self.state.allocations.granule = 64 * 1024
        if self.state.wddm2:  # allocations are whole GPU pages, aligned on one: a PTE maps nothing else (0011)
            self.state.allocations.granule = max(self.state.allocations.granule, 1 << gpu.config.gpu_page_shift)
        self.contexts: dict[int, int] = {PAGING_CONTEXT: PAGING_ENGINE}
        self._next_context = _FIRST_CONTEXT
        """The next context handle: handles only grow, so a destroyed context's handle is never given again
        (numbering by the table's size gave a live context's handle to the next one after any destroy)."""
        self.context_allocations: dict[int, tuple[HANDLE, HANDLE]] = {}
        """Context -> (the driver's handle of its image, VidMm's handle from DxgkCbCreateContextAllocation)."""
        self.context_roots: dict[int, tuple[TablePointer, int]] = {}
        """Context -> its root page table and NumEntries (``DxgkDdiSetRootPageTable``)."""
        self.patched = render.PatchedBuffers()
        self.paging_executor: Executor | None = None
        """Who carries out paging buffers (``Flags.Paging``): ``None`` is the GPU's decoder; a native driver with
        its own executor sets it (decision 0111)."""
        self.hidden = HiddenMemory(gpu, segments.hidden_base)
        """The aperture table above the reported segments, kept across power states (``DxgkDdiSetPowerState``)."""
        self._dxgkrnl: DxgkrnlInterface | None = None
        self.unreported: list[DXGKARGCB_NOTIFY_INTERRUPT_DATA] = []
        gpu.set_interrupt_handler(self._interrupt_routine)

    @property
    def segments(self) -> SegmentMap:
        return self.state.segments

    def statistics(self) -> DriverStatistics:
        """Its handle tables and the memory it reports (``SimulatedDriver.statistics``): for the footprint and
        the page-table checkers, which never read :attr:`state`."""
        local = tuple((s.base, s.base + s.size) for s in self.segments.segments if s.kind == SegmentKind.MEMORY)
        return DriverStatistics(
            allocations=len(self.state.allocations),
            contexts=len(self.contexts),
            local_ranges=local,
            system_size=self.gpu.system.size,
        )

    # --- DriverProbe: read-only answers for verifiers (the paging tour) ----------------------------------

    @staticmethod
    def context_header(allocation: int, gpu_va: int, size: int) -> bytes:
        """The header ``InitContextResource`` writes: ``CONTEXT_MAGIC``, the image's GPU VA, its size, the
        allocation handle, zero padding to ``CONTEXT_HEADER_SIZE``."""
        words = struct.pack("<4Q", context.CONTEXT_MAGIC, gpu_va, size, allocation)
        return words.ljust(context.CONTEXT_HEADER_SIZE, b"\0")

    def notified_residency(self, allocation: int) -> tuple[int, int] | None:
        """The last ``(SegmentId, SegmentOffset)`` ``NotifyResidency`` told the driver of ``allocation``."""
        return self.state.allocations.get(allocation, "hAllocation").resident_at

    # --- DxgkDdiStartDevice / QueryAdapterInfo ---------------------------------------------------------------

    def start_device(self, dxgkrnl: DxgkrnlInterface) -> NTSTATUS:
        """``DxgkDdiStartDevice``."""
        self._dxgkrnl = dxgkrnl
        return NTSTATUS.STATUS_SUCCESS

    def driver_caps(self) -> DXGK_DRIVERCAPS:
        wddm2 = self.state.wddm2
        return DXGK_DRIVERCAPS(
            ApertureSegmentCommitLimit=self.config.aperture_commit_limit or self.gpu.config.aperture_size,
            NumberOfSwizzlingRanges=0 if wddm2 else self.gpu.config.detile_windows,
            MemoryManagementCaps=DXGK_VIDMMCAPS(
                VirtualAddressingSupported=wddm2,
                GpuMmuSupported=wddm2,
                MapAperture2Supported=self.config.map_aperture2,
            ),
            PagingNode=PAGING_ENGINE,
        )

    def gpummu_caps(self) -> DXGK_GPUMMUCAPS:
        """``DXGK_GPUMMUCAPS``: what the reference GPU's MMU honours."""
        layout = self.gpu.mmu.layout
        return DXGK_GPUMMUCAPS(
            Flags=DXGK_GPUMMUCAPS_FLAGS(
                ReadOnlyMemorySupported=True,
                NoExecuteMemorySupported=True,
                ZeroInPteSupported=True,
                CacheCoherentMemorySupported=True,
                ExplicitPageTableInvalidation=self.config.explicit_page_table_invalidation,
                PageTableUpdateRequireAddressSpaceIdle=self.config.page_table_update_requires_idle,
                LargePageSupported=self.config.large_pages,
                DualPteSupported=layout.dual_pte,
                InvalidTlbEntriesNotCached=not self.gpu.config.caches_invalid_translations,
            ),
            PageTableUpdateMode=self.config.page_table_update_mode,
            LegacyBehaviors=DXGK_GPUMMUCAPS_LEGACYBEHAVIORS(
                SourcePageTableVaInTransfer=self.config.source_page_table_va_in_transfer
            ),
            VirtualAddressBitCount=layout.va_bits,
            LeafPageTableSizeFor64KPagesInBytes=-(-max(layout.leaf64_table_size, PAGE_SIZE) >> layout.gpu_page_shift)
            << layout.gpu_page_shift,  # a whole number of GPU pages, like every table (decision 0011)
            PageTableLevelCount=layout.levels,
        )

    def level_desc(self, level: int) -> DXGK_PAGE_TABLE_LEVEL_DESC:
        """``DXGK_PAGE_TABLE_LEVEL_DESC`` of ``level`` (0 = leaf).  A 2-level root's size is its initial one."""
        layout = self.gpu.mmu.layout
        page = 1 << layout.gpu_page_shift  # tables are mapped through GPU pages too: whole, aligned ones (0011)
        return DXGK_PAGE_TABLE_LEVEL_DESC(
            PageTableIndexBitCount=layout.index_bits[level],
            PageTableSegmentId=self.config.page_table_segment,
            PagingProcessPageTableSegmentId=self.config.paging_process_page_table_segment,
            PageTableSizeInBytes=-(-max(layout.table_size(level), PAGE_SIZE) // page) * page,
            PageTableAlignmentInBytes=page if page > PAGE_SIZE else 0,
        )

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        """``DxgkDdiQueryAdapterInfo``."""
        kind = DXGK_QUERYADAPTERINFOTYPE
        match args.Type:
            case kind.DXGKQAITYPE_DRIVERCAPS:
                args.pOutputData = self.driver_caps()
            case kind.DXGKQAITYPE_QUERYSEGMENT3:
                self._query_segment3(args)
            case kind.DXGKQAITYPE_QUERYSEGMENT4:
                self._query_segment4(args)
            case kind.DXGKQAITYPE_GPUMMUCAPS if self.state.wddm2:
                args.pOutputData = self.gpummu_caps()
            case kind.DXGKQAITYPE_PAGETABLELEVELDESC if self.state.wddm2:
                args.pOutputData = self._level_desc(args.pInputData)
            case _:
                raise DdiError(
                    NTSTATUS.STATUS_NOT_SUPPORTED,
                    f"DXGKARG_QUERYADAPTERINFO.Type={args.Type!r}: not answered by this driver",
                )
        return NTSTATUS.STATUS_SUCCESS

    def _paging_buffer_fields(self, out: DXGK_QUERYSEGMENTOUT3 | DXGK_QUERYSEGMENTOUT4) -> None:
        out.PagingBufferSegmentId = self.segments.aperture.segment_id if self.config.paging_buffers_in_aperture else 0
        out.PagingBufferSize = self.config.paging_buffer_size
        out.PagingBufferPrivateDataSize = self.config.paging_buffer_private_data_size

    def _query_segment4(self, args: DXGKARG_QUERYADAPTERINFO) -> None:
        out = args.pOutputData
        if not isinstance(out, DXGK_QUERYSEGMENTOUT4):
            raise DriverContractError("pOutputData", type(out).__name__, "QUERYSEGMENT4 fills a DXGK_QUERYSEGMENTOUT4")
        if out.NbSegment == 0:
            out.NbSegment = len(self.segments.segments)
            return
        if out.NbSegment < len(self.segments.segments):
            raise DdiError(
                NTSTATUS.STATUS_BUFFER_TOO_SMALL, f"DXGK_QUERYSEGMENTOUT4.NbSegment={out.NbSegment}: too few"
            )
        out.NbSegment = len(self.segments.segments)
        out.pSegmentDescriptor = [s.descriptor() for s in self.segments.segments]
        out.SegmentDescriptorStride = SEGMENTDESCRIPTOR4_SIZE
        self._paging_buffer_fields(out)

    def _query_segment3(self, args: DXGKARG_QUERYADAPTERINFO) -> None:
        out = args.pOutputData
        if not isinstance(out, DXGK_QUERYSEGMENTOUT3):
            raise DriverContractError("pOutputData", type(out).__name__, "QUERYSEGMENT3 fills a DXGK_QUERYSEGMENTOUT3")
        if out.pSegmentDescriptor is None:
            out.NbSegment = len(self.segments.segments)
            return
        out.pSegmentDescriptor[:] = [
            DXGK_SEGMENTDESCRIPTOR3(
                Flags=d.Flags,
                BaseAddress=d.BaseAddress,
                CpuTranslatedAddress=d.CpuTranslatedAddress,
                Size=d.Size,
                CommitLimit=d.CommitLimit,
                SystemMemoryEndAddress=d.SystemMemoryEndAddress,
            )
            for d in (s.descriptor() for s in self.segments.segments)
        ]
        out.NbSegment = len(self.segments.segments)
        self._paging_buffer_fields(out)

    def _level_desc(self, request: object) -> DXGK_PAGE_TABLE_LEVEL_DESC:
        if not isinstance(request, DXGK_QUERYPAGETABLELEVELDESCIN):
            raise DriverContractError(
                "pInputData", type(request).__name__, "PAGETABLELEVELDESC takes DXGK_QUERYPAGETABLELEVELDESCIN"
            )
        layout = self.gpu.mmu.layout
        if not 0 <= request.LevelIndex < layout.levels:
            raise DriverContractError("LevelIndex", request.LevelIndex, f"levels are 0..{layout.levels - 1}")
        if request.PhysicalAdapterIndex:
            raise DriverContractError("PhysicalAdapterIndex", request.PhysicalAdapterIndex, "one physical adapter: 0")
        return self.level_desc(request.LevelIndex)

    def get_root_page_table_size(self, args: DXGKARG_GETROOTPAGETABLESIZE) -> int:
        """``DxgkDdiGetRootPageTableSize``: bytes for ``NumberOfPte`` root entries (2-level layouts only).

        The size is a multiple of 4 KiB; ``NumberOfPte`` comes back as the entries that size holds.
        """
        layout = self.gpu.mmu.layout
        if layout.levels != 2:
            raise DriverContractError(
                "PageTableLevelCount", layout.levels, "GetRootPageTableSize is for 2-level layouts only"
            )
        top = layout.levels - 1
        if not 0 < args.NumberOfPte <= layout.entries(top):
            raise DriverContractError(
                "NumberOfPte", args.NumberOfPte, f"the root indexes at most {layout.entries(top)} entries"
            )
        size = int(-(-args.NumberOfPte * layout.entry_size(top) // PAGE_SIZE) * PAGE_SIZE)
        args.NumberOfPte = min(size // layout.entry_size(top), layout.entries(top))
        return size

    # --- allocations ----------------------------------------------------------------------------------------

    def create_allocation(self, args: DXGKARG_CREATEALLOCATION) -> NTSTATUS:
        """``DxgkDdiCreateAllocation``: all or nothing."""
        if args.NumAllocations != len(args.pAllocationInfo):
            raise DriverContractError(
                "NumAllocations", args.NumAllocations, f"pAllocationInfo holds {len(args.pAllocationInfo)}"
            )
        descs = []
        for i, info in enumerate(args.pAllocationInfo):
            if info.PrivateDriverDataSize != len(info.pPrivateDriverData):
                raise DriverContractError(
                    f"pAllocationInfo[{i}].PrivateDriverDataSize", info.PrivateDriverDataSize, "must match the data"
                )
            desc = AllocationDesc.decode(info.pPrivateDriverData)
            if desc.kind == ResourceKind.CONTEXT:
                raise DriverContractError(
                    f"pAllocationInfo[{i}].pPrivateDriverData",
                    "kind=CONTEXT",
                    "a context image is the kernel's: DxgkDdiCreateContext asks VidMm for it with "
                    "DxgkCbCreateContextAllocation, never through DxgkDdiCreateAllocation",
                )
            descs.append(desc)
        created = []
        try:
            for desc in descs:
                created.append(self.state.allocations.add(desc))
        except DdiError:
            for allocation in created:
                self.state.allocations.remove(allocation.handle)
            raise
        for allocation, info in zip(created, args.pAllocationInfo, strict=True):
            self._describe(allocation, info)
        return NTSTATUS.STATUS_SUCCESS

    def _describe(self, allocation: KmdAllocation, info: DXGK_ALLOCATIONINFO) -> None:
        seg = self.segments
        describe(
            allocation,
            info,
            cpu_segment=seg.segments[0].segment_id,
            local_segment=seg.segments[1].segment_id,
            aperture_segment=seg.aperture.segment_id,
            alternate_va=not self.state.wddm2 and self.config.use_alternate_va,
            alignment=self.state.allocations.granule,
        )

    def context_image(self, size: int) -> DXGK_ALLOCATIONINFO:
        """A context image of ``size`` bytes the driver records for itself, as :meth:`create_context` does, and its
        allocation info: for paging stories that initialise one by hand (``InitContextResource``).  User mode can
        never ask for one (:meth:`create_allocation` refuses the kind)."""
        info = DXGK_ALLOCATIONINFO()
        self._describe(self.state.allocations.add(AllocationDesc(ResourceKind.CONTEXT, size=size)), info)
        return info

    def destroy_allocation(self, args: DXGKARG_DESTROYALLOCATION) -> NTSTATUS:
        """``DxgkDdiDestroyAllocation``."""
        for handle in args.pAllocationList:
            self.state.allocations.get(handle, "pAllocationList[]")
        for handle in args.pAllocationList:
            self.state.release_detile_windows(self.state.allocations.remove(handle))
        return NTSTATUS.STATUS_SUCCESS

    # --- paging ---------------------------------------------------------------------------------------------

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """``DxgkDdiBuildPagingBuffer``."""
        builder = BUILDERS_BY_PAYLOAD.get(args.payload.__class__) or BUILDERS.get(args.Operation)
        if builder is None:
            raise DriverContractError(
                "Operation",
                int(args.Operation),
                "operations 18-25 are not modelled (design D2)",
                NTSTATUS.STATUS_NOT_SUPPORTED,
            )
        return builder(self.state, args)

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        """``DxgkDdiSubmitCommand``: queue the buffer range on the context's engine."""
        engine = self.contexts.get(args.hContext)
        if engine is None:
            raise DriverContractError("hContext", args.hContext, "is not a context of this driver")
        start, end = args.DmaBufferSubmissionStartOffset, args.DmaBufferSubmissionEndOffset
        if not 0 <= start <= end <= args.DmaBufferSize:
            raise DriverContractError(
                "DmaBufferSubmissionEndOffset",
                end,
                f"[{start}, {end}) must lie in the {args.DmaBufferSize}-byte buffer",
            )
        if args.DmaBufferSegmentId == 0:
            address = args.DmaBufferPhysicalAddress + start  # hw_address(SYSTEM, ...) without the call when in range
            address = _SYSTEM_WORD | address if 0 <= address <= _ADDRESS_MASK else hw_address(Space.SYSTEM, address)
        else:
            address = self.segments.address(
                args.DmaBufferSegmentId, GpuPhysAddr(args.DmaBufferPhysicalAddress + start), end - start, "DmaBuffer"
            )
        root, entries = self.context_roots.get(args.hContext, (None, None))
        # Only paging buffers, and DMA buffers whose every address this driver patched, may name physical memory.
        patched = self.patched.keys and self.patched.take(args.hContext, args.DmaBufferPhysicalAddress)
        paging = args.Flags.Paging
        privileged = bool(paging or patched)
        submission = Submission(address, end - start, args.SubmissionFenceId, root, entries, privileged)
        if paging and self.paging_executor is not None:
            submission.executor = self.paging_executor
            submission.private_data = _private_data(args)
        self.gpu.engines[engine].submit(submission)
        return NTSTATUS.STATUS_SUCCESS

    # --- rendering in the segment model -------------------------------------------------------------------

    def render(self, hContext: HANDLE, args: DXGKARG_RENDER) -> NTSTATUS:
        """``DxgkDdiRender``: validate the user-mode command buffer and copy it into the DMA buffer
        (:mod:`wddmsim.drivers.kit.render`, the packets user mode may send as the kit's rule)."""
        if hContext not in self.contexts:
            raise DriverContractError("hContext", hContext, "is not a context of this driver")
        return render.render(self.state.allocations, args)

    def patch(self, hContext: HANDLE, args: DXGKARG_PATCH) -> NTSTATUS:
        """``DxgkDdiPatch``: write the physical addresses; the buffer may then name physical memory."""
        if hContext not in self.contexts:
            raise DriverContractError("hContext", hContext, "is not a context of this driver")
        render.patch(args)
        self.patched.mark(hContext, args.DmaBufferPhysicalAddress)
        return NTSTATUS.STATUS_SUCCESS

    def set_root_page_table(self, args: DXGKARG_SETROOTPAGETABLE) -> None:
        """``DxgkDdiSetRootPageTable``: program the context's engine with the root (the context is idle)."""
        engine = self.contexts.get(args.hContext)
        if engine is None:
            raise DriverContractError("hContext", args.hContext, "is not a context of this driver")
        address = args.Address
        if address.SegmentId == 0:
            root = TablePointer(Target.SYSTEM, address.SegmentOffset)
        else:
            segment = self.segments.memory_segment(address.SegmentId, "Address.SegmentId")
            root = TablePointer(Target.LOCAL, segment.base + address.SegmentOffset)
        top = self.gpu.mmu.layout.levels - 1
        if not 0 < args.NumEntries <= self.gpu.mmu.layout.entries(top):
            raise DriverContractError(
                "NumEntries", args.NumEntries, f"the root holds 1..{self.gpu.mmu.layout.entries(top)} entries"
            )
        self.context_roots[args.hContext] = (root, args.NumEntries)
        target = self.gpu.engines[engine]
        if target.pending == 0:  # an idle engine takes the root now; a busy one when the context's buffer starts
            target.root = root
            target.root_entries = args.NumEntries

    # --- swizzling ranges (WDDM 1.x) --------------------------------------------------------------------------

    def acquire_swizzling_range(self, args: DXGKARG_ACQUIRESWIZZLINGRANGE) -> NTSTATUS:
        """``DxgkDdiAcquireSwizzlingRange``: a detiling register shows the level as linear bytes through the BAR."""
        allocation = self.state.allocations.get(args.hAllocation, "hAllocation")
        if self.state.wddm2:
            return NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED
        cpu_segment = self.segments.segments[0]
        if args.SegmentId != cpu_segment.segment_id:
            return NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED
        if not allocation.swizzled:
            return NTSTATUS.STATUS_SUCCESS
        level_index = args.PrivateDriverData
        if not 0 <= level_index < len(allocation.levels):
            raise DriverContractError(
                "PrivateDriverData", level_index, f"names a MIP level, 0..{len(allocation.levels) - 1}"
            )
        if not 0 <= args.RangeId < len(self.gpu.bar.windows):
            raise DriverContractError(
                "RangeId", args.RangeId, f"the driver reports {len(self.gpu.bar.windows)} swizzling ranges"
            )
        key = (args.RangeId, args.PrivateDriverData)
        if key in allocation.swizzling_ranges:
            return NTSTATUS.STATUS_SUCCESS
        if self.gpu.bar.windows[args.RangeId] is not None:  # range RangeId is detiling register RangeId
            return NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNAVAILABLE
        level = allocation.levels[level_index]
        bar_offset = args.CPUTranslatedAddress - self.gpu.bar.bus_base
        window = DetileWindow(bar_offset + level.offset, level.size, level.pitch)
        self.state.program_detile_window(allocation, key, args.RangeId, window)
        return NTSTATUS.STATUS_SUCCESS

    def release_swizzling_range(self, args: DXGKARG_RELEASESWIZZLINGRANGE) -> NTSTATUS:
        """``DxgkDdiReleaseSwizzlingRange``: release only ``RangeId``."""
        allocation = self.state.allocations.get(args.hAllocation, "hAllocation")
        index = allocation.swizzling_ranges.pop((args.RangeId, args.PrivateDriverData), None)
        if index is not None:
            self.gpu.bar.program_window(index, None)
        return NTSTATUS.STATUS_SUCCESS

    # --- reset ---------------------------------------------------------------------------------------------

    def reset_engine(self, args: DXGKARG_RESETENGINE) -> NTSTATUS:
        """``DxgkDdiResetEngine``: the engine forgets its queued and in-flight work and its fault (the kit's)."""
        return reset_engine(self.gpu, args)

    def reset_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiResetFromTimeout``: on return the GPU reads and writes no memory."""
        self.gpu.reset()
        self.state.pending_transfer = None
        self.patched.clear()
        return NTSTATUS.STATUS_SUCCESS

    def restart_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiRestartFromTimeout``."""
        return NTSTATUS.STATUS_SUCCESS

    def set_power_state(
        self, DeviceUid: int, DevicePowerState: DEVICE_POWER_STATE, ActionType: POWER_ACTION
    ) -> NTSTATUS:
        """``DxgkDdiSetPowerState``: before D3 the driver saves its hidden region (the aperture table) if the
        power-down loses it, and restores it in D0 (the kit's :class:`~wddmsim.drivers.kit.power.HiddenMemory`); the
        GPU loses what its memory does not keep in the state ``ActionType`` names (hibernate; anything else keeps
        what standby keeps).  This adapter has no child devices: a call for one changes nothing, and succeeds."""
        request = power_request(DeviceUid, DevicePowerState, ActionType)
        if request is not None and self.hidden.apply(request):
            self.state.pending_transfer = None  # the GPU forgot the transfer's first part
            self.patched.clear()  # a GPU that lost its memory runs none of the buffers patched before
        return NTSTATUS.STATUS_SUCCESS

    # --- contexts and their allocations ---------------------------------------------------------------------

    def create_context(self, args: DXGKARG_CREATECONTEXT) -> NTSTATUS:
        """``DxgkDdiCreateContext``: the context's image is a context allocation VidMm places and initialises
        (``DxgkCbCreateContextAllocation`` -> ``InitContextResource``)."""
        if self._dxgkrnl is None:
            raise DriverContractError("DxgkDdiCreateContext", None, "the device is not started")
        if args.NodeOrdinal not in (PAGING_ENGINE, len(self.gpu.engines) - 1):
            raise DriverContractError("NodeOrdinal", args.NodeOrdinal, f"nodes are 0..{len(self.gpu.engines) - 1}")
        if args.Flags.SystemContext and args.NodeOrdinal != PAGING_ENGINE:
            raise DriverContractError(
                "Flags.SystemContext",
                1,
                f"a system context is created for the paging engine (node {PAGING_ENGINE}) only",
            )
        if args.Flags.Reserved:
            raise DriverContractError("Flags.Reserved", args.Flags.Reserved, "must be zero")
        record = self.state.allocations.add(AllocationDesc(ResourceKind.CONTEXT, size=CONTEXT_IMAGE_SIZE))
        handle = self._context_handle()
        request = DXGKARGCB_CREATECONTEXTALLOCATION(
            hDevice=args.hDevice,
            hContext=handle,
            hDriverAllocation=record.handle,
            Size=record.size,
            Alignment=self.state.allocations.granule,
            SupportedSegmentSet=segment_set(*(s.segment_id for s in self.segments.segments)),
            PreferredSegment=DXGK_SEGMENTPREFERENCE(SegmentId0=self._local_segment()),
        )
        try:
            status = self._dxgkrnl.create_context_allocation(request)
        except BaseException:
            self.state.allocations.remove(record.handle)
            raise
        if status != NTSTATUS.STATUS_SUCCESS:
            self.state.allocations.remove(record.handle)
            return status
        self.state.allocations.alias(request.hAllocation, record)
        self.contexts[handle] = args.NodeOrdinal
        self.context_allocations[handle] = (record.handle, request.hAllocation)
        args.hContext = handle
        args.ContextInfo.DmaBufferSize = self.config.paging_buffer_size
        args.ContextInfo.PagingCompanionNodeId = PAGING_ENGINE  # page-table updates run where paging runs
        return NTSTATUS.STATUS_SUCCESS

    def _context_handle(self) -> HANDLE:
        """A ``DxgkDdiCreateContext`` handle never given before (refused once the 32-bit range is spent)."""
        if self._next_context > _LAST_CONTEXT:
            raise DdiError(NTSTATUS.STATUS_NO_MEMORY, "DxgkDdiCreateContext: every context handle has been used")
        handle = HANDLE(self._next_context)
        self._next_context += 1
        return handle

    def _local_segment(self) -> int:
        """The memory segment the CPU cannot see: where context images want to be."""
        return next(s.segment_id for s in self.segments.segments if s.kind == SegmentKind.MEMORY and not s.cpu_visible)

    def update_context_state(self, hContext: HANDLE, state: bytes) -> NTSTATUS:
        """The driver changes a context's saved state (e.g. on a priority change): through
        ``DxgkCbUpdateContextAllocation``, which returns once the GPU has written it."""
        if self._dxgkrnl is None or hContext not in self.context_allocations:
            raise DriverContractError("hContext", hContext, "is not a context of this driver")
        _, vidmm_handle = self.context_allocations[hContext]
        return self._dxgkrnl.update_context_allocation(
            DXGKARGCB_UPDATECONTEXTALLOCATION(
                hAllocation=vidmm_handle, pPrivateDriverData=state, PrivateDriverDataSize=len(state)
            )
        )

    def destroy_context(self, hContext: HANDLE) -> NTSTATUS:
        """``DxgkDdiDestroyContext``: the context allocation goes back (``DxgkCbDestroyContextAllocation``)."""
        if self._dxgkrnl is None or hContext not in self.context_allocations:
            raise DriverContractError("hContext", hContext, "is not a context of this driver")
        own, vidmm_handle = self.context_allocations.pop(hContext)
        self._dxgkrnl.destroy_context_allocation(vidmm_handle)
        self.state.allocations.remove(vidmm_handle)
        self.state.allocations.remove(own)
        del self.contexts[hContext]
        self.patched.forget_context(hContext)
        return NTSTATUS.STATUS_SUCCESS

    # --- interrupts -----------------------------------------------------------------------------------------

    def _interrupt_routine(self, interrupt: Interrupt) -> None:
        """``DxgkDdiInterruptRoutine``: translate the hardware interrupt and call ``DxgkCbNotifyInterrupt``."""
        if interrupt.kind == _COMPLETION:  # one per submission: interrupt_data's first case, without the call
            data = DXGKARGCB_NOTIFY_INTERRUPT_DATA(
                InterruptType=_DMA_COMPLETED,
                DmaCompleted=DXGK_DMA_COMPLETED(SubmissionFenceId=interrupt.value, NodeOrdinal=interrupt.engine),
            )
        else:
            other = interrupt_data(interrupt)
            if other is None:
                return
            data = other
        if self._dxgkrnl is None:
            self.unreported.append(data)
        else:
            self._dxgkrnl.notify_interrupt(data)


def _private_data(args: DXGKARG_SUBMITCOMMAND) -> bytes | None:
    """The submitted range of ``pDmaBufferPrivateData`` (``DxgkDdiSubmitCommand``), copied at submission: the
    driver's record as it stood when VidMm submitted, whatever later builds into the buffer write (decision 0111)."""
    pointer = args.pDmaBufferPrivateData
    if pointer is None:
        return None
    start, end = args.DmaBufferPrivateDataSubmissionStartOffset, args.DmaBufferPrivateDataSubmissionEndOffset
    if not 0 <= start <= end:
        raise DriverContractError(
            "DmaBufferPrivateDataSubmissionEndOffset", end, f"must be >= the start offset {start} >= 0"
        )
    return bytes(pointer.bytes(end)[start:end])


__all__ = ["BUILDERS", "PAGING_CONTEXT", "ReferenceDriver", "ResourceKind"]
