"""The MMU's one-dictionary view of its cached one-page WRITE translations (``Mmu.write_pages``, decision 0232):
after any sequence of translations, flushes and re-walks it holds exactly the WRITE pages the TLB's regions hold
-- so it is emptied exactly when they are -- and each answer is the one ``translate`` gives."""

from __future__ import annotations

import numpy as np
import pytest

from tests.hw.test_mmu import Tables
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, MiB
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.hw.mmu import Mmu
from wddmsim.hw.pte import TablePointer, Target, encode_pte

VA = 0x4000_0000
REGION = 2 * MiB  # a level-1 region of the default layout


def mirror(mmu: Mmu, root: TablePointer) -> dict[int, tuple[object, int]]:
    """What the TLB's regions of ``root`` hold for one-page writes, by VA page."""
    out: dict[int, tuple[object, int]] = {}
    for region in mmu.tlb.get(root, {}).values():
        for key, value in region.pages.items():
            if key & 3 == AccessKind.WRITE:
                out[key >> 2] = value
    return out


def setup(caches_invalid: bool = True) -> tuple[Gpu, Tables]:
    gpu = Gpu(
        GpuConfig(
            local_size=64 * MiB,
            bar_size=16 * MiB,
            system_size=64 * MiB,
            aperture_size=16 * MiB,
            caches_invalid_translations=caches_invalid,
        )
    )
    tables = Tables(gpu)
    for page in range(8):  # two regions: 4 pages at VA, 4 at VA + one region
        base = VA + (page // 4) * REGION + (page % 4) * PAGE_SIZE
        entry = (
            encode_pte(zero=True)
            if page == 2
            else encode_pte(target=Target.LOCAL, address=0x10_0000 + page * PAGE_SIZE)
        )
        tables.set_leaf(base, entry)
    return gpu, tables


def pages_of(region: int) -> list[int]:
    return [VA + region * REGION + k * PAGE_SIZE for k in range(4)]


def test_it_mirrors_the_tlb_through_translations_flushes_and_resets() -> None:
    gpu, tables = setup()
    mmu, root = gpu.mmu, tables.root
    held, end = mmu.write_pages(root, None)
    assert held == {} and end == 1 << mmu.layout.va_bits
    rng = np.random.default_rng(5)
    for step in range(300):
        choice = int(rng.integers(0, 10))
        mapped = pages_of(int(rng.integers(0, 2)))
        va = mapped[int(rng.integers(0, 4))] + 8 * int(rng.integers(0, 500))
        if choice < 6:
            access = AccessKind.WRITE if choice < 4 else AccessKind.READ
            size = min(int(rng.choice([8, 64, PAGE_SIZE])), mapped[-1] + PAGE_SIZE - va)  # inside the mapping
            runs = mmu.translate(root, va, size, access)
            if access == AccessKind.WRITE and (va % PAGE_SIZE) + size <= PAGE_SIZE:
                pages, _ = mmu.write_pages(root, None)
                mem, page = pages[va >> PAGE_SHIFT]
                assert runs == [(mem, page + va % PAGE_SIZE if mem is not None else 0, size)]
        elif choice < 8:
            mmu.invalidate(root, va, va + int(rng.integers(0, 2)) * REGION)
        elif choice == 8:
            mmu.invalidate(root, 0, 0)
        else:
            mmu.invalidate_all()
        pages, _ = mmu.write_pages(root, None)
        assert pages == mirror(mmu, root), step
        if held is not pages:  # a dictionary handed out earlier and since replaced was emptied in place
            assert held == {}
            held = pages


def test_a_zero_page_is_none_and_the_end_follows_the_root_entries() -> None:
    gpu, tables = setup()
    mmu, root = gpu.mmu, tables.root
    mmu.translate(root, pages_of(0)[2] + 16, 32, AccessKind.WRITE)
    pages, end = mmu.write_pages(root, 3)
    assert pages[pages_of(0)[2] >> PAGE_SHIFT] == (None, 0)
    assert end == 3 << mmu.layout.shift(mmu.layout.levels - 1)
    with pytest.raises(GpuFault, match="NumEntries"):
        mmu.translate(root, end, 8, AccessKind.WRITE, root_entries=3)


def test_a_re_walk_replaces_the_region_s_writes() -> None:
    """With invalid entries not cached, a write to one re-walks its region: what the old snapshot cached for
    writing goes with it, and the new snapshot's pages come in as they are translated again."""
    gpu, tables = setup(caches_invalid=False)
    mmu, root = gpu.mmu, tables.root
    first = pages_of(0)[0]
    mmu.translate(root, first, 8, AccessKind.WRITE)
    assert first >> PAGE_SHIFT in mmu.write_pages(root, None)[0]
    later = VA + 5 * PAGE_SIZE  # not mapped yet: invalid in the cached snapshot
    tables.set_leaf(later, encode_pte(target=Target.LOCAL, address=0x20_0000))
    tables.set_leaf(first, encode_pte(target=Target.LOCAL, address=0x30_0000))  # changed, not flushed
    mmu.translate(root, later, 8, AccessKind.WRITE)  # re-walks the region: the new snapshot
    pages = mmu.write_pages(root, None)[0]
    assert pages == mirror(mmu, root)
    assert first >> PAGE_SHIFT not in pages
    assert mmu.translate(root, first, 8, AccessKind.WRITE)[0][1] == 0x30_0000
