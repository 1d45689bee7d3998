"""A reset during a reset (decision 0239): a driver whose ``DxgkDdiBuildPagingBuffer`` keeps failing fails the
adapter reset's own paging too.  The nested failure ends recovery -- the adapter is left removed, ``DeviceRemoved``
names both failures, later calls are refused with the device-removed status -- without recursing, and what was in
system memory keeps its bytes.  A driver that fails once still recovers as before."""

from __future__ import annotations

import pytest

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.residency import D3DDDI_CREATEPAGINGQUEUE
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE
from wddmsim.drivers.reference import reference_driver
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.testing.residency import check_locks, check_residency
from wddmsim.vidmm.errors import DeviceRemoved, VidMmError
from wddmsim.vidmm.events import AdapterReset

from .desk import Desk, KiB, pattern

FOREVER = 1 << 30


class Failing(DelegatingDriver):
    """Fails the next ``failures`` paging-buffer calls once :attr:`failures` is set: raises, or answers ``status``."""

    def __init__(self, inner: KernelModeDriver, status: NTSTATUS | None) -> None:
        super().__init__(inner)
        self.status = status
        self.failures = 0
        self.resets = 0

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if self.failures <= 0:
            return self.inner.build_paging_buffer(args)
        self.failures -= 1
        if self.status is None:
            raise RuntimeError("the driver's own bug")
        return self.status

    def reset_from_timeout(self) -> NTSTATUS:
        self.resets += 1
        return self.inner.reset_from_timeout()


def _desk(status: NTSTATUS | None) -> tuple[Desk, Failing]:
    made: list[Failing] = []

    def wrap(driver: KernelModeDriver) -> Failing:
        made.append(Failing(driver, status))
        return made[0]

    d = Desk(wrap=wrap)
    (driver,) = made
    return d, driver


def _problems(d: Desk, driver: Failing) -> list[str]:
    """What the invariant checkers find: residency, locks, and every context's page-table tree."""
    problems = check_residency(d.adapter) + check_locks(d.adapter)
    inner = reference_driver(driver.inner)
    ranges = MemoryRanges.of(inner)
    for root, entries in inner.context_roots.values():
        problems += check_page_tables(d.adapter.gpu, root, ranges, root_entries=entries)
    return problems


def _written(d: Desk, size: int, seed: int) -> HANDLE:
    """A buffer resident with ``pattern(size, seed)`` written through a CPU lock."""
    h = d.buffer(size)
    d.resident(h)
    lock = d.lock(h)
    d.cpu_write(lock.pData, pattern(size, seed))
    d.unlock(h)
    return h


def _mapped(d: Desk, h: HANDLE) -> None:
    """A GPU VA for ``h``: the process has a page-table tree the reset must rebuild."""
    args = D3DDDI_MAPGPUVIRTUALADDRESS(
        hPagingQueue=d.queue,
        hAllocation=h,
        SizeInPages=d.a(h).size // 4096,
        Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
    )
    if d.device.map_gpu_va(args) == HRESULT.E_PENDING:
        d.device.wait_for_paging_fence(d.queue, args.PagingFenceValue)


@pytest.mark.parametrize(
    ("status", "said"),
    [(None, "the driver raised RuntimeError: the driver's own bug"), (NTSTATUS.STATUS_INVALID_PARAMETER, "returned")],
    ids=["raises", "invalid-parameter"],
)
def test_a_driver_that_fails_every_call_leaves_the_adapter_removed_without_recursing(
    status: NTSTATUS | None, said: str
) -> None:
    d, driver = _desk(status)
    kept = _written(d, 64 * KiB, 1)
    d.evict(kept)
    assert d.where(kept) == 0 and bytes(d.backing(kept)) == pattern(64 * KiB, 1).tobytes()
    resident = _written(d, 64 * KiB, 2)
    _mapped(d, resident)
    assert d.where(resident) != 0
    driver.failures = FOREVER
    with pytest.raises(DeviceRemoved) as caught:
        d.resident(kept)
    reason = caught.value.reason
    first, _, second = reason.partition("; recovery failed, the adapter is removed: ")
    assert said in first and said in second, reason
    assert caught.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
    reset = d.vidmm.reset
    assert reset.count == 1 and driver.resets == 1, "one reset: the failure inside it did not reset again"
    assert reset.removed == reason and reset.reasons == [first, f"recovery failed: {second}"]
    assert [e.reason for e in d.adapter.events.of_type(AdapterReset)] == [first]
    assert bytes(d.backing(kept)) == pattern(64 * KiB, 1).tobytes(), "system memory kept its bytes"
    assert d.a(resident).placement is None, "the lost allocation went back to its backing store"
    assert d.device.device.removed is not None
    assert _problems(d, driver) == [], "the reset's bookkeeping is consistent"
    # every later call is refused with the device-removed status, and no driver is called again
    calls = d.vidmm.paging.calls
    with pytest.raises(DdiError) as refused:
        d.resident(kept)
    assert refused.value.status == HRESULT.D3DDDIERR_DEVICEREMOVED
    with pytest.raises(DeviceRemoved) as again:
        d.process.create_device()
    assert again.value.reason == reason and again.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
    with pytest.raises(DeviceRemoved) as later:
        d.adapter.runtime.open_process().create_device()
    assert later.value.reason == reason
    with pytest.raises(DeviceRemoved) as retried:
        reset.trigger("a later fault")
    assert retried.value.reason == reason and reset.count == 1 and driver.resets == 1
    assert d.vidmm.paging.calls == calls
    assert driver.failures > FOREVER - 10, "the recovery stopped at its first failed call"


