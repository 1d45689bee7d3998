"""The segment range allocator: a stateful model check against a page bitmap (allocate, bounded allocate, fixed
reservations, free), alignment, from-end placement, merging on either side, exhaustion and fragmentation, the
end of the space, sizes past the class tables, spaces whose records outgrow one int digit, stale class entries
and their compaction, the invariant checker itself, and the bad-input rules."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from wddmsim.core.units import PAGE_SIZE, GiB, KiB, MiB, TiB
from wddmsim.vidmm.range_classes import TABLE_SIZE as _TABLE_SIZE
from wddmsim.vidmm.range_classes import class_floor as _class_floor
from wddmsim.vidmm.range_classes import class_of as _class_of
from wddmsim.vidmm.ranges import RangeAllocator, RangeError


def extents(space: RangeAllocator) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(allocated, free)`` as ``(start, size)`` pairs in pages."""
    return (
        [(e.start // PAGE_SIZE, e.size // PAGE_SIZE) for e in space.allocated()],
        [(e.start // PAGE_SIZE, e.size // PAGE_SIZE) for e in space.free_extents()],
    )


def allocate(space: RangeAllocator, pages: int, *, alignment: int = 0, from_end: bool = False) -> int:
    """The first page of a new range of ``pages``, which must be granted."""
    start = space.allocate(pages * PAGE_SIZE, alignment=alignment, from_end=from_end)
    assert start is not None and start % PAGE_SIZE == 0
    return start // PAGE_SIZE


def test_size_classes_are_contiguous_and_their_floors_invert_them() -> None:
    previous = 0
    for units in range(1, 1 << 16):
        index = _class_of(units)
        assert index in (previous, previous + 1)
        assert _class_floor(index) <= units
        previous = index
    for index in range(200):
        assert _class_of(_class_floor(index)) == index


def test_a_fresh_space_is_one_free_block_and_fills_exactly() -> None:
    space = RangeAllocator(64 * KiB)
    starts = [space.allocate(PAGE_SIZE) for _ in range(16)]
    assert sorted(s for s in starts if s is not None) == [i * PAGE_SIZE for i in range(16)]
    assert space.allocate(PAGE_SIZE) is None
    assert space.free_bytes == 0 and len(space) == 16 and space.largest_free() == 0
    for start in starts:
        assert start is not None
        space.free(start)
    space.check()
    assert [(e.start, e.size) for e in space.free_extents()] == [(0, 64 * KiB)]
    assert len(space) == 0 and space.largest_free() == 64 * KiB


def test_ranges_are_carved_from_the_bottom_of_the_block() -> None:
    space = RangeAllocator(1 * MiB)
    assert [allocate(space, n) for n in (3, 1, 7)] == [0, 3, 4]
    assert extents(space) == ([(0, 3), (3, 1), (4, 7)], [(11, 245)])
    space.check()


@pytest.mark.parametrize("alignment", [PAGE_SIZE, 8 * KiB, 64 * KiB, 2 * MiB])
def test_alignment_is_honoured_after_an_odd_first_range(alignment: int) -> None:
    space = RangeAllocator(16 * MiB)
    space.allocate(3 * PAGE_SIZE)
    start = space.allocate(5 * PAGE_SIZE, alignment=alignment)
    assert start is not None and start % alignment == 0
    space.check()


def test_an_aligned_range_leaves_the_skipped_pages_free_below_it() -> None:
    space = RangeAllocator(1 * MiB)
    allocate(space, 3)
    assert allocate(space, 2, alignment=64 * KiB) == 16
    assert extents(space) == ([(0, 3), (16, 2)], [(3, 13), (18, 238)])
    assert allocate(space, 13) == 3, "the hole below the aligned range is a block of its own"
    space.check()


def test_from_end_takes_the_top_of_the_space() -> None:
    space = RangeAllocator(1 * MiB)
    assert space.allocate(64 * KiB, from_end=True) == 1 * MiB - 64 * KiB
    assert space.allocate(8 * KiB, alignment=64 * KiB, from_end=True) == 1 * MiB - 128 * KiB
    space.check()
    assert extents(space) == ([(224, 2), (240, 16)], [(0, 224), (226, 14)])


def test_from_end_and_bottom_up_ranges_meet_in_the_middle() -> None:
    space = RangeAllocator(16 * PAGE_SIZE)
    low = [allocate(space, 3) for _ in range(3)]
    high = [allocate(space, 2, from_end=True) for _ in range(3)]
    assert low == [0, 3, 6] and high == [14, 12, 10]
    assert allocate(space, 1) == 9 and space.allocate(PAGE_SIZE) is None
    for start in low + high:
        space.free(start * PAGE_SIZE)
        space.check()
    assert extents(space) == ([(9, 1)], [(0, 9), (10, 6)])


@pytest.mark.parametrize(
    ("order", "free_after"),
    [
        ("ABC", [(0, 12)]),  # B merges with A below and C above
        ("ACB", [(0, 12)]),
        ("CAB", [(0, 12)]),
        ("AB", [(0, 7)]),  # B merges with the free block below
        ("CB", [(3, 9)]),  # B merges with the free block above
        ("B", [(3, 4)]),  # B's neighbours are allocated
    ],
)
def test_a_freed_range_merges_with_free_neighbours_on_either_side(
    order: str, free_after: list[tuple[int, int]]
) -> None:
    space = RangeAllocator(16 * PAGE_SIZE)
    starts = {name: allocate(space, pages) for name, pages in zip("ABCD", (3, 4, 5, 4), strict=True)}
    assert starts == {"A": 0, "B": 3, "C": 7, "D": 12}
    for name in order:
        space.free(starts[name] * PAGE_SIZE)
        space.check()
    assert extents(space)[1] == free_after
    assert space.allocate(13 * PAGE_SIZE) is None
    assert space.largest_free() == max(n for _, n in free_after) * PAGE_SIZE


def test_a_range_freed_next_to_the_end_of_the_space_merges_with_the_top_block() -> None:
    space = RangeAllocator(8 * PAGE_SIZE)
    a, b = allocate(space, 5), allocate(space, 2)
    space.free(b * PAGE_SIZE)
    assert extents(space)[1] == [(5, 3)]
    assert allocate(space, 3) == 5, "the merged top block holds the whole rest"
    space.free(a * PAGE_SIZE)
    space.free(5 * PAGE_SIZE)
    assert extents(space) == ([], [(0, 8)])
    space.check()


def test_the_end_of_the_space_is_not_a_range() -> None:
    for last in ("used", "free"):
        space = RangeAllocator(8 * PAGE_SIZE)
        allocate(space, 8 if last == "used" else 5)
        before = extents(space)
        assert 8 * PAGE_SIZE not in space
        with pytest.raises(RangeError, match="no range is allocated there"):
            space.free(8 * PAGE_SIZE)
        with pytest.raises(RangeError, match="no range is allocated there"):
            space.size_of(8 * PAGE_SIZE)
        assert extents(space) == before
        space.check()


def test_exhaustion_is_refused_and_a_freed_range_is_reused() -> None:
    space = RangeAllocator(32 * PAGE_SIZE)
    starts = [allocate(space, 2) for _ in range(16)]
    assert space.allocate(PAGE_SIZE) is None and space.allocate(PAGE_SIZE, from_end=True) is None
    space.free(starts[7] * PAGE_SIZE)
    assert space.allocate(3 * PAGE_SIZE) is None
    assert allocate(space, 2, from_end=True) == starts[7]
    space.check()


def test_fragmentation_refuses_a_range_larger_than_every_hole() -> None:
    space = RangeAllocator(64 * PAGE_SIZE)
    starts = [allocate(space, 2) for _ in range(32)]
    for start in starts[::2]:
        space.free(start * PAGE_SIZE)
    assert space.free_bytes == 32 * PAGE_SIZE and space.largest_free() == 2 * PAGE_SIZE
    assert space.allocate(3 * PAGE_SIZE) is None, "half the space is free, but in 2-page holes"
    assert space.allocate(4 * PAGE_SIZE, alignment=4 * PAGE_SIZE) is None
    assert allocate(space, 2, alignment=4 * PAGE_SIZE) % 4 == 0
    space.free(starts[1] * PAGE_SIZE)
    assert allocate(space, 6) == 0, "freeing one range joins three holes"
    space.check()


def test_a_block_that_grew_into_a_larger_class_is_not_taken_through_its_old_entry() -> None:
    space = RangeAllocator(64 * PAGE_SIZE)
    r0, _, r2, r3, _ = (allocate(space, n) for n in (2, 2, 2, 8, 2))
    space.free(r0 * PAGE_SIZE)  # a 2-page block at 0
    space.free(r2 * PAGE_SIZE)  # a 2-page block at 4, filed after it
    space.free(r3 * PAGE_SIZE)  # ... which grows to 10 pages: its 2-page class entry goes stale
    assert extents(space)[1] == [(0, 2), (4, 10), (16, 48)]
    assert allocate(space, 2) == 0, "the 2-page block fits exactly; the 10-page one is left whole"
    assert allocate(space, 9) == 4
    space.check()


def test_a_size_in_the_rounded_class_is_still_found_when_only_its_own_class_has_room() -> None:
    # Sizes 16 and 17 pages share a class: a 17-page request rounds up past it, and the scan of its own class
    # finds the 17-page hole.
    space = RangeAllocator(40 * PAGE_SIZE)
    first = space.allocate(17 * PAGE_SIZE)
    space.allocate(PAGE_SIZE)
    space.allocate(22 * PAGE_SIZE)
    assert first is not None
    space.free(first)
    assert space.allocate(17 * PAGE_SIZE) == first


@pytest.mark.parametrize("pages", [_TABLE_SIZE - 1, _TABLE_SIZE, 5000, 4999, 3 * _TABLE_SIZE])
def test_sizes_past_the_class_tables_fit_a_space_just_their_size(pages: int) -> None:
    exact = RangeAllocator(pages * PAGE_SIZE)
    assert exact.allocate(pages * PAGE_SIZE) == 0
    roomy = RangeAllocator((pages + 1) * PAGE_SIZE)
    assert roomy.allocate(pages * PAGE_SIZE) == 0 and roomy.allocate((pages + 1) * PAGE_SIZE) is None
    assert roomy.allocate(pages * PAGE_SIZE, from_end=True) is None and allocate(roomy, 1) == pages
    exact.check()
    roomy.check()


def test_a_va_sized_space_with_records_past_one_int_digit() -> None:
    space = RangeAllocator(1 << 48)
    space.reserve(0, 64 * KiB)
    low = space.allocate(1 * GiB, alignment=64 * KiB)
    high = space.allocate(2 * MiB, from_end=True)
    fixed = 1 * TiB + 64 * KiB
    space.reserve(fixed, 64 * KiB)
    assert (low, high) == (64 * KiB, (1 << 48) - 2 * MiB)
    bounded = space.allocate_in(4 * KiB, lo=fixed, hi=fixed + 128 * KiB)
    assert bounded == fixed + 64 * KiB
    space.check()
    for start in (low, high, fixed, bounded, 0):
        assert start is not None
        space.free(start)
        space.check()
    assert extents(space) == ([], [(0, 1 << 36)])


def test_reserve_takes_a_fixed_range_and_refuses_a_used_one() -> None:
    space = RangeAllocator(1 * MiB)
    space.reserve(256 * KiB, 64 * KiB)
    with pytest.raises(RangeError, match="is not entirely free"):
        space.reserve(300 * KiB, 4 * KiB)
    with pytest.raises(RangeError, match="is not entirely free"):
        space.reserve(252 * KiB, 8 * KiB)
    space.reserve(0, 256 * KiB)
    space.reserve(320 * KiB, 4 * KiB)
    assert 256 * KiB in space and space.size_of(256 * KiB) == 64 * KiB
    assert extents(space) == ([(0, 64), (64, 16), (80, 1)], [(81, 175)])
    space.check()


def test_allocate_in_places_the_lowest_fit_within_the_bounds() -> None:
    space = RangeAllocator(1 * MiB)
    allocate(space, 10)
    assert space.allocate_in(8 * KiB, lo=12 * KiB, hi=64 * KiB) == 40 * KiB
    assert space.allocate_in(64 * KiB, alignment=64 * KiB, lo=4 * KiB) == 64 * KiB
    assert space.allocate_in(64 * KiB, lo=0, hi=128 * KiB) is None
    space.check()


def churn(space: RangeAllocator, steps: int, seed: int) -> Iterator[None]:
    """Random alloc/free at about 40 live ranges of 1-40 pages; yields after every step."""
    rng = random.Random(seed)
    live: list[int] = []
    for _ in range(steps):
        if live and (len(live) > 40 or rng.random() < 0.5):
            space.free(live.pop(rng.randrange(len(live))))
        else:
            start = space.allocate(rng.randint(1, 40) * PAGE_SIZE, from_end=rng.random() < 0.1)
            if start is not None:
                live.append(start)
        yield


def test_stale_class_entries_are_compacted(monkeypatch: pytest.MonkeyPatch) -> None:
    compactions = []
    compact: Callable[[RangeAllocator], None] = RangeAllocator._compact

    def counted(space: RangeAllocator) -> None:
        compactions.append((space._stale, space._limit))
        compact(space)

    monkeypatch.setattr(RangeAllocator, "_compact", counted)
    space = RangeAllocator(8192 * PAGE_SIZE)
    pages = [allocate(space, 1) for _ in range(4096)]
    # Odd pages first: 2048 one-page blocks.  Then each even page joins the blocks on both sides: the one above
    # is absorbed and the one below grows into another class, so both their entries go stale.
    for page in pages[1::2] + pages[0::2]:
        space.free(page * PAGE_SIZE)
        assert space._stale <= space._limit + 2, "a free compacts first, then leaves at most two stale entries"
    space.check()
    assert compactions and all(stale > limit for stale, limit in compactions)
    assert extents(space) == ([], [(0, 8192)])
    assert len(space._bins[_class_of(8192)]) >= 1 and sum(map(len, space._bins)) == 1 + space._stale


def test_stale_entries_are_never_handed_out_and_stay_bounded() -> None:
    space = RangeAllocator(1024 * PAGE_SIZE)
    for _ in churn(space, 20_000, seed=5):
        assert space._stale <= space._limit + 43, "a free compacts first and adds two; an allocation adds one"
    space.check()


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda s: s._rec.__setitem__(3, -5), id="free record overlaps"),
        pytest.param(lambda s: s._rec.__setitem__(30, s._rec[30] - 1), id="free length"),
        pytest.param(lambda s: s._rec.__setitem__(40, s._rec[40] + (1 << s._key)), id="free-below field"),
        pytest.param(lambda s: s._rec.__setitem__(64, 1 << s._key), id="end record"),
        pytest.param(lambda s: s._bins[_class_of(10)].clear(), id="unfiled block"),
        pytest.param(lambda s: s._bins[_class_of(10)].append(30), id="duplicate entry"),
        pytest.param(lambda s: setattr(s, "_bitmap", s._bitmap ^ 2), id="bitmap"),
        pytest.param(lambda s: setattr(s, "_stale", s._stale + 1), id="stale count"),
        pytest.param(lambda s: setattr(s, "_used_units", 0), id="used total"),
        pytest.param(lambda s: s._rec.__setitem__(2, 1), id="record inside a block"),
    ],
)
def test_the_checker_catches_a_corrupt_structure(corrupt: Callable[[RangeAllocator], None]) -> None:
    space = RangeAllocator(64 * PAGE_SIZE)
    for pages in (10, 30, 20):
        allocate(space, pages)
    space.free(10 * PAGE_SIZE)
    assert allocate(space, 20) == 10
    assert extents(space) == ([(0, 10), (10, 20), (40, 20)], [(30, 10), (60, 4)])
    space.check()
    corrupt(space)
    with pytest.raises(AssertionError):
        space.check()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.allocate(0), "size=0x0: must be a positive multiple"),
        (lambda s: s.allocate(-PAGE_SIZE), "size=-0x1000: must be a positive multiple"),
        (lambda s: s.allocate(100), "size=0x64: must be a positive multiple"),
        (lambda s: s.allocate(PAGE_SIZE, alignment=3 * PAGE_SIZE), "alignment=0x3000: must be a power of two"),
        (lambda s: s.allocate(PAGE_SIZE, alignment=2048), "alignment=0x800: must be a power of two"),
        (lambda s: s.free(PAGE_SIZE), "start=0x1000: no range is allocated there"),
        (lambda s: s.free(PAGE_SIZE + 1), "start=0x1001: no range is allocated there"),
        (lambda s: s.free(-PAGE_SIZE), "start=-0x1000: no range is allocated there"),
        (lambda s: s.free(1 * MiB), "start=0x100000: no range is allocated there"),
        (lambda s: s.size_of(7), "start=0x7: no range is allocated there"),
        (lambda s: s.reserve(1, PAGE_SIZE), "start=0x1: must be granule-aligned"),
        (lambda s: s.reserve(1 * MiB, PAGE_SIZE), "start=0x100000: must be granule-aligned"),
        (lambda s: s.reserve(0, PAGE_SIZE), "is not entirely free"),
    ],
)
def test_bad_requests_name_the_argument_and_change_nothing(call, message) -> None:  # type: ignore[no-untyped-def]
    space = RangeAllocator(1 * MiB)
    space.allocate(PAGE_SIZE)
    before = extents(space)
    with pytest.raises(RangeError, match=message):
        call(space)
    assert extents(space) == before
    space.check()


