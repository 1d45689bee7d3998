"""A refused lock changes nothing, swizzling ranges included (decision 0236): the ranges an allocation holds -- for a
lock in force or cached from an earlier one -- stay held, no ``DxgkDdiReleaseSwizzlingRange`` is called, and the
bytes seen through a range are the same before and after.  A granted fallback gives them back before it evicts."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.ddi.allocation import DXGKARG_ACQUIRESWIZZLINGRANGE, DXGKARG_RELEASESWIZZLINGRANGE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCKFLAGS
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError
from wddmsim.kmd.config import DriverModel
from wddmsim.kmd.driver import ReferenceDriver

from .desk import Desk, pattern

UNSUPPORTED = NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED


class _Counting:
    """The reference driver, counting the range calls; ``refuse`` makes acquisitions of that private data answer
    ``UNSUPPORTED``."""

    def __init__(self, inner: ReferenceDriver) -> None:
        self.inner = inner
        self.refuse: int | None = None
        self.acquired: list[tuple[int, int]] = []
        self.released: list[tuple[int, int]] = []

    def acquire_swizzling_range(self, args: DXGKARG_ACQUIRESWIZZLINGRANGE) -> NTSTATUS:
        self.acquired.append((args.PrivateDriverData, args.RangeId))
        if args.PrivateDriverData == self.refuse:
            return UNSUPPORTED
        return self.inner.acquire_swizzling_range(args)

    def release_swizzling_range(self, args: DXGKARG_RELEASESWIZZLINGRANGE) -> NTSTATUS:
        self.released.append((args.PrivateDriverData, args.RangeId))
        return self.inner.release_swizzling_range(args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _desk() -> tuple[Desk, _Counting, HANDLE]:
    made: list[_Counting] = []

    def wrap(inner: ReferenceDriver) -> _Counting:
        made.append(_Counting(inner))
        return made[0]

    desk = Desk(model=DriverModel.WDDM1, wrap=wrap)  # type: ignore[arg-type]
    s = desk.surface(mips=1)
    desk.resident(s)
    assert desk.where(s) == desk.cpu_segment
    return desk, made[0], s


def _refused(desk: Desk, args: D3DDDICB_LOCK, status: HRESULT, words: str) -> None:
    with pytest.raises(DdiError) as caught:
        desk.device.lock(args)
    assert caught.value.status == status and words in str(caught.value), caught.value
    assert args.pData == 0


def test_a_second_lock_of_an_allocation_locked_through_a_range_is_refused_and_the_first_view_still_works() -> None:
    desk, driver, s = _desk()
    a = desk.a(s)
    first = desk.lock(s, AcquireAperture=True)
    assert a.lock is not None and a.lock.swizzling_range == 0 and a.ranges == {0: 0}
    data = pattern(a.size, 21)
    desk.cpu_write(first.pData, data)
    second = D3DDDICB_LOCK(
        hAllocation=s, PrivateDriverData=1, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, AcquireAperture=True)
    )
    _refused(desk, second, HRESULT.E_INVALIDARG, "locked through a swizzling range")
    assert driver.released == [] and driver.acquired == [(0, 0)], "no range call for the refusal"
    assert a.ranges == {0: 0} and a.lock.swizzling_range == 0 and a.lock.count == 1
    assert np.array_equal(desk.cpu_read(first.pData, a.size), data), "the first view reads the same bytes"
    again = pattern(a.size, 22)
    desk.cpu_write(first.pData, again)
    assert np.array_equal(desk.gpu_bytes(s), desk.tiled(s, again)), "and still writes through the range"
    desk.unlock(s)
    desk.check()


FALLBACK_REFUSALS = [
    ({"LockEntire": True, "DonotEvict": True}, False, HRESULT.D3DERR_NOTAVAILABLE, "DonotEvict"),
    ({"LockEntire": True}, True, HRESULT.D3DDDIERR_CANTEVICTPINNEDALLOCATION, "pinned"),
    ({}, False, HRESULT.D3DERR_NOTAVAILABLE, "needs LockEntire or a page list"),
]


@pytest.mark.parametrize(
    ("flags", "pinned", "status", "words"), FALLBACK_REFUSALS, ids=["donotevict", "pinned", "no-range"]
)
def test_a_refused_fallback_keeps_the_ranges_cached_from_earlier_locks(
    flags: dict[str, bool], pinned: bool, status: HRESULT, words: str
) -> None:
    """A lock through a range, unlocked (the range stays cached for its PrivateDriverData 0); a lock with
    PrivateDriverData 1, whose range the driver refuses, must fall back to system memory and is refused: range 0 is
    still held, no release was called, and the next lock with 0 reuses it without asking the driver again."""
    desk, driver, s = _desk()
    a = desk.a(s)
    first = desk.lock(s, AcquireAperture=True)
    data = pattern(a.size, 23)
    desk.cpu_write(first.pData, data)
    desk.unlock(s)
    if pinned:
        desk.vidmm.residency.lifetimes.pin(s)
    driver.refuse = 1
    args = D3DDDICB_LOCK(hAllocation=s, PrivateDriverData=1, Flags=D3DDDICB_LOCKFLAGS(AcquireAperture=True, **flags))
    _refused(desk, args, status, words)
    assert driver.released == [], "a refusal gives no range back"
    assert a.ranges == {0: 0} and desk.vidmm.locks.ranges[0] is not None
    assert a.lock is None and desk.where(s) == desk.cpu_segment
    acquired = len(driver.acquired)
    relock = desk.lock(s, AcquireAperture=True)
    assert len(driver.acquired) == acquired, "the cached range serves the next lock"
    assert relock.pData == first.pData and np.array_equal(desk.cpu_read(relock.pData, a.size), data)
    desk.unlock(s)
    if pinned:
        desk.vidmm.residency.lifetimes.unpin(s)
    desk.check()


def test_a_granted_fallback_gives_the_cached_ranges_back_before_it_evicts() -> None:
    desk, driver, s = _desk()
    a = desk.a(s)
    first = desk.lock(s, AcquireAperture=True)
    data = pattern(a.size, 24)
    desk.cpu_write(first.pData, data)
    desk.unlock(s)
    driver.refuse = 1
    args = desk.lock(s, private=1, AcquireAperture=True)
    assert driver.released == [(0, 0)], "the cached range given back once, by the granted fallback"
    assert a.ranges == {} and desk.where(s) == 0 and desk.vidmm.locks.ranges[0] is None
    assert np.array_equal(desk.cpu_read(args.pData, a.size), data), "unswizzled into system memory"
    desk.unlock(s)
    desk.check()
