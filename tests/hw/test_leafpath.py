"""The short-range translation (plain Python) and the one-stretch paths (a 4 KB-kind or a 64 KB-kind stretch)
answer exactly as the vector one: same runs, same first fault."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE, MiB
from wddmsim.hw import leafpath
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.memory import LocalMemory, SystemMemory
from wddmsim.hw.mmu import Mmu, MmuLayout, Run, _Region
from wddmsim.hw.pte import TablePointer, Target, encode_pte

MEMORY = 8 * MiB
LAYOUTS = {
    "4 KB pages": MmuLayout((9, 9, 9, 9)),
    "dual PTEs": MmuLayout((9, 9, 9, 9), dual_pte=True),
    "8 KiB GPU pages": MmuLayout((9, 9, 9, 9), gpu_page_shift=13),
    "16 KiB GPU pages, dual": MmuLayout((9, 9, 9, 9), dual_pte=True, gpu_page_shift=14),
    "64 KiB GPU pages": MmuLayout((6, 9, 9), gpu_page_shift=16),
}


def _entry(rng: random.Random, address: int, plain: bool) -> int:
    """A random entry; ``plain``: valid, in local memory, writable and executable (its flags alike)."""
    if plain:
        return encode_pte(address=address)
    return encode_pte(
        valid=rng.random() < 0.93,
        target=Target(rng.random() < 0.3),
        address=address,
        zero=rng.random() < 0.08,
        read_only=rng.random() < 0.05,
        no_execute=rng.random() < 0.05,
    )


def _table(rng: random.Random, count: int, page: int, valid: float) -> np.ndarray:
    """Entries mostly physically consecutive, with jumps, some pages past the end of memory; half the tables
    plain (long stretches of alike entries, the usual case), half of mixed entries."""
    plain = rng.random() < 0.5
    words = []
    address = rng.randrange(0, MEMORY // page) * page
    for _ in range(count):
        if rng.random() < (0.01 if plain else 0.15):
            address = rng.randrange(0, MEMORY // page + 4) * page
        word = _entry(rng, address, plain) if rng.random() < valid else 0
        words.append(word)
        address += page
    return np.array(words, dtype=np.uint64)


def _region(rng: random.Random, layout: MmuLayout) -> _Region:
    small = big = None
    if layout.dual_pte or rng.random() < 0.7:
        small = _table(rng, layout.hw_leaf_entries, 1 << layout.gpu_page_shift, 0.97)
    if layout.dual_pte or small is None:
        big = _table(rng, layout.leaf64_entries, 1 << 16, 0.3 if small is not None else 0.95)
        if small is not None and rng.random() < 0.7:  # mostly no conflicting pair of entries
            ratio = PAGE_SIZE * layout.gpu_page_ratio
            for i in np.flatnonzero(big & np.uint64(1)).tolist():
                small[i * (1 << 16) // ratio : (i + 1) * (1 << 16) // ratio] &= ~np.uint64(1)
    return _Region(small=small, big=big)


Outcome = list[tuple[str | None, int, int]] | tuple[object, ...]


def _outcome(path: Callable[..., None], *args: object) -> Outcome:
    """The runs ``path`` gives (memory names), or the fault it raises."""
    runs: list[Run] = []
    try:
        path(*args, runs)
    except GpuFault as fault:
        return ("fault", fault.kind, fault.address, fault.reason, fault.access, fault.level)
    return [(None if m is None else m.name, offset, length) for m, offset, length in runs]


def _uniform_outcome(mmu: Mmu, *args: Any) -> Outcome | None:
    """What the one-stretch path gives, or None where it does not apply (it leaves the range to the others)."""
    taken: list[bool] = []

    def path(*a: Any) -> None:
        taken.append(mmu._uniform_run(*a))

    outcome = _outcome(path, *args)
    return None if taken == [False] else outcome


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_short_and_vector_paths_agree(name: str) -> None:
    layout = LAYOUTS[name]
    mmu = Mmu(layout, LocalMemory("local", MEMORY), SystemMemory("system", MEMORY))
    root = TablePointer(Target.LOCAL, 0)
    rng = random.Random(name)
    region_base = 5 << layout.shift(1)
    kinds = {"runs": 0, "fault": 0, "uniform": 0, "uniform64": 0}
    for _ in range(60):
        region = _region(rng, layout)
        for _ in range(12):
            first = rng.randrange(layout.entries(0))
            last = min(layout.entries(0) - 1, first + rng.randrange(rng.choice((4, 16, leafpath.SHORT_PAGES))))
            va = region_base + first * PAGE_SIZE + rng.randrange(PAGE_SIZE)
            end = region_base + last * PAGE_SIZE + rng.randrange(1, PAGE_SIZE + 1)
            if end <= va:
                end = va + 1
            access = rng.choice(list(AccessKind))
            args = (root, region, first, last, va, end - va, access)
            short = _outcome(mmu._short_runs, *args)
            vector = _outcome(mmu._vector_runs, *args)
            assert short == vector, (name, hex(va), end - va, access)
            one = _uniform_outcome(mmu, *args[1:])
            if one is not None:  # the one-stretch path answered (runs or a fault): as the others
                kinds["uniform"] += 1
                if leafpath.uniform64(region.small, region.big, layout.gpu_page_ratio, first, last) >= 0:
                    kinds["uniform64"] += 1
                assert one == vector and (isinstance(one, tuple) or len(one) == 1)
            kinds["fault" if isinstance(short, tuple) else "runs"] += 1
    # every outcome exercised, and the one-stretch path through either table
    assert min(kinds.values()) > 50, kinds


def test_a_conflicting_pair_faults_before_an_earlier_invalid_page() -> None:
    """The order of faults: two valid entries of one 64 KiB first, whatever comes before them in the range."""
    layout = LAYOUTS["dual PTEs"]
    mmu = Mmu(layout, LocalMemory("local", MEMORY), SystemMemory("system", MEMORY))
    small = np.array([encode_pte(address=i * PAGE_SIZE) for i in range(512)], dtype=np.uint64)
    small[0] = 0  # page 0 invalid
    big = np.zeros(32, dtype=np.uint64)
    big[1] = encode_pte(address=0x10_0000)  # pages 16..31 also mapped by a 64 KB entry
    region = _Region(small=small, big=big)
    for path in (mmu._short_runs, mmu._vector_runs):
        with pytest.raises(GpuFault) as caught:
            path(TablePointer(Target.LOCAL, 0), region, 0, 20, 0, 21 * PAGE_SIZE, AccessKind.READ, [])
        assert (caught.value.address, caught.value.reason) == (
            16 * PAGE_SIZE,
            "the 4 KB and 64 KB entries of one 64 KiB range are both valid",
        )
