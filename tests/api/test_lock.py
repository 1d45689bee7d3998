"""CPU access (seed 004, wddm-spec 4.4-4.6): pfnLockCb / pfnUnlockCb and pfnLock2Cb / pfnUnlock2Cb, through the
user-mode runtime.  One test per documented rule; views are read and written as the process's CPU would, and
what the GPU sees is read back by physical address."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.ddi.allocation import DXGKARG_ACQUIRESWIZZLINGRANGE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCK2, D3DDDICB_LOCK2FLAGS, D3DDDICB_LOCKFLAGS, D3DDDICB_UNLOCK2
from wddmsim.ddi.residency import D3DDDI_OFFER_PRIORITY, D3DKMT_OFFERALLOCATIONS
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.drivers.reference import reference_driver
from wddmsim.kmd.config import DriverModel
from wddmsim.kmd.driver import ReferenceDriver
from wddmsim.ntos.views import CpuAccessViolation
from wddmsim.vidmm.events import CpuLockEvent, PagingOperation, VidMmEvict

from .desk import APERTURE_ONLY, CPU, SWIZZLED, Desk, KiB, pattern

MODELS = [DriverModel.WDDM2, DriverModel.WDDM1]


def refused(call: object, status: HRESULT, *words: str) -> DdiError:
    """Run ``call`` (a thunk) and check it raised ``status`` with every word in its message."""
    assert callable(call)
    with pytest.raises(DdiError) as caught:
        call()
    assert caught.value.status == status, caught.value
    for word in words:
        assert word in str(caught.value), str(caught.value)
    return caught.value


def operations(desk: Desk) -> list[str]:
    return [str(e.to_record()["event"]) for e in desk.adapter.events if isinstance(e, PagingOperation)]


# --- where the view points (seed 004 rules 2, 3, 6) ------------------------------------------------------


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_an_allocation_in_the_cpu_visible_segment_is_reached_linearly_through_the_bar(model: DriverModel) -> None:
    desk = Desk(model=model)
    h = desk.buffer(64 * KiB)
    desk.resident(h)
    assert desk.where(h) == desk.cpu_segment
    args = desk.lock(h)
    a = desk.a(h)
    assert a.lock is not None and a.lock.on_bus
    data = pattern(a.size, 1)
    desk.cpu_write(args.pData, data)
    assert np.array_equal(desk.gpu_bytes(h), data), "the GPU sees the bytes the CPU wrote, where they are"
    space = desk.vidmm.spaces.get(desk.cpu_segment)
    assert a.placement is not None
    bus = space.descriptor.CpuTranslatedAddress + a.placement.offset
    assert desk.adapter.gpu.bar.read(bus, 16) == data[:16].tobytes(), "bus address = CpuTranslatedAddress + offset"
    desk.unlock(h)
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_an_allocation_in_system_memory_gets_its_system_buffer_without_the_driver(model: DriverModel) -> None:
    calls: list[str] = []

    class Counting:
        def __init__(self, inner: ReferenceDriver) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> object:
            if name in ("acquire_swizzling_range", "build_paging_buffer"):
                calls.append(name)
            return getattr(self.inner, name)

    desk = Desk(model=model, wrap=Counting)  # type: ignore[arg-type]
    h = desk.buffer(64 * KiB)
    calls.clear()
    args = desk.lock(h)
    assert calls == [], "the display miniport driver is not involved"
    data = pattern(64 * KiB, 2)
    desk.cpu_write(args.pData, data)
    assert np.array_equal(desk.backing(h), data)
    desk.unlock(h)
    desk.resident(h)
    assert np.array_equal(desk.gpu_bytes(h), data), "paged in with what the CPU wrote"
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_an_allocation_in_the_aperture_is_reached_through_the_system_pages_it_maps(model: DriverModel) -> None:
    desk = Desk(model=model)
    h = desk.buffer(64 * KiB, usage=CPU | APERTURE_ONLY)
    desk.resident(h)
    assert desk.where(h) == desk.aperture_segment
    args = desk.lock(h)
    a = desk.a(h)
    assert a.lock is not None and not a.lock.on_bus
    data = pattern(64 * KiB, 3)
    desk.cpu_write(args.pData, data)
    assert np.array_equal(desk.gpu_bytes(h), data), "the GPU reads the same pages through the aperture"
    assert not [op for op in operations(desk) if "Transfer" in op], "nothing is copied for an aperture lock"
    desk.unlock(h)
    desk.check()


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_an_allocation_in_a_segment_the_cpu_cannot_see_goes_to_system_memory(model: DriverModel) -> None:
    desk = Desk(model=model)
    h = desk.buffer(64 * KiB, usage=0)  # prefers the local segment, may go to the CPU-visible one
    desk.resident(h)
    assert desk.where(h) == desk.local_segment
    a = desk.a(h)
    a.flags = type(a.flags).from_value(a.flags.Value | 1)  # CPU-visible, yet placed where the CPU cannot see
    before = pattern(64 * KiB, 4)
    from wddmsim.testing.residency import gpu_view

    gpu_view(desk.adapter, a, 0, a.size, write=before)
    args = desk.lock(h)
    assert desk.where(h) == 0, "evicted to system memory so the application can reach the bits there"
    assert np.array_equal(desk.cpu_read(args.pData, a.size), before)
    evictions = [e for e in desk.adapter.events if isinstance(e, VidMmEvict)]
    assert evictions[-1].cause == "lock"
    desk.unlock(h)
    desk.check()


# --- eviction while mapped (seed 004 rule 7) ----------------------------------------------------------------


@pytest.mark.any_driver
@pytest.mark.parametrize("model", MODELS)
def test_eviction_while_locked_keeps_the_address_and_the_bytes(model: DriverModel) -> None:
    desk = Desk(model=model)
    h = desk.buffer(128 * KiB)
    desk.resident(h)
    args = desk.lock(h)
    first = pattern(128 * KiB, 5)
    desk.cpu_write(args.pData, first)
    desk.evict(h)  # the residency list drops it: it leaves local memory while the CPU holds it
    a = desk.a(h)
    assert desk.where(h) == 0 and a.lock is not None and not a.lock.on_bus
    assert np.array_equal(desk.cpu_read(args.pData, a.size), first), "same address, same bytes, other memory"
    second = pattern(128 * KiB, 6)
    desk.cpu_write(args.pData + 4096, second[:8192])
    expected = first.copy()
    expected[4096 : 4096 + 8192] = second[:8192]
    assert np.array_equal(desk.backing(h), expected), "writes now land in system memory"
    rotations = [e for e in desk.adapter.events if isinstance(e, CpuLockEvent) and e.action == "rotate"]
    assert len(rotations) == 1 and rotations[0].address == args.pData and rotations[0].target == "pages"
    desk.unlock(h)
    desk.resident(h)
    assert np.array_equal(desk.gpu_bytes(h), expected), "after unlock the GPU sees every CPU write"
    desk.check()


@pytest.mark.any_driver
def test_a_locked_allocation_only_enters_an_aperture_while_its_view_shows_system_pages() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB)
    args = desk.lock(h)  # in system memory: the view shows the backing pages
    data = pattern(64 * KiB, 7)
    desk.cpu_write(args.pData, data)
    desk.resident(h)
    assert desk.where(h) == desk.aperture_segment, "a memory segment would leave the view on stale pages"
    assert np.array_equal(desk.gpu_bytes(h), data)
    desk.cpu_write(args.pData, data[::-1].copy())
    assert np.array_equal(desk.gpu_bytes(h), data[::-1]), "the aperture maps the very pages the CPU writes"
    desk.unlock(h)
    desk.check()


# --- swizzling ranges (seed 004 rules 4, 5; wddm-spec 4.6) ---------------------------------------------------


def swizzled_surface(desk: Desk) -> HANDLE:
    s = desk.surface(mips=1)
    desk.resident(s)
    assert desk.where(s) == desk.cpu_segment
    return s


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("usage", ["bar", "pages"])
def test_a_read_into_the_callers_buffer_reads_any_stretch_of_a_view_and_nothing_outside(
    model: DriverModel, usage: str
) -> None:
    """``cpu_read_into`` (a ``memcpy`` from ``pData`` into the application's own memory): every offset and length
    across page boundaries reads what ``cpu_read`` does; a read past the view is an access violation that leaves
    the buffer untouched."""
    desk = Desk(model=model)
    h = desk.buffer(64 * KiB, usage=CPU if usage == "bar" else CPU | APERTURE_ONLY)
    desk.resident(h)
    args = desk.lock(h)
    lock = desk.a(h).lock
    assert lock is not None and lock.on_bus == (usage == "bar")
    data = pattern(64 * KiB, 9)
    desk.cpu_write(args.pData, data)
    for offset, size in [(0, 64 * KiB), (1, 1), (4095, 2), (4096, 8192), (12345, 30000), (64 * KiB - 3, 3), (7, 0)]:
        out = bytearray(size)
        desk.process.cpu_read_into(args.pData + offset, out)
        assert bytes(out) == data[offset : offset + size].tobytes(), (offset, size)
    out = bytearray(b"\x5a" * 16)
    with pytest.raises(CpuAccessViolation):
        desk.process.cpu_read_into(args.pData + 64 * KiB - 8, out)
    assert out == bytearray(b"\x5a" * 16)
    desk.unlock(h)
    out = bytearray(4)
    with pytest.raises(CpuAccessViolation):
        desk.process.cpu_read_into(args.pData, out)  # unlocked: the view is unmapped
    desk.check()


def test_a_swizzled_surface_is_seen_linear_through_a_swizzling_range_and_stored_tiled() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = swizzled_surface(desk)
    args = desk.lock(s, AcquireAperture=True)
    a = desk.a(s)
    assert a.lock is not None and a.lock.on_bus and a.lock.swizzling_range == 0 and a.ranges == {0: 0}
    linear = pattern(a.size, 8)
    desk.cpu_write(args.pData, linear)
    assert np.array_equal(desk.cpu_read(args.pData, a.size), linear)
    assert np.array_equal(desk.gpu_bytes(s), desk.tiled(s, linear)), "local memory holds the tiled layout"
    desk.unlock(s)
    desk.check()


def test_a_surface_evicted_while_locked_is_unswizzled_and_its_view_shows_the_same_bytes() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = swizzled_surface(desk)
    args = desk.lock(s, AcquireAperture=True)
    a = desk.a(s)
    linear = pattern(a.size, 9)
    desk.cpu_write(args.pData, linear)
    desk.evict(s)
    assert desk.where(s) == 0 and a.backing_linear and a.ranges == {}
    assert np.array_equal(desk.cpu_read(args.pData, a.size), linear), "byte order identical to the aperture's"
    assert np.array_equal(desk.backing(s), linear)
    ops = operations(desk)
    assert ops[-1] == "PagingOpTransfer", "a plain lock is evicted by Transfer (with Unswizzle)"
    desk.unlock(s)
    desk.resident(s)
    assert np.array_equal(desk.gpu_bytes(s), desk.tiled(s, linear)), "swizzled again on the way back in"
    desk.check()


def test_mip_levels_are_locked_one_range_each() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = desk.surface(mips=3)
    desk.resident(s)
    kmd = reference_driver(desk.adapter.driver).state.allocations.get(s, "hAllocation")
    size = desk.a(s).size
    linear = pattern(size, 10)
    for level, layout in enumerate(kmd.levels):
        args = desk.lock(s, private=level, AcquireAperture=True)
        desk.cpu_write(args.pData + layout.offset, linear[layout.offset : layout.offset + layout.size])
        desk.unlock(s)
    assert sorted(desk.a(s).ranges) == [0, 1, 2], "cached per (allocation, PrivateDriverData)"
    got = desk.gpu_bytes(s)
    expected = desk.tiled(s, linear)
    for layout in kmd.levels:
        part = slice(layout.offset, layout.offset + layout.size)
        assert np.array_equal(got[part], expected[part])
    desk.check()


def test_more_locks_than_swizzling_ranges_all_see_their_bytes_and_the_extra_ones_evict() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    ranges = desk.vidmm.caps.NumberOfSwizzlingRanges
    surfaces = [desk.surface(width=256, height=64, mips=1) for _ in range(ranges + 3)]
    desk.resident(*surfaces)
    data: dict[int, np.ndarray] = {}
    addresses: dict[int, int] = {}
    for i, s in enumerate(surfaces):
        args = desk.lock(s, AcquireAperture=True)
        addresses[s] = args.pData
        data[s] = pattern(desk.a(s).size, 100 + i)
        desk.cpu_write(args.pData, data[s])
    for s in surfaces:  # every lock, stolen or not, still shows exactly what it wrote
        assert np.array_equal(desk.cpu_read(addresses[s], desk.a(s).size), data[s])
    held = [r for r in desk.vidmm.locks.ranges if r is not None]
    assert len(held) == ranges
    lock_evictions = [e for e in desk.adapter.events if isinstance(e, VidMmEvict) and e.cause == "lock"]
    assert len(lock_evictions) == 3 == desk.vidmm.locks.evictions, "one eviction per range taken from a lock"
    desk.check()
    desk.unlock(*surfaces)
    desk.resident(*surfaces)
    for s in surfaces:
        assert np.array_equal(desk.gpu_bytes(s), desk.tiled(s, data[s]))
    desk.check()


class _Refusing:
    """The reference driver, with ``DxgkDdiAcquireSwizzlingRange`` answering a chosen status a number of times."""

    def __init__(self, inner: ReferenceDriver, status: NTSTATUS, times: int) -> None:
        self.inner = inner
        self.status = status
        self.times = times
        self.calls: list[int] = []

    def acquire_swizzling_range(self, args: DXGKARG_ACQUIRESWIZZLINGRANGE) -> NTSTATUS:
        self.calls.append(args.RangeId)
        if self.times:
            self.times -= 1
            return self.status
        return self.inner.acquire_swizzling_range(args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def refusing_desk(status: NTSTATUS, *, times: int) -> tuple[Desk, _Refusing]:
    """A WDDM 1.x desk whose driver answers ``status`` to the next ``times`` swizzling-range requests."""
    made: list[_Refusing] = []

    def wrap(inner: ReferenceDriver) -> _Refusing:
        made.append(_Refusing(inner, status, times))
        return made[0]

    desk = Desk(model=DriverModel.WDDM1, wrap=wrap)  # type: ignore[arg-type]
    return desk, made[0]


def test_unavailable_makes_vidmm_release_a_range_in_use_and_retry() -> None:
    desk, refusing = refusing_desk(NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNAVAILABLE, times=0)
    first, second = desk.surface(width=256, height=64, mips=1), desk.surface(width=256, height=64, mips=1)
    desk.resident(first, second)
    desk.lock(first, AcquireAperture=True)
    desk.unlock(first)  # its range stays cached
    refusing.times = 1
    desk.lock(second, AcquireAperture=True)
    assert desk.a(first).ranges == {}, "the range in use was released"
    assert desk.a(second).ranges, "and the retry succeeded"
    desk.check()


def test_unsupported_gives_up_at_once_and_the_lock_falls_back_to_system_memory() -> None:
    desk, refusing = refusing_desk(NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED, times=99)
    s = swizzled_surface(desk)
    a = desk.a(s)
    before = pattern(a.size, 11)
    from wddmsim.testing.residency import gpu_view

    gpu_view(desk.adapter, a, 0, a.size, write=desk.tiled(s, before))
    a.content = type(a.content).DATA
    a.backing_current = False
    args = desk.lock(s, AcquireAperture=True)
    assert len(refusing.calls) == 1, "no further attempt after UNSUPPORTED"
    assert desk.where(s) == 0 and a.backing_linear
    assert np.array_equal(desk.cpu_read(args.pData, a.size), before), "unswizzled into system memory"
    desk.unlock(s)
    desk.check()


def test_donotevict_fails_with_notavailable_and_changes_nothing() -> None:
    desk, _ = refusing_desk(NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED, times=99)
    s = swizzled_surface(desk)
    args = D3DDDICB_LOCK(
        hAllocation=s, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True, DonotEvict=True)
    )
    refused(lambda: desk.device.lock(args), HRESULT.D3DERR_NOTAVAILABLE, "DonotEvict")
    assert desk.where(s) == desk.cpu_segment and desk.a(s).lock is None and args.pData == 0


def test_a_pinned_allocation_that_would_have_to_be_evicted_cannot_be_locked() -> None:
    desk, _ = refusing_desk(NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED, times=99)
    s = swizzled_surface(desk)
    desk.vidmm.residency.lifetimes.pin(s)
    args = D3DDDICB_LOCK(hAllocation=s, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True))
    refused(lambda: desk.device.lock(args), HRESULT.D3DDDIERR_CANTEVICTPINNEDALLOCATION, "pinned")
    assert desk.where(s) == desk.cpu_segment and desk.a(s).lock is None


@pytest.mark.any_driver
def test_without_lockentire_or_pages_a_lock_that_must_evict_is_not_available() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB, usage=0)
    desk.resident(h)
    a = desk.a(h)
    a.flags = type(a.flags).from_value(a.flags.Value | 1)
    args = D3DDDICB_LOCK(hAllocation=h)
    refused(lambda: desk.device.lock(args), HRESULT.D3DERR_NOTAVAILABLE, "LockEntire")
    args = D3DDDICB_LOCK(hAllocation=h, NumPages=2, pPages=(0, 3))
    assert desk.device.lock(args) == HRESULT.S_OK and desk.where(h) == 0


# --- flag rules (wddm-spec 4.5) ----------------------------------------------------------------------------


BAD_FLAGS = [
    ({"ReadOnly": True, "WriteOnly": True}, "ReadOnly and WriteOnly"),
    ({"IgnoreSync": True, "AcquireAperture": True}, "IgnoreSync and AcquireAperture"),
    ({"UseAlternateVA": True}, "AcquireAperture must be set"),
    ({"Reserved": 1}, "Reserved"),
]


@pytest.mark.any_driver
@pytest.mark.parametrize(("flags", "words"), BAD_FLAGS)
@pytest.mark.parametrize("model", MODELS)
def test_conflicting_flags_are_refused_and_change_nothing(
    model: DriverModel, flags: dict[str, int], words: str
) -> None:
    desk = Desk(model=model)
    h = desk.buffer(64 * KiB)
    desk.resident(h)
    args = D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, **flags))  # type: ignore[arg-type]
    refused(lambda: desk.device.lock(args), HRESULT.E_INVALIDARG, words)
    assert desk.a(h).lock is None and desk.a(h).cpu_view is None and args.pData == 0


def test_no_overwrite_locks_are_refused_on_swizzled_allocations() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = swizzled_surface(desk)
    for flag in ("IgnoreSync", "IgnoreReadSync"):
        args = D3DDDICB_LOCK(hAllocation=s, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True, **{flag: True}))
        refused(lambda args=args: desk.device.lock(args), HRESULT.E_INVALIDARG, "not swizzled")
    desk.lock(s, AcquireAperture=True)
    desk.unlock(s)  # the range stays held (cached)
    args = D3DDDICB_LOCK(hAllocation=s, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True))
    refused(lambda: desk.device.lock(args), HRESULT.E_INVALIDARG, "swizzling range")


@pytest.mark.any_driver
def test_use_alternate_va_needs_the_allocation_to_allow_it_and_a_segment_model_driver() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB)  # a plain buffer: the driver did not set UseAlternateVA
    args = D3DDDICB_LOCK(
        hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True, UseAlternateVA=True)
    )
    refused(lambda: desk.device.lock(args), HRESULT.E_INVALIDARG, "UseAlternateVA")
    wddm2 = Desk()
    h2 = wddm2.surface(mips=1, usage=CPU)
    args = D3DDDICB_LOCK(
        hAllocation=h2, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True, UseAlternateVA=True)
    )
    refused(lambda: wddm2.device.lock(args), HRESULT.E_INVALIDARG, "WDDM 1.x")


@pytest.mark.any_driver
def test_acquire_aperture_is_refused_for_an_allocation_that_lives_only_in_an_aperture() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB, usage=CPU | APERTURE_ONLY)
    args = D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True))
    refused(lambda: desk.device.lock(args), HRESULT.E_INVALIDARG, "only live in an aperture")


BAD_LOCKS = [
    ({"GpuVirtualAddress": 0x1000}, "GpuVirtualAddress"),
    ({"NumPages": 2, "pPages": (0,)}, "NumPages"),
    ({"NumPages": 1, "pPages": (16,)}, "pPages[0]"),
    ({"NumPages": 1, "pPages": (0,), "Flags": D3DDDICB_LOCKFLAGS(LockEntire=True)}, "LockEntire"),
]


@pytest.mark.any_driver
@pytest.mark.parametrize(("fields", "argument"), BAD_LOCKS)
def test_bad_lock_arguments_are_refused(fields: dict[str, object], argument: str) -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB)
    args = D3DDDICB_LOCK(hAllocation=h, **fields)  # type: ignore[arg-type]
    refused(lambda: desk.device.lock(args), HRESULT.E_INVALIDARG, argument)
    assert desk.a(h).lock is None


@pytest.mark.any_driver
def test_only_cpu_visible_live_own_and_unoffered_allocations_can_be_locked() -> None:
    desk = Desk()
    hidden = desk.buffer(64 * KiB, usage=0)
    refused(lambda: desk.lock(hidden), HRESULT.E_INVALIDARG, "CpuVisible")
    _, other_device, _ = desk.other()
    foreign = desk.buffer(64 * KiB, device=other_device)
    refused(lambda: desk.lock(foreign), HRESULT.E_INVALIDARG, "not an allocation handle of this process")
    for forged in (0, -1, 1 << 32, 1 << 64, desk.queue):
        refused(lambda forged=forged: desk.lock(HANDLE(forged)), HRESULT.E_INVALIDARG, "hAllocation")
    offered = desk.buffer(64 * KiB)
    desk.device.offer(
        D3DKMT_OFFERALLOCATIONS(
            hDevice=desk.device.handle,
            HandleList=(offered,),
            NumAllocations=1,
            Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
        )
    )
    refused(lambda: desk.lock(offered), HRESULT.E_INVALIDARG, "offered")


# --- re-lock, unlock ------------------------------------------------------------------------------------


@pytest.mark.any_driver
def test_a_second_lock_gets_the_same_address_and_needs_a_second_unlock() -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB)
    first = desk.lock(h)
    second = desk.lock(h)
    held = desk.a(h).lock
    assert first.pData == second.pData and held is not None and held.count == 2
    desk.unlock(h)
    desk.cpu_write(first.pData, pattern(16, 1))  # still locked once
    desk.unlock(h)
    with pytest.raises(CpuAccessViolation, match="not mapped"):
        desk.cpu_read(first.pData, 16)
    refused(lambda: desk.unlock(h), HRESULT.E_INVALIDARG, "not locked")
    third = desk.lock(h)
    assert third.pData == first.pData, "the view's address is kept for the allocation's life"


def test_relock_rules() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB)
    desk.lock(h)
    refused(lambda: desk.lock(h, AcquireAperture=True), HRESULT.E_INVALIDARG, "without AcquireAperture")
    desk.unlock(h)
    s = swizzled_surface(desk)
    desk.lock(s, AcquireAperture=True)
    refused(lambda: desk.lock(s, AcquireAperture=True), HRESULT.E_INVALIDARG, "swizzling range")
    desk.unlock(s)
    desk.lock(s, AcquireAperture=True, UseAlternateVA=True)
    refused(lambda: desk.lock(s, AcquireAperture=True, UseAlternateVA=True), HRESULT.E_INVALIDARG, "UseAlternateVA")
    desk.evict(s)
    assert operations(desk)[-1] == "PagingOpSpecialLockTransfer", "an alternate-VA lock is evicted through it"
    desk.unlock(s)
    desk.check()


@pytest.mark.any_driver
def test_unlock_more_than_locked_and_of_several_at_once() -> None:
    desk = Desk()
    a, b = desk.buffer(64 * KiB), desk.buffer(64 * KiB)
    desk.lock(a)
    desk.lock(b)
    refused(lambda: desk.unlock(a, a), HRESULT.E_INVALIDARG, "more times than it was locked")
    assert desk.a(a).lock is not None, "a refused unlock changes nothing"
    desk.unlock(a, b)
    assert desk.a(a).lock is None and desk.a(b).lock is None


@pytest.mark.any_driver
def test_a_locked_allocation_cannot_be_destroyed() -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB)
    desk.lock(h)
    from wddmsim.ddi.allocation import D3DDDICB_DEALLOCATE

    refused(
        lambda: desk.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(h,))),
        HRESULT.E_INVALIDARG,
        "locked",
    )
    desk.unlock(h)
    desk.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(h,)))


# --- synchronisation ---------------------------------------------------------------------------------------


@pytest.mark.any_driver
@pytest.mark.parametrize("ignore_sync", [False, True], ids=["DonotWait", "IgnoreSync|DonotWait"])
def test_donotwait_says_wasstilldrawing_while_the_page_in_is_pending(ignore_sync: bool) -> None:
    """The first poll after an un-waited MakeResident: the fill has not run.  ``IgnoreSync`` skips the wait for
    rendering, never for VidMm's own queued page-in (decision 0058): the fill would land over what the CPU writes.
    Time passes after each poll (decision 0053), so a client that keeps polling gets the lock."""
    from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT

    desk = Desk()
    h = desk.buffer(256 * KiB)
    args = D3DDDI_MAKERESIDENT(hPagingQueue=desk.queue, NumAllocations=1, AllocationList=(h,))
    assert desk.device.make_resident(args) == HRESULT.E_PENDING  # not waited for: the fill has not run
    flags = D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True, IgnoreSync=ignore_sync)
    lock = D3DDDICB_LOCK(hAllocation=h, Flags=flags)
    assert desk.device.lock(lock) == HRESULT.D3DERR_WASSTILLDRAWING
    assert desk.a(h).lock is None and lock.pData == 0
    for _ in range(10_000):
        if desk.device.lock(lock) == HRESULT.S_OK:
            break
    assert lock.pData, "polling, the lock was granted once the fill ran"
    assert desk.vidmm.residency.where(h).published
    desk.unlock(h)
    waiting = D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True))
    assert desk.device.lock(waiting) == HRESULT.S_OK
    desk.unlock(h)


# --- Lock2 (WDDM 2.x) ------------------------------------------------------------------------------------


def test_lock2_maps_the_bar_or_system_pages_and_checks_its_flags() -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB)
    desk.resident(h)
    args = D3DDDICB_LOCK2(hAllocation=h)
    assert desk.device.lock2(args) == HRESULT.S_OK
    a = desk.a(h)
    assert a.lock is not None and a.lock.on_bus and a.lock.lock2
    data = pattern(64 * KiB, 12)
    desk.cpu_write(args.pData, data)
    assert np.array_equal(desk.gpu_bytes(h), data)
    refused(
        lambda: desk.device.lock(D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True))),
        HRESULT.E_INVALIDARG,
        "pfnLock2Cb",
    )
    desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h))
    refused(lambda: desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h)), HRESULT.E_INVALIDARG, "not locked")
    bad = D3DDDICB_LOCK2(hAllocation=h, Flags=D3DDDICB_LOCK2FLAGS(Reserved=1))
    refused(lambda: desk.device.lock2(bad), HRESULT.E_INVALIDARG, "reserved")
    wddm1 = Desk(model=DriverModel.WDDM1)
    h1 = wddm1.buffer(64 * KiB)
    refused(lambda: wddm1.device.lock2(D3DDDICB_LOCK2(hAllocation=h1)), HRESULT.E_INVALIDARG, "WDDM 2.0")


def test_lock2_of_an_allocation_outside_the_cpu_visible_segment_uses_its_system_pages() -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB, usage=0)
    desk.resident(h)
    a = desk.a(h)
    a.flags = type(a.flags).from_value(a.flags.Value | 1)
    args = D3DDDICB_LOCK2(hAllocation=h)
    desk.device.lock2(args)
    assert desk.where(h) == 0 and a.lock is not None and not a.lock.on_bus
    desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h))
    desk.check()


# --- the driver's side of rule 8 ---------------------------------------------------------------------------


def test_a_cpu_visible_swizzled_allocation_that_lives_only_in_the_aperture_is_refused_by_the_driver() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    with pytest.raises(DdiError, match="cannot be swizzled"):
        desk.surface(usage=CPU | SWIZZLED | APERTURE_ONLY)


def test_unswizzled_system_bits_never_enter_the_aperture_they_are_swizzled_into_memory() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = swizzled_surface(desk)
    args = desk.lock(s, AcquireAperture=True)
    linear = pattern(desk.a(s).size, 13)
    desk.cpu_write(args.pData, linear)
    desk.evict(s)
    desk.unlock(s)
    assert desk.a(s).backing_linear
    desk.crowd(desk.cpu_segment)  # the CPU-visible segment is full: only the aperture has room
    desk.resident(s)
    assert desk.where(s) not in (0, desk.aperture_segment), "paged into a memory segment with Swizzle instead"
    assert np.array_equal(desk.gpu_bytes(s), desk.tiled(s, linear))
    desk.check()


# --- adapter reset -------------------------------------------------------------------------------------------


@pytest.mark.any_driver
def test_locks_after_an_adapter_reset_get_device_removed() -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB)
    from wddmsim.vidmm.errors import DeviceRemoved

    with pytest.raises(DeviceRemoved):
        desk.vidmm.reset.trigger("test")
    refused(lambda: desk.lock(h), HRESULT.D3DDDIERR_DEVICEREMOVED, "removed")


# --- coherency, Discard, out of memory -------------------------------------------------------------------------


def test_aperture_locks_keep_the_cpu_and_the_gpu_coherent_with_read_and_write_physical() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB, usage=CPU | APERTURE_ONLY)
    desk.resident(h)
    before = len(operations(desk))
    args = desk.lock(h)
    assert operations(desk)[before:] == ["PagingOpReadPhysical"], "the GPU's writes drained before the CPU reads"
    desk.cpu_write(args.pData, pattern(64, 1))
    desk.unlock(h)
    assert operations(desk)[before:] == ["PagingOpReadPhysical", "PagingOpWritePhysical"]
    desk.lock(h, ReadOnly=True)
    desk.unlock(h)
    assert operations(desk)[before:][-1] == "PagingOpReadPhysical", "a read-only lock wrote nothing to order"
    wddm2 = Desk()
    h2 = wddm2.buffer(64 * KiB, usage=CPU | APERTURE_ONLY)
    wddm2.resident(h2)
    before2 = len(operations(wddm2))
    wddm2.lock(h2)
    wddm2.unlock(h2)
    assert operations(wddm2)[before2:] == [], "WDDM 2.x: the coherency operations are WDDM 1.x only"


@pytest.mark.any_driver
def test_a_discard_lock_that_must_evict_drops_the_content_instead_of_copying_it() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    h = desk.buffer(64 * KiB, usage=0)
    desk.resident(h)
    a = desk.a(h)
    a.flags = type(a.flags).from_value(a.flags.Value | 1)
    a.content = type(a.content).DATA
    a.backing_current = False
    before = len(operations(desk))
    desk.lock(h, Discard=True)
    assert operations(desk)[before:] == ["PagingOpDiscard"], "no transfer: the content may be dropped"
    assert desk.where(h) == 0
    desk.unlock(h)


@pytest.mark.any_driver
def test_discard_makes_donotwait_wait() -> None:
    from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT

    desk = Desk()
    h = desk.buffer(256 * KiB)
    args = D3DDDI_MAKERESIDENT(hPagingQueue=desk.queue, NumAllocations=1, AllocationList=(h,))
    assert desk.device.make_resident(args) == HRESULT.E_PENDING
    lock = D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True, Discard=True))
    assert desk.device.lock(lock) == HRESULT.S_OK, "DonotWait has no effect with Discard"
    assert desk.vidmm.residency.where(h).published


def test_swizzled_bits_that_no_memory_segment_can_take_fail_the_lock_with_out_of_memory() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = swizzled_surface(desk)
    a = desk.a(s)
    a.content = type(a.content).DATA
    desk.evict(s)  # out to system memory as swizzled bits
    assert desk.where(s) == 0 and not a.backing_linear
    for hog in desk.crowd(desk.cpu_segment):
        if desk.where(hog) == desk.cpu_segment:
            desk.vidmm.residency.lifetimes.pin(hog)
    space = desk.vidmm.spaces.get(desk.cpu_segment)
    while (offset := space.allocate(a.size, object())) is not None:  # what is left: taken by the kernel
        assert offset >= 0
    args = D3DDDICB_LOCK(hAllocation=s, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True))
    refused(lambda: desk.device.lock(args), HRESULT.E_OUTOFMEMORY, "unswizzled")
    assert a.lock is None and desk.where(s) == 0


@pytest.mark.any_driver
def test_map_aperture_segment_is_cache_coherent_only_for_cacheable_allocations() -> None:
    from wddmsim.hw.aperture import GART_ENTRY
    from wddmsim.kmd.allocations import AllocationUsage

    desk = Desk()
    cached = desk.buffer(64 * KiB, usage=CPU | APERTURE_ONLY | AllocationUsage.CACHED)
    plain = desk.buffer(64 * KiB, usage=CPU | APERTURE_ONLY)
    desk.resident(cached, plain)
    assert desk.vidmm.spaces.get(desk.aperture_segment).descriptor.Flags.CacheCoherent
    aperture = desk.adapter.gpu.aperture
    snoop = GART_ENTRY["Snoop"]
    for h, expected in ((cached, 1), (plain, 0)):
        placement = desk.a(h).placement
        assert placement is not None
        first = placement.offset >> 12
        entries = aperture.entries[first : first + 16].tolist()
        assert {snoop.get(int(e)) for e in entries} == {expected}


@pytest.mark.parametrize("evicted", [False, True])
def test_a_lock_of_a_mip_level_the_surface_does_not_have_is_refused_with_e_invalidarg(evicted: bool) -> None:
    """Decision 0051: the driver refuses the level in DxgkDdiAcquireSwizzlingRange; the caller hears E_INVALIDARG
    naming PrivateDriverData (it heard STATUS_INVALID_PARAMETER, a kernel status), and no lock is taken."""
    desk = Desk(model=DriverModel.WDDM1)
    s = desk.surface(mips=2)
    desk.resident(s)
    data = pattern(desk.a(s).size, 11)
    lock = desk.lock(s)
    desk.cpu_write(lock.pData, data)
    desk.unlock(s)
    if evicted:
        desk.evict(s)
    before = desk.adapter.footprint()
    bad = D3DDDICB_LOCK(hAllocation=s, PrivateDriverData=5, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True))
    with pytest.raises(InvalidArgument) as refused:
        desk.device.lock(bad)
    assert refused.value.status == HRESULT.E_INVALIDARG and refused.value.argument == "PrivateDriverData"
    assert desk.a(s).lock is None and 5 not in desk.a(s).ranges and bad.pData == 0
    if not evicted:
        assert desk.adapter.footprint() == before
    assert (desk.cpu_read(desk.lock(s).pData, desk.a(s).size) == data).all(), "the content is intact"
    desk.unlock(s)
    desk.check()


def _laid_end_to_end(spans: list[np.ndarray | int]) -> bytes:
    return b"".join(bytes(s) if isinstance(s, int) else s.tobytes() for s in spans)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("usage", ["bar", "pages"])
def test_the_spans_a_comparing_reader_sees_are_the_bytes_a_read_copies(model: DriverModel, usage: str) -> None:
    """``cpu_read_spans`` (a ``memcmp`` through ``pData``): the same bytes as ``cpu_read``, through the same view,
    for any stretch; past the view, or once unlocked, the same access violation."""
    desk = Desk(model=model)
    h = desk.buffer(64 * KiB, usage=CPU if usage == "bar" else CPU | APERTURE_ONLY)
    desk.resident(h)
    args = desk.lock(h)
    data = pattern(64 * KiB, 11)
    desk.cpu_write(args.pData, data)
    for offset, size in [(0, 64 * KiB), (1, 1), (4095, 2), (4096, 8192), (12345, 30000), (64 * KiB - 3, 3), (7, 0)]:
        spans = desk.process.cpu_read_spans(args.pData + offset, size)
        assert _laid_end_to_end(spans) == data[offset : offset + size].tobytes(), (offset, size)
    with pytest.raises(CpuAccessViolation):
        desk.process.cpu_read_spans(args.pData + 64 * KiB - 8, 16)
    desk.unlock(h)
    with pytest.raises(CpuAccessViolation):
        desk.process.cpu_read_spans(args.pData, 4)  # unlocked: the view is unmapped
    desk.check()


def test_a_comparing_reader_sees_a_swizzled_surface_linear_through_its_swizzling_range() -> None:
    desk = Desk(model=DriverModel.WDDM1)
    s = swizzled_surface(desk)
    args = desk.lock(s, AcquireAperture=True)
    a = desk.a(s)
    linear = pattern(a.size, 12)
    desk.cpu_write(args.pData, linear)
    assert _laid_end_to_end(desk.process.cpu_read_spans(args.pData, a.size)) == linear.tobytes()
    assert not np.array_equal(desk.gpu_bytes(s), linear), "what lies in local memory is the tiled layout"
    desk.unlock(s)
    desk.check()
