"""The live bitmap of a leaf table (decision 0198) after every update shape: each entry's bit says whether the
entry last written there is other than the invalid one -- held against a per-entry reference at every count
around the small-update path's limit and at random starts."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.addresses import SegmentId, SegmentOffset
from wddmsim.ddi.pte import pte_array, pte_flags
from wddmsim.vidmm.vaspace.regions import ProcessTable
from wddmsim.vidmm.vaspace.tables import _track_live

STATES = (0, pte_flags(Valid=1, Segment=2), pte_flags(Zero=1), pte_flags(ReadOnly=1), pte_flags(Valid=1, Zero=1))
"""Invalid, valid, Zero, invalid with another bit set (still invalid), both bits."""


@pytest.mark.parametrize("count", [1, 2, 7, 8, 9, 15, 16, 31, 32, 64, 65, 512])
def test_the_live_bitmap_follows_every_update(count: int) -> None:
    rng = np.random.default_rng(count)
    table = ProcessTable(0, 0, SegmentId(2), SegmentOffset(0), 4096, entries=512)
    reference = [False] * 512
    for _ in range(40):
        start = int(rng.integers(0, 512 - count + 1))
        entries = pte_array(count)
        choice = rng.integers(0, len(STATES), size=count)
        if rng.random() < 0.3:  # whole updates of one kind too: all live, all invalid
            choice[:] = choice[0]
        entries["Flags"] = [STATES[i] for i in choice]
        _track_live(table, start, entries)
        for i, pick in enumerate(choice):
            reference[start + i] = pick not in (0, 3)
        assert table.live == sum(1 << i for i, live in enumerate(reference) if live)
