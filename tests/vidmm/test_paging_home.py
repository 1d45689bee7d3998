"""``PagingBufferSegmentId``: paging buffers fetched from system memory (0) or through an aperture segment."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SHIFT, KiB, MiB
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_FILL, DXGK_FILL_DESTINATION
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT4
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.ddi.submit import DXGKARG_SUBMITCOMMAND
from wddmsim.hw.aperture import Aperture, gart_entry
from wddmsim.hw.faults import AccessKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.kmd.config import DriverModel
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.testing.residency import check_residency
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import PagingOperation, VidMmEvict

from .test_va_update import Tiles
from .world import World, pattern

APERTURE = 3


class SubmitRecorder(DelegatingDriver):
    """Records ``(DmaBufferSegmentId, DmaBufferPhysicalAddress)`` of every paging-buffer submission."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.aperture: Aperture = inner.gpu.aperture
        self.submissions: list[tuple[int, int]] = []
        self.dummy = -1
        """The dummy page's PFN, once VidMm has one (an unmapped buffer range points there)."""

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        if args.Flags.Paging:
            self.submissions.append((args.DmaBufferSegmentId, args.DmaBufferPhysicalAddress))
        if args.DmaBufferSegmentId:  # a buffer is named by its aperture address only once its map has executed
            aperture = self.aperture
            start = args.DmaBufferPhysicalAddress - aperture.base + args.DmaBufferSubmissionStartOffset
            size = args.DmaBufferSubmissionEndOffset - args.DmaBufferSubmissionStartOffset
            pfns = aperture.pfns(start, size, AccessKind.READ)  # raises on an unmapped page
            assert self.dummy not in pfns.tolist(), f"submitted at {args.DmaBufferPhysicalAddress:#x} before its map"
        return self.inner.submit_command(args)


class ReportsSegment(DelegatingDriver):
    """A driver that reports ``PagingBufferSegmentId`` = ``segment_id`` whatever its segments are."""

    def __init__(self, inner: Any, segment_id: int) -> None:
        super().__init__(inner)
        self.segment_id = segment_id

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        status = self.inner.query_adapter_info(args)
        if isinstance(args.pOutputData, DXGK_QUERYSEGMENTOUT4):
            args.pOutputData.PagingBufferSegmentId = self.segment_id
        return status


def _world(model: DriverModel = DriverModel.WDDM2, **options: Any) -> tuple[World, SubmitRecorder]:
    recorders: list[SubmitRecorder] = []

    def wrap(driver: Any) -> Any:
        recorders.append(SubmitRecorder(driver))
        return recorders[0]

    w = World(model=model, driver_options={"paging_buffers_in_aperture": True, **options}, wrap_driver=wrap)
    recorders[0].dummy = w.vidmm.dummy_page >> PAGE_SHIFT
    return w, recorders[0]


def _round_trip(w: World, size: int, seed: int) -> None:
    """An allocation paged in, written, paged out and back: its bytes survive (every move through the buffers)."""
    a = w.buffer(size)
    w.make_resident(a)
    w.write(a, pattern(a.size, seed))
    w.evict(a)
    w.make_resident(a)
    assert bytes(w.read(a, 0, a.size)) == pattern(a.size, seed).tobytes()


@pytest.mark.parametrize("model", list(DriverModel), ids=lambda m: m.value)
@pytest.mark.parametrize("map_aperture2", [False, True], ids=["map", "map2"])
def test_paging_buffers_in_the_aperture_are_mapped_there_and_submitted_at_their_segment_address(
    model: DriverModel, map_aperture2: bool
) -> None:
    w, recorder = _world(model, map_aperture2=map_aperture2)
    vidmm = w.vidmm
    assert vidmm.paging_home is not None and vidmm.paging_home.space.id == APERTURE
    space = vidmm.spaces.get(APERTURE)
    assert len(vidmm.pool.buffers) == vidmm.config.paging_buffers
    for buffer in vidmm.pool.buffers:
        offset = buffer.segment_address - space.base
        assert buffer.segment_id == APERTURE and space.owners[offset] is buffer
        pages = -(-buffer.size >> PAGE_SHIFT)
        mapped = w.adapter.gpu.aperture.pfns(offset, pages << PAGE_SHIFT, AccessKind.READ)
        assert np.array_equal(mapped, buffer.mdl.pfns[:pages]), "the GART maps the buffer's own pages"
    start = len(recorder.submissions)
    _round_trip(w, 256 * KiB, 7)
    addresses = {b.segment_address for b in vidmm.pool.buffers}
    submitted = recorder.submissions[start:]
    assert submitted and all(seg == APERTURE and address in addresses for seg, address in submitted)
    assert not check_residency(w.adapter)


