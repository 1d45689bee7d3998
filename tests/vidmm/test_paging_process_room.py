"""The system paging process's page tables in a full ``PagingProcessPageTableSegmentId`` (issue 19, item 9: the
stress scenario at 64/160/256 MiB and the residency demonstration at 172 MiB failed with "segment 1 has no room for
a 0x1000-byte table of the paging process").

A new table of the paging process is made room for like a process page table: allocations leave the segment.  An
allocation moved meanwhile is mapped again, and its new page table gets a window in the paging process -- possibly
in the same 2 MiB as the table being placed, creating that very table first.  The table created meanwhile is the
one kept: it holds the window's entry already (keeping the outer one lost it, and the paging engine faulted on
the next write through that window)."""

from __future__ import annotations

import numpy as np

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, KiB
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.testing.residency import backing_bytes
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.paging.process import PageTableTag, SystemPagingProcess
from wddmsim.vidmm.segments import SegmentSpace

from .world import World, pattern

FRESH_VA = 1 << 33
"""A 1 GiB region of the paging process's hand-driven space no test maps: every table below the root is new."""


def _paging_process(w: World) -> SystemPagingProcess:
    pp = w.vidmm.paging_process
    assert pp is not None
    return pp


def _fill(w: World, *, small: bool = False) -> list[tuple[VidMmAllocation, int]]:
    """Fill the paging process's table segment with CPU-visible allocations holding known bytes (``small``: each
    one page, so that each eviction frees room for one table only)."""
    pp = _paging_process(w)
    segment = w.vidmm.spaces.get(pp.segment_id)
    filled: list[tuple[VidMmAllocation, int]] = []
    for size in (pp.mmu.page_size,) if small else (64 * KiB, pp.mmu.page_size):
        while segment.ranges.largest_free() >= size:
            a = w.buffer(size, usage=AllocationUsage.CPU_VISIBLE)
            w.make_resident(a)
            assert a.placement is not None and a.placement.segment_id == pp.segment_id
            w.write(a, pattern(a.size, len(filled)))
            filled.append((a, len(filled)))
    w.settle()
    return filled


def _dummy(w: World) -> np.ndarray:
    return np.array([w.vidmm.dummy_page >> PAGE_SHIFT], dtype=np.uint64)


def _translates(w: World, va: int) -> bool:
    root = w.adapter.gpu.engines[0].root  # the paging engine runs in the paging process's space
    assert root is not None
    walk = w.adapter.gpu.mmu.walk(root, va)
    return not walk.fault and walk.address == w.vidmm.dummy_page


def _kept_every_byte(w: World, filled: list[tuple[VidMmAllocation, int]]) -> None:
    for a, seed in filled:
        got = w.read(a) if a.placement is not None else backing_bytes(w.adapter, a)
        assert np.array_equal(got, pattern(a.size, seed)), a


def test_a_paging_process_table_in_a_full_segment_is_made_room_for() -> None:
    w = World()
    pp = _paging_process(w)
    filled = _fill(w)
    segment = w.vidmm.spaces.get(pp.segment_id)
    assert segment.ranges.largest_free() < pp.mmu.page_size  # no room for one table: before, a VidMmError
    pp.map(FRESH_VA, segment_id=0, page_numbers=_dummy(w))
    w.settle()
    assert _translates(w, FRESH_VA)
    assert any(a.placement is None or a.placement.segment_id != pp.segment_id for a, _ in filled)
    _kept_every_byte(w, filled)
    w.check()


def test_a_table_created_while_room_is_made_for_it_is_the_one_kept() -> None:
    """Making room maps a neighbour in the same 2 MiB (what a moved allocation's new page-table window does): the
    tables that mapping created are kept, with its entry, and the first mapping is written into them too."""
    w = World()
    pp = _paging_process(w)
    filled = _fill(w, small=True)
    real = pp.make_room
    assert real is not None
    neighbour = FRESH_VA + 16 * PAGE_SIZE
    nested: list[int] = []

    def make_room(space: SegmentSpace, size: int, owner: object, *, alignment: int = 0) -> int | None:
        if not nested and isinstance(owner, PageTableTag) and owner.level == 0:  # room for the leaf table
            nested.append(size)
            pp.map(neighbour, segment_id=0, page_numbers=_dummy(w))
        return real(space, size, owner, alignment=alignment)

    pp.make_room = make_room
    before = len(pp.tables)
    pp.map(FRESH_VA, segment_id=0, page_numbers=_dummy(w))
    pp.make_room = real
    assert nested, "the segment was full: room was made"
    w.settle()
    assert _translates(w, neighbour), "the entry written while room was made survives"
    assert _translates(w, FRESH_VA)
    levels = pp.mmu.level_count
    assert len(pp.tables) - before <= levels - 1, "one table per level below the root, none twice"
    segment = w.vidmm.spaces.get(pp.segment_id)
    held = {offset for offset, _, owner in segment.held() if isinstance(owner, PageTableTag)}
    assert {offset for offset, _ in pp.tables.values()} <= held
    assert len(held) == len(pp.tables), "the range placed for a table created meanwhile went back"
    _kept_every_byte(w, filled)
    w.check()
