"""A native driver composed into a simulated one: its ``DxgkDdiBuildPagingBuffer`` in C, the rest from a base.

VidMm calls :class:`NativeDriver` exactly as it calls the reference driver (``KernelModeDriver``).  The paging
operations the adapter description claims go to the library's ``DxgkDdiBuildPagingBuffer`` through
:class:`~wddmsim.drivers.native.marshal.PagingBufferCall`; every other DDI -- and, when the GPU itself executes
the buffers, the operations the library does not claim -- goes to the base package's driver, which reports the
segments and owns allocations, contexts, submission and interrupts (decision 0110).
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Callable
from typing import Final, cast, final

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.caps import (
    DXGK_GPUMMUCAPS,
    DXGK_PAGE_TABLE_LEVEL_DESC,
    DXGK_QUERYADAPTERINFOTYPE,
    DXGK_QUERYPAGETABLELEVELDESCIN,
)
from wddmsim.ddi.driver import DXGKARG_COLLECTDBGINFO, DXGKARG_QUERYADAPTERINFO
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER, Op
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT3, DXGK_QUERYSEGMENTOUT4
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.ddi.submit import DXGKARG_SUBMITCOMMAND
from wddmsim.drivers.native import plan
from wddmsim.drivers.native.adapter_desc import AdapterDescBlock
from wddmsim.drivers.native.adapter_info import LibraryAdapterInfo
from wddmsim.drivers.native.cexec import CExecutor
from wddmsim.drivers.native.description import AdapterDescription, ExecutorKind
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.native.marshal import PagingBufferCall, address_of
from wddmsim.drivers.native.pyexec import load_python_executor
from wddmsim.drivers.native.services import KernelServices
from wddmsim.drivers.native.watchdog import Watchdog
from wddmsim.drivers.package import DriverModel, DriverStatistics, SimulatedDriver
from wddmsim.drivers.wrapping import WrappedDriver
from wddmsim.hw.gpu import Gpu

RESET_FROM_TIMEOUT: Final = "DxgkDdiResetFromTimeout"
RESET_FROM_TIMEOUT_TYPE: Final = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
_SUCCESS: Final = NTSTATUS.STATUS_SUCCESS


class NotClaimed(InvalidArgument):
    """VidMm asked for an operation the description does not claim and nobody else can build."""


@final
class NativeDriver(WrappedDriver):
    """``KernelModeDriver`` over a native library and a base driver (see the module docstring)."""

    def __init__(
        self,
        gpu: Gpu,
        base: SimulatedDriver,
        model: DriverModel,
        library: NativeLibrary,
        description: AdapterDescription,
    ) -> None:
        super().__init__(base)
        self.gpu = gpu
        self.base = base
        self.library = library
        self.description = description
        self.adapter = AdapterDescBlock(gpu, base, model)
        self.watchdog = Watchdog(description.tdr_delay, description.call_timeout)
        """Bounds calls into the library in wall time; a timeout loses the library (decision 0132)."""
        self.services = KernelServices(gpu.system, self.watchdog)
        self.adapter_info = LibraryAdapterInfo.of(library, self.watchdog)
        """The library's own ``DxgkDdiQueryAdapterInfo``, cross-checked with the base's answers (decision 0134)."""
        self.services.attach(library)
        self.call = PagingBufferCall(library, self.services)
        # A bound method (called without an instance call's lookup), typed once: a code outside NTSTATUS travels
        # as a plain int, for VidMm's contract checker to name.
        self._build = cast(Callable[[DXGKARG_BUILDPAGINGBUFFER], NTSTATUS], self.call.__call__)
        self._images = self.services.images
        self._claimed = frozenset(
            kind
            for kind in plan.MEMBERS
            if isinstance(op := getattr(kind, "OPERATION", None), Op) and description.claims(op)
        )
        """The payload types of the operations the description claims (an unmodelled one's is asked each call)."""
        exported = library.function(RESET_FROM_TIMEOUT)
        self._reset_from_timeout = RESET_FROM_TIMEOUT_TYPE(address_of(exported)) if exported is not None else None
        self.library_resets = 0
        """Calls of the library's own ``DxgkDdiResetFromTimeout``."""
        self.served_by_base: dict[str, int] = {}
        """Operations the base driver built because the library does not claim them (name -> calls)."""
        self.adapter.start(library, self.watchdog)
        self._route_paging_buffers()

    def _route_paging_buffers(self) -> None:
        """Give the base's ``DxgkDdiSubmitCommand`` the driver's own executor for paging buffers (decision 0111):
        the base builds every hw Submission, so routing there keeps one submission path."""
        spec = self.description.executor
        if spec.kind is ExecutorKind.GPU:
            return
        if not hasattr(self.base, "paging_executor"):
            raise ConfigurationError(
                "base", type(self.base).__name__, "this base driver cannot hand paging buffers to an executor"
            )
        if spec.kind is ExecutorKind.C:
            library = (
                self.library
                if spec.library is None
                else NativeLibrary(spec.library, setting="executor.library", entry=spec.symbol)
            )
            self.executor_library = library  # kept loaded while the driver lives
            self.base.paging_executor = CExecutor(library, spec.symbol, self.adapter, self.watchdog)
        else:
            self.base.paging_executor = load_python_executor(spec)

    # --- DxgkDdiBuildPagingBuffer: the library's ------------------------------------------------------------

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """``DxgkDdiBuildPagingBuffer``: claimed operations in C, the others by the base (GPU executor only)."""
        images = self._images
        if images.pending:
            images.retire(self._completed_fence)
        if args.payload.__class__ in self._claimed:
            return self._build(args)
        operation = args.Operation
        if self.description.claims(operation):
            # A code outside NTSTATUS travels as a plain int, for VidMm's contract checker to name.
            return cast(NTSTATUS, self.call(args))
        if self.description.executor.kind is not ExecutorKind.GPU:
            raise NotClaimed(
                "Operation",
                operation.name,
                "is not claimed by the adapter description, and the base driver's packets cannot run on the "
                f"driver's own {self.description.executor.kind.value} executor: claim it in 'operations'",
            )
        self.served_by_base[operation.name] = self.served_by_base.get(operation.name, 0) + 1
        return self.base.build_paging_buffer(args)

    # --- what the MDL images handed to the library live for (decision 0131) ----------------------------------

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        """``DxgkDdiSubmitCommand`` by the base; a paging buffer takes the MDL images built into it along: they
        (and the system views the library mapped through them) live until its fence completes."""
        images = self._images
        if images.pending:
            images.retire(self._completed_fence)
        status = self.base.submit_command(args)
        if args.Flags.Paging and status == _SUCCESS:
            images.submitted(args.NodeOrdinal, args.SubmissionFenceId)
        return status

    def retire(self) -> None:
        """Let go of the images of paging buffers whose fence the engine has written (its completed-fence register,
        which a driver reads in its interrupt routine)."""
        self._images.retire(self._completed_fence)

    def _completed_fence(self, node: int) -> int:
        engines = self.gpu.engines
        return engines[node].completed_fence if node < len(engines) else 0

    def statistics(self) -> DriverStatistics:
        """The base's counts, with the images and views the bridge holds for the library (the footprint's)."""
        self.retire()
        images = self.services.images
        return dataclasses.replace(super().statistics(), mdl_images=images.count(), bridge_views=images.live_views())

    # --- the DDIs the base supplies (WrappedDriver forwards the rest) ---------------------------------------

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        """``DxgkDdiQueryAdapterInfo`` by the base, with the library's ``PagingBufferPrivateDataSize``; the GpuMmu
        answers checked against the library's own, when it exports the DDI (decision 0134)."""
        status = self.base.query_adapter_info(args)
        size = self.description.dma_buffer_private_data_size
        kind = DXGK_QUERYADAPTERINFOTYPE
        if size is not None and args.Type in (kind.DXGKQAITYPE_QUERYSEGMENT3, kind.DXGKQAITYPE_QUERYSEGMENT4):
            out = args.pOutputData
            if isinstance(out, DXGK_QUERYSEGMENTOUT3 | DXGK_QUERYSEGMENTOUT4) and out.pSegmentDescriptor:
                out.PagingBufferPrivateDataSize = size
        # Checked after the description's override: the library must agree with what VidMm will use.
        if self.adapter_info is not None and status == NTSTATUS.STATUS_SUCCESS:
            self._cross_check(args)
        return status

    def _cross_check(self, args: DXGKARG_QUERYADAPTERINFO) -> None:
        assert self.adapter_info is not None
        out, request = args.pOutputData, args.pInputData
        if isinstance(out, DXGK_GPUMMUCAPS):
            self.adapter_info.check_caps(out)
        elif isinstance(out, DXGK_PAGE_TABLE_LEVEL_DESC) and isinstance(request, DXGK_QUERYPAGETABLELEVELDESCIN):
            self.adapter_info.check_level(request, out)
        elif isinstance(out, DXGK_QUERYSEGMENTOUT4) and out.pSegmentDescriptor:
            self.adapter_info.check_segments(out)

    def collect_dbg_info(self, args: DXGKARG_COLLECTDBGINFO) -> NTSTATUS:
        """``DxgkDdiCollectDbgInfo`` (decision 0133): why the engines stopped, as their fault registers say -- an
        executor's status or failing services call, a packet the GPU refused -- and a call the watchdog abandoned."""
        lines = [f"engine {e.index}: {e.fault.reason or e.fault.kind.name}" for e in self.gpu.engines if e.fault]
        if self.watchdog.lost is not None:
            lines.append(f"the library is lost: {self.watchdog.lost}")
        text = "; ".join(lines).encode("utf-8")[: max(args.BufferSize - 1, 0)]
        args.pBuffer[: len(text) + 1] = text + b"\0"
        return NTSTATUS.STATUS_SUCCESS

    def reset_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiResetFromTimeout``: the base stops the GPU; then the library drops what it queued, if it
        exports the entry point (a failure status is the driver's, returned as it is)."""
        status = self.base.reset_from_timeout()
        if self.watchdog.lost is not None:
            # A call stuck in the library may still use the images and views it was given: they stay mapped for
            # good, with what the watchdog keeps of that call; the library itself is not called again.
            self.watchdog.abandon(self.services.images.abandon())
            return status
        self.services.images.clear()  # the GPU runs nothing any more: no buffer needs an image or a view
        if self._reset_from_timeout is None or status != NTSTATUS.STATUS_SUCCESS:
            return status
        entry = self._reset_from_timeout
        raw = self.watchdog.call_driver(RESET_FROM_TIMEOUT, lambda: int(entry(None))) & 0xFFFFFFFF
        self.library_resets += 1
        return NTSTATUS(raw) if raw in NTSTATUS._value2member_map_ else cast(NTSTATUS, raw)


__all__ = ["NativeDriver", "NotClaimed"]
