"""UpdateGpuVirtualAddress (tiled resources): MAP, UNMAP, COPY and MAP_PROTECT, the fence protocol (wait for
FenceValue unless DoNotWait, apply in order, signal FenceValue + 1), tiling repeats, CopyPageTableEntries when the
GPU updates tables and UpdatePageTable when the CPU does, and the rules of one call."""

from __future__ import annotations

from typing import Any

import pytest

from wddmsim.core.addresses import FenceValue
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.ddi.va import D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE as T
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.memsys import read_runs
from wddmsim.vidmm.events import PagingOperation

from .test_vaspace import root_of
from .world import World, pattern

P = D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE


class Tiles:
    def __init__(self, mode: DXGK_PAGETABLEUPDATEMODE | None = None, **world: Any) -> None:
        self.w = World(update_mode=mode, **world)
        assert self.w.vidmm.va is not None
        self.va = self.w.vidmm.va
        self.space = self.va.create_space(self.w.process)
        self.context = self.w.vidmm.create_context(self.w.device)
        self.sync = self.w.rm.create_sync_object(self.w.device)
        self.pool = self.w.buffer(256 * KiB)  # a tile pool
        self.w.make_resident(self.pool)
        self.w.write(self.pool, pattern(self.pool.size, 1))
        args = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=self.w.queue.handle, Size=4 * MiB)
        assert self.va.reserve(args) == HRESULT.S_OK
        self.base = args.VirtualAddress
        self.other = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=self.w.queue.handle, Size=1 * MiB)
        self.va.reserve(self.other)

    def update(self, *ops: Any, fence: int = 0, wait: bool = True, **fields: Any) -> None:
        operations = tuple(D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(OperationType=t, payload=p) for t, p in ops)
        fence = fields.pop("FenceValue", fence)
        self.va.update_gpu_va(
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=self.context,
                hFenceObject=self.sync.handle,
                NumOperations=fields.pop("NumOperations", len(operations)),
                Operations=operations,
                FenceValue=fence,
                Flags=D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS(DoNotWait=not wait),
                **fields,
            )
        )
        self.settle()

    def settle(self) -> None:
        """What the application does before using the VAs: wait until the fence the update signals (on the
        paging companion) is reached -- here, until the GPU is idle."""
        self.w.settle()
        self.w.vidmm.scheduler.wait_idle()

    def map(self, offset: int, size: int, pool_offset: int = 0, pool_size: int = 0) -> tuple[T, Any]:
        return T.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP, D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(
            BaseAddress=self.base + offset,
            SizeInBytes=size,
            hAllocation=self.pool.handle,
            AllocationOffsetInBytes=pool_offset,
            AllocationSizeInBytes=pool_size,
        )

    def read(self, offset: int, size: int = 4096, access: AccessKind = AccessKind.READ) -> bytes:
        runs = self.w.adapter.gpu.mmu.translate(root_of(self.w, self.space), self.base + offset, size, access)
        return read_runs(runs).tobytes()

    def pool_bytes(self, offset: int, size: int = 4096) -> bytes:
        return pattern(self.pool.size, 1)[offset : offset + size].tobytes()


def test_map_applies_when_the_fence_allows_and_signals_the_next_value() -> None:
    t = Tiles()
    t.update(t.map(0, 64 * KiB, 64 * KiB))
    assert t.sync.fence.value == 1
    assert t.read(0, 64 * KiB) == t.pool_bytes(64 * KiB, 64 * KiB)


def test_an_update_waits_for_its_fence_value_and_a_cpu_signal_releases_it() -> None:
    t = Tiles()
    t.update(t.map(0, 64 * KiB), fence=5)
    with pytest.raises(GpuFault):
        t.read(0)  # not applied: the fence is at 0
    t.w.rm.signal_from_cpu(t.sync.handle, FenceValue(5))
    t.settle()
    assert t.read(0) == t.pool_bytes(0)
    assert t.sync.fence.value == 6


