"""The benchmarks of the video memory manager (issue "The video memory manager")."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from wddmsim.bench.cases import REGISTRY
from wddmsim.bench.harness import result
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, TiB
from wddmsim.vidmm.ranges import RangeAllocator


def _churn(live: int, ops: int, seed: int) -> float:
    """Alloc+free pairs per second with ``live`` ranges of 4 KiB-2 MiB held in a 1 TiB segment."""
    rng = np.random.default_rng(seed)
    pages = (rng.integers(1, 513, size=live + ops) << PAGE_SHIFT).tolist()
    victims = rng.integers(0, live, size=ops).tolist()
    space = RangeAllocator(1 * TiB)
    held: list[int] = []
    for size in pages[:live]:
        start = space.allocate(size)
        assert start is not None
        held.append(start)
    allocate, free = space.allocate, space.free
    begin = time.perf_counter()
    for i in range(ops):
        slot = victims[i]
        free(held[slot])
        start = allocate(pages[live + i])
        assert start is not None
        held[slot] = start
    elapsed = time.perf_counter() - begin
    space.check()
    return 2 * ops / elapsed


@REGISTRY.add(
    "seg_alloc_100k",
    "random 4 KiB-2 MiB alloc+free at 100 000 live ranges in a 1 TiB segment",
    "value >= 500 000 op/s; slowdown_10k_to_100k <= 2.0",
)
def seg_alloc_100k() -> dict[str, Any]:
    ops = 200_000
    at_10k = max(_churn(10_000, ops, seed) for seed in (1, 2))
    at_100k = max(_churn(100_000, ops, seed) for seed in (1, 2))
    return result(
        "seg_alloc_100k",
        at_100k,
        "op/s",
        at_10k=round(at_10k),
        slowdown_10k_to_100k=round(at_10k / at_100k, 3),
        granule=PAGE_SIZE,
    )
