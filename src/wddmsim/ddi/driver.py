"""The seams of the kernel: what VidMm calls on the driver, what the driver calls back, what the OS provides.

* :class:`KernelModeDriver` -- the ``DxgkDdi*`` entry points VidMm and the GPU scheduler call.  VidMm sees the
  GPU through nothing else; any object with these methods can be plugged in (the reference driver, a test
  double, later a user's driver behind a C bridge).
* :class:`DxgkrnlInterface` -- the ``DxgkCb*`` callbacks the driver may call (``DXGKRNL_INTERFACE``).
* :class:`SystemMemoryServices` -- the OS memory manager both are given (``MmAllocatePagesForMdl``...).

Every entry point returns an ``NTSTATUS``; outputs are written into the argument structures, as in C.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import ByteArray, CpuMapping
from wddmsim.ddi.allocation import (
    DXGKARG_ACQUIRESWIZZLINGRANGE,
    DXGKARG_CREATEALLOCATION,
    DXGKARG_DESTROYALLOCATION,
    DXGKARG_RELEASESWIZZLINGRANGE,
)
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE, NULL
from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.context import (
    DXGKARG_CREATECONTEXT,
    DXGKARGCB_CREATECONTEXTALLOCATION,
    DXGKARGCB_UPDATECONTEXTALLOCATION,
)
from wddmsim.ddi.memory import MDL, PfnArray
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.power import DEVICE_POWER_STATE, POWER_ACTION
from wddmsim.ddi.render import DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.ddi.submit import DXGKARG_RESETENGINE, DXGKARG_SUBMITCOMMAND, DXGKARGCB_NOTIFY_INTERRUPT_DATA


@dataclass(slots=True, kw_only=True)
class DXGKARG_QUERYADAPTERINFO:
    """``DXGKARG_QUERYADAPTERINFO``: the driver sets ``pOutputData`` (or fills the output object passed in)."""

    Type: DXGK_QUERYADAPTERINFOTYPE
    pInputData: object = None
    pOutputData: object = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGKARG_SETROOTPAGETABLE:
    """``DxgkDdiSetRootPageTable``: the context is idle during the call; VAs indexing >= ``NumEntries`` fault."""

    hContext: HANDLE = NULL
    Address: D3DGPU_PHYSICAL_ADDRESS
    NumEntries: int


@dataclass(slots=True, kw_only=True)
class DXGKARG_GETROOTPAGETABLESIZE:
    """``DxgkDdiGetRootPageTableSize``: ``NumberOfPte`` in (required), out (what the returned size holds)."""

    NumberOfPte: int
    PhysicalAdapterIndex: int = 0


VIDEO_TDR_TIMEOUT_DETECTED: Final = 0x117
"""``DXGKARG_COLLECTDBGINFO.Reason`` of an adapter reset (the TDR bugcheck code, as Windows passes it)."""


@dataclass(slots=True, kw_only=True)
class DXGKARG_COLLECTDBGINFO:
    """``DxgkDdiCollectDbgInfo``: the driver writes what it knows of the failure into ``pBuffer`` (``BufferSize``
    bytes; here UTF-8 text, NUL-terminated when shorter, decision 0133)."""

    Reason: int = VIDEO_TDR_TIMEOUT_DETECTED
    pBuffer: bytearray
    BufferSize: int


@runtime_checkable
class CollectsDbgInfo(Protocol):
    """A driver that exports the optional ``DxgkDdiCollectDbgInfo`` (VidMm asks it on the reset path)."""

    def collect_dbg_info(self, args: DXGKARG_COLLECTDBGINFO) -> NTSTATUS:
        """``DxgkDdiCollectDbgInfo``."""
        ...


class DxgkrnlInterface(Protocol):
    """The callbacks of ``DXGKRNL_INTERFACE`` the reference driver uses."""

    def notify_interrupt(self, data: DXGKARGCB_NOTIFY_INTERRUPT_DATA) -> None:
        """``DxgkCbNotifyInterrupt``: called from the driver's interrupt routine."""
        ...

    def create_context_allocation(self, args: DXGKARGCB_CREATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbCreateContextAllocation``: VidMm places the allocation and initialises it with
        ``InitContextResource``; ``args.hAllocation`` receives its handle."""
        ...

    def update_context_allocation(self, args: DXGKARGCB_UPDATECONTEXTALLOCATION) -> NTSTATUS:
        """``DxgkCbUpdateContextAllocation``: returns once ``UpdateContextAllocation`` has executed."""
        ...

    def destroy_context_allocation(self, hAllocation: HANDLE) -> NTSTATUS:
        """``DxgkCbDestroyContextAllocation``."""
        ...


class KernelModeDriver(Protocol):
    """The ``DxgkDdi*`` entry points of a WDDM kernel-mode driver, as far as the paging path needs them."""

    def start_device(self, dxgkrnl: DxgkrnlInterface) -> NTSTATUS:
        """``DxgkDdiStartDevice``: receive the ``DXGKRNL_INTERFACE`` callbacks."""
        ...

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        """``DxgkDdiQueryAdapterInfo``."""
        ...

    def create_allocation(self, args: DXGKARG_CREATEALLOCATION) -> NTSTATUS:
        """``DxgkDdiCreateAllocation``: describe each allocation from the UMD's private data."""
        ...

    def destroy_allocation(self, args: DXGKARG_DESTROYALLOCATION) -> NTSTATUS:
        """``DxgkDdiDestroyAllocation``."""
        ...

    def create_context(self, args: DXGKARG_CREATECONTEXT) -> NTSTATUS:
        """``DxgkDdiCreateContext``: ``args.hContext`` receives the driver's context handle."""
        ...

    def destroy_context(self, hContext: HANDLE) -> NTSTATUS:
        """``DxgkDdiDestroyContext``."""
        ...

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """``DxgkDdiBuildPagingBuffer``: only SUCCESS, INSUFFICIENT_DMA_BUFFER or ALLOCATION_BUSY may return."""
        ...

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        """``DxgkDdiSubmitCommand``: queue a DMA buffer range on a node; completion comes as an interrupt."""
        ...

    def render(self, hContext: HANDLE, args: DXGKARG_RENDER) -> NTSTATUS:
        """``DxgkDdiRender`` (WDDM 1.x): validate a user-mode command buffer and translate it into a DMA buffer."""
        ...

    def patch(self, hContext: HANDLE, args: DXGKARG_PATCH) -> NTSTATUS:
        """``DxgkDdiPatch`` (WDDM 1.x): write the allocations' physical addresses into the DMA buffer."""
        ...

    def acquire_swizzling_range(self, args: DXGKARG_ACQUIRESWIZZLINGRANGE) -> NTSTATUS:
        """``DxgkDdiAcquireSwizzlingRange`` (WDDM 1.x)."""
        ...

    def release_swizzling_range(self, args: DXGKARG_RELEASESWIZZLINGRANGE) -> NTSTATUS:
        """``DxgkDdiReleaseSwizzlingRange`` (WDDM 1.x)."""
        ...

    def set_root_page_table(self, args: DXGKARG_SETROOTPAGETABLE) -> None:
        """``DxgkDdiSetRootPageTable``."""
        ...

    def get_root_page_table_size(self, args: DXGKARG_GETROOTPAGETABLESIZE) -> int:
        """``DxgkDdiGetRootPageTableSize``: ``SIZE_T`` bytes of a 2-level root for ``NumberOfPte`` entries."""
        ...

    def reset_engine(self, args: DXGKARG_RESETENGINE) -> NTSTATUS:
        """``DxgkDdiResetEngine``: the engine drops its work and runs again; other engines are untouched."""
        ...

    def reset_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiResetFromTimeout``: on return the GPU reads and writes no memory."""
        ...

    def restart_from_timeout(self) -> NTSTATUS:
        """``DxgkDdiRestartFromTimeout``."""
        ...

    def set_power_state(
        self, DeviceUid: int, DevicePowerState: DEVICE_POWER_STATE, ActionType: POWER_ACTION
    ) -> NTSTATUS:
        """``DxgkDdiSetPowerState``: D1-D3 -- save what bringing the device back needs, then enter the state;
        D0 -- restore it.  Never fails for a valid request."""
        ...


class CpuAddressSpace(Protocol):
    """A process's user-mode CPU address space, as VidMm uses it for locks.

    VidMm reserves a *view* per locked allocation and points it, whole, either at a range of bus addresses (the
    PCI BAR onto a CPU-visible segment) or at system pages (the backing store, or the pages under an aperture
    range).  Re-pointing a view while the application holds its address is ``MmRotatePhysicalView``: the
    address stays, the physical memory behind it changes (seed 004: eviction while mapped).
    """

    def reserve_view(self, size: int) -> CpuVa:
        """Reserve ``size`` bytes (whole pages) of user VA; no access until mapped."""
        ...

    def map_view_bus(self, va: CpuVa, bus_address: int) -> None:
        """Point the whole view at linear bus addresses from ``bus_address`` (``MmMapIoSpace`` into user VA)."""
        ...

    def map_view_pages(self, va: CpuVa, pfns: PfnArray) -> None:
        """Point the whole view at system pages, page ``i`` at ``pfns[i]`` (``MmRotatePhysicalView``)."""
        ...

    def unmap_view(self, va: CpuVa) -> None:
        """Take access away; the reservation stays (the next map gives the same address)."""
        ...

    def free_view(self, va: CpuVa) -> None:
        """Release the reservation."""
        ...

    def read(self, va: CpuVa, size: int) -> bytes:
        """Read ``size`` bytes as the process's CPU would (raises on an access outside a mapped view)."""
        ...

    def read_into(self, va: CpuVa, out: memoryview) -> None:
        """:meth:`read` of ``len(out)`` bytes into ``out`` (a writable byte buffer of the caller's): what a
        ``memcpy`` from a locked ``pData`` into the application's own memory does, with no buffer made per read."""
        ...

    def read_spans(self, va: CpuVa, size: int) -> list[ByteArray | int]:
        """:meth:`read` of ``size`` bytes where they lie, as a reader that only compares them sees them through
        ``pData`` (no copy): read-only views laid end to end, each valid until the memory is next written; a
        stretch that reads zero without memory behind it (a released page) is given by its length."""
        ...

    def write(self, va: CpuVa, payload: bytes | bytearray | memoryview) -> None:
        """Write as the process's CPU would (raises on an access outside a mapped view)."""
        ...

    def views(self) -> list[tuple[CpuVa, int, str]]:
        """``(base, size, what backs it: bus, pages or unmapped)`` of every view."""
        ...


class SystemMemoryServices(Protocol):
    """The OS memory manager (Mm) as display code sees it: page frames, MDLs, kernel mappings, user views."""

    def create_address_space(self) -> CpuAddressSpace:
        """A new process's user-mode CPU address space."""
        ...

    def allocate_pages_for_mdl(self, byte_count: int, *, chunk: int = 4096) -> MDL:
        """``MmAllocatePagesForMdlEx``: zeroed pages, wherever the OS finds them -- in contiguous, aligned chunks of
        ``chunk`` bytes when it is above 4 KiB; raises on exhaustion."""
        ...

    def allocate_contiguous(self, byte_count: int) -> tuple[MDL, CpuMapping]:
        """``MmAllocateContiguousMemory``: physically contiguous pages and their kernel mapping."""
        ...

    def free_pages(self, mdl: MDL) -> None:
        """``MmFreePagesFromMdl`` (or ``MmFreeContiguousMemory``)."""
        ...

    def map_io_space(self, bus_address: int, byte_count: int) -> CpuMapping:
        """``MmMapIoSpace``: a kernel mapping of bus addresses (a BAR window onto local memory)."""
        ...

    def read(self, mdl: MDL, offset: int, size: int) -> bytes:
        """Read through a kernel mapping of the MDL (``MmGetSystemAddressForMdlSafe``)."""
        ...

    def write(self, mdl: MDL, offset: int, payload: bytes | bytearray | memoryview) -> None:
        """Write through a kernel mapping of the MDL."""
        ...
