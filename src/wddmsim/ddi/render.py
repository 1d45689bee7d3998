"""Rendering in the segment model (WDDM 1.x): ``pfnRenderCb``, ``DxgkDdiRender`` and ``DxgkDdiPatch``.

A user-mode driver fills a command buffer whose memory references are *allocation-list slots plus offsets*, with
a patch-location list saying where in the buffer each reference lives.  VidMm makes every listed allocation
resident for the submission, the kernel-mode driver turns the command buffer into a DMA buffer
(``DxgkDdiRender``, validating it: user mode may not name memory it does not own), and just before submission
writes the allocations' physical addresses into it (``DxgkDdiPatch``).  WDDM 2.x GPU-VA engines need none of
this (wddm-spec.md section 3.8); it is what the seed's lock rules for rendering (``CANTRENDERLOCKEDALLOCATION``)
and the two-allocation pattern (an unswizzle copy submitted with ``pfnRenderCb``) rely on.

In C the runtime hands the user-mode driver the command buffer and both lists to fill; here
:class:`D3DDDICB_RENDER` carries them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.core.addresses import FenceValue
from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.core.pointer import CpuPointer
from wddmsim.ddi.base import HANDLE, NO_FENCE, NULL


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_ALLOCATIONLIST:
    """One slot of the allocation list (d3dukmdt.h): the allocation and whether the buffer writes it."""

    hAllocation: HANDLE
    WriteOperation: bool = False
    DoNotRetireInstance: bool = False
    OfferPriority: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDI_PATCHLOCATIONLIST:
    """One reference to patch (d3dukmdt.h): bytes ``PatchOffset`` of the command buffer get the address of
    ``AllocationOffset`` into the allocation of slot ``AllocationIndex``."""

    AllocationIndex: int
    SlotId: int = 0
    DriverId: int = 0
    AllocationOffset: int = 0
    PatchOffset: int
    SplitOffset: int = 0


@dataclass(slots=True, kw_only=True)
class DXGK_ALLOCATIONLIST:
    """The kernel's view of an allocation-list slot: where VidMm put the allocation for this submission."""

    hDeviceSpecificAllocation: HANDLE = NULL
    WriteOperation: bool = False
    SegmentId: int = 0
    """0: not resident (a DMA buffer referring to it cannot be patched)."""
    PhysicalAddress: int = 0
    """``SegmentAddress`` of the allocation's first byte (the segment's ``BaseAddress`` + its offset)."""


@dataclass(slots=True, kw_only=True)
class DXGKARG_RENDER:
    """``DxgkDdiRender``: translate ``pCommand`` into the DMA buffer at ``pDmaBuffer`` (advanced as written), and
    the patch-location list into ``pPatchLocationListOut`` (offsets into the DMA buffer)."""

    pCommand: bytes
    CommandLength: int
    pDmaBuffer: CpuPointer
    DmaSize: int
    pDmaBufferPrivateData: CpuPointer | None = None
    DmaBufferPrivateDataSize: int = 0
    pAllocationList: list[DXGK_ALLOCATIONLIST] = field(default_factory=list)
    AllocationListSize: int = 0
    pPatchLocationListIn: tuple[D3DDDI_PATCHLOCATIONLIST, ...] = ()
    PatchLocationListInSize: int = 0
    pPatchLocationListOut: list[D3DDDI_PATCHLOCATIONLIST] = field(default_factory=list)
    """[in/out] the driver appends the references of the DMA buffer."""
    PatchLocationListOutSize: int = 0
    MultipassOffset: int = 0
    """[in/out] bytes of the command buffer already translated."""
    DmaBufferSegmentId: int = 0
    DmaBufferPhysicalAddress: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DXGK_PATCHFLAGS(BitUnion):
    """``DXGK_PATCHFLAGS``: ``Paging`` bit 0 (a paging buffer, patched without a patch list), ``Present`` bit 1."""

    Paging: bool = flag(0)
    Present: bool = flag(1)
    RedirectedPresent: bool = flag(2)
    NullRendering: bool = flag(3)
    Reserved: int = bits(4, 28)


@dataclass(slots=True, kw_only=True)
class DXGKARG_PATCH:
    """``DxgkDdiPatch``: write the physical address of every reference in the submitted part of the DMA buffer."""

    hDevice: HANDLE = NULL
    DmaBufferSegmentId: int = 0
    DmaBufferPhysicalAddress: int = 0
    pDmaBuffer: CpuPointer
    DmaBufferSize: int
    DmaBufferSubmissionStartOffset: int = 0
    DmaBufferSubmissionEndOffset: int = 0
    pAllocationList: list[DXGK_ALLOCATIONLIST] = field(default_factory=list)
    AllocationListSize: int = 0
    pPatchLocationList: list[D3DDDI_PATCHLOCATIONLIST] = field(default_factory=list)
    PatchLocationListSize: int = 0
    PatchLocationListSubmissionStart: int = 0
    PatchLocationListSubmissionLength: int = 0
    SubmissionFenceId: int = 0
    Flags: DXGK_PATCHFLAGS = field(default_factory=DXGK_PATCHFLAGS)


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_RENDERFLAGS(BitUnion):
    """``D3DDDICB_RENDERFLAGS``: ``ResizeCommandBuffer`` bit 0 ... (none changes the model)."""

    ResizeCommandBuffer: bool = flag(0)
    ResizeAllocationList: bool = flag(1)
    ResizePatchLocationList: bool = flag(2)
    NullRendering: bool = flag(3)
    Reserved: int = bits(4, 28)


@dataclass(slots=True, kw_only=True)
class D3DDDICB_RENDER:
    """``D3DDDICB_RENDER`` (``pfnRenderCb``): bytes ``[CommandOffset, CommandOffset + CommandLength)`` of the
    command buffer, the first ``NumAllocations`` slots of the allocation list, the first ``NumPatchLocations``
    references.  ``SubmissionFenceId`` [out] is what to wait for (a model addition: the runtime tracks it)."""

    hContext: HANDLE
    pCommandBuffer: bytes
    CommandLength: int
    CommandOffset: int = 0
    NumAllocations: int = 0
    pAllocationList: tuple[D3DDDI_ALLOCATIONLIST, ...] = ()
    NumPatchLocations: int = 0
    pPatchLocationList: tuple[D3DDDI_PATCHLOCATIONLIST, ...] = ()
    Flags: D3DDDICB_RENDERFLAGS = field(default_factory=D3DDDICB_RENDERFLAGS)
    SubmissionFenceId: FenceValue = NO_FENCE
    """[out]"""
