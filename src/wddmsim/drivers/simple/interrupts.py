"""``DxgkDdiInterruptRoutine`` of the simple driver: a hardware interrupt as ``DXGKARGCB_NOTIFY_INTERRUPT_DATA``."""

from __future__ import annotations

from wddmsim.ddi.status import NTSTATUS
from wddmsim.ddi.submit import (
    DXGK_DMA_COMPLETED,
    DXGK_DMA_FAULTED,
    DXGK_DMA_PAGE_FAULTED,
    DXGK_GENERAL_ERROR_CODE,
    DXGK_INTERRUPT_TYPE,
    DXGK_PAGE_FAULT_FLAGS,
    DXGKARGCB_NOTIFY_INTERRUPT_DATA,
)
from wddmsim.hw.engine import Interrupt, InterruptKind
from wddmsim.hw.faults import AccessKind, FaultKind


def interrupt_data(interrupt: Interrupt) -> DXGKARGCB_NOTIFY_INTERRUPT_DATA | None:
    """A completion reports its fence; a bus error a ``DMA_FAULTED``; any other fault (an invalid instruction:
    this driver has no page tables to fault on) a ``DMA_PAGE_FAULTED`` with its general error code."""
    if interrupt.kind == InterruptKind.COMPLETION:
        return DXGKARGCB_NOTIFY_INTERRUPT_DATA(
            InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED,
            DmaCompleted=DXGK_DMA_COMPLETED(SubmissionFenceId=interrupt.value, NodeOrdinal=interrupt.engine),
        )
    fault = interrupt.fault
    if interrupt.kind != InterruptKind.FAULT or fault is None:
        return None
    if fault.kind == FaultKind.BUS_ERROR:
        return DXGKARGCB_NOTIFY_INTERRUPT_DATA(
            InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_FAULTED,
            DmaFaulted=DXGK_DMA_FAULTED(
                FaultedFenceId=fault.fence, Status=NTSTATUS.STATUS_UNSUCCESSFUL, NodeOrdinal=fault.engine
            ),
        )
    page_fault = fault.kind == FaultKind.PAGE_FAULT
    return DXGKARGCB_NOTIFY_INTERRUPT_DATA(
        InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
        DmaPageFaulted=DXGK_DMA_PAGE_FAULTED(
            FaultedFenceId=fault.fence,
            PageFaultFlags=DXGK_PAGE_FAULT_FLAGS.DXGK_PAGE_FAULT_WRITE
            if fault.access == AccessKind.WRITE
            else DXGK_PAGE_FAULT_FLAGS(0),
            FaultedVirtualAddress=fault.address if page_fault else 0,
            NodeOrdinal=fault.engine,
            PageTableLevel=fault.level,
            FaultErrorCode=DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT
            if page_fault
            else DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_INVALID_INSTRUCTION,
        ),
    )