def test_bad_spaces_are_refused() -> None:
    with pytest.raises(RangeError, match="granule=0x3000: must be a power of two"):
        RangeAllocator(1 * MiB, granule=3 * PAGE_SIZE)
    with pytest.raises(RangeError, match="size=0x800: must be a non-negative multiple"):
        RangeAllocator(2048)
    empty = RangeAllocator(0)
    assert empty.allocate(PAGE_SIZE) is None and empty.largest_free() == 0 and len(empty) == 0
    empty.check()


def test_a_double_free_is_refused() -> None:
    space = RangeAllocator(1 * MiB)
    start = space.allocate(PAGE_SIZE)
    assert start is not None
    space.free(start)
    with pytest.raises(RangeError, match="double free"):
        space.free(start)


class AllocatorMachine(RuleBasedStateMachine):
    """The allocator against a page-occupancy model: the same ranges on success, never an overlap, the range
    carved from the bottom of a free block (the top with ``from_end``), a refusal only when no free block holds
    an aligned range of the size, and the whole structure consistent after every step."""

    PAGES = 256
    MAX_PAGES = 40

    @initialize()
    def setup(self) -> None:
        self.space = RangeAllocator(self.PAGES * PAGE_SIZE)
        self.owner: list[int | None] = [None] * self.PAGES
        self.live: dict[int, int] = {}

    def runs(self) -> list[tuple[int, int]]:
        """The model's free runs, ``(start, end)`` in pages."""
        found, start = [], None
        for page, owner in enumerate([*self.owner, 0]):
            if owner is None and start is None:
                start = page
            elif owner is not None and start is not None:
                found.append((start, page))
                start = None
        return found

    def fits(self, pages: int, align: int, lo: int = 0, hi: int | None = None) -> bool:
        """Whether some free run holds an ``align``-aligned range of ``pages`` inside ``[lo, hi)``."""
        top = self.PAGES if hi is None else hi
        return any(-(-max(s, lo) // align) * align + pages <= min(e, top) for s, e in self.runs())

    def take(self, first: int, pages: int) -> None:
        assert all(self.owner[p] is None for p in range(first, first + pages)), "overlap"
        for p in range(first, first + pages):
            self.owner[p] = first
        self.live[first] = pages

    @rule(
        pages=st.integers(1, 40),
        align_shift=st.integers(0, 4),
        from_end=st.booleans(),
        big=st.booleans(),
    )
    def allocate(self, pages: int, align_shift: int, from_end: bool, big: bool) -> None:
        if big:
            pages = pages * self.MAX_PAGES // 40
        align = 1 << align_shift
        start = self.space.allocate(pages * PAGE_SIZE, alignment=align * PAGE_SIZE, from_end=from_end)
        if start is None:
            # TLSF may refuse only when no single free block holds an aligned range of the size.
            assert not self.fits(pages, align)
            return
        first = start // PAGE_SIZE
        assert start % (align * PAGE_SIZE) == 0
        if align == 1:  # carved from the end of a free block: the page beyond that end is not free
            beyond = first + pages if from_end else first - 1
            assert beyond in (-1, self.PAGES) or self.owner[beyond] is not None
        self.take(first, pages)

    @rule(data=st.data(), pages=st.integers(1, 40), align_shift=st.integers(0, 4))
    def allocate_in(self, data: st.DataObject, pages: int, align_shift: int) -> None:
        align = 1 << align_shift
        lo = data.draw(st.integers(0, self.PAGES - 1))
        hi = data.draw(st.integers(lo + 1, self.PAGES))
        start = self.space.allocate_in(
            pages * PAGE_SIZE, alignment=align * PAGE_SIZE, lo=lo * PAGE_SIZE, hi=hi * PAGE_SIZE
        )
        if start is None:
            assert not self.fits(pages, align, lo, hi)
            return
        first = start // PAGE_SIZE
        assert first % align == 0 and lo <= first and first + pages <= hi
        if lo or hi < self.PAGES:  # unbounded requests take allocate's O(1) path instead
            assert not self.fits(pages, align, lo, first + pages - 1), "the lowest fit in the bounds"
        self.take(first, pages)

    @rule(first=st.integers(0, 255), pages=st.integers(1, 40))
    def reserve(self, first: int, pages: int) -> None:
        first = first * self.PAGES // 256
        if first + pages > self.PAGES:
            with pytest.raises(RangeError, match="must be granule-aligned with the range inside"):
                self.space.reserve(first * PAGE_SIZE, pages * PAGE_SIZE)
        elif all(self.owner[p] is None for p in range(first, first + pages)):
            self.space.reserve(first * PAGE_SIZE, pages * PAGE_SIZE)
            self.take(first, pages)
        else:
            with pytest.raises(RangeError, match="is not entirely free"):
                self.space.reserve(first * PAGE_SIZE, pages * PAGE_SIZE)

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        first = data.draw(st.sampled_from(sorted(self.live)))
        assert self.space.size_of(first * PAGE_SIZE) == self.live[first] * PAGE_SIZE
        self.space.free(first * PAGE_SIZE)
        for p in range(first, first + self.live.pop(first)):
            self.owner[p] = None

    @rule(page=st.integers(0, 255))
    def bad_free(self, page: int) -> None:
        page = page * self.PAGES // 256
        if page not in self.live:
            with pytest.raises(RangeError, match="no range is allocated there"):
                self.space.free(page * PAGE_SIZE)

    @invariant()
    def consistent(self) -> None:
        self.space.check()
        assert self.space.used_bytes == sum(self.live.values()) * PAGE_SIZE
        assert len(self.space) == len(self.live)
        allocated, free = extents(self.space)
        assert dict(allocated) == self.live
        assert free == [(s, e - s) for s, e in self.runs()], "free blocks are the maximal free runs: merged"
        assert self.space.largest_free() == max((e - s for s, e in self.runs()), default=0) * PAGE_SIZE


class LargeAllocatorMachine(AllocatorMachine):
    """The same model over a space past the class tables, with requests up to about twice the table size."""

    PAGES = 3 * _TABLE_SIZE + 7
    MAX_PAGES = 2 * _TABLE_SIZE + 40


TestAllocatorMachine = AllocatorMachine.TestCase
TestLargeAllocatorMachine = LargeAllocatorMachine.TestCase


def test_a_search_drops_the_stale_entries_it_meets_on_top_of_a_class() -> None:
    """Decision 0191: the paging process's page-table windows (64 KB-aligned, freed only in bulk) carve one free
    block again and again, leaving a stale entry in each class it passed through; a search that reaches such a
    class drops them, where it used to walk them again on every later search."""
    ranges = RangeAllocator(64 * MiB)
    for _ in range(1000):
        assert ranges.allocate(64 * KiB, alignment=64 * KiB) is not None
    assert sum(len(stack) for stack in ranges._bins) > 1000  # lazy deletion: the carves left their entries
    assert ranges.allocate(2 * MiB, alignment=64 * KiB) is None  # 1.5 MiB left: every class at or above is searched
    ranges.check()
    assert sum(len(stack) for stack in ranges._bins) < 16
    assert ranges.allocate(64 * KiB, alignment=64 * KiB) == 1000 * 64 * KiB, "the same block is picked"


# --- would a request fit once some ranges were freed (decision 0218) ----------------------------------------


def _replayed(history: list[tuple[str, int, int, bool]], total: int) -> RangeAllocator:
    """A fresh space taken through ``history`` (``("allocate", pages, alignment, from_end)`` or ``("free", start,
    0, False)``): the same operations give the same layout, so the answer can be checked on a copy."""
    space = RangeAllocator(total)
    for op, value, alignment, from_end in history:
        if op == "allocate":
            space.allocate(value * PAGE_SIZE, alignment=alignment, from_end=from_end)
        else:
            space.free(value)
    return space


@pytest.mark.parametrize("seed", range(60))
def test_fits_after_freeing_answers_what_freeing_then_allocating_does(seed: int) -> None:
    """Table-driven against the allocator itself: free the ranges on a replayed copy, then allocate (from either
    end); the answer must be the same, and asking changes nothing."""
    rng = random.Random(seed)
    total = 256 * PAGE_SIZE
    space = RangeAllocator(total)
    history: list[tuple[str, int, int, bool]] = []
    for _ in range(rng.randrange(10, 80)):
        starts = [e.start for e in space.allocated()]
        if starts and rng.random() < 0.35:
            start = rng.choice(starts)
            space.free(start)
            history.append(("free", start, 0, False))
        else:
            pages = rng.choice([1, 1, 2, 3, 4, 8, 16])
            alignment = rng.choice([0, 0, 2 * PAGE_SIZE, 4 * PAGE_SIZE])
            from_end = rng.random() < 0.3
            if space.allocate(pages * PAGE_SIZE, alignment=alignment, from_end=from_end) is not None:
                history.append(("allocate", pages, alignment, from_end))
    before = extents(space)
    live = [e.start for e in space.allocated()]
    for _ in range(12):
        freed = rng.sample(live, rng.randrange(0, len(live) + 1)) if live else []
        size = rng.choice([1, 2, 3, 5, 8, 16, 32, 64]) * PAGE_SIZE
        alignment = rng.choice([0, 2 * PAGE_SIZE, 8 * PAGE_SIZE])
        answer = space.fits_after_freeing(size, freed, alignment=alignment)
        assert extents(space) == before, "asking changed the layout"
        for from_end in (False, True):
            copy = _replayed(history, total)
            assert extents(copy) == before
            for start in freed:
                copy.free(start)
            assert (copy.allocate(size, alignment=alignment, from_end=from_end) is not None) == answer, (
                seed,
                freed,
                size,
                alignment,
                from_end,
            )


def test_fits_after_freeing_joins_a_freed_range_with_the_free_blocks_beside_it() -> None:
    space = RangeAllocator(16 * PAGE_SIZE)
    a, b, c = (allocate(space, 4) for _ in range(3))  # pages 0-3, 4-7, 8-11; 12-15 free
    space.free(a * PAGE_SIZE)  # 0-3 free, 12-15 free: no 8 in a row
    assert not space.fits_after_freeing(8 * PAGE_SIZE, [])
    assert space.fits_after_freeing(8 * PAGE_SIZE, [b * PAGE_SIZE])  # 0-7 once b goes
    assert space.fits_after_freeing(12 * PAGE_SIZE, [b * PAGE_SIZE, c * PAGE_SIZE])
    assert not space.fits_after_freeing(16 * PAGE_SIZE, [b * PAGE_SIZE])
    assert space.fits_after_freeing(8 * PAGE_SIZE, [c * PAGE_SIZE])  # 8-15
    assert not space.fits_after_freeing(8 * PAGE_SIZE, [c * PAGE_SIZE], alignment=16 * PAGE_SIZE)


def test_fits_after_freeing_refuses_a_start_where_nothing_is_allocated() -> None:
    space = RangeAllocator(16 * PAGE_SIZE)
    allocate(space, 4)
    with pytest.raises(RangeError, match=r"start=0x5000: no range is allocated there"):
        space.fits_after_freeing(PAGE_SIZE, [5 * PAGE_SIZE])
    with pytest.raises(RangeError, match=r"size=0x800: must be a positive multiple"):
        space.fits_after_freeing(2 * KiB, [])