def test_do_not_wait_applies_at_once_and_its_signal_releases_earlier_waiters() -> None:
    t = Tiles()
    t.update(t.map(0, 64 * KiB), fence=5)
    t.update(t.map(64 * KiB, 64 * KiB, 64 * KiB), fence=5, wait=False)
    assert t.read(64 * KiB) == t.pool_bytes(64 * KiB), "DoNotWait applied at once"
    assert t.read(0) == t.pool_bytes(0), "it signalled 6, which released the update waiting for 5"
    assert t.sync.fence.value == 6


def test_a_chain_of_updates_runs_in_fence_order() -> None:
    t = Tiles()
    t.update(t.map(0, 64 * KiB, 128 * KiB), fence=1)  # waits for 1, which the next update signals
    t.update(t.map(0, 64 * KiB, 0), fence=0)  # applies at once and signals 1: the first follows it
    assert t.sync.fence.value == 2
    assert t.read(0) == t.pool_bytes(128 * KiB), "the waiting update ran second"


def test_tiling_repeats_one_pool_range_over_consecutive_va_ranges() -> None:
    t = Tiles()
    t.update(t.map(0, 256 * KiB, 64 * KiB, 64 * KiB))
    for k in range(4):
        assert t.read(k * 64 * KiB, 64 * KiB) == t.pool_bytes(64 * KiB, 64 * KiB)


def test_unmap_to_zero_and_to_no_access() -> None:
    t = Tiles()
    t.update(t.map(0, 128 * KiB))
    t.update(
        (
            T.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
            D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP(BaseAddress=t.base, SizeInBytes=64 * KiB, Protection=P(Zero=True)),
        ),
        (
            T.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
            D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP(
                BaseAddress=t.base + 64 * KiB, SizeInBytes=64 * KiB, Protection=P(NoAccess=True)
            ),
        ),
    )
    assert t.read(0) == bytes(4096)
    with pytest.raises(GpuFault):
        t.read(64 * KiB)


@pytest.mark.parametrize(
    "mode", list(DXGK_PAGETABLEUPDATEMODE), ids=lambda m: m.name.removeprefix("DXGK_PAGETABLEUPDATE_")
)
def test_copy_copies_mappings_and_the_copy_follows_the_pool_when_it_moves(mode: DXGK_PAGETABLEUPDATEMODE) -> None:
    t = Tiles(mode)
    t.update(t.map(0, 64 * KiB, 64 * KiB))
    before = len(t.w.adapter.events.of_type(PagingOperation))
    t.update(
        (
            T.D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
            D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY(
                SourceAddress=t.base, SizeInBytes=128 * KiB, DestAddress=t.base + 2 * MiB
            ),
        )
    )
    ops = [e.operation for e in t.w.adapter.events.of_type(PagingOperation)[before:]]
    by_gpu = mode != DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
    assert ("DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES" in ops) == by_gpu
    assert t.read(2 * MiB, 64 * KiB) == t.pool_bytes(64 * KiB, 64 * KiB)
    with pytest.raises(GpuFault):
        t.read(2 * MiB + 64 * KiB)  # the source's unmapped tail was copied as NoAccess
    t.w.evict(t.pool)
    t.w.make_resident(t.pool)
    t.w.settle()
    assert t.read(2 * MiB, 64 * KiB) == t.pool_bytes(64 * KiB, 64 * KiB), "re-pointed after the move"


def test_map_protect_sets_the_rights() -> None:
    t = Tiles()
    t.update(
        (
            T.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
            D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT(
                BaseAddress=t.base, SizeInBytes=64 * KiB, hAllocation=t.pool.handle, Protection=P()
            ),
        )
    )
    t.read(0)
    with pytest.raises(GpuFault):
        t.read(0, access=AccessKind.WRITE)


