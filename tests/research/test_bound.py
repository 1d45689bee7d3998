"""The lower bound on bytes paged in (decision 0145): hand-worked strings, exactness on equal sizes, the two
solvers agreeing, and the bound below every schedule of the tiny cache model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.research import cache
from wddmsim.research.bound import intervals, lower_bound
from wddmsim.research.reference import ReferenceString, Use

BELADY_ANOMALY = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]


def unit_string(objects: list[int], frames: int) -> ReferenceString:
    return ReferenceString.of(((o, 1) for o in objects), frames)


@pytest.mark.parametrize(
    ("frames", "fifo", "lru", "opt"),
    [(3, 9, 10, 7), (4, 10, 8, 6)],
)
def test_belady_anomaly_string(frames: int, fifo: int, lru: int, opt: int) -> None:
    """Belady, Nelson and Shedler (1969): FIFO 9 then 10 faults, LRU 10 then 8, OPT 7 then 6."""
    refs = unit_string(BELADY_ANOMALY, frames)
    assert cache.fifo(refs) == fifo
    assert cache.lru(refs) == lru
    assert cache.belady(refs) == opt
    assert lower_bound(refs).bytes == opt
    assert lower_bound(refs, solver="highs").bytes == opt


def test_two_objects_that_never_fit_together_by_hand() -> None:
    """a (2 bytes) and b (3 bytes) alternate in 4 bytes: every schedule pages in all 10 bytes.  The relaxation
    may keep 1 of a's 2 bytes across b's use (room 4 - 3) and 2 of b's 3 across a's (room 4 - 2): 5 + 1 + 1."""
    refs = ReferenceString.of([(0, 2), (1, 3), (0, 2), (1, 3)], 4)
    assert refs.compulsory_bytes == 5
    assert lower_bound(refs).bytes == 7
    assert lower_bound(refs, solver="highs").bytes == 7
    assert cache.belady(refs) == 10


def test_whole_units_tighten_the_bound() -> None:
    """Equal sizes of 2 in a capacity of 3: only one object fits, so the bound is every use (the room left at a
    use, 1 byte, is less than a whole object and is rounded away)."""
    refs = ReferenceString.of([(0, 2), (1, 2), (0, 2), (1, 2)], 3)
    assert lower_bound(refs).bytes == 8 == cache.belady(refs)


def test_an_empty_string_and_a_single_use() -> None:
    assert lower_bound(ReferenceString((), 0)).bytes == 0
    assert lower_bound(ReferenceString((), 0), solver="highs").bytes == 0
    single = ReferenceString.of([(7, 4096)], 4096)
    assert lower_bound(single).bytes == lower_bound(single, solver="highs").bytes == 4096 == cache.belady(single)


def test_everything_fits_costs_the_compulsory_bytes() -> None:
    refs = ReferenceString.of([(o % 5, 4096 * (1 + o % 5)) for o in range(40)], 15 * 4096)
    bound = lower_bound(refs)
    assert bound.bytes == bound.compulsory == refs.compulsory_bytes == 15 * 4096


@pytest.mark.parametrize(("n", "k", "loops"), [(5, 4, 10), (101, 100, 3), (8, 4, 6), (12, 3, 4)])
def test_cyclic_scan_equals_belady(n: int, k: int, loops: int) -> None:
    """The LRU cliff's string: the bound is Belady's MIN exactly, and LRU misses every use."""
    refs = unit_string([i % n for i in range(n * loops)], k)
    assert lower_bound(refs).bytes == cache.belady(refs)
    assert cache.lru(refs) == n * loops


def test_intervals_of_a_string() -> None:
    """Adjacent uses of one object make no interval; sizes are counted in units of their gcd."""
    refs = ReferenceString.of([(0, 8192), (0, 8192), (1, 4096), (0, 8192), (1, 4096)], 16384)
    iv = intervals(refs)
    assert iv.unit == 4096
    assert list(zip(iv.starts.tolist(), iv.ends.tolist(), iv.lengths.tolist(), strict=True)) == [(1, 3, 2), (2, 4, 1)]
    assert iv.compulsory == 3
    assert iv.room.tolist() == [2, 2, 3, 2, 3]


def test_a_reference_string_refuses_an_object_of_two_sizes() -> None:
    with pytest.raises(ValueError, match=r"object 0: used with sizes 4096 and 8192"):
        ReferenceString((((Use(0, 4096),), (Use(0, 8192),))), 1 << 20)
    with pytest.raises(ValueError, match=r"capacity=-1"):
        ReferenceString((), -1)
    with pytest.raises(ValueError, match=r"solver='cplex'"):
        lower_bound(ReferenceString((), 0), solver="cplex")  # type: ignore[arg-type]


@st.composite
def strings(draw: st.DrawFn, *, equal: bool = False) -> ReferenceString:
    count = draw(st.integers(1, 9))
    sizes = [1] * count if equal else draw(st.lists(st.integers(1, 8), min_size=count, max_size=count))
    objects = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=40))
    capacity = draw(st.integers(max(sizes[o] for o in objects), max(sizes) * count + 1))
    return ReferenceString.of(((o, sizes[o]) for o in objects), capacity)


@settings(max_examples=150, deadline=None)
@given(strings())
def test_bound_below_every_schedule_and_solvers_agree(refs: ReferenceString) -> None:
    bound = lower_bound(refs)
    assert bound.bytes == lower_bound(refs, solver="highs").bytes
    assert refs.compulsory_bytes <= bound.bytes
    for name, policy in cache.POLICIES.items():
        assert bound.bytes <= policy(refs), name


@settings(max_examples=150, deadline=None)
@given(strings(equal=True))
def test_exact_on_equal_sizes(refs: ReferenceString) -> None:
    """With equal sizes Belady's MIN is optimal; the bound equals it."""
    assert lower_bound(refs).bytes == cache.belady(refs) == lower_bound(refs, solver="highs").bytes
