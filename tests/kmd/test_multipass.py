"""The multipass sweep: every operation gives identical bytes at every paging-buffer size, in exactly the
number of buffers its packet capacity implies (reliability-plan I9 / L7).

Transfer sizes: 1 page, 2 pages, 64 KiB, 2 MiB + 4 KiB, 257 pages, 64 MiB.  Buffer sizes: every byte size from
the smallest that holds one packet up to four packets, then primes up to the single-pass size.  The default run
takes every byte size up to four packets and a spread of primes; ``-m slow`` takes every prime (sizes up to
2 MiB + 4 KiB) and a denser spread for 64 MiB.  The driver's per-packet limit is lowered to 16 KiB so that even
physically contiguous ranges need many packets.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.kmd import multipass_model as model
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, KiB, MiB
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_FILL_DESTINATION,
    DXGK_TRANSFER_LOCATION,
)
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.aperture import gart_entry
from wddmsim.kmd.config import DriverConfig
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.vidmm.errors import DeviceRemoved

MAX_COPY = 16 * KiB
MAX_PAGES = MAX_COPY // PAGE_SIZE
SYNC = 16
SIZES = {
    "1 page": PAGE_SIZE,
    "2 pages": 2 * PAGE_SIZE,
    "64 KiB": 64 * KiB,
    "2 MiB + 4 KiB": 2 * MiB + PAGE_SIZE,
    "257 pages": 257 * PAGE_SIZE,
    "64 MiB": 64 * MiB,
}
LOCAL = 2


def dma_sizes(min_packet: int, single: int, *, large: bool, slow: bool) -> list[int]:
    """Every size up to four packets, then primes up to the single-pass size (sampled unless ``slow``)."""
    upper = max(single, min_packet)
    small = list(range(min_packet, min(4 * min_packet, upper) + 1))
    primes = [p for p in model.primes_up_to(upper) if p > 4 * min_packet]
    if large:
        small = [min_packet, min_packet + 1, 2 * min_packet - 1, 4 * min_packet]
        limit = 48 if slow else 10
        primes = primes[:: max(1, len(primes) // limit)]
    elif not slow:
        primes = primes[:: max(1, len(primes) // 24)]
    return sorted({*small, *primes, upper})


@pytest.fixture(scope="module")
def rig() -> PagingRig:
    return PagingRig(SystemConfig(driver=DriverConfig(max_copy_bytes=MAX_COPY)))


def every_other_page(rig: PagingRig, size: int) -> MDL:
    """System pages none of which is next to another: one page-list extent per page."""
    pool = rig.mm.allocate_pages_for_mdl(2 * size)
    return MDL(pool.pfns[::2].copy(), size)


def _sweep_ids(size: int, dma: int) -> str:
    return f"{size}-{dma}"


def _cases(slow: bool) -> list[tuple[str, int]]:
    cases = []
    for name, size in SIZES.items():
        pages = size >> PAGE_SHIFT
        single = model.single_pass_size(pages, model.paged_copy(MAX_PAGES), SYNC)
        for dma in dma_sizes(model.pad(model.COPY_FIXED + 8), single, large=size >= 64 * MiB, slow=slow):
            cases.append((name, dma))
    return cases


def _transfer_case(rig: PagingRig, name: str, dma: int) -> None:
    size = SIZES[name]
    pages = size >> PAGE_SHIFT
    data = rig.pattern(size, seed=pages)
    rig.write_segment(LOCAL, 0, data)
    mdl = every_other_page(rig, size)
    rig.vidmm.resize_paging_buffers(dma)
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=size,
        Source=DXGK_TRANSFER_LOCATION.segment(LOCAL, rig.segment_address(LOCAL, 0)),
        Destination=DXGK_TRANSFER_LOCATION.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
    )
    passes = rig.vidmm.paging.build(payload)
    rig.vidmm.paging.wait(rig.vidmm.paging.flush())
    assert passes == model.buffers_needed(dma, pages, model.paged_copy(MAX_PAGES), SYNC)
    assert np.array_equal(rig.read_mdl(mdl), data)
    rig.mm.free_pages(MDL(np.concatenate((mdl.pfns, mdl.pfns + np.uint64(1))), 2 * size))


@pytest.mark.parametrize(("name", "dma"), _cases(slow=False))
def test_transfer_to_scattered_pages_at_every_buffer_size(rig: PagingRig, name: str, dma: int) -> None:
    _transfer_case(rig, name, dma)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "dma"), sorted(set(_cases(slow=True)) - set(_cases(slow=False))))
def test_transfer_to_scattered_pages_at_every_buffer_size_full(rig: PagingRig, name: str, dma: int) -> None:
    _transfer_case(rig, name, dma)


@pytest.mark.parametrize("name", list(SIZES))
def test_segment_to_segment_and_back_from_pages_at_small_buffers(rig: PagingRig, name: str) -> None:
    size = SIZES[name]
    pages = size >> PAGE_SHIFT
    data = rig.pattern(size, seed=3 * pages)
    rig.write_segment(LOCAL, 0, data)
    fixed = model.fixed(48, MAX_PAGES)
    for dma in (48, 63, 97, 4 * 48):
        rig.vidmm.resize_paging_buffers(dma)
        rig.write_segment(LOCAL, 96 * MiB, np.zeros(size, np.uint8))
        passes = rig.vidmm.paging.build(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                TransferSize=size,
                Source=DXGK_TRANSFER_LOCATION.segment(LOCAL, rig.segment_address(LOCAL, 0)),
                Destination=DXGK_TRANSFER_LOCATION.segment(LOCAL, rig.segment_address(LOCAL, 96 * MiB)),
                Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
            )
        )
        rig.vidmm.paging.wait(rig.vidmm.paging.flush())
        assert passes == model.buffers_needed(dma, pages, fixed, SYNC)
        assert np.array_equal(rig.read_segment(LOCAL, 96 * MiB, size), data)


@pytest.mark.parametrize("name", list(SIZES))
def test_fill_at_every_small_buffer_size(rig: PagingRig, name: str) -> None:
    size = SIZES[name]
    pages = size >> PAGE_SHIFT
    fit = model.fixed(32, MAX_PAGES)
    single = model.single_pass_size(pages, fit)
    sizes = sorted({*range(32, 4 * 32 + 1), *[p for p in model.primes_up_to(single) if p > 128][::40], single})
    if size >= 64 * MiB:
        sizes = [32, 33, 127, single]
    for dma in sizes:
        rig.vidmm.resize_paging_buffers(dma)
        pattern = 0x01000000 | dma
        passes = rig.vidmm.paging.build(
            DXGK_BUILDPAGINGBUFFER_FILL(
                FillSize=size,
                FillPattern=pattern,
                Destination=DXGK_FILL_DESTINATION(SegmentId=LOCAL, SegmentAddress=rig.segment_address(LOCAL, 0)),
            )
        )
        rig.vidmm.paging.wait(rig.vidmm.paging.flush())
        assert passes == model.buffers_needed(dma, pages, fit)
        words = rig.read_segment(LOCAL, 0, size).view(np.uint32)
        assert (words == pattern).all()


@pytest.mark.parametrize("name", [n for n, s in SIZES.items() if s <= 2 * MiB + PAGE_SIZE])
def test_map_aperture_segment_at_every_small_buffer_size(rig: PagingRig, name: str) -> None:
    size = SIZES[name]
    pages = size >> PAGE_SHIFT
    mdl = every_other_page(rig, size)
    fit = model.write_qwords()
    single = model.single_pass_size(pages, fit)
    sizes = sorted({*range(32, 4 * 32 + 1), *[p for p in model.primes_up_to(single) if p > 128][::60], single})
    table = rig.gpu.aperture.entries
    expected = [gart_entry(int(p), snoop=False) for p in mdl.pfns]
    for dma in sizes:
        rig.vidmm.resize_paging_buffers(dma)
        table[7 : 7 + pages] = 0
        passes = rig.vidmm.paging.build(
            DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(SegmentId=3, OffsetInPages=7, NumberOfPages=pages, pMdl=mdl)
        )
        rig.vidmm.paging.wait(rig.vidmm.paging.flush())
        assert passes == model.buffers_needed(dma, pages, fit)
        assert table[7 : 7 + pages].tolist() == expected


@pytest.mark.parametrize("dma", [1, 16, 47])
def test_a_buffer_too_small_for_any_packet_is_a_clear_error_not_a_hang(dma: int) -> None:
    rig = PagingRig()
    rig.vidmm.resize_paging_buffers(dma)
    mdl = rig.backing(PAGE_SIZE)
    with pytest.raises(DeviceRemoved, match=f"empty {dma}-byte paging buffer -- the driver cannot fit a single packet"):
        rig.vidmm.paging.build(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                TransferSize=PAGE_SIZE,
                Source=DXGK_TRANSFER_LOCATION.segment(LOCAL, rig.segment_address(LOCAL, 0)),
                Destination=DXGK_TRANSFER_LOCATION.mdl(mdl),
                Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
            )
        )
    assert rig.vidmm.reset.count == 1


def test_a_1_gib_transfer_through_a_4_kib_paging_buffer() -> None:
    from wddmsim.core.units import GiB
    from wddmsim.hw.gpu import GpuConfig

    rig = PagingRig(SystemConfig(gpu=GpuConfig(local_size=2 * GiB, system_size=4 * GiB)))
    rig.adapter.events.enabled = False
    rig.vidmm.resize_paging_buffers(4 * KiB)
    size = 1 * GiB
    rig.gpu.local.data[rig.segment_address(LOCAL, 0) + size - 8 : rig.segment_address(LOCAL, 0) + size] = 0x77
    mdl = every_other_page(rig, size)
    passes = rig.vidmm.paging.build(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            TransferSize=size,
            Source=DXGK_TRANSFER_LOCATION.segment(LOCAL, rig.segment_address(LOCAL, 0)),
            Destination=DXGK_TRANSFER_LOCATION.mdl(mdl),
            Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
        )
    )
    rig.vidmm.paging.wait(rig.vidmm.paging.flush())
    max_pages = reference_driver(rig.driver).config.max_copy_bytes // PAGE_SIZE
    assert passes == model.buffers_needed(4 * KiB, size >> PAGE_SHIFT, model.paged_copy(max_pages), SYNC)
    assert rig.read_mdl(mdl, size - 8, 8).tolist() == [0x77] * 8
