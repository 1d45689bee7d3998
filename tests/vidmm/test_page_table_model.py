"""Page tables under random histories: a Hypothesis state machine maps, frees, evicts, pages in and squeezes
two processes' allocations (large and 64 KiB-aligned ones among them) in a small local segment, so that page
tables are created, converted, freed, grown and shrunk, and whole trees leave under pressure and come back.
After every step ``check_page_tables`` holds for every tree in memory, the residency invariants hold, and a
mapping read through the GPU's MMU (as the process's work would, after VidMm brings its tables and its list
back) shows its allocation's bytes (decisions 0021, 0022)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.ddi.va import D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE as UpdateType
from wddmsim.hw.faults import AccessKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.memsys import read_runs
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.testing.tlb import TlbWatch, check_tlb
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue

from .test_vaspace import root_of
from .world import SMALL_GPU, World, pattern

RW = D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True)
TILED_SIZE = 4 * MiB
SIZES = [64 * KiB, 128 * KiB, 12 * KiB, 2 * MiB, 2 * MiB + 64 * KiB]
USAGES = [0, 0, 0, AllocationUsage.APERTURE_ONLY, AllocationUsage.NO_LARGE_PAGES]
BASES = [0x4000_0000, 0x4020_0000, 0x4021_0000, 0x4040_1000, 0x80_0000_0000, 0x7F_FFE0_0000]


def _gpu(**changes: Any) -> GpuConfig:
    fields = {
        "local_size": SMALL_GPU.local_size,
        "bar_size": SMALL_GPU.bar_size,
        "aperture_size": SMALL_GPU.aperture_size,
        "system_size": SMALL_GPU.system_size,
    }
    return GpuConfig(**(fields | changes))


CONFIGS: dict[str, dict[str, Any]] = {
    "dual-pte": {},
    "single-pte": {"gpu": _gpu(dual_pte=False), "driver_options": {"cpu_visible_64k_pages": True}},
    "two-level": {"gpu": _gpu(mmu_index_bits=(9, 12))},
    "explicit-idle": {
        "driver_options": {"explicit_page_table_invalidation": True, "page_table_update_requires_idle": True}
    },
    "cpu-virtual": {"update_mode": DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL},
}


class PageTableModel(RuleBasedStateMachine):
    """VidMm's VA spaces against a model: per process, its regions and which allocation page each VA page shows."""

    config: ClassVar[dict[str, Any]] = {}

    @initialize()
    def setup(self) -> None:
        self.w = World(**self.config)
        self.watch = TlbWatch(self.w.adapter)
        w = self.w
        self.procs: list[tuple[Device, PagingQueue]] = [(w.device, w.queue)]
        second = w.rm.create_device(w.rm.create_process())
        self.procs.append((second, w.new_queue(second)))
        assert w.vidmm.va is not None
        self.va = w.vidmm.va
        self.allocations: list[VidMmAllocation] = []
        self.contents: dict[int, ByteArray] = {}
        self.regions: dict[int, list[tuple[int, int]]] = {int(d.process.handle): [] for d, _ in self.procs}
        self.pages: dict[tuple[int, int], tuple[VidMmAllocation, int]] = {}
        """(process, page VA) -> (allocation, page index) it shows."""
        self.hogs: list[VidMmAllocation] = []
        self.seed = 0
        self.checked = 0
        # An opening that gives every run a large page and a 64 KB-page range to work on.
        self.create(0, 2 * MiB, 0)
        self.create(1, 128 * KiB, 0)
        for a, base in zip(self.allocations, (0x4000_0000, 0x4020_0000), strict=True):
            self._map(a, base, 0, a.size // PAGE_SIZE)
        self.contexts = [w.vidmm.create_context(device) for device, _ in self.procs]
        self.syncs = [w.rm.create_sync_object(device) for device, _ in self.procs]

    # --- helpers -----------------------------------------------------------------------------------------

    def _queue(self, device: Device) -> PagingQueue:
        return next(q for d, q in self.procs if d is device)

    def _drop(self, process: int, base: int, end: int) -> None:
        self.regions[process].remove((base, end))
        for page in range(base, end, PAGE_SIZE):
            self.pages.pop((process, page), None)

    # --- rules -----------------------------------------------------------------------------------------------

    @precondition(lambda self: len(self.allocations) < 10)
    @rule(proc=st.integers(0, 1), size=st.sampled_from(SIZES), usage=st.sampled_from(USAGES))
    def create(self, proc: int, size: int, usage: int) -> None:
        device, queue = self.procs[proc]
        a = self.w.buffer(size, usage=usage, device=device)
        result, _ = self.w.make_resident(a, queue=queue)
        if result == HRESULT.E_OUTOFMEMORY:  # nothing fits (pressure): refused, nothing changed
            self.w.rm.destroy_allocation(a.handle)
            return
        self.seed += 1
        self.contents[a.handle] = pattern(a.size, self.seed)
        self.w.write(a, self.contents[a.handle])
        self.allocations.append(a)

    @precondition(lambda self: self.allocations)
    @rule(data=st.data(), base=st.sampled_from([0, *BASES]))
    def map(self, data: st.DataObject, base: int) -> None:
        a = data.draw(st.sampled_from(self.allocations))
        total = a.size // PAGE_SIZE
        offset = min(data.draw(st.sampled_from([0, 0, 16, 1])), total - 1)
        pages = max(1, min(data.draw(st.sampled_from([total - offset, 1, 16])), total - offset))
        self._map(a, base, offset, pages)

    def _map(self, a: VidMmAllocation, base: int, offset: int, pages: int) -> None:
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=self._queue(a.device).handle,
            BaseAddress=base,
            hAllocation=a.handle,
            OffsetInPages=offset,
            SizeInPages=pages,
            Protection=RW,
        )
        try:
            result = self.va.map_gpu_va(args)
        except InvalidArgument:
            return  # the range is taken: refused, nothing changed
        assert result == HRESULT.E_PENDING
        self.w.rm.wait(self._queue(a.device), args.PagingFenceValue)
        process = int(a.device.process.handle)
        va = args.VirtualAddress
        end = va + pages * PAGE_SIZE
        if not any(lo <= va and end <= hi for lo, hi in self.regions[process]):
            self.regions[process].append((va, end))
        for i in range(pages):
            self.pages[(process, va + i * PAGE_SIZE)] = (a, offset + i)

    @precondition(lambda self: any(a.size >= 64 * KiB for a in self.allocations))
    @rule(data=st.data(), slot=st.integers(0, 63))
    def tile(self, data: st.DataObject, slot: int) -> None:
        """UpdateGpuVirtualAddress MAP of 64 KiB of a tile pool into the process's reservation (DoNotWait: its
        paging companion runs it at once)."""
        a = data.draw(st.sampled_from([a for a in self.allocations if a.size >= 64 * KiB]))
        proc = [d for d, _ in self.procs].index(a.device)
        process = int(a.device.process.handle)
        base = self.va.va_size // 8 + proc * TILED_SIZE
        if (base, base + TILED_SIZE) not in self.regions[process]:
            args = D3DDDI_RESERVEGPUVIRTUALADDRESS(
                hPagingQueue=self._queue(a.device).handle, BaseAddress=base, Size=TILED_SIZE
            )
            try:
                self.va.reserve(args)
            except InvalidArgument:
                return  # a Map took part of it
            self.regions[process].append((base, base + TILED_SIZE))
        offset = data.draw(st.integers(0, a.size // (64 * KiB) - 1)) * 64 * KiB
        va = base + slot * 64 * KiB
        op = D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(
            OperationType=UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
            payload=D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(
                BaseAddress=va, SizeInBytes=64 * KiB, hAllocation=a.handle, AllocationOffsetInBytes=offset
            ),
        )
        self.va.update_gpu_va(
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=self.contexts[proc],
                hFenceObject=self.syncs[proc].handle,
                NumOperations=1,
                Operations=(op,),
                Flags=D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS(DoNotWait=True),
            )
        )
        self.w.vidmm.scheduler.wait_idle()  # the application waits for the fence the companion signals
        for i in range(16):
            self.pages[(process, va + i * PAGE_SIZE)] = (a, offset // PAGE_SIZE + i)

    @precondition(lambda self: any(self.regions.values()))
    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        process, (base, end) = data.draw(st.sampled_from([(p, r) for p, rs in self.regions.items() for r in rs]))
        owner = next(d.process for d, _ in self.procs if int(d.process.handle) == process)
        self.va.free_gpu_va(owner, D3DDDICB_FREEGPUVIRTUALADDRESS(BaseAddress=base, Size=end - base))
        self._drop(process, base, end)

    @precondition(lambda self: any(a.residency_count for a in self.allocations))
    @rule(data=st.data())
    def evict(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from([a for a in self.allocations if a.residency_count]))
        self.w.evict(a)

    @precondition(lambda self: any(not a.residency_count for a in self.allocations))
    @rule(data=st.data())
    def make_resident(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from([a for a in self.allocations if not a.residency_count]))
        self.w.make_resident(a, queue=self._queue(a.device))

    @precondition(lambda self: any(not a.residency_count for a in self.allocations))
    @rule(data=st.data())
    def destroy(self, data: st.DataObject) -> None:
        """Destroying an allocation frees every range (region) it is mapped in."""
        a = data.draw(st.sampled_from([a for a in self.allocations if not a.residency_count]))
        self.w.rm.destroy_allocation(a.handle)
        self.allocations.remove(a)
        process = int(a.device.process.handle)
        for base, end in list(self.regions[process]):
            if any(self.pages.get((process, v), (None,))[0] is a for v in range(base, end, PAGE_SIZE)):
                self._drop(process, base, end)

    @precondition(lambda self: len(self.hogs) < 2)
    @rule(proc=st.integers(0, 1))
    def squeeze(self, proc: int) -> None:
        """Memory pressure: an allocation as large as the local segment's free room (pushing tables out)."""
        device, queue = self.procs[proc]
        room = self.w.vidmm.spaces.get(2).ranges.free_bytes // (64 * KiB) * (64 * KiB)
        if room < 64 * KiB:
            return
        hog = self.w.buffer(room, device=device)
        result, _ = self.w.make_resident(hog, queue=queue)
        if result == HRESULT.E_OUTOFMEMORY:
            self.w.rm.destroy_allocation(hog.handle)
            return
        self.hogs.append(hog)

    @precondition(lambda self: self.hogs)
    @rule()
    def release(self) -> None:
        hog = self.hogs.pop()
        self.w.evict(hog)
        self.w.rm.destroy_allocation(hog.handle)

    @precondition(lambda self: any(self.regions.values()))
    @rule(data=st.data())
    def run(self, data: st.DataObject) -> None:
        """What a process's work sees through one of its ranges: its tables and its list come back first; every
        page mapping an allocation of the list shows that allocation's bytes."""
        process, (base, end) = data.draw(st.sampled_from([(p, r) for p, rs in self.regions.items() for r in rs]))
        device = next(d for d, _ in self.procs if int(d.process.handle) == process)
        self.va.bring_back(device.process)
        try:
            self.w.rm.servicing.ensure_resident(device)
        except DdiError as error:
            if error.status != NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY:
                raise
            return
        self.va.resume(device.process)
        self.w.settle()
        space = self.va.create_space(device.process)
        assert not space.evicted
        for page in range(base, end, PAGE_SIZE):
            shown = self.pages.get((process, page))
            if shown is None or not shown[0].residency_count:
                continue
            a, index = shown
            runs = self.w.adapter.gpu.mmu.translate(
                root_of(self.w, space), page, PAGE_SIZE, AccessKind.READ, root_entries=space.root_entries
            )
            want = self.contents[a.handle][index * PAGE_SIZE : (index + 1) * PAGE_SIZE]
            assert np.array_equal(read_runs(runs), want), (
                f"VA {page:#x} of {process:#x} does not show {a!r} page {index}"
            )
            self.checked += 1

    # --- after every step ------------------------------------------------------------------------------------

    @invariant()
    def tables_hold(self) -> None:
        if not hasattr(self, "w"):
            return
        self.w.settle()
        ranges = MemoryRanges.of(self.w.adapter.driver)
        for app in self.va.spaces.values():
            for space in (app, app.privileged):
                if space is None or space.evicted:
                    continue
                problems = check_page_tables(
                    self.w.adapter.gpu, root_of(self.w, space), ranges, root_entries=space.root_entries
                )
                assert not problems, problems
        tlb = check_tlb(self.w.adapter) + self.watch.problems
        assert not tlb, tlb
        self.w.check()


def _run(config: str, examples: int, steps: int) -> None:
    machine = type(f"PageTables_{config.replace('-', '_')}", (PageTableModel,), {"config": CONFIGS[config]})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples, stateful_step_count=steps, deadline=None, suppress_health_check=list(HealthCheck)
        ),
    )


