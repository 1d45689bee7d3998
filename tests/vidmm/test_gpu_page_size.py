"""What VidMm learns of the GPU page (decision 0011, amended): the largest ``PageTableAlignmentInBytes`` of the
``DXGK_PAGE_TABLE_LEVEL_DESC`` answers; a value that is not a power-of-two multiple of the CPU page dividing the
table size is refused with the field named."""

from __future__ import annotations

import dataclasses

import pytest

from wddmsim.core.units import KiB
from wddmsim.ddi.caps import DXGK_PAGE_TABLE_LEVEL_DESC
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO, KernelModeDriver
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.hw.gpu import GpuConfig
from wddmsim.ntos.frames import FrameAllocator, OutOfFrames
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.fakes import DelegatingDriver

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
