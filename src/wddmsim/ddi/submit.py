"""Submission and interrupts: ``DxgkDdiSubmitCommand`` and ``DxgkCbNotifyInterrupt``.

These structures are built once per submission and per interrupt, on the hottest path of the simulator, so they
are plain (mutable) slotted records like their C counterparts rather than frozen ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

from wddmsim.core.pointer import CpuPointer
from wddmsim.ddi.base import HANDLE, NULL
from wddmsim.ddi.flags import DXGK_SUBMITCOMMANDFLAGS


@dataclass(slots=True, kw_only=True)
class DXGKARG_SUBMITCOMMAND:
    """``DXGKARG_SUBMITCOMMAND``: bytes ``[DmaBufferSubmissionStartOffset, ...EndOffset)`` of a DMA buffer."""

    hContext: HANDLE = NULL
    DmaBufferPhysicalAddress: int
    DmaBufferSize: int
    DmaBufferSubmissionStartOffset: int
    DmaBufferSubmissionEndOffset: int
    DmaBufferPrivateDataSubmissionStartOffset: int = 0
    DmaBufferPrivateDataSubmissionEndOffset: int = 0
    SubmissionFenceId: int
    Flags: DXGK_SUBMITCOMMANDFLAGS = field(default_factory=DXGK_SUBMITCOMMANDFLAGS)
    EngineOrdinal: int = 0
    NodeOrdinal: int = 0
    DmaBufferSegmentId: int = 0
    pDmaBufferPrivateData: CpuPointer | None = None
    DmaBufferVirtualAddress: int = 0


class DXGK_INTERRUPT_TYPE(IntEnum):
    DXGK_INTERRUPT_DMA_COMPLETED = 1
    DXGK_INTERRUPT_DMA_PREEMPTED = 2
    DXGK_INTERRUPT_CRTC_VSYNC = 3
    DXGK_INTERRUPT_DMA_FAULTED = 4
    DXGK_INTERRUPT_DMA_PAGE_FAULTED = 9


class DXGK_PAGE_FAULT_FLAGS(IntFlag):
    DXGK_PAGE_FAULT_WRITE = 0x1
    DXGK_PAGE_FAULT_FENCE_INVALID = 0x2
    DXGK_PAGE_FAULT_ADAPTER_RESET_REQUIRED = 0x4
    DXGK_PAGE_FAULT_ENGINE_RESET_REQUIRED = 0x8
    DXGK_PAGE_FAULT_FATAL_HARDWARE_ERROR = 0x10
    DXGK_PAGE_FAULT_IOMMU = 0x20


class DXGK_GENERAL_ERROR_CODE(IntEnum):
    DXGK_GENERAL_ERROR_PAGE_FAULT = 0
    DXGK_GENERAL_ERROR_INVALID_INSTRUCTION = 1


@dataclass(slots=True, kw_only=True)
class DXGK_DMA_COMPLETED:
    """``DXGK_INTERRUPT_DMA_COMPLETED``'s payload: the fence of the buffer that finished."""

    SubmissionFenceId: int
    NodeOrdinal: int = 0
    EngineOrdinal: int = 0


@dataclass(slots=True, kw_only=True)
class DXGK_DMA_FAULTED:
    """``DXGK_INTERRUPT_DMA_FAULTED``'s payload: the fence of the buffer that faulted and why."""

    FaultedFenceId: int
    Status: int
    NodeOrdinal: int = 0
    EngineOrdinal: int = 0


@dataclass(slots=True, kw_only=True)
class DXGK_DMA_PAGE_FAULTED:
    """``DXGK_INTERRUPT_DMA_PAGE_FAULTED``'s payload: the faulting fence, address and flags."""

    FaultedFenceId: int
    FaultedPrimitiveAPISequenceNumber: int = 0
    FaultedPipelineStage: int = 0
    FaultedBindTableEntry: int = 0
    PageFaultFlags: DXGK_PAGE_FAULT_FLAGS = field(default_factory=lambda: DXGK_PAGE_FAULT_FLAGS(0))
    FaultedVirtualAddress: int = 0
    NodeOrdinal: int = 0
    EngineOrdinal: int = 0
    PageTableLevel: int = 0
    FaultErrorCode: DXGK_GENERAL_ERROR_CODE = DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT
    FaultedProcessHandle: HANDLE = NULL


@dataclass(slots=True, kw_only=True)
class DXGKARGCB_NOTIFY_INTERRUPT_DATA:
    """``DXGKARGCB_NOTIFY_INTERRUPT_DATA``: the member named by ``InterruptType`` is set."""

    InterruptType: DXGK_INTERRUPT_TYPE
    DmaCompleted: DXGK_DMA_COMPLETED | None = None
    DmaFaulted: DXGK_DMA_FAULTED | None = None
    DmaPageFaulted: DXGK_DMA_PAGE_FAULTED | None = None


@dataclass(slots=True, kw_only=True)
class DXGKARG_RESETENGINE:
    """``DxgkDdiResetEngine``: reset one hung or faulted engine; ``LastAbortedFenceId`` is [out]."""

    NodeOrdinal: int
    EngineOrdinal: int = 0
    LastAbortedFenceId: int = 0