@pytest.mark.parametrize("config", ["dual-pte", "single-pte"])
def test_page_tables_hold_under_random_histories(config: str) -> None:
    _run(config, examples=10, steps=30)


@pytest.mark.slow
@pytest.mark.parametrize("config", list(CONFIGS))
def test_page_tables_hold_under_long_random_histories(config: str) -> None:
    _run(config, examples=50, steps=60)


class _Draws:
    """Replays the values Hypothesis drew for a shrunk failing example (allocations by handle)."""

    def __init__(self, machine: PageTableModel, values: list[Any]) -> None:
        self.machine = machine
        self.values = values

    def draw(self, strategy: object) -> Any:
        value = self.values.pop(0)
        if isinstance(value, tuple) and value[0] == "allocation":
            return next(a for a in self.machine.allocations if a.handle == value[1])
        return value


def _replay(config: str, draws: list[Any], steps: list[tuple[str, dict[str, Any]]]) -> None:
    machine = type("Replay", (PageTableModel,), {"config": CONFIGS[config]})()
    data = _Draws(machine, draws)
    machine.setup()
    machine.tables_hold()
    for name, arguments in steps:
        rule = getattr(machine, name)
        rule(**({"data": data} | arguments) if name in ("run", "free", "map", "evict", "tile") else arguments)
        machine.tables_hold()


