"""Impolite clients: processes and devices that drive the adapter only through the user-mode runtime callbacks and
never wait for paging -- with the shadow of what each allocation must hold, and the views that read it back.

Used by ``tests/api/test_impolite_clients.py``.  A :class:`Client` is one device of one process, with its paging
queue, its compute context, a readback buffer and its allocations (:class:`Shadow`: the bytes the client last wrote,
its residency count as the client counts it, its lock, its GPU VA).  GPU work is the reference GPU's ``COPY`` and
``FILL`` packets: through GPU VAs and ``pfnSubmitCommandCb`` on WDDM 2.x, through allocation and patch-location lists
and ``pfnRenderCb`` on WDDM 1.x (as ``wddmsim.scenarios.gpu`` does for the workloads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wddmsim.api import UserDevice, UserProcess
from wddmsim.core.addresses import FenceValue
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCK2, D3DDDICB_LOCKFLAGS, D3DDDICB_UNLOCK, D3DDDICB_UNLOCK2
from wddmsim.ddi.render import D3DDDI_ALLOCATIONLIST, D3DDDI_PATCHLOCATIONLIST, D3DDDICB_RENDER
from wddmsim.ddi.residency import D3DDDI_CREATEPAGINGQUEUE, D3DDDI_MAKERESIDENT, D3DDDICB_EVICT
from wddmsim.ddi.status import HRESULT
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.allocations import AllocationDesc, AllocationUsage, ResourceKind
from wddmsim.kmd.config import DriverConfig, DriverModel, min_paging_buffer_size
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.vidmm.config import VidMmConfig

SMALL = {"local_size": 8 * MiB, "bar_size": 2 * MiB, "aperture_size": 4 * MiB, "system_size": 256 * MiB}
"""Local memory: a 2 MiB CPU-visible segment and a ~6 MiB one, a 4 MiB aperture: three clients crowd it."""

TINY_PAGING_BUFFER = max(PAGE_SIZE, -(-min_paging_buffer_size() // PAGE_SIZE) * PAGE_SIZE)
"""The smallest ``PagingBufferSize`` the driver accepts: every move of more than a few pages goes multipass."""


@dataclass(frozen=True, slots=True)
class Configuration:
    """One adapter the clients run on."""

    model: DriverModel
    gpu: dict[str, Any] = field(default_factory=dict)
    driver: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Adapter:
        driver = DriverConfig(model=self.model, paging_buffer_size=TINY_PAGING_BUFFER, **self.driver)
        return build_adapter(SystemConfig(gpu=GpuConfig(**(SMALL | self.gpu)), driver=driver, vidmm=VidMmConfig()))


CPU_VIRTUAL = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
CONFIGURATIONS: dict[str, Configuration] = {
    "wddm2-default": Configuration(DriverModel.WDDM2),
    "wddm2-16k-gpu-pages": Configuration(DriverModel.WDDM2, gpu={"gpu_page_shift": 14}),
    "wddm2-two-level-cpu-virtual": Configuration(
        DriverModel.WDDM2,
        gpu={"mmu_index_bits": (9, 12)},
        driver={"page_table_update_mode": CPU_VIRTUAL, "page_table_segment": 1},
    ),
    "wddm2-paging-buffers-in-aperture": Configuration(DriverModel.WDDM2, driver={"paging_buffers_in_aperture": True}),
    "wddm1-default": Configuration(DriverModel.WDDM1),
    "wddm1-paging-buffers-in-aperture": Configuration(DriverModel.WDDM1, driver={"paging_buffers_in_aperture": True}),
}

CPU = AllocationUsage.CPU_VISIBLE
USAGES = (CPU, CPU, 0, CPU | AllocationUsage.APERTURE_ONLY)
"""Mostly CPU-visible (lockable), some local-only (seen through the GPU), some aperture-only."""
SIZES = (12 * KiB, 64 * KiB, 192 * KiB, 512 * KiB, 1 * MiB)
READBACK = 256 * KiB
"""Each client's readback buffer: the GPU copies an allocation into it, chunk by chunk, and the CPU locks it."""


def pattern(size: int, seed: int) -> ByteArray:
    out: ByteArray = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    return out


@dataclass(slots=True)
class Shadow:
    """What the client believes of one of its allocations."""

    handle: HANDLE
    size: int
    usage: int
    data: ByteArray
    """The bytes the client last wrote (zeros when created)."""
    count: int = 0
    """Residency references the client holds (MakeResident minus Evict)."""
    address: int | None = None
    """The CPU address of its lock, while locked."""
    va: int = 0
    """Its GPU VA (WDDM 2.x; mapped at creation)."""
    fence: int = 0
    """The paging fence to wait for before GPU work may touch it: its mapping's, its last pending MakeResident's
    or reclaim's (``pfnMakeResidentCb``: GPU access before it signals faults, reliability-plan I15)."""
    offered: bool = False
    immediately: bool = False
    """Offered with ``OfferImmediately``: the content is gone for sure."""

    @property
    def lockable(self) -> bool:
        return bool(self.usage & CPU)


