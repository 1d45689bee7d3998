"""How a process's GPU work reaches the GPU -- the one place the two driver models differ for a workload.

WDDM 2.x (:class:`VaGpu`): every resource is mapped at a GPU virtual address (``pfnMapGpuVirtualAddressCb``; the
process waits for the paging fence it returns before the GPU may use the range), and work is a DMA buffer of the
reference GPU's packets (``COPY``, ``FILL`` by VA, :mod:`wddmsim.hw.commands`) submitted on a context
(``pfnSubmitCommandCb``) and waited for on the CPU.

WDDM 1.x (:class:`ListGpu`): no GPU virtual addresses.  The user-mode driver writes the same packets with every
address left zero, lists the allocations they use (``D3DDDI_ALLOCATIONLIST``, ``WriteOperation`` for
destinations) and where each address goes (``D3DDDI_PATCHLOCATIONLIST``), and submits with ``pfnRenderCb``;
VidMm makes the listed allocations resident for the submission and the driver patches their segment addresses in
(``DxgkDdiRender``, ``DxgkDdiPatch``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, final

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.render import D3DDDI_ALLOCATIONLIST, D3DDDI_PATCHLOCATIONLIST, D3DDDICB_RENDER
from wddmsim.ddi.status import HRESULT
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.scenarios.model import GpuCopy, GpuOp, Ref
from wddmsim.scenarios.record import TracedDevice


class GpuPath(Protocol):
    """What a process needs to run GPU work on its resources."""

    def expose(self, view: str, hAllocation: HANDLE, size: int) -> None:
        """Make a resource reachable by the process's GPU work under the name ``view``."""
        ...

    def run(self, ops: Sequence[GpuOp]) -> None:
        """Run ``ops`` in order on the GPU and return once they completed."""
        ...

    def forget(self, view: str) -> None:
        """The resource behind ``view`` was destroyed (its VA went with it)."""
        ...


@final
class VaGpu:
    """GPU work through the process's GPU VA space (WDDM 2.x)."""

    def __init__(self, device: TracedDevice, queue: HANDLE) -> None:
        self.device = device
        self.queue = queue
        self.context = device.create_context()
        self.bases: dict[str, int] = {}
        self.submissions = 0

    def expose(self, view: str, hAllocation: HANDLE, size: int) -> None:
        """``MapGpuVirtualAddress`` of the whole allocation, read-write; waits for the mapping's paging fence."""
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=self.queue,
            hAllocation=hAllocation,
            SizeInPages=size // PAGE_SIZE,
            Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
        )
        if self.device.map_gpu_va(args) == HRESULT.E_PENDING:
            self.device.wait_for_paging_fence(self.queue, args.PagingFenceValue)
        self.bases[view] = args.VirtualAddress

    def forget(self, view: str) -> None:
        del self.bases[view]

    def reserve(self, view: str, size: int) -> int:
        """``ReserveGpuVirtualAddress``: a range for a tiled resource (no access until tiles are mapped)."""
        args = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=self.queue, Size=size)
        if self.device.reserve_gpu_va(args) == HRESULT.E_PENDING:
            self.device.wait_for_paging_fence(self.queue, args.PagingFenceValue)
        self.bases[view] = args.VirtualAddress
        return args.VirtualAddress

    def address(self, ref: Ref) -> int:
        return hw_address(Space.GPU_VA, self.bases[ref.view] + ref.offset)

    def packet(self, op: GpuOp) -> cmd.Packet:
        if isinstance(op, GpuCopy):
            return cmd.Copy(self.address(op.src), self.address(op.dst), op.size)
        return cmd.Fill(self.address(op.dst), op.size, op.value)

    def run(self, ops: Sequence[GpuOp]) -> None:
        if not ops:
            return
        buffer = b"".join(cmd.encode(self.packet(op)) for op in ops)
        fence = self.device.submit_command(self.context, buffer)
        self.submissions += 1
        self.device.wait_for_context(self.context, fence)


@final
class ListGpu:
    """GPU work through allocation and patch-location lists (WDDM 1.x, ``pfnRenderCb``)."""

    def __init__(self, device: TracedDevice) -> None:
        self.device = device
        self.context = device.create_context()
        self.handles: dict[str, HANDLE] = {}
        self.submissions = 0

    def expose(self, view: str, hAllocation: HANDLE, size: int) -> None:
        self.handles[view] = hAllocation

    def forget(self, view: str) -> None:
        del self.handles[view]

    def run(self, ops: Sequence[GpuOp]) -> None:
        if not ops:
            return
        slots: list[D3DDDI_ALLOCATIONLIST] = []
        index: dict[HANDLE, int] = {}
        patches: list[D3DDDI_PATCHLOCATIONLIST] = []
        data = bytearray()

        def reference(at: int, ref: Ref, write: bool) -> None:
            handle = self.handles[ref.view]
            slot = index.get(handle)
            if slot is None:
                slot = index[handle] = len(slots)
                slots.append(D3DDDI_ALLOCATIONLIST(hAllocation=handle, WriteOperation=write))
            elif write and not slots[slot].WriteOperation:
                slots[slot] = D3DDDI_ALLOCATIONLIST(hAllocation=handle, WriteOperation=True)
            patches.append(D3DDDI_PATCHLOCATIONLIST(AllocationIndex=slot, AllocationOffset=ref.offset, PatchOffset=at))

        for op in ops:
            at = len(data)
            if isinstance(op, GpuCopy):
                data += cmd.encode(cmd.Copy(0, 0, op.size))
                reference(at + cmd.COPY_SRC_WORD, op.src, False)
                reference(at + cmd.COPY_DST_WORD, op.dst, True)
            else:
                data += cmd.encode(cmd.Fill(0, op.size, op.value))
                reference(at + cmd.FILL_DST_WORD, op.dst, True)
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
        self.submissions += 1
        self.device.wait_for_context(self.context, args.SubmissionFenceId)
