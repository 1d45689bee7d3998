"""Processes, devices and paging queues, and the monitored fences the queues signal (wddm-spec.md section 3.7).

Every paging queue has a monitored fence: a 64-bit value in system memory, readable by the CPU through a
read-only mapping (``FenceValueCPUVirtualAddress``).  Each operation queued gets the next value; an operation
that completed at once returns 0.  On a GpuMmu driver the value is written by the GPU itself, from the paging
buffer (``DXGK_OPERATION_SIGNAL_MONITORED_FENCE``, to the fence's GPU VA in the paging process); a WDDM 1.x
driver has no such operation, so VidMm writes the value when the submission carrying the work completes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from wddmsim.core.pointer import CpuMapping, CpuPointer
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import CpuAddressSpace, SystemMemoryServices
from wddmsim.ddi.residency import D3DDDI_PAGINGQUEUE_PRIORITY, D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.accounting import ProcessAccount
from wddmsim.vidmm.paging.process import FENCE_PAGES, SystemPagingProcess

FENCE_SIZE: Final = 8
_ALIGN: Final = 64 * 1024
_U64: Final = struct.Struct("<Q")


@final
class FenceArea:
    """Pages of 64-bit fence values: CPU-mapped, and mapped at ``fence_base`` in the paging process."""

    def __init__(self, mm: SystemMemoryServices, process: SystemPagingProcess | None) -> None:
        # 64 KiB-aligned, so that a GPU page of up to 64 KiB maps it (the driver refuses unaligned pages).
        self.mdl, self.mapping = mm.allocate_contiguous(FENCE_PAGES * PAGE_SIZE + _ALIGN - PAGE_SIZE)
        pages = _ALIGN // PAGE_SIZE
        skip = -int(self.mdl.pfns[0]) % pages
        self.pfns = self.mdl.pfns[skip : skip + FENCE_PAGES]
        self.first = skip * PAGE_SIZE
        """Byte offset of the first fence page into :attr:`mapping`."""
        self.gpu_base = 0
        if process is not None:
            process.map(process.fence_base, segment_id=0, page_numbers=self.pfns)
            self.gpu_base = process.fence_base
        self.next = 0
        """Slots never handed out start here."""
        self.released: list[int] = []
        """Slots of destroyed fences, handed out again (newest first) before fresh ones."""

    @property
    def in_use(self) -> int:
        """Fences alive now (a teardown leaves none of a process's behind)."""
        return self.next - len(self.released)

    def slot(self) -> int:
        """A zeroed 64-bit slot: a released one if any, else the next fresh one."""
        if self.released:
            offset = self.released.pop()
            self.mapping.data[self.first + offset : self.first + offset + FENCE_SIZE] = 0
            return offset
        if self.next >= FENCE_PAGES * PAGE_SIZE // FENCE_SIZE:
            raise DdiError(
                NTSTATUS.STATUS_NO_MEMORY, f"no more than {FENCE_PAGES * PAGE_SIZE // FENCE_SIZE} monitored fences"
            )
        self.next += 1
        return (self.next - 1) * FENCE_SIZE

    def release(self, offset: int) -> None:
        """The fence at ``offset`` is destroyed: its slot may serve a new one."""
        if not 0 <= offset < self.next * FENCE_SIZE or offset % FENCE_SIZE or offset in self.released:
            raise ValueError(f"offset={offset:#x}: not a fence slot in use")
        self.released.append(offset)

    @property
    def bus_base(self) -> int:
        return int(self.pfns[0]) << PAGE_SHIFT


@final
class MonitoredFence:
    """One 64-bit monitored fence value in the :class:`FenceArea`."""

    def __init__(self, area: FenceArea) -> None:
        self.area = area
        self.offset = area.slot()
        self.cpu: CpuPointer = area.mapping.pointer(area.first + self.offset)
        """The CPU's (read-only, by contract) view: ``FenceValueCPUVirtualAddress``."""

    @property
    def gpu_va(self) -> int:
        """The value's GPU VA in the paging process (``MonitoredFenceGpuVa``); 0 without GpuMmu."""
        return self.area.gpu_base + self.offset if self.area.gpu_base else 0

    @property
    def value(self) -> int:
        return int(_U64.unpack(self.cpu.bytes(FENCE_SIZE))[0])

    def cpu_signal(self, value: int) -> None:
        """VidMm writes the value itself (WDDM 1.x: no paging operation can)."""
        self.cpu.bytes(FENCE_SIZE)[:] = _U64.pack(value)

    def release(self) -> None:
        """The fence is destroyed: its slot may serve a new one (nothing may write it any more)."""
        self.area.release(self.offset)


@dataclass(slots=True, eq=False)
class Process:
    """A process using the GPU: it owns devices, has a budget per segment group, and a CPU address space in which
    its locks' views live."""

    handle: HANDLE
    cpu: CpuAddressSpace
    budgets: dict[D3DKMT_MEMORY_SEGMENT_GROUP, int] = field(default_factory=dict)
    reservations: dict[D3DKMT_MEMORY_SEGMENT_GROUP, int] = field(default_factory=dict)
    account: ProcessAccount = field(default_factory=ProcessAccount)
    """Its bytes per segment group, kept as its allocations change (decision 0175)."""
    priority_class: int = 2
    """``D3DKMT_SCHEDULINGPRIORITYCLASS`` (NORMAL): its weight in the sharing of budgets (decision 0169)."""
    foreground: bool = False
    """The process has the focus (the foreground weighs double in the sharing of budgets)."""
    imposed: dict[D3DKMT_MEMORY_SEGMENT_GROUP, int] = field(default_factory=dict)
    """Budgets the OS set outright (a timeline's ``budget`` event), over the shared model."""
    trim_callbacks: dict[int, tuple[Callable[..., None], object]] = field(default_factory=dict)
    """``D3DKMTRegisterTrimNotification`` registrations: handle -> (callback, context)."""


@dataclass(slots=True, eq=False)
class Device:
    """A device: allocations and paging queues belong to it; its residency list is the allocations with a
    non-zero ``residency_count``."""

    handle: HANDLE
    process: Process
    queues: list[PagingQueue] = field(default_factory=list)
    removed: str | None = None
    """Why the device was put in error (``DEVICE_REMOVED``), if it was."""
    periodic_trim_fence: int = 0
    """The use stamp of the last periodic trim (``TrimResidencySet``'s ``PeriodicTrim``)."""


@dataclass(slots=True, eq=False)
class Waiter:
    """Work queued behind a monitored-fence value (an ``UpdateGpuVirtualAddress`` waiting for ``FenceValue``)."""

    value: int
    run: Callable[[], None]
    cancel: Callable[[], None]
    """Undo what queuing it took (held tile pools, a companion's count): the work will never run."""
    context: HANDLE
    """The context it was queued for (destroying the context cancels it)."""


@dataclass(slots=True, eq=False)
class SyncObject:
    """A monitored-fence synchronisation object of a device (``hFenceObject`` of ``UpdateGpuVirtualAddress``):
    work waiting for a value runs once the fence is known to reach it."""

    handle: HANDLE
    device: Device
    fence: MonitoredFence
    waiting: list[Waiter] = field(default_factory=list)
    """Work waiting for a value, in submission order."""
    promised: int = 0
    """The highest value work already queued on the paging engine will write (it runs in order)."""

    @property
    def reached(self) -> int:
        return max(self.fence.value, self.promised)


@dataclass(slots=True, eq=False)
class PagingQueue:
    """``CreatePagingQueue``: a queue of paging work for one device, with its monitored fence."""

    handle: HANDLE
    device: Device
    priority: D3DDDI_PAGINGQUEUE_PRIORITY
    fence: MonitoredFence
    sync_object: HANDLE
    issued: int = 0
    """The last fence value handed out."""
    pending: dict[int, int] = field(default_factory=dict)
    """Fence value -> the paging submission fence that carries its work (until the value is signalled)."""

    @property
    def cpu_mapping(self) -> CpuMapping:
        return self.fence.area.mapping
