"""``SimpleDriver``: a deliberately small WDDM 1.x segment-model kernel-mode driver for the simulated GPU.

No GpuMmu, no swizzling ranges, no alternate-VA locks, no context images, no residency notifications
(decision 0075): segment queries, allocations from its own private data (:mod:`.allocations`), the seven paging
operations of the segment model (:mod:`.paging`), Render/Patch (:mod:`.render`), contexts, submission, engine and
adapter reset, power, and the interrupt routine.  It shares nothing with the reference driver but the hardware
(``wddmsim.hw``) and the DDI (``wddmsim.ddi``).
"""

from __future__ import annotations

from typing import Final, final

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.allocation import (
    DXGKARG_ACQUIRESWIZZLINGRANGE,
    DXGKARG_CREATEALLOCATION,
    DXGKARG_DESTROYALLOCATION,
    DXGKARG_RELEASESWIZZLINGRANGE,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.caps import DXGK_DRIVERCAPS, DXGK_QUERYADAPTERINFOTYPE, DXGK_VIDMMCAPS
from wddmsim.ddi.context import DXGKARG_CREATECONTEXT
from wddmsim.ddi.driver import (
    DXGKARG_GETROOTPAGETABLESIZE,
    DXGKARG_QUERYADAPTERINFO,
    DXGKARG_SETROOTPAGETABLE,
    DxgkrnlInterface,
)
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.power import DEVICE_POWER_STATE, POWER_ACTION
from wddmsim.ddi.render import DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT4, SEGMENTDESCRIPTOR4_SIZE
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.ddi.submit import DXGKARG_RESETENGINE, DXGKARG_SUBMITCOMMAND
from wddmsim.drivers.kit.engines import reset_engine
from wddmsim.drivers.kit.interrupts import interrupt_data
from wddmsim.drivers.kit.power import HiddenMemory, power_request
from wddmsim.drivers.kit.render import PatchedBuffers
from wddmsim.drivers.package import DriverStatistics
from wddmsim.drivers.simple import render
from wddmsim.drivers.simple.allocations import AllocationTable, decode, describe, linear_size
from wddmsim.drivers.simple.config import SimpleDriverConfig
from wddmsim.drivers.simple.layout import APERTURE, SegmentLayout
from wddmsim.drivers.simple.paging import PagingState, build
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import Interrupt, Submission
from wddmsim.hw.gpu import PAGING_ENGINE, Gpu

SYSTEM_CONTEXT: Final = HANDLE(0x1)
"""``hSystemContext``: the paging engine's context, there from the start."""
_FIRST_CONTEXT: Final = 0x8000_0001
_LAST_CONTEXT: Final = 0xFFFF_FFFF


def _unsupported(ddi: str, why: str) -> InvalidArgument:
    return InvalidArgument(ddi, None, why, NTSTATUS.STATUS_NOT_SUPPORTED)


@final
class SimpleDriver:
    """The simple driver's ``DxgkDdi*`` entry points (``ddi.driver.KernelModeDriver``) and ``statistics()``."""

    def __init__(self, gpu: Gpu, config: SimpleDriverConfig | None = None) -> None:
        self.config = config or SimpleDriverConfig()
        self.config.validate()
        self.gpu = gpu
        self.layout = SegmentLayout(gpu.config)
        self.allocations = AllocationTable()
        self.paging = PagingState(gpu, self.layout, self.allocations, self.config.max_copy_bytes >> PAGE_SHIFT)
        self.contexts: dict[int, int] = {SYSTEM_CONTEXT: PAGING_ENGINE}
        """Context -> the engine (node) it runs on."""
        self._next_context = _FIRST_CONTEXT
        self.patched = PatchedBuffers()
        self.hidden = HiddenMemory(gpu, self.layout.hidden_base)
        """The aperture table, never reported, kept across power states (``DxgkDdiSetPowerState``)."""
        self._dxgkrnl: DxgkrnlInterface | None = None
        gpu.set_interrupt_handler(self._interrupt_routine)

    def statistics(self) -> DriverStatistics:
        """What the driver holds (the footprint and the invariant checkers read this, never its state)."""
        return DriverStatistics(
            allocations=len(self.allocations),
            contexts=len(self.contexts),
            local_ranges=self.layout.local_ranges(),
            system_size=self.gpu.system.size,
        )

    # --- DxgkDdiStartDevice, DxgkDdiQueryAdapterInfo ---------------------------------------------------------

    def start_device(self, dxgkrnl: DxgkrnlInterface) -> NTSTATUS:
        """``DxgkDdiStartDevice``."""
        self._dxgkrnl = dxgkrnl
        return NTSTATUS.STATUS_SUCCESS

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        """``DxgkDdiQueryAdapterInfo``: DRIVERCAPS and QUERYSEGMENT4; nothing else (no GpuMmu to describe)."""
        kind = DXGK_QUERYADAPTERINFOTYPE
        if args.Type == kind.DXGKQAITYPE_DRIVERCAPS:
            args.pOutputData = DXGK_DRIVERCAPS(
                ApertureSegmentCommitLimit=self.gpu.config.aperture_size,
                NumberOfSwizzlingRanges=0,
                MemoryManagementCaps=DXGK_VIDMMCAPS(),  # GpuMmuSupported = 0, VirtualAddressingSupported = 0
                PagingNode=PAGING_ENGINE,
            )
        elif args.Type == kind.DXGKQAITYPE_QUERYSEGMENT4:
            self._query_segment4(args.pOutputData)
        else:
            raise DdiError(
                NTSTATUS.STATUS_NOT_SUPPORTED,
                f"DXGKARG_QUERYADAPTERINFO.Type={args.Type!r}: not answered by this driver",
            )
        return NTSTATUS.STATUS_SUCCESS

    def _query_segment4(self, out: object) -> None:
        """The two-call protocol: ``NbSegment == 0`` asks for the count, then the descriptors are filled."""
        if not isinstance(out, DXGK_QUERYSEGMENTOUT4):
            raise InvalidArgument("pOutputData", type(out).__name__, "QUERYSEGMENT4 fills a DXGK_QUERYSEGMENTOUT4")
        count = len(self.layout.segments)
        if out.NbSegment == 0:
            out.NbSegment = count
            return
        if out.NbSegment < count:
            raise DdiError(NTSTATUS.STATUS_BUFFER_TOO_SMALL, f"DXGK_QUERYSEGMENTOUT4.NbSegment={out.NbSegment}")
        out.NbSegment = count
        out.pSegmentDescriptor = [s.descriptor() for s in self.layout.segments]
        out.SegmentDescriptorStride = SEGMENTDESCRIPTOR4_SIZE
        out.PagingBufferSegmentId = APERTURE if self.config.paging_buffers_in_aperture else 0
        out.PagingBufferSize = self.config.paging_buffer_size
        out.PagingBufferPrivateDataSize = 0

    # --- allocations ---------------------------------------------------------------------------------------

    def create_allocation(self, args: DXGKARG_CREATEALLOCATION) -> NTSTATUS:
        """``DxgkDdiCreateAllocation``: every allocation is decoded and checked before any is created."""
        if args.NumAllocations != len(args.pAllocationInfo):
            raise InvalidArgument(
                "NumAllocations", args.NumAllocations, f"pAllocationInfo has {len(args.pAllocationInfo)}"
            )
        planned = []
        for i, info in enumerate(args.pAllocationInfo):
            name = f"pAllocationInfo[{i}].pPrivateDriverData"
            if info.PrivateDriverDataSize != len(info.pPrivateDriverData):
                raise InvalidArgument(
                    f"pAllocationInfo[{i}].PrivateDriverDataSize", info.PrivateDriverDataSize, "must match the data"
                )
            desc = decode(info.pPrivateDriverData, name)
            planned.append((desc, linear_size(desc, name)))
        for (desc, size), info in zip(planned, args.pAllocationInfo, strict=True):
            describe(self.allocations.add(desc, size), info)
        return NTSTATUS.STATUS_SUCCESS

    def destroy_allocation(self, args: DXGKARG_DESTROYALLOCATION) -> NTSTATUS:
        """``DxgkDdiDestroyAllocation``: all listed handles are checked first."""
        for i, handle in enumerate(args.pAllocationList):
            self.allocations.get(handle, f"pAllocationList[{i}]")
        for handle in args.pAllocationList:
            self.allocations.remove(handle)
        return NTSTATUS.STATUS_SUCCESS

    def acquire_swizzling_range(self, args: DXGKARG_ACQUIRESWIZZLINGRANGE) -> NTSTATUS:
        """``DxgkDdiAcquireSwizzlingRange``: the driver reports no swizzling range, so none can be acquired."""
        self.allocations.get(args.hAllocation, "hAllocation")
        return NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED

    def release_swizzling_range(self, args: DXGKARG_RELEASESWIZZLINGRANGE) -> NTSTATUS:
        """``DxgkDdiReleaseSwizzlingRange``: nothing was ever acquired."""
        self.allocations.get(args.hAllocation, "hAllocation")
        return NTSTATUS.STATUS_SUCCESS

    # --- paging, submission ----------------------------------------------------------------------------------

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """``DxgkDdiBuildPagingBuffer`` (:mod:`.paging`)."""
        return build(self.paging, args)

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        """``DxgkDdiSubmitCommand``: queue the range on the context's engine.  Only paging buffers and buffers
        this driver patched may name physical memory."""
        engine = self.contexts.get(args.hContext)
        if engine is None:
            raise InvalidArgument("hContext", args.hContext, "is not a context of this driver")
        start, end = args.DmaBufferSubmissionStartOffset, args.DmaBufferSubmissionEndOffset
        if not 0 <= start <= end <= args.DmaBufferSize:
            raise InvalidArgument(
                "DmaBufferSubmissionEndOffset", end, f"[{start}, {end}) leaves the {args.DmaBufferSize}-byte buffer"
            )
        if args.DmaBufferSegmentId:
            address = self.layout.word(
                args.DmaBufferSegmentId, args.DmaBufferPhysicalAddress + start, end - start, "DmaBuffer"
            )
        else:
            address = hw_address(Space.SYSTEM, args.DmaBufferPhysicalAddress + start)
        patched = self.patched.take(args.hContext, args.DmaBufferPhysicalAddress)
        privileged = bool(args.Flags.Paging) or patched
        self.gpu.engines[engine].submit(Submission(address, end - start, args.SubmissionFenceId, privileged=privileged))
        return NTSTATUS.STATUS_SUCCESS

    def render(self, hContext: HANDLE, args: DXGKARG_RENDER) -> NTSTATUS:
        """``DxgkDdiRender`` (:mod:`.render`)."""
        self._engine(hContext)
        return render.render(self.allocations, args)

    def patch(self, hContext: HANDLE, args: DXGKARG_PATCH) -> NTSTATUS:
        """``DxgkDdiPatch`` (:mod:`.render`)."""
        self._engine(hContext)
        render.patch(args)
        self.patched.mark(hContext, args.DmaBufferPhysicalAddress)
        return NTSTATUS.STATUS_SUCCESS

    def _engine(self, hContext: HANDLE) -> int:
        engine = self.contexts.get(hContext)
        if engine is None:
            raise InvalidArgument("hContext", hContext, "is not a context of this driver")
        return engine

    # --- GpuMmu entry points: not this driver's ----------------------------------------------------------------

    def set_root_page_table(self, args: DXGKARG_SETROOTPAGETABLE) -> None:
        """``DxgkDdiSetRootPageTable``: a segment-model driver has no page tables."""
        raise _unsupported("DxgkDdiSetRootPageTable", "the simple driver reports GpuMmuSupported = 0")

    def get_root_page_table_size(self, args: DXGKARG_GETROOTPAGETABLESIZE) -> int:
        """``DxgkDdiGetRootPageTableSize``: a segment-model driver has no page tables."""
        raise _unsupported("DxgkDdiGetRootPageTableSize", "the simple driver reports GpuMmuSupported = 0")

    # --- contexts ----------------------------------------------------------------------------------------------

    def create_context(self, args: DXGKARG_CREATECONTEXT) -> NTSTATUS:
        """``DxgkDdiCreateContext``: the GPU keeps no per-context state, so a context has no image to allocate."""
        if not 0 <= args.NodeOrdinal < len(self.gpu.engines):
            raise InvalidArgument("NodeOrdinal", args.NodeOrdinal, f"nodes are 0..{len(self.gpu.engines) - 1}")
        if args.Flags.Reserved:
            raise InvalidArgument("Flags.Reserved", args.Flags.Reserved, "must be zero")
        if self._next_context > _LAST_CONTEXT:
            raise DdiError(NTSTATUS.STATUS_NO_MEMORY, "DxgkDdiCreateContext: every context handle has been used")
        args.hContext = HANDLE(self._next_context)
        self._next_context += 1
        self.contexts[args.hContext] = args.NodeOrdinal
        args.ContextInfo.DmaBufferSize = self.config.paging_buffer_size
        args.ContextInfo.PagingCompanionNodeId = PAGING_ENGINE
        return NTSTATUS.STATUS_SUCCESS

    def destroy_context(self, hContext: HANDLE) -> NTSTATUS:
        """``DxgkDdiDestroyContext``."""
        if hContext == SYSTEM_CONTEXT or hContext not in self.contexts:
            raise InvalidArgument("hContext", hContext, "is not a context created by DxgkDdiCreateContext")
        del self.contexts[hContext]
        self.patched.forget_context(hContext)
        return NTSTATUS.STATUS_SUCCESS

    # --- reset and power ------------------------------------------------------------------------------------

    def reset_engine(self, args: DXGKARG_RESETENGINE) -> NTSTATUS:
        """``DxgkDdiResetEngine``: the engine drops its queued and in-flight work and its fault (the kit's)."""
        return reset_engine(self.gpu, args)

    def reset_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiResetFromTimeout``: on return the GPU reads and writes no memory."""
        self.gpu.reset()
        self.patched.clear()
        return NTSTATUS.STATUS_SUCCESS

    def restart_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiRestartFromTimeout``."""
        return NTSTATUS.STATUS_SUCCESS

    def set_power_state(
        self, DeviceUid: int, DevicePowerState: DEVICE_POWER_STATE, ActionType: POWER_ACTION
    ) -> NTSTATUS:
        """``DxgkDdiSetPowerState``: before D1-D3 the driver saves the aperture table (the only local memory it owns,
        never reported) if the power-down loses it; D0 writes it back (the kit's
        :class:`~wddmsim.drivers.kit.power.HiddenMemory`).  A child device's call changes nothing."""
        request = power_request(DeviceUid, DevicePowerState, ActionType)
        if request is not None and self.hidden.apply(request):
            self.patched.clear()  # a reset GPU runs none of the buffers patched before
        return NTSTATUS.STATUS_SUCCESS

    # --- DxgkDdiInterruptRoutine ----------------------------------------------------------------------------

    def _interrupt_routine(self, interrupt: Interrupt) -> None:
        """Translate the hardware interrupt and call ``DxgkCbNotifyInterrupt`` (dropped before start: the GPU
        runs nothing before ``DxgkDdiStartDevice``)."""
        data = interrupt_data(interrupt)
        if data is not None and self._dxgkrnl is not None:
            self._dxgkrnl.notify_interrupt(data)
