"""``DxgkDdiInterruptRoutine``'s translation: a hardware interrupt as ``DXGKARGCB_NOTIFY_INTERRUPT_DATA``.

What the simulated GPU raises is the same whoever drives it, and so is its DDI meaning: a completion reports the
submission fence it reached (``DXGK_INTERRUPT_DMA_COMPLETED``), a bus error a faulted DMA buffer
(``DXGK_INTERRUPT_DMA_FAULTED``), any other fault a ``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` with its general error
code.  When to call ``DxgkCbNotifyInterrupt`` (and what to do before the driver was started) is each driver's own.
"""

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
from wddmsim.hw.faults import AccessKind, FaultKind, FaultRecord

_COMPLETION = InterruptKind.COMPLETION
_DMA_COMPLETED = DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED


def interrupt_data(interrupt: Interrupt) -> DXGKARGCB_NOTIFY_INTERRUPT_DATA | None:
    """What ``DxgkCbNotifyInterrupt`` is told of ``interrupt``; None for one neither driver reports (a SIGNAL
    packet's interrupt, or a FAULT interrupt without its record)."""
    if interrupt.kind == _COMPLETION:  # one per submission: the members read once, from the module
        return DXGKARGCB_NOTIFY_INTERRUPT_DATA(
            InterruptType=_DMA_COMPLETED,
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
    return DXGKARGCB_NOTIFY_INTERRUPT_DATA(
        InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED, DmaPageFaulted=_page_faulted(fault)
    )


def _page_faulted(fault: FaultRecord) -> DXGK_DMA_PAGE_FAULTED:
    """A fault the engine stopped on: the VA only for a translation fault (an invalid instruction has none)."""
    page_fault = fault.kind == FaultKind.PAGE_FAULT
    flags = DXGK_PAGE_FAULT_FLAGS(0)
    if fault.access == AccessKind.WRITE:
        flags |= DXGK_PAGE_FAULT_FLAGS.DXGK_PAGE_FAULT_WRITE
    return DXGK_DMA_PAGE_FAULTED(
        FaultedFenceId=fault.fence,
        PageFaultFlags=flags,
        FaultedVirtualAddress=fault.address if page_fault else 0,
        NodeOrdinal=fault.engine,
        PageTableLevel=fault.level,
        FaultErrorCode=DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT
        if page_fault
        else DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_INVALID_INSTRUCTION,
    )


__all__ = ["interrupt_data"]