def test_the_bootstrap_buffer_maps_the_pool_and_is_never_used_again() -> None:
    """Decision 0044: the first submissions come from one buffer in system memory; it maps the pool (one
    MapApertureSegment per buffer) and no submission after names system memory."""
    w, recorder = _world()
    w.make_resident(w.buffer(64 * KiB))
    w.settle()
    maps = [e for e in w.adapter.events.of_type(PagingOperation) if e.operation.endswith("MAP_APERTURE_SEGMENT")]
    assert len(maps) >= len(w.vidmm.pool.buffers)
    first_aperture = next(i for i, (seg, _) in enumerate(recorder.submissions) if seg == APERTURE)
    assert first_aperture >= 1 and {seg for seg, _ in recorder.submissions[:first_aperture]} == {0}
    assert {seg for seg, _ in recorder.submissions[first_aperture:]} == {APERTURE}
    bootstrap = {address for seg, address in recorder.submissions[:first_aperture]}
    live = {int(b.mdl.pfns[0]) << PAGE_SHIFT for b in w.vidmm.pool.buffers}
    assert not bootstrap & live


def test_the_gpu_really_fetches_through_the_aperture() -> None:
    """Point a buffer's first aperture page at the dummy page: the next paging buffer fetched from it is zeros,
    which is no command, and the adapter resets."""
    w, recorder = _world()
    recorder.dummy = -1  # the recorder would refuse the submission itself: let the engine find out
    vidmm = w.vidmm
    space = vidmm.spaces.get(APERTURE)
    buffer = vidmm.pool.buffers[vidmm.pool._next]
    page = (buffer.segment_address - space.base) >> PAGE_SHIFT
    w.adapter.gpu.aperture.entries[page] = gart_entry(vidmm.dummy_page >> PAGE_SHIFT)
    a = w.buffer(64 * KiB)
    with pytest.raises(DeviceRemoved, match="reported a fault"):
        w.make_resident(a)


