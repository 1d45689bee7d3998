"""What VidMm learns of the GPU page (decision 0011, amended): the largest ``PageTableAlignmentInBytes`` of the
``DXGK_PAGE_TABLE_LEVEL_DESC`` answers; a value that is not a power-of-two multiple of the CPU page dividing the
table size is refused with the field named."""

from __future__ import annotations

import dataclasses

import pytest

from wddmsim.core.units import KiB
from wddmsim.ddi.allocation import DXGKARG_CREATEALLOCATION
from wddmsim.ddi.caps import DXGK_PAGE_TABLE_LEVEL_DESC
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO, KernelModeDriver
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.allocations import AllocationDesc, ResourceKind
from wddmsim.ntos.frames import FrameAllocator, OutOfFrames
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.vidmm.move_kinds import MoveCause

from .world import SMALL_GPU, World


def test_vidmm_takes_the_gpu_page_from_the_table_alignment() -> None:
    plain = World().vidmm.gpummu
    assert plain is not None and plain.page_size == 4 * KiB
    w = World(gpu=dataclasses.replace(SMALL_GPU, gpu_page_shift=14))
    assert w.vidmm.gpummu is not None and w.vidmm.gpummu.page_size == 16 * KiB


class Misaligned(DelegatingDriver):
    def __init__(self, inner: KernelModeDriver, alignment: int) -> None:
        super().__init__(inner)
        self.alignment = alignment

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        status = self.inner.query_adapter_info(args)
        if isinstance(args.pOutputData, DXGK_PAGE_TABLE_LEVEL_DESC):
            args.pOutputData = dataclasses.replace(args.pOutputData, PageTableAlignmentInBytes=self.alignment)
        return status


@pytest.mark.parametrize("alignment", [0x3000, 0x800, 0x10000])
def test_a_bad_table_alignment_is_refused_with_the_field_named(alignment: int) -> None:
    with campaign.case("vidmm.gpummu_caps") as box:
        with pytest.raises(InvalidArgument, match="PageTableAlignmentInBytes") as error:
            World(gpu=GpuConfig(), wrap_driver=lambda d: Misaligned(d, alignment))
        box.append(Outcome.REFUSED)
    assert error.value.value == alignment and error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER


def test_frames_come_in_aligned_chunks_when_asked() -> None:
    frames = FrameAllocator(1, 64)
    frames.allocate(3)  # frames 1..3: the first free run no longer starts on a chunk
    got = frames.allocate_chunks(8, 4)
    assert got.tolist() == [4, 5, 6, 7, 8, 9, 10, 11]
    assert frames.free_frames == 64 - 11
    with pytest.raises(OutOfFrames):
        frames.allocate_chunks(6, 4)  # not a whole number of chunks
    frames.free(got)
    assert frames.runs == [(4, 61)]


class SmallPages(DelegatingDriver):
    """Describes allocations as the reference driver does, then claims 4 KiB alignment (and, with ``size``, a size
    that is not whole GPU pages)."""

    def __init__(self, inner: KernelModeDriver, size: int | None = None) -> None:
        super().__init__(inner)
        self.size = size

    def create_allocation(self, args: DXGKARG_CREATEALLOCATION) -> NTSTATUS:
        status = self.inner.create_allocation(args)
        for info in args.pAllocationInfo:
            info.Alignment = 4 * KiB
            if self.size is not None:
                info.Size = self.size
        return status


SIXTEEN_KIB = dataclasses.replace(SMALL_GPU, gpu_page_shift=14)


def test_every_allocation_is_whole_gpu_pages_placed_on_one_even_if_the_driver_asks_for_less() -> None:
    w = World(gpu=SIXTEEN_KIB, wrap_driver=lambda d: SmallPages(d))
    device = w.vidmm.residency.create_device(w.vidmm.residency.create_process())
    made = w.vidmm.residency.create_allocations(
        device, [AllocationDesc(ResourceKind.BUFFER, size=12 * KiB).encode()] * 3
    )
    assert [a.size for a in made] == [16 * KiB] * 3, "the reference driver describes whole 16 KiB GPU pages"
    for a in made:
        a.residency_count = 1
        assert w.vidmm.residency.placement.place(a, {a.handle}, cause=MoveCause.PRESSURE)
        assert a.placement is not None and a.placement.offset % (16 * KiB) == 0, "placed on a GPU page"


def test_a_driver_describing_part_of_a_gpu_page_is_refused_with_the_size_named() -> None:
    w = World(gpu=SIXTEEN_KIB, wrap_driver=lambda d: SmallPages(d, size=12 * KiB))
    residency = w.vidmm.residency
    device = residency.create_device(residency.create_process())
    before = len(residency.allocations)
    with pytest.raises(DdiError, match=r"Size=0x3000: not whole GPU pages of 0x4000") as error:
        residency.create_allocations(device, [AllocationDesc(ResourceKind.BUFFER, size=12 * KiB).encode()])
    assert error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    assert len(residency.allocations) == before