class Client:
    """One device of one process, talking to the adapter through its runtime callbacks only."""

    def __init__(self, process: UserProcess, device: UserDevice, wddm1: bool) -> None:
        self.process = process
        self.device = device
        self.wddm1 = wddm1
        args = D3DDDI_CREATEPAGINGQUEUE()
        device.create_paging_queue(args)
        self.queue = args.hPagingQueue
        self.context = device.create_context()
        self.allocations: dict[HANDLE, Shadow] = {}
        self.last_fence = 0
        """The last GPU work submitted on the context (the user-mode driver waits for it before ``pfnLock2Cb``)."""
        self.paging_fence = 0
        """The highest paging fence a call returned (what a polite client would wait for)."""
        self.readback = self.create(READBACK, CPU, keep=False)
        self.make_resident(self.readback)

    @property
    def handle(self) -> int:
        return int(self.device.handle)

    # --- allocations -----------------------------------------------------------------------------------------

    def create(self, size: int, usage: int, *, keep: bool = True) -> Shadow:
        """``pfnAllocateCb`` of one buffer; on WDDM 2.x mapped at a GPU VA, the mapping's fence not waited for."""
        desc = AllocationDesc(ResourceKind.BUFFER, size=size, usage=usage)
        data = desc.encode()
        info = D3DDDI_ALLOCATIONINFO(pPrivateDriverData=data, PrivateDriverDataSize=len(data))
        assert self.device.allocate(D3DDDICB_ALLOCATE(NumAllocations=1, pAllocationInfo=[info])) == HRESULT.S_OK
        shadow = Shadow(info.hAllocation, size, usage, np.zeros(size, dtype=np.uint8))
        if not self.wddm1:
            shadow.va = self.map(shadow)
        if keep:
            self.allocations[shadow.handle] = shadow
        return shadow

    def map(self, shadow: Shadow) -> int:
        size = -(-shadow.size // PAGE_SIZE)
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=self.queue,
            hAllocation=shadow.handle,
            SizeInPages=size,
            Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
        )
        self.device.map_gpu_va(args)
        self.paging_fence = max(self.paging_fence, args.PagingFenceValue)
        shadow.fence = max(shadow.fence, args.PagingFenceValue)
        return args.VirtualAddress

    # --- residency ---------------------------------------------------------------------------------------------

    def make_resident(self, shadow: Shadow) -> HRESULT:
        """``pfnMakeResidentCb``; ``E_PENDING`` is not waited for."""
        args = D3DDDI_MAKERESIDENT(hPagingQueue=self.queue, NumAllocations=1, AllocationList=(shadow.handle,))
        result = self.device.make_resident(args)
        if result != HRESULT.E_OUTOFMEMORY:
            shadow.count += 1
            self.paging_fence = max(self.paging_fence, args.PagingFenceValue)
            shadow.fence = max(shadow.fence, args.PagingFenceValue)
        return result

    def evict(self, shadow: Shadow) -> None:
        """``pfnEvictCb``: the page-out is queued, not waited for."""
        args = D3DDDICB_EVICT(NumAllocations=1, AllocationList=(shadow.handle,))
        assert self.device.evict(args) == HRESULT.S_OK
        shadow.count -= 1

    def ready(self, shadow: Shadow) -> bool:
        """Has the paging fence ``shadow`` waits for signalled (read through the fence's CPU address)?"""
        return self.device.paging_fence_value(self.queue) >= shadow.fence

    def wait_for(self, *shadows: Shadow) -> None:
        """What the user-mode driver must do before work that references ``shadows`` (on WDDM 2.x a GPU wait for
        the paging fence; here, on the CPU, as the runtime offers no GPU wait)."""
        if self.wddm1:
            return
        fence = max(s.fence for s in shadows)
        if fence:
            self.device.wait_for_paging_fence(self.queue, FenceValue(fence))

    def wait_paging(self) -> None:
        """What a polite client does: wait for the last paging fence it was given."""
        if self.paging_fence:
            self.device.wait_for_paging_fence(self.queue, FenceValue(self.paging_fence))

    # --- CPU access ---------------------------------------------------------------------------------------------

    def lock(self, shadow: Shadow) -> int:
        """``pfnLockCb`` (WDDM 1.x: it synchronises with the GPU itself) or ``pfnLock2Cb`` (WDDM 2.x: the user-mode
        driver waits for its own GPU work first, as a real one does)."""
        if self.wddm1:
            args = D3DDDICB_LOCK(hAllocation=shadow.handle, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True))
            assert self.device.lock(args) == HRESULT.S_OK
            return args.pData
        self.wait_gpu()
        lock2 = D3DDDICB_LOCK2(hAllocation=shadow.handle)
        assert self.device.lock2(lock2) == HRESULT.S_OK
        return lock2.pData

    def unlock(self, shadow: Shadow) -> None:
        if self.wddm1:
            self.device.unlock(D3DDDICB_UNLOCK(NumAllocations=1, phAllocations=(shadow.handle,)))
        else:
            self.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=shadow.handle))

    def read(self, address: int, size: int) -> ByteArray:
        return np.frombuffer(self.process.cpu_read(address, size), dtype=np.uint8)

    # --- GPU work ------------------------------------------------------------------------------------------------

    def wait_gpu(self) -> None:
        if self.last_fence:
            self.device.wait_for_context(self.context, FenceValue(self.last_fence))

    def submit(self, packets: list[tuple[cmd.Packet, list[tuple[int, Shadow, int, bool]]]]) -> int:
        """Submit ``packets``; each names its references as (byte offset of the address word in the packet, the
        allocation, the offset in it, written?).  Returns the fence (not waited for)."""
        if self.wddm1:
            fence = self._render(packets)
        else:
            data = b"".join(cmd.encode(packet) for packet, _ in packets)
            fence = self.device.submit_command(self.context, data)
        self.last_fence = fence
        return fence

    def _render(self, packets: list[tuple[cmd.Packet, list[tuple[int, Shadow, int, bool]]]]) -> int:
        slots: list[D3DDDI_ALLOCATIONLIST] = []
        index: dict[HANDLE, int] = {}
        patches: list[D3DDDI_PATCHLOCATIONLIST] = []
        data = bytearray()
        for packet, references in packets:
            at = len(data)
            data += cmd.encode(packet)
            for word, shadow, offset, write in references:
                slot = index.get(shadow.handle)
                if slot is None:
                    slot = index[shadow.handle] = len(slots)
                    slots.append(D3DDDI_ALLOCATIONLIST(hAllocation=shadow.handle, WriteOperation=write))
                elif write:
                    slots[slot] = D3DDDI_ALLOCATIONLIST(hAllocation=shadow.handle, WriteOperation=True)
                patches.append(
                    D3DDDI_PATCHLOCATIONLIST(AllocationIndex=slot, AllocationOffset=offset, PatchOffset=at + word)
                )
        args = D3DDDICB_RENDER(
            hContext=self.context,
            pCommandBuffer=bytes(data),
            CommandLength=len(data),
            NumAllocations=len(slots),
            pAllocationList=tuple(slots),
            NumPatchLocations=len(patches),
            pPatchLocationList=tuple(patches),
        )
        self.device.render(args)
        return args.SubmissionFenceId

    def address(self, shadow: Shadow, offset: int) -> int:
        """The address word of a packet: the GPU VA (WDDM 2.x), or 0 to be patched (WDDM 1.x)."""
        return 0 if self.wddm1 else hw_address(Space.GPU_VA, shadow.va + offset)

    def fill(self, shadow: Shadow, offset: int, size: int, value: int, *, wait: bool = True) -> None:
        if wait:
            self.wait_for(shadow)
        packet = cmd.Fill(self.address(shadow, offset), size, value)
        self.submit([(packet, [(_FILL_DST, shadow, offset, True)])])

    def copy(self, src: Shadow, src_offset: int, dst: Shadow, dst_offset: int, size: int) -> None:
        self.wait_for(src, dst)
        packet = cmd.Copy(self.address(src, src_offset), self.address(dst, dst_offset), size)
        self.submit([(packet, [(_COPY_SRC, src, src_offset, False), (_COPY_DST, dst, dst_offset, True)])])

    def gpu_read(self, shadow: Shadow) -> ByteArray:
        """What the GPU reads of ``shadow``: copied into the readback buffer chunk by chunk, each chunk read back
        through a CPU lock."""
        out = np.zeros(shadow.size, dtype=np.uint8)
        for start in range(0, shadow.size, READBACK):
            size = min(READBACK, shadow.size - start)
            self.copy(shadow, start, self.readback, 0, size)
            address = self.lock(self.readback)
            out[start : start + size] = self.read(address, size)
            self.unlock(self.readback)
        return out


_COPY_SRC, _COPY_DST, _FILL_DST = 8, 16, 8
"""Byte offsets of the address words in COPY and FILL packets (``docs/command-format.md``)."""


def fill_bytes(value: int, size: int) -> ByteArray:
    """What ``FILL`` writes: the little-endian 32-bit pattern, repeated."""
    return np.frombuffer(value.to_bytes(4, "little") * (size // 4), dtype=np.uint8).copy()
