"""The reference driver's interrupt routine translates a completion inline (issue 24, round 7): what it reports
is what :func:`~wddmsim.drivers.kit.interrupts.interrupt_data` makes of the interrupt, and the other kinds still
go through that function."""

from __future__ import annotations

import pytest

from wddmsim.ddi.submit import DXGKARGCB_NOTIFY_INTERRUPT_DATA
from wddmsim.drivers.kit.interrupts import interrupt_data
from wddmsim.hw.engine import Interrupt, InterruptKind
from wddmsim.hw.faults import AccessKind, FaultKind, FaultRecord
from wddmsim.scenarios.rig import PagingRig

_FAULT = FaultRecord(kind=FaultKind.PAGE_FAULT, engine=1, address=0x5000, access=AccessKind.WRITE, level=1, fence=8)


@pytest.mark.parametrize(
    "interrupt",
    [
        Interrupt(0, InterruptKind.COMPLETION, 7),
        Interrupt(2, InterruptKind.COMPLETION, 0x1_0000_0001),
        Interrupt(1, InterruptKind.FAULT, 8, _FAULT),
        Interrupt(0, InterruptKind.SIGNAL, 3),
        Interrupt(0, InterruptKind.FAULT, 4),
    ],
    ids=["completion", "completion on node 2", "page fault", "signal (not reported)", "fault without a record"],
)
def test_the_interrupt_routine_reports_what_interrupt_data_makes_of_the_interrupt(interrupt: Interrupt) -> None:
    rig = PagingRig()
    reported: list[DXGKARGCB_NOTIFY_INTERRUPT_DATA] = []
    rig.vidmm.scheduler.notify_interrupt = reported.append  # type: ignore[method-assign,assignment]
    rig.driver._interrupt_routine(interrupt)  # type: ignore[attr-defined]
    expected = interrupt_data(interrupt)
    assert reported == ([] if expected is None else [expected])
    if interrupt.kind == InterruptKind.COMPLETION:
        (data,) = reported
        assert data.DmaCompleted is not None
        assert (data.DmaCompleted.SubmissionFenceId, data.DmaCompleted.NodeOrdinal) == (
            interrupt.value,
            interrupt.engine,
        )
