"""ReserveGpuVirtualAddress / MapGpuVirtualAddress / FreeGpuVirtualAddress (seed 003, wddm-spec §3.1-3.6): every
field, the documented rules, the bad-input table of reliability-plan §5.3 (each refusal names the argument and
value, carries E_INVALIDARG, and changes nothing), protections through the GPU's MMU, and the paging fence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.status import HRESULT, NTSTATUS, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
    D3DGPU_UNIQUE_DRIVER_PROTECTION,
)
from wddmsim.hw.faults import AccessKind, GpuFault
from wddmsim.hw.memsys import read_runs, write_runs
from wddmsim.vidmm.vaspace import GpuVaSpace, GpuVaSpaces

from .test_vaspace import root_of
from .world import World, pattern

P = D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE
RW = P(Write=True)


class Va:
    def __init__(self) -> None:
        self.w = World()
        assert self.w.vidmm.va is not None
        self.va: GpuVaSpaces = self.w.vidmm.va
        self.space: GpuVaSpace = self.va.create_space(self.w.process)
        self.a = self.w.buffer(256 * KiB)
        self.w.make_resident(self.a)
        self.w.write(self.a, pattern(self.a.size, 1))

    def reserve(self, **fields: Any) -> D3DDDI_RESERVEGPUVIRTUALADDRESS:
        args = D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=self.w.queue.handle, **fields)
        if self.va.reserve(args) == HRESULT.E_PENDING:
            self.w.rm.wait(self.w.queue, args.PagingFenceValue)
        return args

    def map(self, **fields: Any) -> D3DDDI_MAPGPUVIRTUALADDRESS:
        fields.setdefault("hAllocation", self.a.handle)
        fields.setdefault("SizeInPages", 16)
        fields.setdefault("Protection", RW)
        args = D3DDDI_MAPGPUVIRTUALADDRESS(hPagingQueue=self.w.queue.handle, **fields)
        result = self.va.map_gpu_va(args)
        assert result == HRESULT.E_PENDING
        assert args.PagingFenceValue > 0
        self.w.rm.wait(self.w.queue, args.PagingFenceValue)
        return args

    def free(self, base: int, size: int) -> None:
        self.va.free_gpu_va(self.w.process, D3DDDICB_FREEGPUVIRTUALADDRESS(BaseAddress=base, Size=size))

    def read(self, va: int, size: int = 4096) -> bytes:
        runs = self.w.adapter.gpu.mmu.translate(root_of(self.w, self.space), va, size, AccessKind.READ)
        return read_runs(runs).tobytes()

    def write(self, va: int, data: bytes) -> None:
        runs = self.w.adapter.gpu.mmu.translate(root_of(self.w, self.space), va, len(data), AccessKind.WRITE)
        write_runs(runs, np.frombuffer(data, dtype=np.uint8))

    def snapshot(self) -> tuple[Any, ...]:
        return (
            sorted((r.base, r.size, r.from_map, len(r.mappings)) for r in self.space.regions.values()),
            list(self.space.ranges.allocated()),
            self.w.queue.issued,
            self.w.vidmm.paging.calls,
        )


def test_map_at_a_va_chosen_by_vidmm_reaches_the_pages_asked_for() -> None:
    t = Va()
    args = t.map(OffsetInPages=4, SizeInPages=8)
    assert args.VirtualAddress % (4 * KiB) == 0
    assert args.VirtualAddress >= 64 * KiB
    assert t.read(args.VirtualAddress, 8 * 4096) == pattern(t.a.size, 1)[4 * 4096 : 12 * 4096].tobytes()


def test_map_inside_a_reservation_and_the_reservation_types() -> None:
    t = Va()
    zero = t.reserve(Size=1 * MiB, ReservationType=1)
    none = t.reserve(Size=1 * MiB)
    assert t.read(zero.VirtualAddress) == bytes(4096), "RESERVE_ZERO reads zero"
    with pytest.raises(GpuFault):
        t.read(none.VirtualAddress)
    inside = t.map(BaseAddress=none.VirtualAddress + 64 * KiB, SizeInPages=4)
    assert t.read(inside.VirtualAddress) == pattern(t.a.size, 1)[:4096].tobytes()
    with pytest.raises(GpuFault):
        t.read(none.VirtualAddress)  # the rest of the reservation is still Invalid
    t.free(none.VirtualAddress, 1 * MiB)
    with pytest.raises(GpuFault):
        t.read(inside.VirtualAddress)


def test_zero_protection_reads_zero_and_drops_writes_and_no_access_faults() -> None:
    t = Va()
    r = t.reserve(Size=1 * MiB)
    zero = t.map(BaseAddress=r.VirtualAddress, hAllocation=HANDLE(0), SizeInPages=4, Protection=P(Zero=True))
    t.write(zero.VirtualAddress, b"\x77" * 4096)
    assert t.read(zero.VirtualAddress) == bytes(4096), "even right after a write"
    no = t.map(
        BaseAddress=r.VirtualAddress + 64 * KiB, hAllocation=HANDLE(0), SizeInPages=4, Protection=P(NoAccess=True)
    )
    with pytest.raises(GpuFault):
        t.read(no.VirtualAddress)


def test_read_only_and_execute_rights_come_from_protection() -> None:
    t = Va()
    ro = t.map(Protection=P())
    root = root_of(t.w, t.space)
    mmu = t.w.adapter.gpu.mmu
    mmu.translate(root, ro.VirtualAddress, 4096, AccessKind.READ)
    for access in (AccessKind.WRITE, AccessKind.EXECUTE):
        with pytest.raises(GpuFault):
            mmu.translate(root, ro.VirtualAddress, 4096, access)
    rx = t.map(Protection=P(Execute=True))
    mmu.translate(root, rx.VirtualAddress, 4096, AccessKind.EXECUTE)


def test_a_gpu_access_before_the_paging_fence_faults_and_after_it_succeeds() -> None:
    t = Va()
    args = D3DDDI_MAPGPUVIRTUALADDRESS(
        hPagingQueue=t.w.queue.handle, hAllocation=t.a.handle, SizeInPages=4, Protection=RW
    )
    assert t.va.map_gpu_va(args) == HRESULT.E_PENDING
    with pytest.raises(GpuFault):
        t.read(args.VirtualAddress)  # the paging buffer that writes the tables has not run
    t.w.rm.wait(t.w.queue, args.PagingFenceValue)
    assert t.read(args.VirtualAddress) == pattern(t.a.size, 1)[:4096].tobytes()


def test_minimum_and_maximum_bound_where_vidmm_places_the_range() -> None:
    t = Va()
    low = t.reserve(Size=128 * KiB, MinimumAddress=0x40_0000_0000)
    assert low.VirtualAddress >= 0x40_0000_0000
    high = t.reserve(Size=128 * KiB, MaximumAddress=0x10_0000)
    assert high.VirtualAddress + 128 * KiB <= 0x10_0000
    m = t.map(MinimumAddress=0x7000_0000, MaximumAddress=0x7010_0000, SizeInPages=2)
    assert m.VirtualAddress >= 0x7000_0000
    assert m.VirtualAddress + 2 * 4096 <= 0x7010_0000


def test_destroying_an_allocation_frees_every_va_mapped_to_it() -> None:
    t = Va()
    m1, m2 = t.map(), t.map(OffsetInPages=16)
    t.w.evict(t.a)
    t.w.rm.destroy_allocation(t.a.handle)
    t.w.settle()
    for m in (m1, m2):
        assert m.VirtualAddress not in t.space.regions
        with pytest.raises(GpuFault):
            t.read(m.VirtualAddress)


def test_unique_driver_protection_must_agree_for_the_same_pages() -> None:
    t = Va()
    unique = D3DGPU_UNIQUE_DRIVER_PROTECTION | 0x5
    t.map(DriverProtection=unique)
    t.map(DriverProtection=unique)
    t.map(OffsetInPages=32, DriverProtection=0x9)
    before = t.snapshot()
    with pytest.raises(InvalidArgument, match="unique driver protection") as error:
        t.map(DriverProtection=0x9)
    assert error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    assert t.snapshot() == before


BAD_RESERVES: list[tuple[dict[str, Any], str | None]] = [
    ({"Size": 0}, r"Size=0x0: must not be zero"),
    ({"Size": 4 * KiB}, r"Size=0x1000: must be a multiple of 64 KB"),
    ({"Size": 64 * KiB, "BaseAddress": 0x1_0000_1000}, r"BaseAddress=0x100001000: must be a multiple of 64 KB"),
    ({"Size": 64 * KiB, "MinimumAddress": 0x8000}, r"MinimumAddress=0x8000: must be a multiple of 64 KB"),
    ({"Size": 64 * KiB, "MaximumAddress": 0x18000}, r"MaximumAddress=0x18000: must be a multiple of 64 KB"),
    ({"Size": -(64 * KiB)}, r"Size=-0x10000: must be a UINT64"),
    ({"Size": 1 << 64}, r"Size=0x10000000000000000: must be a UINT64"),
    ({"Size": (1 << 64) - (64 * KiB)}, r"no 0xffffffffffff0000-byte range fits"),
    ({"Size": 64 * KiB, "BaseAddress": 0xFFFF_FFFF_0000}, None),  # the last 64 KB of a 48-bit space is fine
    (
        {"Size": 128 * KiB, "BaseAddress": 0xFFFF_FFFF_0000},
        r"BaseAddress=0xffffffff0000: \[0xffffffff0000, 0x1000000010000\) is not free",
    ),
    ({"Size": 64 * KiB, "BaseAddress": 0x8000_0000_0000_0000}, r"is not free"),
    ({"Size": 64 * KiB, "ReservationType": 2}, r"ReservationType=0x2: must be RESERVE_NO_ACCESS"),
    ({"Size": 64 * KiB, "ReservationType": 7}, r"ReservationType=0x7"),
    ({"Size": 64 * KiB, "MinimumAddress": 0x20_0000, "MaximumAddress": 0x10_0000}, r"no 0x10000-byte range fits"),
]


@pytest.mark.parametrize(("fields", "message"), BAD_RESERVES)
def test_bad_reserves_are_refused_and_change_nothing(fields: dict[str, Any], message: str | None) -> None:
    t = Va()
    before = t.snapshot()
    if message is None:
        t.reserve(**fields)
        return
    with pytest.raises(InvalidArgument, match=message) as error:
        t.reserve(**fields)
    assert error.value.status == HRESULT.E_INVALIDARG
    assert t.snapshot() == before


def _bad_maps(t: Va) -> list[tuple[dict[str, Any], str | None]]:
    taken = t.map().VirtualAddress
    reserved = t.reserve(Size=1 * MiB).VirtualAddress
    other_device = t.w.buffer(64 * KiB, device=t.w.new_device())
    foreign = t.w.buffer(64 * KiB, device=t.w.rm.create_device(t.w.rm.create_process()))
    stale = t.w.buffer(64 * KiB)
    t.w.rm.destroy_allocation(stale.handle)
    return [
        ({"SizeInPages": 0}, r"SizeInPages=0x0: must not be zero"),
        (
            {"OffsetInPages": 60, "SizeInPages": 5},
            r"OffsetInPages=0x3c: 5 page\(s\) from it leave the 64-page allocation",
        ),
        ({"OffsetInPages": (1 << 64) - 1}, r"OffsetInPages=0xffffffffffffffff: 16 page"),
        ({"OffsetInPages": -1}, r"OffsetInPages=-0x1: must be a UINT64"),
        ({"SizeInPages": 1 << 64}, r"SizeInPages=0x10000000000000000: must be a UINT64"),
        ({"BaseAddress": 0x1234}, r"BaseAddress=0x1234: must be 4 KB aligned"),
        ({"MinimumAddress": 0x1001}, r"MinimumAddress=0x1001: must be 4 KB aligned"),
        ({"BaseAddress": taken + 8 * 4096}, r"is neither free nor inside one reserved or mapped range"),
        ({"BaseAddress": taken, "OffsetInPages": 8, "SizeInPages": 8}, None),  # remapping a Map-obtained range
        ({"BaseAddress": reserved + 1 * MiB - 4096, "SizeInPages": 2}, r"is neither free nor inside one"),
        ({"BaseAddress": 0x7FFF_FFFF_F000, "SizeInPages": 4}, None),
        ({"BaseAddress": 0xFFFF_FFFF_F000, "SizeInPages": 2}, r"leave the 0x1000000000000-byte VA space"),
        ({"BaseAddress": 0x1_FFFF_FFFF_FFF000}, r"leave the 0x1000000000000-byte VA space"),
        ({"BaseAddress": 0xFFFF_FFFF_FFFF_F000, "SizeInPages": 16}, r"leave the 0x1000000000000-byte VA space"),
        ({"Reserved0": 1}, r"Reserved0=0x1: must be zero"),
        ({"Reserved1": 1 << 40}, r"Reserved1=0x10000000000: must be zero"),
        ({"Protection": P(SystemUseOnly=True)}, r"Protection.SystemUseOnly=0x1: is not for user mode"),
        ({"Protection": P(Reserved=1)}, r"Protection=0x20: reserved bits must be zero"),
        ({"Protection": P(Zero=True)}, r"hAllocation=0x[0-9a-f]+: must be NULL with Protection.Zero"),
        ({"Protection": P(NoAccess=True)}, r"must be NULL with Protection.Zero or Protection.NoAccess"),
        (
            {"Protection": P(Zero=True, NoAccess=True), "hAllocation": HANDLE(0)},
            r"Zero and NoAccess exclude each other",
        ),
        ({"Protection": P(Zero=True, Write=True), "hAllocation": HANDLE(0)}, r"take no Write or Execute"),
        (
            {"Protection": P(Zero=True), "hAllocation": HANDLE(0), "BaseAddress": taken},
            r"may not be placed on a range obtained by Map",
        ),
        ({"hAllocation": HANDLE(0)}, r"hAllocation=0x0: is not an allocation of the process"),
        ({"hAllocation": HANDLE(0xFFFF_FFFF)}, r"is not an allocation of the process"),
        ({"hAllocation": stale.handle}, r"is not an allocation of the process"),
        ({"hAllocation": t.w.queue.handle}, r"is not an allocation of the process"),
        ({"hAllocation": foreign.handle, "SizeInPages": 1}, r"belongs to another process"),
        ({"hAllocation": other_device.handle, "SizeInPages": 1}, None),  # same process, another device: allowed
    ]


def test_bad_maps_are_refused_with_the_argument_and_change_nothing() -> None:
    t = Va()
    for fields, message in _bad_maps(t):
        before = t.snapshot()
        if message is None:
            t.map(**fields)
            continue
        merged: dict[str, Any] = {"hAllocation": t.a.handle, "SizeInPages": 16, "Protection": RW, **fields}
        args = D3DDDI_MAPGPUVIRTUALADDRESS(hPagingQueue=t.w.queue.handle, **merged)
        with pytest.raises(InvalidArgument, match=message) as error:
            t.va.map_gpu_va(args)
        assert error.value.status == HRESULT.E_INVALIDARG, fields
        assert t.snapshot() == before, fields


def test_bad_frees_and_double_free_are_refused() -> None:
    t = Va()
    r = t.reserve(Size=1 * MiB)
    before = t.snapshot()
    for base, size, message in [
        (r.VirtualAddress, 512 * KiB, "is not a range obtained from Reserve or Map"),
        (r.VirtualAddress + 4096, 1 * MiB, "is not a range obtained"),
        (r.VirtualAddress + 1, 1 * MiB, "must be 4 KB aligned"),
        (r.VirtualAddress, 1 * MiB + 7, "must be 4 KB aligned"),
        (-4096, 4096, "must be a UINT64"),
    ]:
        with pytest.raises(InvalidArgument, match=message):
            t.free(base, size)
        assert t.snapshot() == before
    t.free(r.VirtualAddress, 1 * MiB)
    with pytest.raises(InvalidArgument, match="is not a range obtained"):
        t.free(r.VirtualAddress, 1 * MiB)
    again = t.reserve(BaseAddress=r.VirtualAddress, Size=1 * MiB)
    assert again.VirtualAddress == r.VirtualAddress, "reusable at once"


def test_a_paging_queue_handle_is_checked() -> None:
    t = Va()
    with pytest.raises(InvalidArgument, match="hPagingQueue=0x1234: is not a live paging queue"):
        t.va.reserve(D3DDDI_RESERVEGPUVIRTUALADDRESS(hPagingQueue=HANDLE(0x1234), Size=64 * KiB))


def test_remapping_part_of_a_map_range_splits_it_and_both_parts_follow_moves() -> None:
    t = Va()
    b = t.w.buffer(64 * KiB)
    t.w.make_resident(b)
    t.w.write(b, pattern(b.size, 9))
    whole = t.map(SizeInPages=16)
    t.map(BaseAddress=whole.VirtualAddress + 4 * 4096, hAllocation=b.handle, SizeInPages=4)
    a_bytes, b_bytes = pattern(t.a.size, 1), pattern(b.size, 9)
    expect = a_bytes[: 16 * 4096].copy()
    expect[4 * 4096 : 8 * 4096] = b_bytes[: 4 * 4096]
    assert t.read(whole.VirtualAddress, 16 * 4096) == expect.tobytes()
    for x in (t.a, b):
        t.w.evict(x)
    for x in (b, t.a):
        t.w.make_resident(x)
    t.w.settle()
    assert t.read(whole.VirtualAddress, 16 * 4096) == expect.tobytes(), "every piece re-pointed"


@pytest.mark.parametrize("seed", range(6))
def test_no_process_ever_sees_another_process_bytes_through_its_vas(seed: int) -> None:
    """Security probe S1: two processes, random residency churn under pressure, every VA read checked."""
    w = World()
    assert w.vidmm.va is not None
    va = w.vidmm.va
    rng = np.random.default_rng(seed)
    actors = []
    for marker in (0xA1, 0xB2):
        device = w.rm.create_device(w.rm.create_process())
        queue = w.new_queue(device)
        space = va.create_space(device.process)
        allocations = [w.buffer(int(rng.integers(64, 512)) * 4096, device=device) for _ in range(8)]
        for a in allocations:
            w.make_resident(a, queue=queue)
            w.write(a, np.full(a.size, marker, dtype=np.uint8))
            w.evict(a)
        mappings = [va.mappings.map(space, a) for a in allocations]
        actors.append((marker, device, queue, space, allocations, mappings))
    for _ in range(30):
        marker, device, queue, space, allocations, mappings = actors[int(rng.integers(0, 2))]
        chosen = [int(i) for i in rng.choice(len(allocations), size=3, replace=False)]
        w.make_resident(*(allocations[i] for i in chosen), queue=queue)
        w.settle()
        for i in chosen:
            data = read_runs(
                w.adapter.gpu.mmu.translate(root_of(w, space), mappings[i].va, allocations[i].size, AccessKind.READ)
            )
            assert set(np.unique(data).tolist()) == {marker}, "only the process's own bytes"
        for j, a in enumerate(allocations):
            if a.placement is None:
                with pytest.raises(GpuFault):
                    w.adapter.gpu.mmu.translate(root_of(w, space), mappings[j].va, 4096, AccessKind.READ)
        w.evict(*(allocations[i] for i in chosen))
    w.check()


def test_paging_mappings_carry_unique_driver_protections_and_moves_split_at_their_boundaries() -> None:
    """DOC:driver-protection.md: paging mappings use DriverProtection 0 unless the allocation's pages are mapped
    with a unique protection; then the scratch mappings carry it and the copy is cut at every boundary."""
    from typing import cast

    from wddmsim.ddi.driver import KernelModeDriver
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE
    from wddmsim.testing.fakes import PayloadRecorder

    recorders: list[PayloadRecorder] = []

    def wrap(driver: object) -> KernelModeDriver:
        recorders.append(PayloadRecorder(cast(KernelModeDriver, driver)))
        return recorders[0]

    w = World(wrap_driver=wrap)
    assert w.vidmm.va is not None
    va = w.vidmm.va
    va.create_space(w.process)
    a = w.buffer(256 * KiB)
    w.make_resident(a)
    w.write(a, pattern(a.size, 9))
    first, second = D3DGPU_UNIQUE_DRIVER_PROTECTION | 0x5, D3DGPU_UNIQUE_DRIVER_PROTECTION | 0x9
    for offset, protection in ((0, 0x3), (16, first), (48, second)):
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=w.queue.handle,
            hAllocation=a.handle,
            OffsetInPages=offset,
            SizeInPages=16,
            Protection=RW,
            DriverProtection=protection,
        )
        va.map_gpu_va(args)
    w.settle()
    recorder = recorders[0]
    start = len(recorder.payloads)
    w.evict(a)  # to its backing store, through the scratch area
    ops = recorder.payloads[start:]
    copies = [p for p in ops if isinstance(p, DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL)]
    assert [(c.AllocationOffsetInBytes // 4096, c.TransferSizeInBytes // 4096) for c in copies] == [
        (0, 16),
        (16, 16),
        (32, 16),
        (48, 16),
    ], "cut at each unique-protection boundary (the non-unique 0x3 is no boundary)"
    protections = []
    for copy in copies:
        before = ops[: ops.index(copy)]
        scratch = [p for p in before if isinstance(p, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE)][-2:]
        assert len({p.DriverProtection for p in scratch}) == 1, "source and destination mapped alike"
        protections.append(scratch[0].DriverProtection)
    assert protections == [0, first, 0, second]
    w.make_resident(a)
    assert np.array_equal(w.read(a), pattern(a.size, 9))
    w.check()
