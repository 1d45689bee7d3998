"""VidMm's side of DxgkDdiBuildPagingBuffer: the normative loop, and the reset path for every contract breach."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from wddmsim.core.pointer import CpuPointer
from wddmsim.core.units import PAGE_SIZE, KiB
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_FILL_DESTINATION,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
)
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.events import DmaBufferCompleted
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import DriverWrapper
from wddmsim.testing import fakes
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import AdapterReset, PagingBufferSubmitted
from wddmsim.vidmm.paging.stream import PagingStream

LOCAL = 2
BOTH = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)


def scattered_transfer(rig: PagingRig, pages: int) -> DXGK_BUILDPAGINGBUFFER_TRANSFER:
    pool = rig.mm.allocate_pages_for_mdl(2 * pages * PAGE_SIZE)
    from wddmsim.ddi.memory import MDL

    mdl = MDL(pool.pfns[::2].copy(), pages * PAGE_SIZE)
    return DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=pages * PAGE_SIZE,
        Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
        Destination=Loc.mdl(mdl),
        Flags=BOTH,
    )


def test_multipass_offset_starts_at_zero_and_is_never_touched_between_calls() -> None:
    recorder: list[fakes.RecordingDriver] = []

    def wrap(driver: KernelModeDriver) -> KernelModeDriver:
        recorder.append(fakes.RecordingDriver(driver))
        return recorder[0]

    rig = PagingRig(wrap_driver=wrap)
    rig.vidmm.resize_paging_buffers(1 * KiB)
    rig.execute(scattered_transfer(rig, 600))
    calls = recorder[0].recording.calls
    assert len(calls) > 4
    assert calls[0].multipass_in == 0
    for before, after in itertools.pairwise(calls):
        assert before.status == NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
        assert after.multipass_in == before.multipass_out, "VidMm hands back exactly what the driver left"
        assert after.buffer_address % 4096 == 0 and after.buffer_offset == 0, (
            "each new paging buffer is fresh and 4 KiB aligned"
        )
        assert after.dma_size_in == 1 * KiB
    assert calls[-1].status == NTSTATUS.STATUS_SUCCESS


def test_each_partial_buffer_is_submitted_on_its_own_in_order() -> None:
    rig = PagingRig()
    rig.vidmm.resize_paging_buffers(512)
    rig.execute(scattered_transfer(rig, 200))
    submitted = rig.adapter.events.of_type(PagingBufferSubmitted)
    assert [s.fence for s in submitted] == list(range(1, len(submitted) + 1))
    assert all(s.start == 0 for s in submitted), "a fresh buffer per pass"
    assert [s.operations for s in submitted][-1] == 1 and {s.operations for s in submitted[:-1]} == {0}


def test_the_stream_says_work_is_unfinished_while_an_operation_waits_for_a_buffer() -> None:
    """A multipass operation's earlier passes run while VidMm waits for a fresh buffer: the stream still owes
    the rest (a TLB flush behind a page-table update, say), so nobody may take it for idle meanwhile."""
    rig = PagingRig()
    rig.vidmm.resize_paging_buffers(512)
    stream = rig.vidmm.paging
    seen: list[tuple[int, bool]] = []  # (submissions made so far, unfinished) at each completion
    rig.adapter.events.subscribe(
        lambda e: seen.append((stream.submissions, stream.unfinished)) if isinstance(e, DmaBufferCompleted) else None
    )
    assert not stream.unfinished
    rig.execute(scattered_transfer(rig, 600))
    total = stream.submissions
    before_last = [unfinished for made, unfinished in seen if made < total]
    after_last = [unfinished for made, unfinished in seen if made == total]
    assert len(before_last) > 2 and all(before_last), "passes completed while the last was still to be built"
    assert after_last and not any(after_last), "once all of it is submitted, only the engine has work left"
    assert not stream.unfinished and stream.continuing == 0


def test_operations_are_packed_tightly_into_one_buffer_until_flush() -> None:
    rig = PagingRig()
    fill = DXGK_BUILDPAGINGBUFFER_FILL(
        FillSize=PAGE_SIZE,
        FillPattern=5,
        Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)),
    )
    for _ in range(3):
        rig.vidmm.paging.build(fill)
    rig.vidmm.paging.wait(rig.vidmm.paging.flush())
    (submitted,) = rig.adapter.events.of_type(PagingBufferSubmitted)
    assert (submitted.start, submitted.end, submitted.operations) == (0, 96, 3)


BREACHES: list[tuple[DriverWrapper, str]] = [
    (lambda d: fakes.IllegalStatusDriver(d), "returned STATUS_INVALID_PARAMETER; only STATUS_SUCCESS, "
     "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER and STATUS_GRAPHICS_ALLOCATION_BUSY are legal"),
    (lambda d: fakes.IllegalStatusDriver(d, 0x12345), "returned 0x00012345"),
    (lambda d: fakes.OverrunDriver(d), "wrote past DmaSize"),
    (lambda d: fakes.RaisingDriver(d), "the driver raised ZeroDivisionError: driver bug"),
    (lambda d: fakes.DmaSizeUnchangedDriver(d), "DmaSize=0x10000 after advancing pDmaBuffer by 0x40"),
    (lambda d: fakes.BusyForeverDriver(d), "ALLOCATION_BUSY again with Flags.AllocationIsIdle set"),
    (lambda d: fakes.BusyForeverDriver(d, Op.DXGK_OPERATION_FILL), "legal only for Transfer, DiscardContent"),
    (lambda d: fakes.SpinningDriver(d), "MultipassOffset stayed at 0 for 64 calls"),
]  # fmt: skip


@pytest.mark.parametrize(("wrap", "message"), BREACHES)
def test_a_driver_that_breaks_the_contract_ends_in_the_reset_path_with_a_clear_message(
    wrap: DriverWrapper, message: str
) -> None:
    rig = PagingRig(wrap_driver=wrap)
    data = rig.pattern(PAGE_SIZE, seed=1)
    mdl = rig.backing(PAGE_SIZE)
    rig.write_mdl(mdl, data)
    payload: object = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=PAGE_SIZE,
        Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
        Destination=Loc.mdl(mdl),
        Flags=BOTH,
    )
    if "legal only for" in message:
        payload = DXGK_BUILDPAGINGBUFFER_FILL(
            FillSize=PAGE_SIZE,
            FillPattern=1,
            Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)),
        )
    with pytest.raises(DeviceRemoved, match=message) as error:
        rig.execute(payload)  # type: ignore[arg-type]
    assert error.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
    assert rig.vidmm.reset.count == 1
    (reset,) = rig.adapter.events.of_type(AdapterReset)
    assert message.split(";")[0] in reset.reason
    assert np.array_equal(rig.read_mdl(mdl), data), "system-memory backing survives the reset byte for byte"


def test_a_gpu_fault_during_paging_resets_the_adapter_and_the_gpu_runs_again_after() -> None:
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL

    rig = PagingRig()
    with pytest.raises(DeviceRemoved, match="node 0 reported a fault"):
        rig.execute(
            DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
                FillSizeInBytes=PAGE_SIZE, FillPattern=1, DestinationVirtualAddress=0x1000
            )
        )
    assert rig.gpu.engines[0].fault is None, "DxgkDdiResetFromTimeout reset the engine"
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILL(
            FillSize=PAGE_SIZE,
            FillPattern=7,
            Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)),
        )
    )
    assert rig.read_segment(LOCAL, 0, 4).tolist() == [7, 0, 0, 0]


def test_the_private_data_area_is_sized_by_the_driver_zeroed_once_and_never_touched_by_vidmm() -> None:
    seen: list[bytes] = []

    class Scribbler(fakes.DelegatingDriver):
        def build_into_buffer(self, args):  # type: ignore[no-untyped-def]
            assert args.pDmaBufferPrivateData is not None
            view = args.pDmaBufferPrivateData.bytes(args.DmaBufferPrivateDataSize)
            seen.append(bytes(view))
            view[:4] = b"drv!"
            return self.inner.build_paging_buffer(args)

    rig = PagingRig(wrap_driver=Scribbler)
    assert rig.vidmm.private_data_size == reference_driver(rig.driver).config.paging_buffer_private_data_size == 64
    fill = DXGK_BUILDPAGINGBUFFER_FILL(
        FillSize=PAGE_SIZE,
        FillPattern=1,
        Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)),
    )
    for _ in range(len(rig.vidmm.pool.buffers) + 1):
        rig.execute(fill)
    assert seen[0] == bytes(64), "zero-initialised when the paging buffer is created"
    assert seen[-1][:4] == b"drv!", "a reused buffer keeps what the driver left: VidMm never touches it"


def test_adapter_discovery_uses_the_two_call_segment_query() -> None:
    recorded: list[int] = []

    class Watcher(fakes.DelegatingDriver):
        def query_adapter_info(self, args):  # type: ignore[no-untyped-def]
            out = args.pOutputData
            recorded.append(getattr(out, "NbSegment", -1))
            return self.inner.query_adapter_info(args)

    rig = PagingRig(wrap_driver=Watcher)
    assert recorded[:3] == [-1, 0, 3], "DRIVERCAPS, then QUERYSEGMENT4 with NbSegment 0, then with the count"
    assert len(recorded) == 3 + 1 + 4, "then GPUMMUCAPS and one PAGETABLELEVELDESC per level"
    segments = rig.vidmm.segments
    assert [s.Flags.CpuVisible for s in segments] == [True, False, True], "the aperture is a linear CPU-visible segment"
    assert segments[2].Flags.Aperture
    assert segments[0].CpuTranslatedAddress == rig.gpu.bar.bus_base
    assert segments[1].BaseAddress == segments[0].BaseAddress + segments[0].Size
    assert rig.vidmm.paging_buffer_size == 64 * KiB
    from wddmsim.ddi.status import InvalidArgument

    with pytest.raises(InvalidArgument, match=r"SegmentId=0x4: segments are 1\.\.3"):
        rig.vidmm.segment(4)


class _PointerWatch(fakes.DelegatingDriver):
    """Records each call's ``pDmaBuffer`` beside the pointer the stream's open buffer stands at, and what the
    driver handed back."""

    def __init__(self, inner: KernelModeDriver) -> None:
        super().__init__(inner)
        self.stream: PagingStream | None = None
        self.seen: list[tuple[CpuPointer, CpuPointer, CpuPointer]] = []  # (handed in, the buffer's cursor, back)

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        assert self.stream is not None and self.stream.current is not None and args.pDmaBuffer is not None
        handed = args.pDmaBuffer
        cursor = self.stream.current.cursor
        status = self.inner.build_paging_buffer(args)
        assert args.pDmaBuffer is not None
        self.seen.append((handed, cursor, args.pDmaBuffer))
        return status


def test_every_call_gets_a_new_pointer_at_the_open_buffers_cursor() -> None:
    """Never the object the driver handed back last time (decision 0226, as amended): a Python driver may keep
    that one as its own cursor and move it in its next call."""
    watch: list[_PointerWatch] = []

    def wrap(driver: KernelModeDriver) -> KernelModeDriver:
        watch.append(_PointerWatch(driver))
        return watch[0]

    rig = PagingRig(wrap_driver=wrap)
    rig.vidmm.resize_paging_buffers(1 * KiB)
    stream = rig.vidmm.paging
    watch[0].stream = stream
    fill = _fill(rig)
    for _ in range(3):
        stream.build(fill)
    stream.wait(stream.flush())
    stream.build(fill)
    rig.execute(scattered_transfer(rig, 300))  # passes over fresh buffers
    seen = watch[0].seen
    assert len(seen) > 6
    assert all(handed == cursor for handed, cursor, _ in seen), "every call starts at the open buffer's cursor"
    assert not any(later[0] is earlier[2] for earlier, later in itertools.pairwise(seen))


class _OneCursor(fakes.DelegatingDriver):
    """Hands back one pointer object of its own each call, moved to where the driver's answer advanced to."""

    def __init__(self, inner: KernelModeDriver) -> None:
        super().__init__(inner)
        self.cursor: CpuPointer | None = None

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        status = self.inner.build_paging_buffer(args)
        advanced = args.pDmaBuffer
        assert advanced is not None
        if self.cursor is None:
            self.cursor = CpuPointer(advanced.mapping, advanced.offset)
        else:
            self.cursor.mapping, self.cursor.offset = advanced.mapping, advanced.offset
        args.pDmaBuffer = self.cursor
        return status