def test_pressure_on_the_aperture_never_takes_a_paging_buffer_s_range() -> None:
    w, _ = _world()
    space = w.vidmm.spaces.get(APERTURE)
    held = {b.segment_address - space.base for b in w.vidmm.pool.buffers}
    for _ in range(space.size // MiB + 4):  # more than the aperture holds: pressure evicts within it
        a = w.buffer(1 * MiB, usage=AllocationUsage.APERTURE_ONLY)
        w.make_resident(a)
    w.settle()
    evicted = [e for e in w.adapter.events.of_type(VidMmEvict) if e.segment == APERTURE and e.cause == "pressure"]
    assert evicted, "the aperture was under pressure"
    assert all(space.owners.get(offset) in w.vidmm.pool.buffers for offset in held)
    assert not check_residency(w.adapter)


def test_resizing_maps_the_new_pool_unmaps_the_old_and_frees_its_ranges() -> None:
    w, recorder = _world()
    vidmm = w.vidmm
    space = vidmm.spaces.get(APERTURE)
    old = list(vidmm.pool.buffers)
    old_offsets = [b.segment_address - space.base for b in old]
    vidmm.resize_paging_buffers(8 * KiB)
    assert all(b.segment_id == 0 for b in old), "the old buffers are no longer named by the aperture"
    for offset in old_offsets:
        assert w.adapter.gpu.aperture.pfns(offset, 4 * KiB, AccessKind.READ)[0] == vidmm.dummy_page >> PAGE_SHIFT
    assert all(b.segment_id == APERTURE and b.size == 8 * KiB for b in vidmm.pool.buffers)
    held = [o for o, _, owner in space.held() if owner in old]
    assert held == []
    _round_trip(w, 512 * KiB, 3)
    assert recorder.submissions[-1][0] == APERTURE
    assert not check_residency(w.adapter)


def test_paging_still_works_after_an_adapter_reset() -> None:
    """The aperture's table is adapter memory the reset does not touch: the buffers stay mapped, the reset's own
    operations and later ones are fetched through them."""
    w, recorder = _world()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    before = len(recorder.submissions)
    with pytest.raises(DeviceRemoved):
        w.vidmm.reset.trigger("watchdog")
    assert len(recorder.submissions) > before and {seg for seg, _ in recorder.submissions[before:]} == {APERTURE}
    assert not check_residency(w.adapter)
    local = w.vidmm.spaces.get(2)
    w.vidmm.paging.execute(
        DXGK_BUILDPAGINGBUFFER_FILL(
            FillSize=4 * KiB,
            FillPattern=0x5A5A5A5A,
            Destination=DXGK_FILL_DESTINATION(SegmentId=2, SegmentAddress=local.base),
        )
    )
    assert w.adapter.gpu.local.read(local.base, 4 * KiB) == bytes([0x5A]) * 4 * KiB
    assert recorder.submissions[-1][0] == APERTURE


def test_a_paging_companion_s_buffers_come_from_the_aperture_too() -> None:
    t = Tiles(driver_options={"paging_buffers_in_aperture": True})
    t.update(t.map(0, 128 * KiB, 64 * KiB))
    companion = t.va.updates.companions[t.context]
    space = t.w.vidmm.spaces.get(APERTURE)
    for buffer in companion.stream.pool.buffers:
        assert buffer.segment_id == APERTURE and space.owners[buffer.segment_address - space.base] is buffer
    assert companion.stream.submissions > 0
    assert t.read(0, 128 * KiB) == t.pool_bytes(64 * KiB, 128 * KiB)
    assert not check_residency(t.w.adapter)


def test_a_companion_s_pool_makes_room_in_a_full_aperture() -> None:
    """Paging buffers are VidMm's own objects, as page tables are: a full aperture makes room for them by evicting
    allocations (and a pool that cannot be had would leave no companion context behind: the pool comes first)."""
    t = Tiles(driver_options={"paging_buffers_in_aperture": True})
    space = t.w.vidmm.spaces.get(APERTURE)
    while space.ranges.free_bytes >= 64 * KiB:
        a = t.w.buffer(min(1 * MiB, space.ranges.free_bytes), usage=AllocationUsage.APERTURE_ONLY)
        t.w.make_resident(a)
    t.w.settle()
    t.update(t.map(0, 64 * KiB))
    companion = t.va.updates.companions[t.context]
    assert all(b.segment_id == APERTURE for b in companion.stream.pool.buffers)
    evicted = [e for e in t.w.adapter.events.of_type(VidMmEvict) if e.segment == APERTURE and e.cause == "pressure"]
    assert evicted, "room was made in the aperture"
    assert t.read(0) == t.pool_bytes(0)
    assert not check_residency(t.w.adapter)


def test_an_aperture_too_small_for_the_pool_is_refused_at_start() -> None:
    gpu = GpuConfig(local_size=8 * MiB, bar_size=2 * MiB, aperture_size=128 * KiB, system_size=256 * MiB)
    with pytest.raises(InvalidArgument, match=r"PagingBufferSegmentId=0x3: the aperture segment has no free "
                       r"0x10000-byte range for a paging buffer") as error:  # fmt: skip
        World(gpu=gpu, driver_options={"paging_buffers_in_aperture": True})
    assert error.value.status == NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY


@pytest.mark.parametrize(("reported", "why"), [(1, "memory segment"), (2, "memory segment"), (9, "no such segment")])
def test_paging_buffer_segment_id_must_name_an_aperture_segment(reported: int, why: str) -> None:
    with pytest.raises(InvalidArgument, match=rf"PagingBufferSegmentId={reported:#x}: must be 0 or the id of an "
                       r"aperture segment \(segments are 1\.\.3\)") as error:  # fmt: skip
        World(wrap_driver=lambda d: ReportsSegment(d, reported))
    assert error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER, why
    assert isinstance(error.value, DdiError)
