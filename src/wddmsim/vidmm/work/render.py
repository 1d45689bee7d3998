"""``pfnRenderCb`` in the segment model (WDDM 1.x): allocation lists, ``DxgkDdiRender``, ``DxgkDdiPatch``.

What it models (wddm-spec.md sections 3.8 and 4.5; the DDI pages of pfnRenderCb, DxgkDdiRender, DxgkDdiPatch):

1. Locked allocations in the allocation list: one living in local memory is evicted (its CPU view rotated onto
   system memory) so the GPU reaches it through an aperture segment; if it cannot be placed there, the
   submission fails with ``D3DDDIERR_CANTRENDERLOCKEDALLOCATION`` and nothing happens.
2. Every listed allocation is made resident for the submission (in this model the allocation list, not a
   residency list, drives residency), evicting what the submission does not reference.
3. ``DxgkDdiRender`` validates the command buffer and translates it into a DMA buffer with a patch-location list;
   its refusals come back as the user-mode codes (``PRIVILEGEDINSTRUCTION``, ``INVALIDINSTRUCTION``,
   ``INVALIDHANDLE``, ``INVALIDUSERBUFFER``).  A full DMA buffer (``INSUFFICIENT_DMA_BUFFER``) is submitted and
   rendering continues in a fresh one from ``MultipassOffset``.
4. Before each submission ``DxgkDdiPatch`` writes the allocations' physical addresses (and again if the buffer
   is submitted again after an engine reset); the work is then in flight, and the device's allocations do not
   move until it completes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, align_up
from wddmsim.ddi.driver import KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.render import (
    D3DDDI_PATCHLOCATIONLIST,
    D3DDDICB_RENDER,
    DXGK_ALLOCATIONLIST,
    DXGKARG_PATCH,
    DXGKARG_RENDER,
)
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.residency import ResidencyManager
from wddmsim.vidmm.work.submit import Submission, WorkSubmitter

_RENDER_ERRORS: Final = {
    NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION: HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION,
    NTSTATUS.STATUS_ILLEGAL_INSTRUCTION: HRESULT.D3DDDIERR_INVALIDINSTRUCTION,
    NTSTATUS.STATUS_INVALID_PARAMETER: HRESULT.D3DDDIERR_INVALIDINSTRUCTION,
    NTSTATUS.STATUS_INVALID_HANDLE: HRESULT.D3DDDIERR_INVALIDHANDLE,
    NTSTATUS.STATUS_INVALID_USER_BUFFER: HRESULT.D3DDDIERR_INVALIDUSERBUFFER,
    NTSTATUS.STATUS_NO_MEMORY: HRESULT.E_OUTOFMEMORY,
}
"""What ``DxgkDdiRender`` answers -> what ``pfnRenderCb`` returns to the user-mode driver."""


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


@final
class RenderSubmitter:
    """``pfnRenderCb`` for segment-model drivers."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        objects: ObjectTable,
        residency: ResidencyManager,
        work: WorkSubmitter,
        *,
        segment_model: bool,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.objects = objects
        self.residency = residency
        self.work = work
        self.segment_model = segment_model

    def render(self, device: Device, args: D3DDDICB_RENDER) -> HRESULT:
        """Submit the command buffer; ``args.SubmissionFenceId`` receives the fence of its last DMA buffer."""
        if not self.segment_model:
            raise _bad("pfnRenderCb", 1, "allocation lists and patching are the WDDM 1.x model: submit by GPU VA")
        owner = self.objects.context_device(args.hContext)
        if owner is not device:
            raise _bad("hContext", args.hContext, "is not a context of this device")
        self._check_lists(args)
        if device.removed is not None:
            raise DdiError(
                HRESULT.D3DDDIERR_DEVICEREMOVED, f"hDevice={int(device.handle):#x} was removed: {device.removed}"
            )
        listed = [
            self.objects.allocation(s.hAllocation, f"pAllocationList[{i}]") for i, s in enumerate(args.pAllocationList)
        ]
        for i, a in enumerate(listed):
            if a.device is not device:
                raise _bad(f"pAllocationList[{i}]", a.handle, "belongs to another device")
        self._locked_ones(listed)
        self._make_resident(listed)
        args.SubmissionFenceId = self._submit(args, device, listed)
        self.residency.placement.touch(listed)
        return HRESULT.S_OK

    def _check_lists(self, args: D3DDDICB_RENDER) -> None:
        if (
            args.CommandOffset < 0
            or args.CommandLength <= 0
            or args.CommandOffset + args.CommandLength > len(args.pCommandBuffer)
        ):
            raise _bad(
                "CommandLength",
                args.CommandLength,
                f"[CommandOffset, +CommandLength) must lie in the {len(args.pCommandBuffer):#x}-byte command buffer",
            )
        if args.NumAllocations != len(args.pAllocationList):
            raise _bad(
                "NumAllocations", args.NumAllocations, f"must match pAllocationList ({len(args.pAllocationList)})"
            )
        if args.NumPatchLocations != len(args.pPatchLocationList):
            raise _bad(
                "NumPatchLocations",
                args.NumPatchLocations,
                f"must match pPatchLocationList ({len(args.pPatchLocationList)})",
            )
        if args.Flags.Reserved:
            raise _bad("Flags.Reserved", args.Flags.Reserved, "must be zero")

    # --- residency for the submission ----------------------------------------------------------------------

    def _locked_ones(self, listed: list[VidMmAllocation]) -> None:
        """A locked allocation may be rendered from only where the CPU's view stays right: an aperture segment."""
        for a in listed:
            if a.lock is None:
                continue
            aperture = any(
                self.residency.segments.get(s).aperture for s in self.residency.segments.ids_in(a.usable_set)
            )
            if not aperture:
                raise DdiError(
                    HRESULT.D3DDDIERR_CANTRENDERLOCKEDALLOCATION,
                    f"hAllocation={int(a.handle):#x} is locked and cannot be moved to an aperture segment for the GPU",
                )
        for a in listed:
            space = None if a.placement is None else self.residency.segments.get(a.placement.segment_id)
            if a.lock is not None and space is not None and not space.aperture:
                self.residency.servicing.evict_for_cpu(a, discard=False)  # the lock's view follows it to system memory

    def _make_resident(self, listed: list[VidMmAllocation]) -> None:
        # The paging worker catches up first: a request it serviced after the list was placed could take one of the
        # list's ranges (an unreferenced allocation is a victim) before the DMA buffer is submitted.
        self.residency.servicing.service()
        missing = [a for a in listed if a.placement is None]
        if missing and not self.residency.servicing.place_for_submission(missing, protected={a.handle for a in listed}):
            raise DdiError(
                HRESULT.E_OUTOFMEMORY,
                f"the allocation list ({sum(a.size for a in listed):#x} bytes) does not fit the segments it may use",
            )
        paging = self.residency.paging
        paging.wait(paging.flush())  # the DMA buffer runs on another engine: the moves it depends on come first

    # --- DxgkDdiRender, DxgkDdiPatch, submission -------------------------------------------------------------

    def _slots(self, args: D3DDDICB_RENDER, listed: list[VidMmAllocation]) -> list[DXGK_ALLOCATIONLIST]:
        slots = []
        for entry, a in zip(args.pAllocationList, listed, strict=True):
            assert a.placement is not None
            space = self.residency.segments.get(a.placement.segment_id)
            slots.append(
                DXGK_ALLOCATIONLIST(
                    hDeviceSpecificAllocation=a.handle,
                    WriteOperation=entry.WriteOperation,
                    SegmentId=space.id,
                    PhysicalAddress=space.base + a.placement.offset,
                )
            )
        return slots

    def _submit(self, args: D3DDDICB_RENDER, device: Device, listed: list[VidMmAllocation]) -> FenceValue:
        command = args.pCommandBuffer[args.CommandOffset : args.CommandOffset + args.CommandLength]
        slots = self._slots(args, listed)
        size = align_up(len(command), PAGE_SIZE)
        offset = 0
        fence = 0
        node = self.work.nodes[args.hContext]
        while offset < len(command):
            mdl, mapping = self.mm.allocate_contiguous(size)
            call = DXGKARG_RENDER(
                pCommand=command,
                CommandLength=len(command),
                pDmaBuffer=mapping.pointer(0),
                DmaSize=size,
                pAllocationList=slots,
                AllocationListSize=len(slots),
                pPatchLocationListIn=args.pPatchLocationList,
                PatchLocationListInSize=len(args.pPatchLocationList),
                MultipassOffset=offset,
                DmaBufferPhysicalAddress=int(mdl.pfns[0]) << PAGE_SHIFT,
            )
            try:
                status = NTSTATUS(self.driver.render(args.hContext, call))
            except DdiError as refusal:
                self.mm.free_pages(mdl)
                code = _RENDER_ERRORS.get(NTSTATUS(refusal.status)) if isinstance(refusal.status, NTSTATUS) else None
                if code is None:
                    raise
                raise DdiError(code, f"DxgkDdiRender refused the command buffer: {refusal}") from None
            if status not in (NTSTATUS.STATUS_SUCCESS, NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER):
                self.mm.free_pages(mdl)
                raise DdiError(
                    _RENDER_ERRORS.get(status, HRESULT.E_INVALIDARG), f"DxgkDdiRender returned {status.name}"
                )
            if call.MultipassOffset <= offset:
                self.mm.free_pages(mdl)
                raise DdiError(HRESULT.E_OUTOFMEMORY, "DxgkDdiRender made no progress in an empty DMA buffer")
            written = call.pDmaBuffer - mapping.pointer(0)
            patches = list(call.pPatchLocationListOut)
            entry = Submission(args.hContext, device, node, 0, mdl, mapping, written)
            entry.patch = self._patcher(args, call, slots, patches, written)
            entry.allocations = frozenset(a.handle for a in listed)
            fence = self.work.enqueue(entry)
            offset = call.MultipassOffset
        return FenceValue(fence)

    def _patcher(
        self,
        args: D3DDDICB_RENDER,
        call: DXGKARG_RENDER,
        slots: list[DXGK_ALLOCATIONLIST],
        patches: list[D3DDDI_PATCHLOCATIONLIST],
        written: int,
    ) -> Callable[[], None]:
        driver = self.driver

        def patch() -> None:
            driver.patch(
                args.hContext,
                DXGKARG_PATCH(
                    DmaBufferPhysicalAddress=call.DmaBufferPhysicalAddress,
                    pDmaBuffer=call.pDmaBuffer + (-written),
                    DmaBufferSize=written,
                    DmaBufferSubmissionEndOffset=written,
                    pAllocationList=slots,
                    AllocationListSize=len(slots),
                    pPatchLocationList=patches,
                    PatchLocationListSize=len(patches),
                    PatchLocationListSubmissionLength=len(patches),
                ),
            )

        return patch
