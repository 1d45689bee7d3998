"""The stream's check of every driver answer in one expression (decision 0203) against :meth:`PagingStream._check`,
which explains: each way an answer can be wrong ends in the reset path with ``_check``'s reason, and right answers
that the expression does not take at face value (a status as a plain int) are still accepted."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping, CpuPointer
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.ddi.status import NTSTATUS
from wddmsim.scenarios.rig import PagingRig
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import AdapterReset

LOCAL = 2
Answer = Callable[[DXGKARG_BUILDPAGINGBUFFER, NTSTATUS], object]
ELSEWHERE = CpuMapping(CpuVa(0x7000_0000), np.zeros(PAGE_SIZE, dtype=np.uint8))


def _moved(args: DXGKARG_BUILDPAGINGBUFFER, by: int) -> None:
    assert args.pDmaBuffer is not None
    args.pDmaBuffer = CpuPointer(args.pDmaBuffer.mapping, args.pDmaBuffer.offset + by)


def _back(args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS) -> object:
    assert args.pDmaBuffer is not None
    by = args.pDmaBuffer.offset + 16  # to 16 bytes before the buffer's start, DmaSize grown to match
    _moved(args, -by)
    args.DmaSize += by
    return status


def _past_end(args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS) -> object:
    by = args.DmaSize + 16
    _moved(args, by)
    args.DmaSize -= by
    return status


def _elsewhere(args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS) -> object:
    args.pDmaBuffer = ELSEWHERE.pointer(0)
    return status


def _none(args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS) -> object:
    args.pDmaBuffer = None
    return status


def _size_off_by_one(args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS) -> object:
    args.DmaSize -= 1
    return status


def _guard(args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS) -> object:
    assert args.pDmaBuffer is not None
    (args.pDmaBuffer + args.DmaSize).bytes(1)[:] = b"\x00"
    return status


# (answer, the reason _check gives, or None: accepted)
ANSWERS: dict[str, tuple[Answer, str | None]] = {
    "as built": (lambda args, status: status, None),
    "status as a plain int": (lambda args, status: int(status), None),
    "status as a bool": (lambda args, status: False, None),  # an int equal to STATUS_SUCCESS
    "status as a string": (lambda args, status: "0", "returned '0'; only STATUS_SUCCESS"),
    "status as a float": (lambda args, status: 0.0, "returned 0.0; only STATUS_SUCCESS"),
    "pDmaBuffer moved back": (_back, "byte(s) to offset -0x10 of a"),
    "pDmaBuffer past the buffer": (_past_end, "pDmaBuffer moved by"),
    "pDmaBuffer into another mapping": (_elsewhere, "pDmaBuffer no longer points into the paging buffer"),
    "pDmaBuffer set to NULL": (_none, "pDmaBuffer no longer points into the paging buffer"),
    "DmaSize off by one": (_size_off_by_one, "after advancing pDmaBuffer by"),
    "the guard's first byte": (_guard, "wrote past DmaSize"),
}


class _Answering(DelegatingDriver):
    """Builds with the real driver, then answers as ``answer`` says."""

    def __init__(self, inner: KernelModeDriver, answer: Answer) -> None:
        super().__init__(inner)
        self.answer = answer

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        return self.answer(args, self.inner.build_paging_buffer(args))  # type: ignore[return-value]


@pytest.mark.parametrize("name", list(ANSWERS))
def test_every_answer_is_judged_as_check_judges_it(name: str) -> None:
    answer, reason = ANSWERS[name]
    rig = PagingRig(wrap_driver=lambda inner: _Answering(inner, answer))
    mdl = rig.backing(PAGE_SIZE)
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=PAGE_SIZE,
        Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
        Destination=Loc.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
    )
    if reason is None:
        rig.execute(payload)
        assert rig.vidmm.reset.count == 0
        assert rig.vidmm.paging.calls >= 1
        return
    with pytest.raises(DeviceRemoved):
        rig.execute(payload)
    (reset,) = rig.adapter.events.of_type(AdapterReset)
    assert reason in reset.reason