A0, B0 = (0x4000000C, (0x4000_0000, 0x4020_0000)), (0x4000001C, (0x4020_0000, 0x4022_0000))


def test_regression_a_retired_window_is_not_remapped_under_queued_writes() -> None:
    """Found by the model (two-level, seed 102113246287127157937520587946901746739): a replaced root's window was
    handed to a new table and mapped by the CPU while writes for the old root were still queued."""
    region = (0x4000000C, (0x4040_1000, 0x4060_1000))
    draws: list[Any] = [A0, A0, A0, B0, B0, ("allocation", 4096), 0, 512, region, region]
    draws += [("allocation", 4192), 0, ("allocation", 4096), 0, region]
    _replay(
        "two-level",
        draws,
        [
            ("run", {}), ("run", {}), ("free", {}), ("create", {"proc": 1, "size": 65536, "usage": 0}),
            ("run", {}), ("free", {}), ("squeeze", {"proc": 1}), ("map", {"base": 0x4040_1000}),
            ("create", {"proc": 1, "size": 65536, "usage": 0}), ("release", {}), ("squeeze", {"proc": 0}),
            ("run", {}), ("run", {}), ("tile", {"slot": 62}), ("create", {"proc": 0, "size": 65536, "usage": 0}),
            ("tile", {"slot": 23}), ("squeeze", {"proc": 0}), ("release", {}), ("release", {}),
            ("squeeze", {"proc": 1}), ("run", {}),
        ],
    )  # fmt: skip