def test_bad_updates_are_refused_whole() -> None:
    t = Tiles()
    foreign = t.w.buffer(64 * KiB, device=t.w.rm.create_device(t.w.rm.create_process()))
    cases: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        ((t.map(0, 64 * KiB),), {"NumOperations": 2}, r"NumOperations=0x2: must be positive and match"),
        ((), {}, r"NumOperations=0x0"),
        ((t.map(0, 64 * KiB),), {"Reserved0": 1}, r"reserved fields must be zero"),
        ((t.map(0, 64 * KiB),), {"FenceValue": (1 << 64) - 1}, r"FenceValue \+ 1 must still be a UINT64"),
        (((T.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP, t.map(0, 64 * KiB)[1]),), {}, r"OperationType=0x1: must be MAP"),
        (((7, t.map(0, 64 * KiB)[1]),), {}, r"OperationType=0x7"),
        ((t.map(4 * KiB + 8, 64 * KiB),), {}, r"BaseAddress=0x[0-9a-f]+: must be 4 KB aligned"),
        ((t.map(0, 0),), {}, r"SizeInBytes=0x0: must not be zero"),
        ((t.map(4 * MiB - 64 * KiB, 128 * KiB),), {}, r"must lie in one range obtained from Reserve"),
        ((t.map(0, 192 * KiB, 0, 128 * KiB),), {}, r"must be a multiple of AllocationSizeInBytes=0x20000"),
        ((t.map(0, 64 * KiB, 256 * KiB),), {}, r"AllocationOffsetInBytes=0x40000: 0x10000 bytes from it leave"),
        (
            (
                (
                    T.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
                    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(
                        BaseAddress=t.base, SizeInBytes=4096, hAllocation=foreign.handle
                    ),
                ),
            ),
            {},
            r"is not an allocation of the process",
        ),
        (
            (
                (
                    T.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
                    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP(
                        BaseAddress=t.base, SizeInBytes=4096, Protection=P(Zero=True, NoAccess=True)
                    ),
                ),
            ),
            {},
            r"UNMAP takes exactly one of Zero and NoAccess",
        ),
        (
            (
                t.map(0, 64 * KiB),
                (
                    T.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
                    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP(
                        BaseAddress=t.other.VirtualAddress, SizeInBytes=4096, Protection=P(Zero=True)
                    ),
                ),
            ),
            {},
            r"all ranges of one call must lie in one reserved range",
        ),
    ]
    for ops, fields, message in cases:
        regions = {r.base: len(r.mappings) for r in t.space.regions.values()}
        value = t.sync.fence.value
        with pytest.raises(InvalidArgument, match=message):
            t.update(*ops, **fields)
        assert {r.base: len(r.mappings) for r in t.space.regions.values()} == regions, message
        assert t.sync.fence.value == value
    with pytest.raises(InvalidArgument, match="hContext=0x1234: is not a live context"):
        t.va.update_gpu_va(
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=HANDLE(0x1234), hFenceObject=t.sync.handle, NumOperations=0, Operations=()
            )
        )
    t.w.rm.signal_from_cpu(t.sync.handle, FenceValue(5))
    with pytest.raises(InvalidArgument, match="Value=0x0: a monitored fence only grows"):
        t.w.rm.signal_from_cpu(t.sync.handle, FenceValue(0))


def test_a_tile_pool_referenced_by_a_queued_update_stays_resident_until_it_runs() -> None:
    t = Tiles()
    t.w.evict(t.pool)
    assert t.pool.placement is None and t.pool.residency_count == 0
    t.update(t.map(0, 64 * KiB), fence=3)  # queued: the fence is at 0
    assert t.w.rm.where(t.pool.handle).kind != "system", "VidMm made it resident for the queued update"
    assert t.w.rm.where(t.pool.handle).residency_count == 1
    t.w.rm.signal_from_cpu(t.sync.handle, FenceValue(3))
    t.w.settle()
    assert t.w.rm.where(t.pool.handle).residency_count == 0, "released once the update ran"
    assert t.read(0) == t.pool_bytes(0)


# --- the paging companion and the privileged VA space ------------------------------------------------------


def _priv_read(t: Tiles, va: int, size: int) -> bytes:
    priv = t.space.privileged
    assert priv is not None
    runs = t.w.adapter.gpu.mmu.translate(root_of(t.w, priv), va, size, AccessKind.READ)
    return read_runs(runs).tobytes()


