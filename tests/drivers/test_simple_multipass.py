"""The simple driver under VidMm's multipass loop: at every small paging-buffer size, each operation takes exactly
the buffers the independent model of ``tests/kmd/multipass_model.py`` (from docs/command-format.md alone) says,
and the bytes arrive."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_FILL_DESTINATION,
    DXGK_TRANSFER_LOCATION,
)
from wddmsim.drivers.simple.layout import APERTURE, LOCAL
from wddmsim.hw.aperture import gart_entry

from ..kmd import multipass_model as model
from .bench import GPU, Bench, pattern

PAGES = 24
SYNC = 16
MAX_PAGES = (16 << 20) >> PAGE_SHIFT
"""``SimpleDriverConfig.max_copy_bytes`` in pages."""
SIZES = [48, 63, 64, 97, 128, 200, 513, 4096]


@pytest.fixture(scope="module")
def bench() -> Bench:
    return Bench()


def every_other_page(bench: Bench) -> MDL:
    pool = bench.mm.allocate_pages_for_mdl(2 * PAGES * PAGE_SIZE)
    return MDL(pool.pfns[::2].copy(), PAGES * PAGE_SIZE)


@pytest.mark.parametrize("dma", SIZES)
def test_a_transfer_to_scattered_pages_takes_the_buffers_the_model_says(bench: Bench, dma: int) -> None:
    data = pattern(PAGES * PAGE_SIZE, dma)
    bench.gpu.local.data[GPU.bar_size : GPU.bar_size + data.shape[0]] = data
    mdl = every_other_page(bench)
    bench.adapter.vidmm.resize_paging_buffers(dma)
    paging = bench.adapter.vidmm.paging
    passes = paging.build(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            TransferSize=PAGES * PAGE_SIZE,
            Source=DXGK_TRANSFER_LOCATION(SegmentId=LOCAL, SegmentAddress=GPU.bar_size),
            Destination=DXGK_TRANSFER_LOCATION(SegmentId=0, pMdl=mdl),
            Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
        )
    )
    paging.wait(paging.flush())
    assert passes == model.buffers_needed(dma, PAGES, model.paged_copy(MAX_PAGES), SYNC)
    assert bench.mm.read(mdl, 0, PAGES * PAGE_SIZE) == data.tobytes()


@pytest.mark.parametrize("dma", SIZES)
def test_fill_and_map_aperture_take_the_buffers_the_model_says(bench: Bench, dma: int) -> None:
    bench.adapter.vidmm.resize_paging_buffers(dma)
    paging = bench.adapter.vidmm.paging
    address = GPU.bar_size + 1024 * 1024
    fill = DXGK_BUILDPAGINGBUFFER_FILL(
        FillSize=PAGES * PAGE_SIZE,
        FillPattern=dma,
        Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=address),
    )
    assert paging.build(fill) == model.buffers_needed(dma, 1, model.fixed(32, MAX_PAGES))
    paging.wait(paging.flush())  # the map starts a buffer of its own, as the model counts
    mdl = every_other_page(bench)
    passes = paging.build(
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(SegmentId=APERTURE, OffsetInPages=7, NumberOfPages=PAGES, pMdl=mdl)
    )
    paging.wait(paging.flush())
    assert passes == model.buffers_needed(dma, PAGES, model.write_qwords())
    words = np.frombuffer(bench.local(address, PAGES * PAGE_SIZE).tobytes(), dtype="<u4")
    assert set(words.tolist()) == {dma}
    assert bench.gpu.aperture.entries[7 : 7 + PAGES].tolist() == [gart_entry(int(p)) for p in mdl.pfns]
