"""The eviction scan's choice of a hole (decisions 0065, 0165): held against a brute-force reference -- every
candidate start, every range it overlaps -- over random layouts, marks, sizes, alignments and both ends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.policy.holes import _Layout
from wddmsim.vidmm.policy.interface import RoomRequest

PAGE = 4096


@dataclass
class _Space:
    id: int
    size: int
    ranges: list[tuple[int, int, object]]
    aperture: bool = False
    group: D3DKMT_MEMORY_SEGMENT_GROUP = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL

    def held(self) -> Iterator[tuple[int, int, object]]:
        return iter(self.ranges)


def _reference(layout: _Layout, i: int, request: RoomRequest) -> int | None:
    """The scan's rule, written plainly: the cheapest aligned hole of the run around range ``i``."""
    first = i
    while first > 0 and layout.marked[first - 1]:
        first -= 1
    last = i
    while last + 1 < len(layout.marked) and layout.marked[last + 1]:
        last += 1
    lo = 0 if first == 0 else layout.ends[first - 1]
    hi = layout.size if last + 1 == len(layout.marked) else layout.starts[last + 1]
    align = max(request.alignment, PAGE)
    best: tuple[int, int, int] | None = None
    for s in range(-(-lo // align) * align, hi - request.size + 1, align):
        cost = [
            layout.ends[m] - layout.starts[m]
            for m in range(first, last + 1)
            if layout.starts[m] < s + request.size and s < layout.ends[m]
        ]
        key = (sum(cost), len(cost), -s if request.from_end else s)
        if best is None or key < best:
            best = key
    if best is None:
        return None
    return -best[2] if request.from_end else best[2]


@st.composite
def _case(draw: st.DrawFn) -> tuple[_Layout, int, RoomRequest]:
    pages = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 6)), min_size=1, max_size=12))
    ranges, at = [], 0
    for gap, size in pages:
        at += gap * PAGE
        ranges.append((at, size * PAGE, object()))
        at += size * PAGE
    total = at + draw(st.integers(0, 4)) * PAGE
    layout = _Layout(_Space(1, total, ranges))
    layout.marked = draw(st.lists(st.booleans(), min_size=len(ranges), max_size=len(ranges)))
    i = draw(st.integers(0, len(ranges) - 1))
    layout.marked[i] = True
    request = RoomRequest(
        segment=1,
        size=draw(st.integers(1, 12)) * PAGE,
        alignment=draw(st.sampled_from([0, PAGE, 2 * PAGE, 4 * PAGE, 16 * PAGE])),
        from_end=draw(st.booleans()),
        owner=None,
        cause=MoveCause.PRESSURE,
    )
    return layout, i, request


@settings(max_examples=400, deadline=None)
@given(_case())
def test_the_cheapest_hole_is_the_reference_choice(case: tuple[_Layout, int, RoomRequest]) -> None:
    layout, i, request = case
    assert layout.cheapest_hole(i, request) == _reference(layout, i, request)
