"""GPU VA spaces follow their allocations: mappings written in every update mode, walked by the GPU's MMU (with
its TLB), invalidated before a range is reused, re-pointed after every move, freed with the allocation."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.status import InvalidArgument
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.memsys import read_runs
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.vaspace import GpuVaSpace

from .world import World, pattern

MODES = list(DXGK_PAGETABLEUPDATEMODE)


def root_of(w: World, space: GpuVaSpace) -> TablePointer:
    assert w.vidmm.va is not None
    address = w.vidmm.va.root_address(space)
    return TablePointer(Target.LOCAL, w.vidmm.spaces.get(address.SegmentId).base + address.SegmentOffset)


def gpu_read(w: World, space: GpuVaSpace, va: int, size: int) -> ByteArray:
    """What the GPU reads at ``va`` of the process: a walk of its tables, through the TLB."""
    return read_runs(w.adapter.gpu.mmu.translate(root_of(w, space), va, size, AccessKind.READ))


def setup(mode: DXGK_PAGETABLEUPDATEMODE | None = None) -> tuple[World, GpuVaSpace]:
    w = World(update_mode=mode)
    assert w.vidmm.va is not None
    return w, w.vidmm.va.create_space(w.process)


def tables_ok(w: World, space: GpuVaSpace) -> None:
    w.settle()
    problems = check_page_tables(
        w.adapter.gpu, root_of(w, space), MemoryRanges.of(w.adapter.driver), root_entries=space.root_entries
    )
    assert not problems, problems
    w.check()


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name.removeprefix("DXGK_PAGETABLEUPDATE_"))
def test_a_mapping_reaches_the_allocation_wherever_it_goes(mode: DXGK_PAGETABLEUPDATEMODE) -> None:
    w, space = setup(mode)
    a = w.buffer(256 * KiB)
    w.make_resident(a)
    data = pattern(a.size, 1)
    w.write(a, data)
    assert w.vidmm.va is not None
    mapping = w.vidmm.va.mappings.map(space, a)
    w.settle()
    assert mapping.va % (64 * KiB) == 0 and mapping.va != 0
    assert np.array_equal(gpu_read(w, space, mapping.va, a.size), data)
    w.evict(a)
    with pytest.raises(GpuFault):
        gpu_read(w, space, mapping.va, 4096)
    w.make_resident(a)
    w.settle()
    assert np.array_equal(gpu_read(w, space, mapping.va, a.size), data), "re-pointed after the page-in"
    tables_ok(w, space)


def test_a_freed_range_reused_by_another_process_is_never_visible_through_a_stale_translation() -> None:
    w, space = setup()
    victim = w.buffer(1 * MiB)
    w.make_resident(victim)
    w.write(victim, pattern(victim.size, 2))
    assert w.vidmm.va is not None
    mapping = w.vidmm.va.mappings.map(space, victim)
    w.settle()
    gpu_read(w, space, mapping.va, victim.size)  # the translation is now in the TLB
    old = victim.placement
    w.evict(victim)
    other = w.rm.create_device(w.rm.create_process())
    queue = w.new_queue(other)
    secret = w.buffer(1 * MiB, device=other)
    w.make_resident(secret, queue=queue)
    assert secret.placement == old, "the other process got exactly the freed range"
    w.write(secret, np.full(secret.size, 0x5A, dtype=np.uint8))
    w.settle()
    with pytest.raises(GpuFault):
        gpu_read(w, space, mapping.va, 4096)


def test_a_demoted_allocation_is_reached_through_its_backing_pages() -> None:
    from wddmsim.kmd.allocations import AllocationUsage

    w, space = setup()
    a = w.buffer(64 * KiB, usage=AllocationUsage.APERTURE_ONLY)
    w.make_resident(a)
    w.write(a, pattern(a.size, 3))
    assert w.vidmm.va is not None
    mapping = w.vidmm.va.mappings.map(space, a)
    w.settle()
    runs = w.adapter.gpu.mmu.translate(root_of(w, space), mapping.va, a.size, AccessKind.READ)
    assert all(memory is w.adapter.gpu.system for memory, _, _ in runs), "system pages, segment 0 (D4)"
    assert np.array_equal(read_runs(runs), pattern(a.size, 3))
    tables_ok(w, space)


def test_read_only_and_no_execute_mappings_fault_on_write_and_execute() -> None:
    w, space = setup()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    assert w.vidmm.va is not None
    mapping = w.vidmm.va.mappings.map(space, a, write=False)
    w.settle()
    root = root_of(w, space)
    w.adapter.gpu.mmu.translate(root, mapping.va, 4096, AccessKind.READ)
    with pytest.raises(GpuFault):
        w.adapter.gpu.mmu.translate(root, mapping.va, 4096, AccessKind.WRITE)
    with pytest.raises(GpuFault):
        w.adapter.gpu.mmu.translate(root, mapping.va, 4096, AccessKind.EXECUTE)


def test_unmap_and_destroy_free_the_va_and_fault_afterwards() -> None:
    w, space = setup()
    a, b = w.buffer(64 * KiB), w.buffer(64 * KiB)
    for x in (a, b):
        w.make_resident(x)
    assert w.vidmm.va is not None
    va = w.vidmm.va
    first = va.mappings.map(space, a, pages=4, offset_pages=2)
    second = va.mappings.map(space, b, base=first.va + 1 * MiB)
    assert second.va == first.va + 1 * MiB
    with pytest.raises(InvalidArgument, match="is not free"):
        va.mappings.map(space, b, base=second.va)
    with pytest.raises(InvalidArgument, match="OffsetInPages=0x10: 1 page"):
        va.mappings.map(space, b, offset_pages=16, pages=1)
    w.settle()
    gpu_read(w, space, first.va, 4 * 4096)
    va.mappings.unmap(space, first.va)
    w.evict(b)
    w.rm.destroy_allocation(b.handle)
    w.settle()
    for dead in (first.va, second.va):
        with pytest.raises(GpuFault):
            gpu_read(w, space, dead, 4096)
    assert space.mappings == {} and len(space.ranges) == 1, "only the reserved NULL range is left"
    with pytest.raises(InvalidArgument, match="is not a mapped range"):
        va.mappings.unmap(space, first.va)


def test_contexts_get_their_process_root() -> None:
    w, space = setup()
    context = w.vidmm.create_context(w.device)
    assert reference_driver(w.adapter.driver).contexts[context] == 1
    assert w.adapter.gpu.engines[1].root == root_of(w, space)


def test_mappings_follow_random_residency_histories() -> None:
    w, space = setup()
    assert w.vidmm.va is not None
    rng = np.random.default_rng(5)
    allocations: list[VidMmAllocation] = [w.buffer(int(rng.integers(1, 64)) * 4096) for _ in range(24)]
    expected = {a.handle: np.zeros(a.size, dtype=np.uint8) for a in allocations}
    vas = {a.handle: w.vidmm.va.mappings.map(space, a).va for a in allocations}
    for step in range(80):
        chosen = [allocations[int(i)] for i in rng.choice(len(allocations), size=3, replace=False)]
        w.make_resident(*chosen)
        target = chosen[0]
        data = pattern(4096, step)
        w.write(target, data)
        expected[target.handle][:4096] = data
        w.settle()
        for a in chosen:
            assert np.array_equal(gpu_read(w, space, vas[a.handle], a.size), expected[a.handle]), step
        w.evict(*chosen)
    tables_ok(w, space)


@pytest.mark.parametrize("caches_invalid", [True, False])
def test_a_new_mapping_is_flushed_only_if_the_gpu_caches_invalid_entries(caches_invalid: bool) -> None:
    """Decision D5: invalid -> valid needs no FlushTlb when the driver reports InvalidTlbEntriesNotCached."""
    from wddmsim.hw.gpu import GpuConfig
    from wddmsim.vidmm.events import PagingOperation

    from .world import SMALL_GPU

    gpu = GpuConfig(
        local_size=SMALL_GPU.local_size,
        bar_size=SMALL_GPU.bar_size,
        aperture_size=SMALL_GPU.aperture_size,
        system_size=SMALL_GPU.system_size,
        caches_invalid_translations=caches_invalid,
    )
    w = World(gpu=gpu)
    assert w.vidmm.va is not None
    space = w.vidmm.va.create_space(w.process)
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    w.vidmm.va.mappings.map(space, a)  # first a fresh region: its tables are written, then the leaf entries
    b = w.buffer(64 * KiB)
    w.make_resident(b)
    before = len(w.adapter.events.of_type(PagingOperation))
    w.vidmm.va.mappings.map(space, b, base=0x20_0000 + 64 * KiB)
    w.settle()
    ops = [e.operation for e in w.adapter.events.of_type(PagingOperation)[before:]]
    flushes = ops.count("DXGK_OPERATION_FLUSH_TLB")
    assert (flushes > 0) == caches_invalid
    w.settle()
    assert np.array_equal(gpu_read(w, space, 0x20_0000 + 64 * KiB, 4096), w.read(b, 0, 4096))


def _leaf_kinds(w: World, space: GpuVaSpace, va: int) -> list[str]:
    walk = w.adapter.gpu.mmu.walk(root_of(w, space), va)
    return [s.kind for s in walk.steps if s.level == 0 and s.words[0] & 1]


def test_whole_aligned_64_kib_are_mapped_with_64_kb_ptes_and_follow_moves() -> None:
    w, space = setup()
    assert w.vidmm.va is not None
    a = w.buffer(256 * KiB)
    w.make_resident(a)  # the first range of the local segment: 64 KiB aligned
    assert a.placement is not None and a.placement.offset % (64 * KiB) == 0
    data = pattern(a.size, 12)
    w.write(a, data)
    m = w.vidmm.va.mappings.map(space, a)
    w.settle()
    assert _leaf_kinds(w, space, m.va) == ["leaf64k"], "one 64 KB entry, its 4 KB entries invalid"
    assert np.array_equal(gpu_read(w, space, m.va, a.size), data)
    w.evict(a)
    spacer = w.buffer(4 * KiB)
    w.make_resident(spacer)  # takes the aligned start: the allocation comes back 4 KiB off
    w.make_resident(a)
    w.settle()
    assert a.placement is not None and a.placement.offset % (64 * KiB) != 0
    assert _leaf_kinds(w, space, m.va) == ["leaf"], "4 KB entries when the pages are not an aligned 64 KiB"
    assert np.array_equal(gpu_read(w, space, m.va, a.size), data)
    tables_ok(w, space)


def test_a_partial_64_kib_and_an_unaligned_va_use_4_kb_ptes() -> None:
    w, space = setup()
    assert w.vidmm.va is not None
    a = w.buffer(128 * KiB)
    w.make_resident(a)
    m = w.vidmm.va.mappings.map(space, a, base=0x40_0000 + 4 * KiB, pages=20)
    w.settle()
    for page in range(20):
        assert _leaf_kinds(w, space, m.va + page * 4096) == ["leaf"]
    tables_ok(w, space)


def test_a_two_level_root_grows_with_the_vas_used_and_contexts_follow_it() -> None:
    """wddm-spec 2.6: a resizable root grows by a new root (GetRootPageTableSize), re-pointed contexts
    (SetRootPageTable), and the old root freed."""
    from wddmsim.hw.gpu import GpuConfig

    from .world import SMALL_GPU

    gpu = GpuConfig(
        local_size=SMALL_GPU.local_size,
        bar_size=SMALL_GPU.bar_size,
        aperture_size=SMALL_GPU.aperture_size,
        system_size=SMALL_GPU.system_size,
        mmu_index_bits=(9, 12),
    )
    w = World(gpu=gpu)
    assert w.vidmm.va is not None and w.vidmm.gpummu is not None and w.vidmm.gpummu.resizable_root
    space = w.vidmm.va.create_space(w.process)
    context = w.vidmm.create_context(w.device)
    first = space.root_entries
    assert first < 4096, "the root starts small"
    low, high = w.buffer(64 * KiB), w.buffer(64 * KiB)
    for a, seed in ((low, 1), (high, 2)):
        w.make_resident(a)
        w.write(a, pattern(a.size, seed))
    m_low = w.vidmm.va.mappings.map(space, low)
    old_root = root_of(w, space)
    m_high = w.vidmm.va.mappings.map(space, high, base=first * 2 * 1024 * 1024 + 64 * KiB)  # past the root's entries
    w.settle()
    assert space.root_entries > first and w.vidmm.va.root_moves == 1
    new_root = root_of(w, space)
    assert new_root != old_root
    assert reference_driver(w.adapter.driver).context_roots[context] == (new_root, space.root_entries), (
        "SetRootPageTable again"
    )
    assert np.array_equal(gpu_read(w, space, m_low.va, low.size), pattern(low.size, 1)), "old entries carried over"
    assert np.array_equal(gpu_read(w, space, m_high.va, high.size), pattern(high.size, 2))
    tables_ok(w, space)


def test_page_tables_get_room_even_when_allocations_fill_their_segment() -> None:
    """A new table in a full PageTableSegmentId evicts allocations (tables come first) instead of failing."""
    w, space = setup()
    assert w.vidmm.va is not None
    local = w.vidmm.spaces.get(2)
    filler = w.buffer(local.ranges.free_bytes - 4096)  # everything but one page: no room left for two tables
    w.make_resident(filler)
    assert filler.placement is not None and filler.placement.segment_id == 2
    w.evict(filler, EvictOnlyIfNecessary=True)  # still there, but no list needs it
    a = w.buffer(64 * KiB, usage=0)
    w.make_resident(a)
    m = w.vidmm.va.mappings.map(space, a, base=0x4000_0000)  # a fresh 1 GiB: new tables at levels 2..0
    w.settle()
    assert np.array_equal(gpu_read(w, space, m.va, a.size), w.read(a))
    tables_ok(w, space)