def test_the_first_reserve_creates_a_privileged_space_mapping_the_tables_the_tile_pools_and_the_fences() -> None:
    from wddmsim.testing.invariants import MemoryRanges, check_page_tables

    w = World()
    assert w.vidmm.va is not None
    space = w.vidmm.va.create_space(w.process)
    assert space.privileged is None, "no tiled resources yet"
    t = Tiles()
    priv = t.space.privileged
    assert priv is not None and priv.owner is t.space
    t.update(t.map(0, 64 * KiB, 64 * KiB))
    assert t.pool.handle in priv.pools
    for table in t.va.tables.all_tables(t.space):  # every table of the application space, at its privileged VA
        assert table.privileged is not None
        walk = t.w.adapter.gpu.mmu.walk(root_of(t.w, priv), table.privileged.base)
        assert walk.address == t.w.vidmm.spaces.get(table.segment_id).base + table.offset, table
    assert _priv_read(t, priv.pools[t.pool.handle], 4096) == t.pool_bytes(0)
    fence = _priv_read(t, priv.fence_base + t.sync.fence.offset, 8)
    assert int.from_bytes(fence, "little") == t.sync.fence.value == 1
    t.w.evict(t.pool)
    t.w.make_resident(t.pool)  # the pool moved: its privileged mapping followed it
    t.settle()
    assert _priv_read(t, priv.pools[t.pool.handle] + 64 * KiB, 4096) == t.pool_bytes(64 * KiB)
    problems = check_page_tables(t.w.adapter.gpu, root_of(t.w, priv), MemoryRanges.of(t.w.adapter.driver))
    assert not problems, problems


def test_updates_run_on_the_contexts_paging_companion_which_copies_the_pool_entries() -> None:
    from typing import cast

    from wddmsim.ddi.driver import KernelModeDriver
    from wddmsim.ddi.paging import (
        DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
        DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    )
    from wddmsim.hw.gpu import PAGING_ENGINE
    from wddmsim.testing.fakes import PayloadRecorder

    recorders: list[PayloadRecorder] = []

    def wrap(driver: object) -> KernelModeDriver:
        recorders.append(PayloadRecorder(cast(KernelModeDriver, driver)))
        return recorders[0]

    t = Tiles.__new__(Tiles)
    t.w = World(wrap_driver=wrap)
    assert t.w.vidmm.va is not None
    t.va = t.w.vidmm.va
    t.space = t.va.create_space(t.w.process)
    t.context = t.w.vidmm.create_context(t.w.device)
    t.sync = t.w.rm.create_sync_object(t.w.device)
    t.pool = t.w.buffer(256 * KiB)
    t.w.make_resident(t.pool)
    t.w.write(t.pool, pattern(t.pool.size, 1))
    args = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=t.w.queue.handle, Size=4 * MiB)
    t.va.reserve(args)
    t.base = args.VirtualAddress
    start = len(recorders[0].payloads)
    t.update(t.map(0, 128 * KiB, 64 * KiB))
    companion = t.va.updates.companions[t.context]
    priv = t.space.privileged
    assert priv is not None and priv.companions == [companion.context]
    driver = reference_driver(t.w.adapter.driver)
    assert driver.contexts[companion.context] == PAGING_ENGINE, "PagingCompanionNodeId: the paging engine"
    assert driver.context_roots[companion.context][0] == root_of(t.w, priv), "it runs in the privileged space"
    ops = recorders[0].payloads[start:]
    copies = [p for p in ops if isinstance(p, DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES)]
    assert copies, "a MAP copies the tile pool's entries"
    quarter = t.va.va_size // 4
    for copy in copies:
        for r in copy.pRanges:
            assert 2 * quarter <= r.SrcPageTableAddress < 3 * quarter, "tables named by privileged VA"
            assert 2 * quarter <= r.DstPageTableAddress < 3 * quarter
    (signal,) = [p for p in ops if isinstance(p, DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE)]
    assert signal.MonitoredFenceGpuVa == priv.fence_base + t.sync.fence.offset and signal.MonitoredFenceValue == 1
    assert t.sync.fence.value == 1
    assert t.read(0, 128 * KiB) == t.pool_bytes(64 * KiB, 128 * KiB)


