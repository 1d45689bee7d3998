"""A native driver composed into a simulated one: its ``DxgkDdiBuildPagingBuffer`` in C, the rest from a base.

VidMm calls :class:`NativeDriver` exactly as it calls the reference driver (``KernelModeDriver``).  The paging
operations the adapter description claims go to the library's ``DxgkDdiBuildPagingBuffer`` through
:class:`~wddmsim.drivers.native.marshal.PagingBufferCall`; every other DDI -- and, when the GPU itself executes
the buffers, the operations the library does not claim -- goes to the base package's driver, which reports the
segments and owns allocations, contexts, submission and interrupts (decision 0110).
"""

from __future__ import annotations

import ctypes
from typing import Final, cast, final

from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.driver import (
    DXGKARG_QUERYADAPTERINFO,
)
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT3, DXGK_QUERYSEGMENTOUT4
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.drivers.native.adapter_desc import AdapterDescBlock
from wddmsim.drivers.native.description import AdapterDescription, ExecutorKind
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.native.marshal import PagingBufferCall, address_of
from wddmsim.drivers.native.services import KernelServices
from wddmsim.drivers.package import DriverModel, SimulatedDriver
from wddmsim.drivers.wrapping import WrappedDriver
from wddmsim.hw.gpu import Gpu

RESET_FROM_TIMEOUT: Final = "DxgkDdiResetFromTimeout"
RESET_FROM_TIMEOUT_TYPE: Final = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


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
        self.services = KernelServices(gpu.system)
        self.services.attach(library)
        self.call = PagingBufferCall(library, self.services)
        exported = library.function(RESET_FROM_TIMEOUT)
        self._reset_from_timeout = RESET_FROM_TIMEOUT_TYPE(address_of(exported)) if exported is not None else None
        self.library_resets = 0
        """Calls of the library's own ``DxgkDdiResetFromTimeout``."""
        self.served_by_base: dict[str, int] = {}
        """Operations the base driver built because the library does not claim them (name -> calls)."""
        self.adapter.start(library)

    # --- DxgkDdiBuildPagingBuffer: the library's ------------------------------------------------------------

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """``DxgkDdiBuildPagingBuffer``: claimed operations in C, the others by the base (GPU executor only)."""
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

    # --- the DDIs the base supplies (WrappedDriver forwards the rest) ---------------------------------------

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        """``DxgkDdiQueryAdapterInfo`` by the base, with the library's ``PagingBufferPrivateDataSize``."""
        status = self.base.query_adapter_info(args)
        size = self.description.dma_buffer_private_data_size
        kind = DXGK_QUERYADAPTERINFOTYPE
        if size is not None and args.Type in (kind.DXGKQAITYPE_QUERYSEGMENT3, kind.DXGKQAITYPE_QUERYSEGMENT4):
            out = args.pOutputData
            if isinstance(out, DXGK_QUERYSEGMENTOUT3 | DXGK_QUERYSEGMENTOUT4) and out.pSegmentDescriptor:
                out.PagingBufferPrivateDataSize = size
        return status

    def reset_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiResetFromTimeout``: the base stops the GPU; then the library drops what it queued, if it
        exports the entry point (a failure status is the driver's, returned as it is)."""
        status = self.base.reset_from_timeout()
        if self._reset_from_timeout is None or status != NTSTATUS.STATUS_SUCCESS:
            return status
        raw = int(self._reset_from_timeout(None)) & 0xFFFFFFFF
        self.library_resets += 1
        return NTSTATUS(raw) if raw in NTSTATUS._value2member_map_ else cast(NTSTATUS, raw)


__all__ = ["NativeDriver", "NotClaimed"]