def test_regression_a_root_that_grows_while_its_replacement_is_placed_is_kept() -> None:
    """Found by the model (two-level): placing a bigger privileged root moved an allocation whose new table was
    mapped into the privileged space, writing past the end of the old, smaller root."""
    draws: list[Any] = [A0, A0, A0, B0, B0, ("allocation", 4096), 0, 512, ("allocation", 4160), 0]
    _replay(
        "two-level",
        draws,
        [
            ("run", {}), ("run", {}), ("free", {}), ("create", {"proc": 0, "size": 65536, "usage": 0}),
            ("run", {}), ("free", {}), ("squeeze", {"proc": 0}), ("map", {"base": 0}),
            ("create", {"proc": 0, "size": 65536, "usage": 0}), ("tile", {"slot": 18}),
        ],
    )  # fmt: skip


def test_regression_no_wait_between_a_dual_pte_change_and_its_flush() -> None:
    """Found by the model (dual-pte, seed 103902182134156018476246944783593777752): remapping the top 2 MiB of the
    VA space from 4 KB entries (a page-misaligned offset) to 64 KB entries invalidated the 4 KB entries, then
    created the range's first 64 KB leaf table -- placing it and mapping it into the privileged space waited for
    the paging engine, which went idle with the old 4 KB translations cached and their FlushTlb not yet built."""
    a, pool = ("allocation", 4096), ("allocation", 4112)
    top = 0x7F_FFE0_0000
    draws: list[Any] = [a, 0, 1, pool, 0, a, 1, 511, a, 0, (0x4000000C, (top, top + 2 * MiB)), a, 0, 16, A0]
    draws += [a, 0, a, 16, 496]
    _replay(
        "dual-pte",
        draws,
        [
            ("map", {"base": 0x4020_0000}), ("tile", {"slot": 31}), ("map", {"base": top}), ("tile", {"slot": 0}),
            ("run", {}), ("map", {"base": 0}), ("run", {}), ("tile", {"slot": 0}), ("map", {"base": top}),
        ],
    )  # fmt: skip