def test_a_driver_that_fails_once_still_recovers() -> None:
    d, driver = _desk(None)
    kept = _written(d, 64 * KiB, 3)
    _mapped(d, kept)
    driver.failures = 1
    wanted = d.buffer(64 * KiB)
    with pytest.raises(DeviceRemoved) as caught:
        d.resident(wanted)
    assert "recovery failed" not in caught.value.reason and d.vidmm.reset.removed is None
    assert d.vidmm.reset.count == 1 and driver.resets == 1 and driver.failures == 0
    assert d.a(wanted).placement is None and d.a(kept).placement is None
    va = d.vidmm.va
    assert va is not None and all(space.evicted for space in va.spaces.values()), "the trees were evicted"
    device = d.process.create_device()  # the adapter works: a new device pages, locks and reads back
    args = D3DDDI_CREATEPAGINGQUEUE()
    device.create_paging_queue(args)
    h = d.buffer(64 * KiB, device=device)
    d.resident(h, device=device, queue=args.hPagingQueue)
    lock = d.lock(h, device=device)
    d.cpu_write(lock.pData, pattern(64 * KiB, 4))
    assert bytes(d.cpu_read(lock.pData, 64 * KiB)) == pattern(64 * KiB, 4).tobytes()
    d.unlock(h, device=device)
    assert _problems(d, driver) == []


def test_a_driver_that_fails_again_during_recovery_leaves_the_adapter_removed() -> None:
    """Failing twice is enough: the second failure is inside the reset, whose recovery it ends, even though the
    driver would answer the next call."""
    d, driver = _desk(None)
    _mapped(d, _written(d, 64 * KiB, 5))
    driver.failures = 2
    with pytest.raises(DeviceRemoved) as caught:
        d.resident(d.buffer(64 * KiB))
    assert "recovery failed, the adapter is removed" in caught.value.reason
    assert driver.failures == 0 and d.vidmm.reset.removed == caught.value.reason
    with pytest.raises(DeviceRemoved):
        d.process.create_device()


def test_a_reset_inside_a_user_mode_callback_is_not_reported_as_a_bad_argument() -> None:
    """``pfnCreateContextCb`` builds the context's ``InitContextResource``: its reset goes up as ``DeviceRemoved``,
    not as ``E_INVALIDARG`` naming an argument the caller gave right."""
    d, driver = _desk(NTSTATUS.STATUS_INVALID_PARAMETER)
    driver.failures = FOREVER
    with pytest.raises(DeviceRemoved) as caught:
        d.device.create_context()
    assert caught.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
    assert caught.value.reason.startswith("DXGK_OPERATION_INIT_CONTEXT_RESOURCE: returned STATUS_INVALID_PARAMETER")


class RefusesForcedUpdate(DelegatingDriver):
    """Answers the forced CPU_VIRTUAL UpdatePageTable (the one call without a paging buffer) with ``status``."""

    def __init__(self, inner: KernelModeDriver, status: NTSTATUS) -> None:
        super().__init__(inner)
        self.status = status

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        return self.status if args.pDmaBuffer is None else self.inner.build_paging_buffer(args)


def test_a_refused_forced_cpu_virtual_update_at_start_is_named_by_its_status() -> None:
    """The system paging process's first tables are written by the forced CPU_VIRTUAL update at start-up; a driver
    that refuses it stops the adapter with the status's name and code, not the value's repr."""
    with pytest.raises(
        VidMmError, match=r"forced CPU_VIRTUAL UpdatePageTable returned STATUS_INVALID_PARAMETER 0xc000000d$"
    ):
        Desk(wrap=lambda driver: RefusesForcedUpdate(driver, NTSTATUS.STATUS_INVALID_PARAMETER))
