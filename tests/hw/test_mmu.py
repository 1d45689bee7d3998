"""The MMU walks tables in memory, caches translations until invalidated, and faults precisely."""

from __future__ import annotations

import pytest

from wddmsim.core.units import PAGE_SIZE, MiB
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.hw.pte import TablePointer, Target, encode_pte

TABLES = 0x40_0000  # local memory region the test builds its tables in


class Tables:
    """Builds a 4-level tree directly in local memory (the hardware view; the DDI path is tested in kmd)."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self.layout = gpu.mmu.layout
        self.next = TABLES
        self.root = TablePointer(Target.LOCAL, self._new())
        self.by_key: dict[tuple[int, int], int] = {}

    def _new(self) -> int:
        address = self.next
        self.next += PAGE_SIZE
        return address

    def set_leaf(self, va: int, entry: int) -> None:
        table = self.root.address
        for level in range(self.layout.levels - 1, 0, -1):
            key = (level, va >> self.layout.shift(level))
            if key not in self.by_key:
                self.by_key[key] = self._new()
                slot = table + self.layout.entry_size(level) * self.layout.index(va, level)
                self.gpu.local.u64[slot // 8] = encode_pte(target=Target.LOCAL, address=self.by_key[key])
            table = self.by_key[key]
        self.gpu.local.u64[(table + 8 * self.layout.index(va, 0)) // 8] = entry


def gpu_and_tables() -> tuple[Gpu, Tables]:
    gpu = Gpu(GpuConfig(local_size=64 * MiB, bar_size=16 * MiB, system_size=64 * MiB, aperture_size=16 * MiB))
    return gpu, Tables(gpu)


def test_a_walk_reaches_local_and_system_pages_and_coalesces_runs() -> None:
    gpu, tables = gpu_and_tables()
    va = 0x1234_5000
    for i in range(3):
        tables.set_leaf(va + i * PAGE_SIZE, encode_pte(target=Target.LOCAL, address=0x100000 + i * PAGE_SIZE))
    tables.set_leaf(va + 3 * PAGE_SIZE, encode_pte(target=Target.SYSTEM, address=0x7000))
    runs = gpu.mmu.translate(tables.root, va + 16, 4 * PAGE_SIZE - 32, AccessKind.READ)
    assert [(r[0] is gpu.local, r[1], r[2]) for r in runs] == [
        (True, 0x100000 + 16, 3 * PAGE_SIZE - 16),
        (False, 0x7000, PAGE_SIZE - 16),
    ]


def test_faults_name_the_address_the_access_and_the_level() -> None:
    gpu, tables = gpu_and_tables()
    with pytest.raises(GpuFault) as missing:
        gpu.mmu.translate(tables.root, 0x8000_0000, 8, AccessKind.READ)
    assert (missing.value.kind, missing.value.level) == (FaultKind.PAGE_FAULT, 3)
    tables.set_leaf(0x1000, encode_pte(address=0x2000, read_only=True, no_execute=True))
    gpu.mmu.translate(tables.root, 0x1000, 8, AccessKind.READ)
    with pytest.raises(GpuFault, match="read-only") as write:
        gpu.mmu.translate(tables.root, 0x1000, 8, AccessKind.WRITE)
    assert (write.value.address, write.value.access, write.value.level) == (0x1000, AccessKind.WRITE, 0)
    with pytest.raises(GpuFault, match="no-execute"):
        gpu.mmu.translate(tables.root, 0x1000, 8, AccessKind.EXECUTE)
    with pytest.raises(GpuFault, match="invalid") as leaf:
        gpu.mmu.translate(tables.root, 0x2000, 8, AccessKind.READ)
    assert leaf.value.level == 0


def test_zero_pages_read_zero_and_drop_writes() -> None:
    gpu, tables = gpu_and_tables()
    tables.set_leaf(0x5000, encode_pte(zero=True, address=0))
    runs = gpu.mmu.translate(tables.root, 0x5000, PAGE_SIZE, AccessKind.WRITE)
    assert runs == [(None, 0, PAGE_SIZE)]


def test_the_tlb_keeps_a_stale_translation_until_invalidated_and_only_in_the_range() -> None:
    gpu, tables = gpu_and_tables()
    near, far = 0x20_0000, 0x4000_0000
    tables.set_leaf(near, encode_pte(address=0x10_0000))
    tables.set_leaf(far, encode_pte(address=0x11_0000))
    assert gpu.mmu.translate(tables.root, near, 8, AccessKind.READ)[0][1] == 0x10_0000
    assert gpu.mmu.translate(tables.root, far, 8, AccessKind.READ)[0][1] == 0x11_0000
    tables.set_leaf(near, encode_pte(address=0x12_0000))
    tables.set_leaf(far, encode_pte(address=0x13_0000))
    assert gpu.mmu.translate(tables.root, near, 8, AccessKind.READ)[0][1] == 0x10_0000, "stale until flushed"
    gpu.mmu.invalidate(tables.root, near, near + PAGE_SIZE - 1)
    assert gpu.mmu.translate(tables.root, near, 8, AccessKind.READ)[0][1] == 0x12_0000
    assert gpu.mmu.translate(tables.root, far, 8, AccessKind.READ)[0][1] == 0x11_0000, "outside the flushed range"
    gpu.mmu.invalidate(tables.root, 0, 0)
    assert gpu.mmu.translate(tables.root, far, 8, AccessKind.READ)[0][1] == 0x13_0000


def test_a_root_flushed_whole_leaves_the_tlb_and_its_next_walk_is_cached_and_flushed_as_before() -> None:
    """Roots come and go (every tree that moves, every process): one whose translations were all flushed leaves
    the TLB, so it does not grow with the run -- and a walk under it afterwards is cached and flushed as before."""
    gpu, tables = gpu_and_tables()
    mmu = gpu.mmu
    va = 0x20_0000
    tables.set_leaf(va, encode_pte(address=0x10_0000))
    assert mmu.translate(tables.root, va, 8, AccessKind.READ)[0][1] == 0x10_0000
    assert tables.root in mmu.tlb
    assert mmu.invalidate(tables.root, 0, 0) == 1
    assert tables.root not in mmu.tlb, "nothing cached under the root: no entry for it"
    tables.set_leaf(va, encode_pte(address=0x11_0000))
    assert mmu.translate(tables.root, va, 8, AccessKind.READ)[0][1] == 0x11_0000, "walked again"
    tables.set_leaf(va, encode_pte(address=0x12_0000))
    assert mmu.translate(tables.root, va, 8, AccessKind.READ)[0][1] == 0x11_0000, "cached again: stale until flushed"
    assert mmu.stale_translations(tables.root), "the audit sees the new cache entry"
    mmu.invalidate(tables.root, va, va + PAGE_SIZE - 1)
    assert mmu.translate(tables.root, va, 8, AccessKind.READ)[0][1] == 0x12_0000


def test_an_engine_reaches_memory_by_va_once_given_a_root() -> None:
    gpu, tables = gpu_and_tables()
    tables.set_leaf(0x9000, encode_pte(address=0x30_0000))
    engine = gpu.engines[0]
    data = cmd.encode(cmd.Fill(hw_address(Space.GPU_VA, 0x9000), 8, 0x01020304))
    gpu.system.write(0x10000, data)
    from wddmsim.hw.engine import Submission

    engine.submit(Submission(hw_address(Space.SYSTEM, 0x10000), len(data), 1))
    gpu.clock.run_all()
    assert engine.fault is not None, "no address space yet: a page fault"
    gpu.reset()
    engine.root = tables.root
    engine.submit(Submission(hw_address(Space.SYSTEM, 0x10000), len(data), 2))
    gpu.clock.run_all()
    assert gpu.local.read(0x30_0000, 4) == bytes([4, 3, 2, 1])


def test_remembered_page_translations_are_per_access_kind_root_and_offset() -> None:
    """A repeated access inside one page is answered from the TLB snapshot without a walk -- per access kind
    (a read of a read-only page never lets a write through), per root, at the accessed offset."""
    gpu, tables = gpu_and_tables()
    mmu = gpu.mmu
    tables.set_leaf(0x1000, encode_pte(address=0x2000, read_only=True))
    for _ in range(3):
        assert mmu.translate(tables.root, 0x1000, 8, AccessKind.READ) == [(gpu.local, 0x2000, 8)]
    assert mmu.translate(tables.root, 0x1000 + 100, 8, AccessKind.READ) == [(gpu.local, 0x2000 + 100, 8)]
    walks = mmu.walks
    for _ in range(2):
        with pytest.raises(GpuFault, match="read-only"):
            mmu.translate(tables.root, 0x1000, 8, AccessKind.WRITE)
    assert mmu.walks == walks, "the region stays cached; only the page answer is per access kind"

    other = Tables.__new__(Tables)  # a second address space whose VA 0x1000 is another page
    other.gpu, other.layout, other.next, other.by_key = gpu, mmu.layout, tables.next, {}
    other.root = TablePointer(Target.LOCAL, other._new())
    other.set_leaf(0x1000, encode_pte(address=0x7000))
    for _ in range(2):
        assert mmu.translate(other.root, 0x1000, 8, AccessKind.WRITE) == [(gpu.local, 0x7000, 8)]
        assert mmu.translate(tables.root, 0x1000, 8, AccessKind.READ) == [(gpu.local, 0x2000, 8)]
    same = TablePointer(Target.LOCAL, tables.root.address)  # equal, not identical: the same address space
    assert mmu.translate(same, 0x1000, 8, AccessKind.READ) == [(gpu.local, 0x2000, 8)]

    tables.set_leaf(0x1000, encode_pte(address=0x3000))
    assert mmu.translate(tables.root, 0x1000, 8, AccessKind.READ) == [(gpu.local, 0x2000, 8)], "stale"
    mmu.invalidate_all()
    assert mmu.translate(tables.root, 0x1000, 8, AccessKind.READ) == [(gpu.local, 0x3000, 8)]
    assert mmu.translate(tables.root, 0x1000, 8, AccessKind.WRITE) == [(gpu.local, 0x3000, 8)]
    tables.set_leaf(0x2000, encode_pte(address=0x9000))
    mmu.invalidate(tables.root, 0, 0)
    spanning = mmu.translate(tables.root, 0x1000 + PAGE_SIZE - 8, 16, AccessKind.READ)
    assert spanning == [(gpu.local, 0x3000 + PAGE_SIZE - 8, 8), (gpu.local, 0x9000, 8)]


@pytest.mark.parametrize("pages", [4, 200])  # the short path and the vector path
@pytest.mark.parametrize("caches_invalid", [True, False])
def test_an_invalid_entry_in_a_cached_range_faults_or_is_walked_again(pages: int, caches_invalid: bool) -> None:
    """A range whose snapshot holds an entry made valid since (no flush): a GPU that caches invalid entries
    faults at that page; one that does not (``InvalidTlbEntriesNotCached``) walks again and finds one run."""
    gpu = Gpu(
        GpuConfig(
            local_size=64 * MiB,
            bar_size=16 * MiB,
            system_size=64 * MiB,
            aperture_size=16 * MiB,
            caches_invalid_translations=caches_invalid,
        )
    )
    tables = Tables(gpu)
    va = 0x4000_0000
    for i in range(pages):
        if i != 2:
            tables.set_leaf(va + i * PAGE_SIZE, encode_pte(address=0x100_0000 + i * PAGE_SIZE))
    assert gpu.mmu.translate(tables.root, va, 8, AccessKind.READ) == [(gpu.local, 0x100_0000, 8)]
    tables.set_leaf(va + 2 * PAGE_SIZE, encode_pte(address=0x100_0000 + 2 * PAGE_SIZE))
    walks = gpu.mmu.walks
    if caches_invalid:
        with pytest.raises(GpuFault, match="leaf entry is invalid") as caught:
            gpu.mmu.translate(tables.root, va, pages * PAGE_SIZE, AccessKind.READ)
        assert caught.value.address == va + 2 * PAGE_SIZE
        assert gpu.mmu.walks == walks
    else:
        runs = gpu.mmu.translate(tables.root, va, pages * PAGE_SIZE, AccessKind.READ)
        assert runs == [(gpu.local, 0x100_0000, pages * PAGE_SIZE)]
        assert gpu.mmu.walks == walks + 1


@pytest.mark.parametrize("access", [AccessKind.READ, AccessKind.WRITE, AccessKind.EXECUTE])
def test_a_walk_that_reads_a_table_outside_memory_faults_as_a_read_of_the_table(access: AccessKind) -> None:
    """The walk's own read of a root or middle entry is a read, whatever the access it translates for: the bus
    error says READ (the page-fault interrupt's Write flag follows it)."""
    gpu = Gpu(GpuConfig())
    outside = TablePointer(Target.LOCAL, gpu.local.size + PAGE_SIZE)
    with pytest.raises(GpuFault) as fault:
        gpu.mmu.translate(outside, 0x1000, 8, access)
    assert fault.value.kind == FaultKind.BUS_ERROR and fault.value.access == AccessKind.READ