def test_a_driver_that_moves_one_pointer_object_of_its_own_is_answered_as_any_other() -> None:
    plain, kept = PagingRig(), PagingRig(wrap_driver=_OneCursor)
    for rig in (plain, kept):
        fill = _fill(rig)
        for _ in range(3):
            rig.vidmm.paging.build(fill)
    assert plain.vidmm.paging.current is not None and kept.vidmm.paging.current is not None
    assert kept.vidmm.paging.current.used == plain.vidmm.paging.current.used == 96


def _fill(rig: PagingRig) -> DXGK_BUILDPAGINGBUFFER_FILL:
    return DXGK_BUILDPAGINGBUFFER_FILL(
        FillSize=PAGE_SIZE,
        FillPattern=5,
        Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)),
    )


def test_the_argument_block_is_made_by_its_own_init(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream makes each call's ``DXGKARG_BUILDPAGINGBUFFER`` with ``object.__new__`` and the class's own
    ``__init__`` (decision 0233): what a class call does for a class without a ``__new__`` of its own -- the
    class's ``__init__`` as it is at the call, with the fields a driver is handed."""
    assert DXGKARG_BUILDPAGINGBUFFER.__new__ is object.__new__
    made: list[tuple[object, ...]] = []
    init = DXGKARG_BUILDPAGINGBUFFER.__init__

    def recording(self: DXGKARG_BUILDPAGINGBUFFER, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append((type(self), *(getattr(self, name) for name in DXGKARG_BUILDPAGINGBUFFER.__slots__)))

    rig = PagingRig()
    stream = rig.vidmm.paging
    monkeypatch.setattr(DXGKARG_BUILDPAGINGBUFFER, "__init__", recording)
    fill = _fill(rig)
    stream.build(fill)
    stream.build(fill)  # the second into the same buffer, after the first's bytes
    first, second = made
    buffer = stream.current
    assert buffer is not None
    written = buffer.used // 2
    private = buffer.private_cursor
    for used, fields in ((0, first), (written, second)):
        assert dict(zip(("class", *DXGKARG_BUILDPAGINGBUFFER.__slots__), fields, strict=True)) == {
            "class": DXGKARG_BUILDPAGINGBUFFER,
            "DmaBufferGpuVirtualAddress": 0,
            "DmaBufferPrivateDataSize": stream.pool.private_size,
            "DmaBufferWriteOffset": used,
            "DmaSize": buffer.size - used,
            "MultipassOffset": 0,
            "hSystemContext": stream.context,
            "pDmaBuffer": CpuPointer(buffer.mapping, used),
            "pDmaBufferPrivateData": private,
            "payload": fill,
        }
