"""``MemorySystem.copy_page_list`` (decision 0221) against the calls it stands for: ``page_list_spans``, ``runs``
and ``scatter_gather`` -- and, where that declines, the general copy -- over a table of page lists, first-page
offsets, sizes, linear sides (local, system, mapped, Zero, unmapped, outside memory) and both directions; and
``runs`` of a physical range (its bounds checked inline) against the memory's own ``contains``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.gpu import Gpu
from wddmsim.hw.memory import PhysicalMemory
from wddmsim.hw.memsys import copy_runs, scatter_gather
from wddmsim.hw.pte import TablePointer, Target, encode_pte

from .test_mmu import Tables, gpu_and_tables

_Args = tuple[int, int, tuple[int, ...], int, bool, TablePointer | None]
VA = 0x20_0000  # four mapped pages: local, local, Zero, system
LAST_PFN = (64 << 20) // PAGE_SIZE - 1  # the last page of the 64 MiB of RAM

LINEAR: dict[str, Callable[[int], tuple[int, bool]]] = {  # name -> (size -> address word, with a root)
    "local": lambda size: (hw_address(Space.GPU_PHYS, 0x1_0000), False),
    "local at its end": lambda size: (hw_address(Space.GPU_PHYS, (64 << 20) - size), False),
    "past local": lambda size: (hw_address(Space.GPU_PHYS, (64 << 20) - size + 8), False),
    "system": lambda size: (hw_address(Space.SYSTEM, 0x50_0000), False),
    "past system": lambda size: (hw_address(Space.SYSTEM, (64 << 20) - 8), False),
    "mapped": lambda size: (hw_address(Space.GPU_VA, VA + 16), True),
    "through a Zero page": lambda size: (hw_address(Space.GPU_VA, VA + PAGE_SIZE), True),
    "unmapped": lambda size: (hw_address(Space.GPU_VA, 0x4000_0000), True),
    "no address space": lambda size: (hw_address(Space.GPU_VA, VA), False),
}

PAGE_LISTS: dict[str, list[tuple[int, int]]] = {  # (pfn, pages) per extent
    "one page": [(0x300, 1)],
    "one extent of three pages": [(0x300, 3)],
    "two adjacent extents": [(0x300, 1), (0x301, 2)],
    "two scattered extents": [(0x310, 2), (0x300, 1)],
    "four scattered pages": [(0x303, 1), (0x330, 1), (0x301, 1), (0x320, 1)],
    "eight pages": [(0x300 + 2 * i, 1) for i in range(8)],
    "the last page of RAM": [(LAST_PFN, 1)],
    "past RAM": [(LAST_PFN + 1, 1)],
    "running off RAM": [(LAST_PFN, 2)],
    "a good page, then past RAM": [(0x300, 1), (LAST_PFN + 5, 1)],
}


def _regions(gpu: Gpu) -> list[tuple[PhysicalMemory, int, int]]:
    """Every range a case can read or write: filled with noise first, compared after."""
    end = 64 << 20
    local, system = gpu.local, gpu.system
    return [
        (local, 0x1_0000, 0x2_0000),
        (local, 0x10_0000, 0x10_2000),
        (local, end - 0x1_0000, end),
        (system, 0x7000, 0x8000),
        (system, 0x30_0000, 0x34_0000),
        (system, 0x50_0000, 0x51_0000),
        (system, end - 0x1_0000, end),
    ]


def _rig() -> tuple[Gpu, Tables]:
    gpu, tables = gpu_and_tables()
    tables.set_leaf(VA, encode_pte(target=Target.LOCAL, address=0x10_0000))
    tables.set_leaf(VA + PAGE_SIZE, encode_pte(target=Target.LOCAL, address=0x10_1000))
    tables.set_leaf(VA + 2 * PAGE_SIZE, encode_pte(zero=True, address=0))
    tables.set_leaf(VA + 3 * PAGE_SIZE, encode_pte(target=Target.SYSTEM, address=0x7000))
    rng = np.random.default_rng(7)
    for memory, start, stop in _regions(gpu):
        memory.data[start:stop] = rng.integers(0, 256, stop - start, dtype=np.uint8)
    return gpu, tables


def _reference(gpu: Gpu, args: _Args) -> bool:
    """What the engine did before: spans, runs, ``scatter_gather``."""
    word, first, words, size, to_pages, root = args
    memsys = gpu.memsys
    starts, lengths = memsys.page_list_spans(first, np.array(words, dtype=np.uint64), size)
    linear = memsys.runs(word, size, AccessKind.READ if to_pages else AccessKind.WRITE, root)
    return len(linear) == 1 and scatter_gather(linear[0], memsys.system, starts, lengths, to_pages=to_pages)


def _general(gpu: Gpu, args: _Args) -> None:
    word, first, words, size, to_pages, root = args
    pages = gpu.memsys.page_list_runs(first, np.array(words, dtype=np.uint64), size)
    linear = gpu.memsys.runs(word, size, AccessKind.READ if to_pages else AccessKind.WRITE, root)
    copy_runs(linear, pages) if to_pages else copy_runs(pages, linear)


def _outcome(gpu: Gpu, run: Callable[[], bool], general: Callable[[], None]) -> tuple[object, ...]:
    try:
        took = run()
        if not took:
            general()
        result: tuple[object, ...] = ("copied", took)
    except GpuFault as fault:
        result = ("fault", fault.kind, fault.address, fault.reason, fault.access, fault.level)
    return (*result, gpu.mmu.walks, *(memory.data[start:stop].tobytes() for memory, start, stop in _regions(gpu)))


@pytest.mark.parametrize(("linear", "pages"), list(itertools.product(LINEAR, PAGE_LISTS)))
def test_the_one_call_copy_agrees_with_spans_runs_and_scatter_gather(linear: str, pages: str) -> None:
    fast_gpu, fast_tables = _rig()
    ref_gpu, ref_tables = _rig()
    extents = PAGE_LISTS[pages]
    words = tuple(cmd.extent(pfn, count) for pfn, count in extents)
    total = sum(count for _, count in extents) * PAGE_SIZE
    for first, part, to_pages in itertools.product((0, 100, 4095), ("all", "one byte", "half"), (True, False)):
        size = {"all": total - first, "one byte": 1, "half": (total - first) // 2 or 1}[part]
        word, rooted = LINEAR[linear](size)
        fast_root = fast_tables.root if rooted else None
        ref_args: _Args = (word, first, words, size, to_pages, ref_tables.root if rooted else None)
        fast = _outcome(
            fast_gpu,
            partial(fast_gpu.memsys.copy_page_list, word, first, words, size, to_pages, fast_root, None),
            partial(_general, fast_gpu, (word, first, words, size, to_pages, fast_root)),
        )
        ref = _outcome(ref_gpu, partial(_reference, ref_gpu, ref_args), partial(_general, ref_gpu, ref_args))
        assert fast == ref, (first, part, to_pages)


def test_what_the_one_call_copy_does_and_which_fault_comes_first() -> None:
    gpu, _ = _rig()
    local = hw_address(Space.GPU_PHYS, 0x1_0000)
    assert gpu.memsys.copy_page_list(local, 100, (cmd.extent(0x300, 2),), PAGE_SIZE, True, None, None)
    assert gpu.system.data[0x30_0064:0x30_1064].tobytes() == gpu.local.data[0x1_0000:0x1_1000].tobytes()
    assert not gpu.memsys.copy_page_list(hw_address(Space.SYSTEM, 0), 0, (cmd.extent(0x300, 1),), 8, True, None, None)
    past_local = hw_address(Space.GPU_PHYS, 64 << 20)
    with pytest.raises(GpuFault, match="page-list page is outside RAM") as fault:
        gpu.memsys.copy_page_list(past_local, 0, (cmd.extent(LAST_PFN + 1, 1),), 8, False, None, None)
    assert (fault.value.kind, fault.value.address) == (FaultKind.BUS_ERROR, (LAST_PFN + 1) * PAGE_SIZE)
    with pytest.raises(GpuFault, match="maps no memory"):
        gpu.memsys.copy_page_list(past_local, 0, (cmd.extent(0x300, 1),), 8, False, None, None)


@pytest.mark.parametrize("space", [Space.GPU_PHYS, Space.SYSTEM])
def test_runs_of_a_physical_range_follow_the_memorys_own_bounds(space: Space) -> None:
    gpu, _ = _rig()
    memory = gpu.local if space == Space.GPU_PHYS else gpu.system
    end = memory.size
    for address, size in [(0, 1), (0, end), (end - 8, 8), (end - 8, 9), (end, 1), (0x1000, -1), (0x1000, 0)]:
        try:
            got: object = gpu.memsys.runs(hw_address(space, address), size, AccessKind.READ, None)
        except GpuFault as fault:
            got = (fault.kind, fault.address)
        if size == 0:
            assert got == []
        elif memory.contains(address, size):
            assert got == [(memory, address, size)]
        else:
            assert got == (FaultKind.BUS_ERROR, address), (address, size)