def test_a_cpu_virtual_gpu_has_no_companion() -> None:
    t = Tiles(DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL)
    t.update(t.map(0, 64 * KiB))
    assert t.va.updates.companions == {}
    assert t.read(0) == t.pool_bytes(0) and t.sync.fence.value == 1


def test_an_update_queued_for_a_range_freed_meanwhile_is_dropped() -> None:
    from wddmsim.ddi.va import D3DDDICB_FREEGPUVIRTUALADDRESS

    t = Tiles()
    t.update(t.map(0, 64 * KiB), fence=5)
    t.va.free_gpu_va(t.w.process, D3DDDICB_FREEGPUVIRTUALADDRESS(BaseAddress=t.base, Size=4 * MiB))
    t.w.rm.signal_from_cpu(t.sync.handle, FenceValue(5))
    t.settle()
    assert t.sync.fence.value == 6, "the fence is still signalled"
    with pytest.raises(GpuFault):
        t.read(0)  # nothing was mapped into the freed range
    assert t.space.region_at(t.base, 4096) is None


def _many(t: Tiles, count: int, first: int = 0) -> list[tuple[T, Any]]:
    return [t.map((first + k) * 4 * KiB, 4 * KiB, (k % 64) * 4 * KiB) for k in range(count)]


def test_more_than_128_queued_operations_make_the_caller_wait_for_earlier_ones() -> None:
    t = Tiles()
    args_first = _many(t, 100)
    t.va.update_gpu_va(_call(t, args_first, fence=0, wait=False))
    companion = t.va.updates.companions[t.context]
    ((first_fence, _),) = companion.in_flight
    scheduler = t.w.vidmm.scheduler
    assert not scheduler.is_complete(companion.node, first_fence), "a call does not wait by itself"
    t.va.update_gpu_va(_call(t, _many(t, 100, 100), fence=0, wait=False))  # 200 queued: more than 128
    assert scheduler.is_complete(companion.node, first_fence), "the caller waited for the oldest to run"
    assert companion.queued <= 128
    t.settle()
    assert t.read(150 * 4 * KiB) == t.pool_bytes(50 * 4 * KiB)


def test_a_call_that_would_block_forever_is_refused_and_changes_nothing() -> None:
    from wddmsim.ddi.status import NTSTATUS, DdiError

    t = Tiles()
    t.va.update_gpu_va(_call(t, _many(t, 100), fence=5, wait=True))
    companion = t.va.updates.companions[t.context]
    waiting = (companion.waiting, len(t.sync.waiting), len(t.space.regions[t.base].mappings))
    with pytest.raises(DdiError, match="NumOperations=40") as error:
        t.va.update_gpu_va(_call(t, _many(t, 40, 100), fence=5, wait=True))
    assert error.value.status == NTSTATUS.STATUS_POSSIBLE_DEADLOCK
    assert (companion.waiting, len(t.sync.waiting), len(t.space.regions[t.base].mappings)) == waiting
    t.w.rm.signal_from_cpu(t.sync.handle, FenceValue(5))  # the 100 run
    t.va.update_gpu_va(_call(t, _many(t, 40, 100), fence=5, wait=True))  # 6 >= 5: applied at once
    t.settle()
    assert t.read(120 * 4 * KiB) == t.pool_bytes(20 * 4 * KiB)


def _call(t: Tiles, ops: list[tuple[T, Any]], *, fence: int, wait: bool) -> D3DDDICB_UPDATEGPUVIRTUALADDRESS:
    operations = tuple(D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(OperationType=k, payload=p) for k, p in ops)
    return D3DDDICB_UPDATEGPUVIRTUALADDRESS(
        hContext=t.context,
        hFenceObject=t.sync.handle,
        NumOperations=len(operations),
        Operations=operations,
        FenceValue=fence,
        Flags=D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS(DoNotWait=not wait),
    )
