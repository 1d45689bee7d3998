"""The segment range allocator: a stateful model check against a page bitmap, alignment, from-end placement,
fixed reservations, and the bad-input rules."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.vidmm.ranges import RangeAllocator, RangeError, _class_floor, _class_of


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
    assert space.free_bytes == 0
    for start in starts:
        assert start is not None
        space.free(start)
    space.check()
    assert [(e.start, e.size) for e in space.free_extents()] == [(0, 64 * KiB)]


@pytest.mark.parametrize("alignment", [PAGE_SIZE, 8 * KiB, 64 * KiB, 2 * MiB])
def test_alignment_is_honoured_after_an_odd_first_range(alignment: int) -> None:
    space = RangeAllocator(16 * MiB)
    space.allocate(3 * PAGE_SIZE)
    start = space.allocate(5 * PAGE_SIZE, alignment=alignment)
    assert start is not None and start % alignment == 0
    space.check()


def test_from_end_takes_the_top_of_the_space() -> None:
    space = RangeAllocator(1 * MiB)
    assert space.allocate(64 * KiB, from_end=True) == 1 * MiB - 64 * KiB
    assert space.allocate(8 * KiB, alignment=64 * KiB, from_end=True) == 1 * MiB - 128 * KiB
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


def test_reserve_takes_a_fixed_range_and_refuses_a_used_one() -> None:
    space = RangeAllocator(1 * MiB)
    space.reserve(256 * KiB, 64 * KiB)
    with pytest.raises(RangeError, match="is not entirely free"):
        space.reserve(300 * KiB, 4 * KiB)
    assert 256 * KiB in space
    space.check()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.allocate(0), "size=0x0: must be a positive multiple"),
        (lambda s: s.allocate(100), "size=0x64: must be a positive multiple"),
        (lambda s: s.allocate(PAGE_SIZE, alignment=3 * PAGE_SIZE), "alignment=0x3000: must be a power of two"),
        (lambda s: s.free(PAGE_SIZE), "start=0x1000: no range is allocated there"),
        (lambda s: s.size_of(7), "start=0x7: no range is allocated there"),
        (lambda s: s.reserve(1, PAGE_SIZE), "start=0x1: must be granule-aligned"),
    ],
)
def test_bad_requests_name_the_argument_and_change_nothing(call, message) -> None:  # type: ignore[no-untyped-def]
    space = RangeAllocator(1 * MiB)
    space.allocate(PAGE_SIZE)
    before = (list(space.allocated()), list(space.free_extents()))
    with pytest.raises(RangeError, match=message):
        call(space)
    assert (list(space.allocated()), list(space.free_extents())) == before


def test_a_double_free_is_refused() -> None:
    space = RangeAllocator(1 * MiB)
    start = space.allocate(PAGE_SIZE)
    assert start is not None
    space.free(start)
    with pytest.raises(RangeError, match="double free"):
        space.free(start)


PAGES = 256


class AllocatorMachine(RuleBasedStateMachine):
    """The allocator against a page-occupancy model: same answers on success, never an overlap, and a
    refusal only when no aligned hole of the size exists."""

    @initialize()
    def setup(self) -> None:
        self.space = RangeAllocator(PAGES * PAGE_SIZE)
        self.owner: list[int | None] = [None] * PAGES
        self.live: dict[int, int] = {}

    @rule(pages=st.integers(1, 40), align_shift=st.integers(0, 4), from_end=st.booleans())
    def allocate(self, pages: int, align_shift: int, from_end: bool) -> None:
        align = 1 << align_shift
        start = self.space.allocate(pages * PAGE_SIZE, alignment=align * PAGE_SIZE, from_end=from_end)
        if start is None:
            # TLSF may refuse only when no single free block holds an aligned range of the size.
            assert not any(
                -(-e.start // (align * PAGE_SIZE)) * align * PAGE_SIZE + pages * PAGE_SIZE <= e.end
                for e in self.space.free_extents()
            )
            return
        first = start // PAGE_SIZE
        assert start % (align * PAGE_SIZE) == 0
        assert all(self.owner[p] is None for p in range(first, first + pages)), "overlap"
        for p in range(first, first + pages):
            self.owner[p] = first
        self.live[first] = pages

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        first = data.draw(st.sampled_from(sorted(self.live)))
        self.space.free(first * PAGE_SIZE)
        for p in range(first, first + self.live.pop(first)):
            self.owner[p] = None

    @invariant()
    def consistent(self) -> None:
        self.space.check()
        assert self.space.used_bytes == sum(self.live.values()) * PAGE_SIZE
        assert {e.start // PAGE_SIZE: e.size // PAGE_SIZE for e in self.space.allocated()} == self.live


TestAllocatorMachine = AllocatorMachine.TestCase
