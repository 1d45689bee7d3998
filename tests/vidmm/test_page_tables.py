"""Page tables as VidMm keeps them: large pages, tables freed when no range needs them (with and without
ExplicitPageTableInvalidation), a 2-level root that shrinks as well as grows, and single-PTE mode's one-way
64 KB -> 4 KB conversion (wddm-spec sections 2.6-2.7; decisions 0021, 0022).  The page-table invariant
(``check_page_tables``) is checked after every step."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import HRESULT, NTSTATUS
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.pte import PTE_SIZE
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.events import AddressSpaceResumed, AddressSpaceSuspended, PageTableConverted, PagingOperation
from wddmsim.vidmm.manager import VideoMemoryManager
from wddmsim.vidmm.vaspace import GpuVaSpace, GpuVaSpaces, ProcessTable

from .test_vaspace import gpu_read, root_of
from .world import SMALL_GPU, World, pattern

RW = D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True)


def gpu(**changes: Any) -> GpuConfig:
    fields = {
        "local_size": SMALL_GPU.local_size,
        "bar_size": SMALL_GPU.bar_size,
        "aperture_size": SMALL_GPU.aperture_size,
        "system_size": SMALL_GPU.system_size,
    }
    return GpuConfig(**(fields | changes))


class Tables:
    """One process with a VA space, and the checks every step of these tests ends with."""

    def __init__(self, w: World) -> None:
        self.w = w
        assert w.vidmm.va is not None
        self.va: GpuVaSpaces = w.vidmm.va
        self.space: GpuVaSpace = self.va.create_space(w.process)

    def resident(self, size: int, seed: int, **kw: Any) -> VidMmAllocation:
        a = self.w.buffer(size, **kw)
        self.w.make_resident(a)
        self.w.write(a, pattern(a.size, seed))
        return a

    def map(self, a: VidMmAllocation, base: int, **fields: Any) -> int:
        fields.setdefault("SizeInPages", a.size // 4096)
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=self.w.queue.handle, BaseAddress=base, hAllocation=a.handle, Protection=RW, **fields
        )
        assert self.va.map_gpu_va(args) == HRESULT.E_PENDING
        self.w.rm.wait(self.w.queue, args.PagingFenceValue)
        return args.VirtualAddress

    def free(self, base: int, size: int) -> None:
        self.va.free_gpu_va(self.w.process, D3DDDICB_FREEGPUVIRTUALADDRESS(BaseAddress=base, Size=size))

    def walk_kinds(self, va: int) -> list[str]:
        """What each level of a walk of ``va`` found, top first (``large`` at level 1 for a large page)."""
        walk = self.w.adapter.gpu.mmu.walk(root_of(self.w, self.space), va, root_entries=self.space.root_entries)
        return [s.kind for s in walk.steps if s.kind != "invalid" or s.level > 0]

    def level1(self, va: int) -> str:
        walk = self.w.adapter.gpu.mmu.walk(root_of(self.w, self.space), va, root_entries=self.space.root_entries)
        return next(s.kind for s in walk.steps if s.level == 1)

    def leaves(self, va: int) -> list[str]:
        walk = self.w.adapter.gpu.mmu.walk(root_of(self.w, self.space), va, root_entries=self.space.root_entries)
        return [s.kind for s in walk.steps if s.level == 0 and s.words[0] & 1]

    def reads(self, va: int, a: VidMmAllocation, seed: int, size: int | None = None) -> bool:
        size = a.size if size is None else size
        return bool(np.array_equal(gpu_read(self.w, self.space, va, size), pattern(a.size, seed)[:size]))

    def check(self) -> None:
        self.w.settle()
        problems = check_page_tables(
            self.w.adapter.gpu,
            root_of(self.w, self.space),
            MemoryRanges.of(self.w.adapter.driver),
            root_entries=self.space.root_entries,
        )
        assert not problems, problems
        self.w.check()

    def table_count(self) -> int:
        return len(self.space.tables) + len(self.space.leaves64)


# --- large pages ------------------------------------------------------------------------------------------


def test_a_2_mib_aligned_contiguous_run_is_mapped_by_a_large_page_and_follows_moves() -> None:
    t = Tables(World())
    a = t.resident(2 * MiB, 1)
    assert a.placement is not None
    assert (t.w.vidmm.spaces.get(a.placement.segment_id).base + a.placement.offset) % (2 * MiB) == 0
    va = t.map(a, 0x4000_0000)
    assert t.level1(va) == "large", "one level-1 LargePage entry maps the whole 2 MiB"
    assert t.reads(va, a, 1)
    t.check()
    t.w.evict(a)  # the run leaves: no large page any more (no leaf table is needed for invalid entries)
    assert t.level1(va) == "invalid"
    with pytest.raises(GpuFault):
        gpu_read(t.w, t.space, va, 4096)
    t.check()
    spacer = t.w.buffer(64 * KiB)
    t.w.make_resident(spacer)  # takes the aligned start: the run comes back misaligned for a large page
    t.w.make_resident(a)
    assert a.placement is not None and a.placement.offset % (2 * MiB) != 0
    assert t.level1(va) == "table" and t.leaves(va + 64 * KiB) == ["leaf64k"]
    assert t.reads(va, a, 1)
    t.check()


def test_remapping_part_of_a_large_page_goes_back_to_leaf_tables() -> None:
    t = Tables(World())
    a = t.resident(2 * MiB, 2)
    b = t.resident(64 * KiB, 3)
    va = t.map(a, 0x4000_0000)
    assert t.level1(va) == "large"
    t.map(b, va + 1 * MiB)  # into the range obtained by Map: the large page can no longer describe it
    assert t.level1(va) == "table"
    assert t.reads(va, a, 2, 1 * MiB)
    assert t.reads(va + 1 * MiB, b, 3)
    assert np.array_equal(
        gpu_read(t.w, t.space, va + 1 * MiB + 64 * KiB, 64 * KiB),
        pattern(a.size, 2)[1 * MiB + 64 * KiB : 1 * MiB + 128 * KiB],
    )
    t.check()


@pytest.mark.parametrize(
    ("why", "usage", "driver", "protection"),
    [
        ("DisableLargePageMapping", AllocationUsage.NO_LARGE_PAGES, {}, 0),
        ("no LargePageSupported", 0, {"large_pages": False}, 0),
        ("a driver protection (leaf entries only)", 0, {}, 0x7),
    ],
)
def test_no_large_page_when_the_allocation_the_gpu_or_the_protection_forbids_it(
    why: str, usage: int, driver: dict[str, Any], protection: int
) -> None:
    t = Tables(World(driver_options=driver))
    a = t.resident(2 * MiB, 4, usage=usage)
    va = t.map(a, 0x4000_0000, DriverProtection=protection)
    assert t.level1(va) == "table", why
    assert t.reads(va, a, 4)
    t.check()


# --- tables no range needs --------------------------------------------------------------------------------


def test_tables_no_range_needs_are_freed_and_only_the_root_is_left() -> None:
    t = Tables(World())
    a = t.resident(64 * KiB, 5)
    bases = [0x4000_0000, 0x80_0000_0000, 0x80_0020_0000]  # two 512 GiB ranges, two leaves in one of them
    for base in bases:
        t.map(a, base)
    assert t.table_count() > 4
    t.check()
    for base in bases:
        t.free(base, a.size)
        with pytest.raises(GpuFault):
            gpu_read(t.w, t.space, base, 4096)
        t.check()
    assert list(t.space.tables) == [(3, 0)] and not t.space.leaves64, "only the root is left"
    owners = [o for _, _, o in t.w.vidmm.spaces.get(2).held() if not isinstance(o, VidMmAllocation)]
    assert len(owners) == 1, "the freed tables' ranges went back to the segment"


@pytest.mark.parametrize("explicit", [False, True], ids=["default", "ExplicitPageTableInvalidation"])
def test_a_freed_table_had_every_entry_invalidated_only_if_the_driver_asks(explicit: bool) -> None:
    t = Tables(World(driver_options={"explicit_page_table_invalidation": explicit}))
    a = t.resident(64 * KiB, 6, usage=AllocationUsage.APERTURE_ONLY)  # system pages: 4 KB entries
    va = t.map(a, 0x4000_0000)
    leaf = t.space.tables[(0, va >> 21)]
    where = t.w.vidmm.spaces.get(leaf.segment_id).base + leaf.offset
    words = t.w.adapter.gpu.local.u64[where // PTE_SIZE : where // PTE_SIZE + 512]
    assert (words != 0).sum() == 16
    t.free(va, a.size)
    t.check()
    words = t.w.adapter.gpu.local.u64[where // PTE_SIZE : where // PTE_SIZE + 512]
    if explicit:
        assert not words.any(), "every entry of the table was invalidated before it was freed"
    else:
        assert (words != 0).sum() == 16, "VidMm freed the table without touching its entries (the default)"


def test_a_two_level_root_shrinks_when_vas_at_the_top_are_freed() -> None:
    """wddm-spec 2.6: shrink = a new, smaller root, the kept entries copied, the contexts re-pointed, the old
    root destroyed."""
    t = Tables(World(gpu=gpu(mmu_index_bits=(9, 12)), driver_options={"explicit_page_table_invalidation": True}))
    w = t.w
    context = w.vidmm.create_context(w.device)
    first = t.space.root_entries
    low, high = t.resident(64 * KiB, 7), t.resident(64 * KiB, 8)
    low_va = t.map(low, 0x20_0000)
    high_va = t.map(high, 1000 * 2 * MiB)
    grown = t.space.root_entries
    assert grown > first and t.va.root_moves == 1
    big_root = t.space.tables[(1, 0)]
    big_at = w.vidmm.spaces.get(big_root.segment_id).base + big_root.offset
    t.check()
    t.free(high_va, high.size)
    assert t.space.root_entries < grown and t.va.root_moves == 2, "the root shrank"
    assert reference_driver(w.adapter.driver).context_roots[context] == (root_of(w, t.space), t.space.root_entries)
    assert t.reads(low_va, low, 7), "the kept entries were carried over"
    with pytest.raises(GpuFault, match="NumEntries"):
        w.adapter.gpu.mmu.translate(
            root_of(w, t.space), high_va, 4096, AccessKind.READ, root_entries=t.space.root_entries
        )
    assert not w.adapter.gpu.local.u64[big_at // PTE_SIZE : big_at // PTE_SIZE + grown].any(), "old root wiped"
    t.check()


# --- dual PTEs: a 64 KB entry is invalidated before 4 KB entries of its 64 KiB, and only if it is live -------


def _updates_since(t: Tables, since: int) -> list[tuple[bool, int, int, int]]:
    """``(Use64KBPages, StartIndex, NumPageTableEntries, the table's VA)`` of each UpdatePageTable built since
    event ``since`` (GPU_VIRTUAL updates name a table by its VA in the paging process)."""
    out = []
    for e in list(t.w.adapter.events)[since:]:
        if isinstance(e, PagingOperation) and e.operation == "DXGK_OPERATION_UPDATE_PAGE_TABLE":
            fields = dict(e.args)
            out.append(
                (
                    bool(fields["Flags"] & 8),
                    fields["StartIndex"],
                    fields["NumPageTableEntries"],
                    fields["PageTableAddress.GpuVirtual"],
                )
            )
    return out


def test_a_live_64_kb_entry_is_invalidated_before_4_kb_entries_of_its_range_and_an_invalid_one_is_not_rewritten() -> (
    None
):
    """Decision 0198: VidMm knows which leaf entries it left live (every write to a leaf table is an
    UpdatePageTable it built), so a 4 KB mapping in a 64 KiB whose 64 KB entry is already invalid builds no 64 KB
    update, one whose entry is live invalidates it first (the two kinds of one 64 KiB are never both valid), and
    an eviction writes no invalid 4 KB entries over 4 KB entries that were never live."""
    t = Tables(World())
    a = t.resident(128 * KiB, 1)
    b = t.resident(4 * KiB, 2)
    va = t.map(a, 0x4000_0000)
    (table64,) = t.space.leaves64.values()
    assert table64.live == 0b11, "the two 64 KiB of the allocation are mapped by live 64 KB entries"
    assert t.leaves(va) == ["leaf64k"]
    t.check()

    since = len(t.w.adapter.events)
    t.map(b, va + 128 * KiB)  # the third 64 KiB of the same leaf: its 64 KB entry was never written
    assert [u for u in _updates_since(t, since) if u[0]] == [], "no 64 KB update for an entry already invalid"
    assert table64.live == 0b11
    table4 = t.space.tables[(0, table64.key)]
    assert table4.live == 1 << 32, "the 4 KB table holds b's entry only: a's 4 KB entries stay invalid"
    t.check()

    since = len(t.w.adapter.events)
    t.w.evict(a)
    t.w.settle()
    assert a.placement is None
    built = _updates_since(t, since)
    assert [u for u in built if u[0]] == [(True, 0, 2, table64.window)], "the two live 64 KB entries, in one update"
    assert [u for u in built if u[3] == table4.window] == [], "a's 4 KB entries were never live: none rewritten"
    assert (table64.live, table4.live) == (0, 1 << 32)
    assert t.leaves(va) == [], "nothing maps the evicted allocation's VA"
    assert t.reads(va + 128 * KiB, b, 2), "b is still mapped and reads its bytes"
    t.check()


# --- single-PTE mode --------------------------------------------------------------------------------------

SINGLE = {"gpu": gpu(dual_pte=False), "driver_options": {"cpu_visible_64k_pages": True}}


def test_single_pte_mode_uses_a_64_kb_table_while_only_64_kb_pages_are_mapped_and_converts_once() -> None:
    t = Tables(World(**SINGLE))  # type: ignore[arg-type]
    w = t.w
    assert not w.vidmm.gpummu or not w.vidmm.gpummu.caps.Flags.DualPteSupported
    a = t.resident(128 * KiB, 9)
    assert a.alignment == 64 * KiB and a.size % (64 * KiB) == 0, "Use64KBPages segments: 64 KB allocations"
    va = t.map(a, 0x4000_0000)
    assert t.leaves(va) == ["leaf64k"], "a 64 KB-page leaf table"
    assert t.reads(va, a, 9)
    t.check()
    before = len(w.adapter.events.of_type(PageTableConverted))
    pool = t.resident(64 * KiB, 10, usage=AllocationUsage.APERTURE_ONLY)  # system pages need 4 KB entries
    pool_va = t.map(pool, va + 1 * MiB)
    converted = w.adapter.events.of_type(PageTableConverted)[before:]
    assert [e.va for e in converted] == [va], "the 2 MiB range went to 4 KB pages"
    suspended = w.adapter.events.of_type(AddressSpaceSuspended)
    assert suspended and suspended[-1].reason == "64KB->4KB"
    assert t.leaves(va) == ["leaf"] and t.leaves(pool_va) == ["leaf"]
    assert t.reads(va, a, 9) and t.reads(pool_va, pool, 10)
    t.check()
    t.free(pool_va, pool.size)
    t.w.evict(a)
    t.w.make_resident(a)  # only 64 KB pages again: the range stays a 4 KB-page one
    assert t.leaves(va) == ["leaf"]
    assert t.reads(va, a, 9)
    assert len(w.adapter.events.of_type(PageTableConverted)) == before + 1, "never back to 64 KB"
    assert w.adapter.events.of_type(AddressSpaceResumed)
    t.check()


def test_single_pte_mode_maps_an_unaligned_va_with_4_kb_pages_from_the_start() -> None:
    t = Tables(World(**SINGLE))  # type: ignore[arg-type]
    a = t.resident(64 * KiB, 11)
    va = t.map(a, 0x4000_0000 + 4 * KiB)
    assert t.leaves(va) == ["leaf"]
    assert not t.w.adapter.events.of_type(PageTableConverted)
    assert t.reads(va, a, 11)
    t.check()


def test_single_pte_mode_keeps_a_64_kb_table_while_the_allocation_is_away_and_converts_for_the_aperture() -> None:
    t = Tables(World(**SINGLE))  # type: ignore[arg-type]
    a = t.w.buffer(64 * KiB)  # never resident yet: its entries are invalid, which a 64 KB table can hold
    va = t.map(a, 0x4000_0000)
    t.w.make_resident(a)
    t.w.write(a, pattern(a.size, 12))
    assert t.leaves(va) == ["leaf64k"]
    t.check()
    t.w.evict(a)
    assert t.space.leaves64, "evicted: invalid entries, still a 64 KB-page table"
    t.w.make_resident(a)
    assert t.leaves(va) == ["leaf64k"] and t.reads(va, a, 12)
    seg = t.w.vidmm.spaces.get(2)
    hog = t.w.buffer((seg.ranges.free_bytes + a.size) // (64 * KiB) * 64 * KiB)
    t.w.make_resident(hog)  # takes a's range: a, which its list needs, is demoted to the aperture
    assert a.placement is not None and t.w.vidmm.spaces.get(a.placement.segment_id).aperture
    assert t.leaves(va) == ["leaf"] and not t.space.leaves64, "its backing pages need 4 KB entries"
    assert t.reads(va, a, 12)
    t.check()


# --- PageTableUpdateRequireAddressSpaceIdle ---------------------------------------------------------------


def _long_copy(w: World, device: Any = None) -> tuple[Any, int, VidMmAllocation, int]:
    """A process with a context and a copy that takes a while on the compute engine (across PCIe)."""
    from .test_work import Proc, va

    p = Proc(w, device)
    slow = w.buffer(1 * MiB, usage=AllocationUsage.APERTURE_ONLY, device=p.device)
    w.make_resident(slow, queue=p.queue)
    assert w.vidmm.va is not None
    src = w.vidmm.va.mappings.map(p.space, slow).va
    out, dst = p.buffer(1 * MiB)
    from wddmsim.hw import commands as cmd

    fence = w.vidmm.work.submit(p.context, cmd.encode(cmd.Copy(va(src), va(dst), 1 * MiB)))
    return p, fence, out, dst


@pytest.mark.parametrize("idle", [False, True], ids=["concurrent", "PageTableUpdateRequireAddressSpaceIdle"])
def test_ptes_of_a_busy_address_space_change_only_once_its_contexts_are_idle_if_the_driver_asks(idle: bool) -> None:
    from wddmsim.hw.events import DmaBufferCompleted, DmaBufferStarted, PacketExecuted
    from wddmsim.hw.gpu import COMPUTE_ENGINE, PAGING_ENGINE

    from .test_work import va

    w = World(driver_options={"page_table_update_requires_idle": idle})
    p, fence, _, _ = _long_copy(w, w.device)
    assert w.vidmm.va is not None
    extra = w.buffer(64 * KiB, device=p.device)
    w.make_resident(extra, queue=p.queue)
    start = len(w.adapter.events)
    mapped = w.vidmm.va.mappings.map(p.space, extra).va  # new tables and entries for the busy process
    w.settle()
    events = w.adapter.events.since(start)
    w.vidmm.work.wait(p.context, FenceValue(fence))
    work_done = next(e.time for e in w.adapter.events if isinstance(e, DmaBufferCompleted) and e.engine == 1)
    writes = [
        e.time
        for e in events
        if isinstance(e, PacketExecuted) and e.engine == PAGING_ENGINE and e.opcode == "WRITEQWORDS"
    ]
    assert writes
    if idle:
        assert min(writes) >= work_done, "the paging engine touched the tables only after the work completed"
        assert any(isinstance(e, AddressSpaceSuspended) for e in events)
    else:
        assert min(writes) < work_done, "without the cap the tables change while the work runs"
        assert not any(isinstance(e, AddressSpaceSuspended) for e in events)
    from wddmsim.hw import commands as cmd

    start = len(w.adapter.events)
    again = w.vidmm.work.submit(p.context, cmd.encode(cmd.Fill(va(mapped), 4096, 0x5A5A5A5A)))
    events = w.adapter.events.since(start)
    w.vidmm.work.wait(p.context, again)
    if idle:
        resumed = [i for i, e in enumerate(events) if isinstance(e, AddressSpaceResumed)]
        started = [i for i, e in enumerate(w.adapter.events.since(start)) if isinstance(e, DmaBufferStarted)]
        assert resumed and started and resumed[0] < started[0], "the contexts resumed before the next buffer"
    assert bytes(w.read(extra, 0, 4)) == b"\x5a" * 4
    assert COMPUTE_ENGINE == 1


# --- trees that move --------------------------------------------------------------------------------------


def test_an_idle_process_tables_leave_under_pressure_and_come_back_before_its_work_runs() -> None:
    """wddm-spec 2.6: page tables move only while their device is idle; the parents (and, for a root,
    SetRootPageTable) follow them."""
    from wddmsim.hw import commands as cmd
    from wddmsim.vidmm.events import PageTablesEvicted, PageTablesRestored

    from .test_work import Proc, va

    w = World()
    a, fence, a_out, a_dst = _long_copy(w)  # process A: busy for a while
    a_data = w.buffer(64 * KiB, device=a.device)
    w.make_resident(a_data, queue=a.queue)
    w.write(a_data, pattern(a_data.size, 20))
    assert w.vidmm.va is not None
    a_va = w.vidmm.va.mappings.map(a.space, a_data, base=0x80_0000_0000).va  # more of A's tables
    b = Proc(w)
    seg = w.vidmm.spaces.get(2)
    filler = w.buffer(seg.ranges.free_bytes, device=b.device)  # B fills the rest of the local segment
    w.make_resident(filler, queue=b.queue)
    b_data = w.buffer(64 * KiB, device=b.device, usage=AllocationUsage.APERTURE_ONLY)
    w.make_resident(b_data, queue=b.queue)
    start = len(w.adapter.events)
    w.vidmm.va.mappings.map(b.space, b_data, base=0x40_0000_0000)  # B needs new tables: only A's can make room
    w.settle()
    evicted = [e for e in w.adapter.events.since(start) if isinstance(e, PageTablesEvicted)]
    assert [e.process for e in evicted] == [int(a.device.process.handle)]
    assert a.space.evicted and not a.space.tables
    from wddmsim.hw.events import DmaBufferCompleted

    a_done = next(e for e in w.adapter.events if isinstance(e, DmaBufferCompleted) and e.engine == 1)
    assert a_done.time <= evicted[0].time, "A's work completed before its tables moved"
    assert not any(isinstance(o, ProcessTable) and o.space is a.space for _, _, o in seg.held()), "A's ranges freed"
    w.vidmm.work.wait(a.context, FenceValue(fence))
    # A runs again: its tables come back first, at new places, and its context follows its root.
    start = len(w.adapter.events)
    done = w.vidmm.work.submit(a.context, cmd.encode(cmd.Copy(va(a_va), va(a_dst), 64 * KiB)))
    w.vidmm.work.wait(a.context, done)
    assert any(isinstance(e, PageTablesRestored) for e in w.adapter.events.since(start))
    assert not a.space.evicted
    new_root = root_of(w, a.space)
    assert reference_driver(w.adapter.driver).context_roots[a.context] == (new_root, a.space.root_entries)
    assert np.array_equal(w.read(a_out, 0, 64 * KiB), pattern(a_data.size, 20))
    for space in (a.space, b.space):
        if not space.evicted:
            problems = check_page_tables(
                w.adapter.gpu, root_of(w, space), MemoryRanges.of(w.adapter.driver), root_entries=space.root_entries
            )
            assert not problems, problems
    w.check()


def test_an_idle_process_tables_stay_when_their_leaving_could_not_make_the_room() -> None:
    """Decision 0218: pressure the idle trees cannot relieve (they hold a few KiB; the request needs 1 MiB) makes
    no tree leave -- before, every idle tree left for nothing and came back before its next work.  A request
    their leaving does serve still takes them (least recently used first)."""
    from wddmsim.vidmm.events import PageTablesEvicted

    from .test_work import Proc

    w = World()
    a, fence, _, _ = _long_copy(w)  # process A: its tables in the local segment
    w.vidmm.work.wait(a.context, FenceValue(fence))  # ... and idle
    b = Proc(w)
    seg = w.vidmm.spaces.get(2)

    def a_tables() -> list[ProcessTable]:
        return [o for _, _, o in seg.held() if isinstance(o, ProcessTable) and o.space is a.space]

    tables = a_tables()
    assert tables and sum(t.size for t in tables) < 1 * MiB
    filler = w.buffer(seg.ranges.free_bytes, device=b.device)  # B fills the rest of the local segment
    w.make_resident(filler, queue=b.queue)
    assert seg.ranges.free_bytes < 1 * MiB
    big = w.buffer(1 * MiB, device=b.device)
    assert w.vidmm.va is not None
    start = len(w.adapter.events)
    assert w.vidmm.va.evict_idle_tables(seg, 1 * MiB, big, 0, False, list) == (None, False)
    assert not [e for e in w.adapter.events.since(start) if isinstance(e, PageTablesEvicted)]
    assert not a.space.evicted and a_tables() == tables
    fits = [
        n * PAGE_SIZE
        for n in range(1, 1 * MiB // PAGE_SIZE)
        if seg.fits_after_freeing(n * PAGE_SIZE, [t.offset for t in tables])
    ]
    assert fits and not seg.fits_after_freeing(fits[-1], [])  # A's tables leaving is what makes this one fit
    offset, left = w.vidmm.va.evict_idle_tables(seg, fits[-1], big, 0, False, list)
    assert offset is not None and left and a.space.evicted and not a_tables()
    assert [e.process for e in w.adapter.events.since(start) if isinstance(e, PageTablesEvicted)] == [
        int(a.device.process.handle)
    ]
    seg.free(offset)
    w.check()


def _tree_beside_filler(w: World) -> tuple[Any, Any, Any, list[ProcessTable]]:
    """B first (its root at the top of the local segment), then A with a copy done: A's idle tree sits right below
    B's root, above the rest of the segment, which B's filler takes."""
    from .test_work import Proc

    b = Proc(w)
    a, fence, _, _ = _long_copy(w)
    w.vidmm.work.wait(a.context, FenceValue(fence))
    seg = w.vidmm.spaces.get(2)
    tables = [o for _, _, o in seg.held() if isinstance(o, ProcessTable) and o.space is a.space]
    filler = w.buffer(seg.ranges.free_bytes, device=b.device)
    w.make_resident(filler, queue=b.queue)
    return a, b, filler, tables


@pytest.mark.parametrize("protect_a", [True, False], ids=["A's allocations needed", "A's allocations evictable"])
def test_an_idle_tree_beside_an_evictable_allocation_leaves_when_both_make_the_room(protect_a: bool) -> None:
    """Decision 0218: the trees' tables count with the allocations that may leave for the same request.  B asks
    for its filler's room plus A's tables: only the filler and A's tree together make it (A's allocations in the
    segment needed by the same request), so the tree leaves; when A's allocations may leave too, they make the
    room and the tree stays where it is."""
    from wddmsim.vidmm.events import PageTablesEvicted
    from wddmsim.vidmm.move_kinds import MoveCause

    w = World()
    a, b, filler, tables = _tree_beside_filler(w)
    seg = w.vidmm.spaces.get(2)
    a_here = {
        o.handle for _, _, o in seg.held() if isinstance(o, VidMmAllocation) and o.device.process is a.device.process
    }
    assert a_here, "A has an allocation in the segment"
    big = w.buffer(filler.size + sum(t.size for t in tables), device=b.device)
    start = len(w.adapter.events)
    protected = set(a_here) if protect_a else set()
    assert w.vidmm.residency.placement.place(big, protected, cause=MoveCause.PRESSURE)
    assert big.placement is not None and big.placement.segment_id == 2
    evicted = [e.process for e in w.adapter.events.since(start) if isinstance(e, PageTablesEvicted)]
    assert evicted == ([int(a.device.process.handle)] if protect_a else [])
    assert a.space.evicted == protect_a
    w.check()


def test_a_freed_tables_window_is_not_handed_out_while_operations_built_before_may_name_it() -> None:
    """The CPU maps a table's paging-process window at once: reusing the window of a freed table while earlier
    operations naming it are still queued would send those writes to the new table (found by the random model:
    a replaced root's window, remapped onto an allocation's old pages before its transfer out ran)."""
    t = Tables(World())
    a = t.resident(64 * KiB, 30, usage=AllocationUsage.APERTURE_ONLY)  # system pages: 4 KB entries
    va = t.map(a, 0x4000_0000)
    leaf = t.space.tables[(0, va >> 21)]
    window = leaf.window
    t.free(va, a.size)  # the leaf goes: its window is retired, not reused
    assert window - t.va.tables.window_base in t.va.tables.retired
    again = t.map(a, 0x4000_0000)
    assert t.space.tables[(0, again >> 21)].window != window
    assert t.reads(again, a, 30)
    t.check()


# --- the 64 KB phase of VAs VidMm chooses (decision 0040) -------------------------------------------------


@pytest.mark.parametrize("offset_pages", [0, 1, 5, 15, 16, 17, 31])
def test_a_va_vidmm_chooses_keeps_the_64_kb_phase_of_the_pages_it_maps(offset_pages: int) -> None:
    """Pages of a ``Use64KBPages`` segment are mapped with VA and PA sharing 64 KB alignment (wddm-spec section
    2.5, DOC:gpu-virtual-address.md): the VA VidMm picks sits as far past a 64 KB boundary as the first page sits
    in the allocation, so whole 64 KB pages inside the range get 64 KB entries whatever ``OffsetInPages`` is."""
    t = Tables(World(driver_options={"cpu_visible_64k_pages": True}))
    a = t.resident(512 * KiB, 12)
    assert a.placement is not None and t.w.vidmm.spaces.get(a.placement.segment_id).descriptor.Flags.Use64KBPages
    count = 40
    va = t.map(a, 0, OffsetInPages=offset_pages, SizeInPages=count)
    assert va % (64 * KiB) == offset_pages * 4 * KiB % (64 * KiB)
    mmu, root = t.w.adapter.gpu.mmu, root_of(t.w, t.space)
    kinds = []
    for page in range(count):
        walk = mmu.walk(root, va + page * 4 * KiB, root_entries=t.space.root_entries)
        assert walk.address is not None and walk.address % (64 * KiB) == (va + page * 4 * KiB) % (64 * KiB)
        kinds.append(walk.steps[-1].kind)
    whole = [p for p in range(count) if (offset_pages + p) % 16 == 0 and p + 16 <= count]
    assert whole and all(kinds[p] == "leaf64k" for p in whole), kinds
    data = gpu_read(t.w, t.space, va, count * 4 * KiB)
    assert np.array_equal(data, pattern(a.size, 12)[offset_pages * 4 * KiB : (offset_pages + count) * 4 * KiB])
    t.check()


def test_without_room_for_the_64_kb_phase_any_free_range_in_the_bounds_is_taken() -> None:
    t = Tables(World(driver_options={"cpu_visible_64k_pages": True}))
    a = t.resident(128 * KiB, 13)
    lo = 0x1000_0000
    va = t.map(a, 0, OffsetInPages=1, SizeInPages=8, MinimumAddress=lo, MaximumAddress=lo + 8 * 4 * KiB)
    assert va == lo, "the bounds leave exactly the range's size: 4 KB entries, phase lost"
    assert np.array_equal(gpu_read(t.w, t.space, va, 8 * 4 * KiB), pattern(a.size, 13)[4 * KiB : 9 * 4 * KiB])
    t.check()


# --- hAllocation and AllocationOffsetInBytes of leaf updates ----------------------------------------------


class _LeafUpdateChecker(DelegatingDriver):
    """Checks each ``UpdatePageTable`` as VidMm builds it: entries naming pages of ``hAllocation`` map its pages
    in order from ``AllocationOffsetInBytes`` (4 KB entries one page apart, 64 KB entries sixteen), wherever
    VidMm has the allocation at that moment (wddm-spec section 2.5)."""

    def __init__(self, inner: KernelModeDriver) -> None:
        super().__init__(inner)
        self.vidmm: VideoMemoryManager | None = None
        self.named = 0
        self.problems: list[str] = []

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        p = args.payload
        if (
            self.vidmm is not None
            and args.MultipassOffset == 0
            and isinstance(p, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE)
        ):
            self._check(p)
        return super().build_paging_buffer(args)

    def _check(self, p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE) -> None:
        assert self.vidmm is not None
        entries = p.pPageTableEntries[: p.NumPageTableEntries]
        valid = (entries["Flags"] & 1) != 0
        if not p.hAllocation:
            return
        self.named += 1
        a = self.vidmm.residency.allocations[p.hAllocation]
        step = 16 if p.Flags.Use64KBPages else 1
        pages = p.AllocationOffsetInBytes // PAGE_SIZE + step * np.arange(entries.shape[0])
        if p.AllocationOffsetInBytes % PAGE_SIZE or int(pages[-1]) >= a.size // PAGE_SIZE:
            self.problems.append(f"{p.AllocationOffsetInBytes=:#x} with {entries.shape[0]} entries leaves {a!r}")
            return
        got = entries["PageAddress"].astype(np.int64)[valid]
        places = []  # where the pages may be named: its backing pages, its segment range (scratch: either side)
        if a.backing is not None:
            places.append(a.backing.pfns[pages].astype(np.int64)[valid])
        if a.placement is not None and not self.vidmm.spaces.get(a.placement.segment_id).aperture:
            places.append((a.placement.offset // PAGE_SIZE + pages)[valid])
        if not any(np.array_equal(got, want) for want in places):
            self.problems.append(f"{a!r}: entries {got.tolist()} for pages {pages[valid].tolist()}")


@pytest.mark.parametrize("mode", ["dual", "single-64k"])
def test_leaf_updates_name_the_allocation_and_the_offset_of_their_first_page(mode: str) -> None:
    checkers: list[_LeafUpdateChecker] = []

    def wrap(driver: object) -> KernelModeDriver:
        checkers.append(_LeafUpdateChecker(cast(KernelModeDriver, driver)))
        return checkers[0]

    extra: dict[str, Any] = SINGLE if mode == "single-64k" else {"driver_options": {"cpu_visible_64k_pages": True}}
    t = Tables(World(wrap_driver=wrap, **extra))
    checker = checkers[0]
    checker.vidmm = t.w.vidmm
    a = t.resident(512 * KiB, 14)
    b = t.resident(128 * KiB, 15, usage=AllocationUsage.APERTURE_ONLY)
    vas = [
        t.map(a, 0, OffsetInPages=3, SizeInPages=40),
        t.map(a, 0x4000_0000, OffsetInPages=16, SizeInPages=64),
        t.map(b, 0, OffsetInPages=1, SizeInPages=20),
    ]
    t.w.evict(a)
    t.w.make_resident(a)
    t.free(vas[2], 20 * PAGE_SIZE)
    assert checker.named >= 4 and not checker.problems, checker.problems
    data = gpu_read(t.w, t.space, vas[1], 64 * PAGE_SIZE)
    assert np.array_equal(data, pattern(a.size, 14)[16 * PAGE_SIZE : 80 * PAGE_SIZE])
    t.check()


# --- the paging process's windows onto process tables (decision 0202) ---------------------------------------


def test_windows_of_freed_tables_are_handed_out_again_so_the_paging_process_tables_stay_bounded() -> None:
    """Every table VidMm frees leaves a retired window in the paging process; after ``RETIRED_WINDOWS`` of them
    VidMm waits once and hands them out again, so the windows in use -- and the paging process's own page tables
    that map them -- stay bounded however many tables come and go."""
    from wddmsim.vidmm.paging.process import PageTableTag
    from wddmsim.vidmm.vaspace.placement import RETIRED_WINDOWS
    from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT

    t = Tables(World())
    a = t.resident(64 * KiB, 1)
    tables = t.va.tables

    def paging_process_tables() -> int:
        return sum(isinstance(owner, PageTableTag) for segment in t.w.vidmm.spaces for _, _, owner in segment.held())

    highs, tags = [], []
    for i in range(3 * RETIRED_WINDOWS):
        base = 0x4000_0000 + (i % 8) * 0x4000_0000  # a fresh level-2 range each time: three new tables, freed after
        va = t.map(a, base)
        assert t.reads(va, a, 1)
        t.free(va, a.size)
        highs.append(tables.window_high)
        tags.append(paging_process_tables())
        assert len(tables.retired) < RETIRED_WINDOWS + 8  # reclaimed at the next window handed out
    t.check()
    assert highs[-1] <= (RETIRED_WINDOWS + 16) * VA_ALIGNMENT, "windows were handed out again, low in the region"
    assert max(highs[len(highs) // 2 :]) == max(highs[: len(highs) // 2]), "no new high water mark once reused"
    assert max(tags[len(tags) // 2 :]) == max(tags[: len(tags) // 2]), "the paging process's tables stopped growing"
