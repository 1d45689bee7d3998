"""LockConfirm, after the hardware certification test of that name: the CPU writes patterns through locks while
the allocations are paged in and out, pushed out by other processes, demoted to the aperture, swizzled and not;
whatever happened, every read through a lock shows exactly what was written, and after unlock the GPU reads the
same bytes (through its VA on WDDM 2.x, by a Copy on the compute engine into a buffer read back by a lock).

A Hypothesis state machine against a plain model: a dict of the bytes each allocation must hold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from wddmsim.core.units import MiB
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK2, D3DDDICB_UNLOCK2
from wddmsim.ddi.residency import D3DDDI_MAKERESIDENT
from wddmsim.ddi.status import HRESULT
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.kmd.config import DriverModel

from .desk import APERTURE_ONLY, CPU, Desk, KiB, pattern


class LockConfirm(RuleBasedStateMachine):
    model = DriverModel.WDDM2

    @initialize()
    def setup(self) -> None:
        self.desk = Desk(model=self.model)
        desk = self.desk
        self.handles: list[HANDLE] = [
            desk.buffer(64 * KiB),
            desk.buffer(192 * KiB),
            desk.buffer(64 * KiB, usage=CPU | APERTURE_ONLY),
        ]
        if desk.wddm1:
            self.handles += [desk.surface(width=512, height=128, mips=1), desk.surface(width=256, height=256, mips=1)]
        self.expected = {h: np.zeros(desk.a(h).size, dtype=np.uint8) for h in self.handles}
        self.address: dict[HANDLE, int] = {}
        self.seed = 0
        _, self.rival, self.rival_queue = desk.other()
        self.hogs = [desk.buffer(1 * MiB, usage=0, device=self.rival) for _ in range(7)]
        self.hogs += [desk.buffer(512 * KiB, usage=CPU, device=self.rival) for _ in range(3)]
        self.squeezed = False
        self.held: list[HANDLE] = []

    def _swizzled(self, h: HANDLE) -> bool:
        return self.desk.a(h).swizzled

    # --- the CPU ---------------------------------------------------------------------------------------------

    @rule(i=st.integers(0, 4))
    def lock(self, i: int) -> None:
        h = self.handles[i % len(self.handles)]
        if h in self.address:
            return
        desk = self.desk
        if desk.wddm1 or i % 2:
            args = desk.lock(h, AcquireAperture=self._swizzled(h))
            self.address[h] = args.pData
        else:
            lock2 = D3DDDICB_LOCK2(hAllocation=h)
            assert desk.device.lock2(lock2) == HRESULT.S_OK
            self.address[h] = lock2.pData
        assert np.array_equal(desk.cpu_read(self.address[h], desk.a(h).size), self.expected[h])

    @rule(i=st.integers(0, 4), start=st.integers(0, 1 << 20), length=st.integers(1, 40 * 1024))
    def write(self, i: int, start: int, length: int) -> None:
        h = self.handles[i % len(self.handles)]
        if h not in self.address:
            return
        size = self.desk.a(h).size
        start %= size
        length = min(length, size - start)
        self.seed += 1
        data = pattern(length, self.seed)
        self.desk.cpu_write(self.address[h] + start, data)
        self.expected[h][start : start + length] = data

    @rule(i=st.integers(0, 4))
    def unlock(self, i: int) -> None:
        h = self.handles[i % len(self.handles)]
        if h not in self.address:
            return
        a = self.desk.a(h)
        assert a.lock is not None
        if a.lock.lock2:
            self.desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h))
        else:
            self.desk.unlock(h)
        del self.address[h]

    # --- residency -----------------------------------------------------------------------------------------

    @rule(i=st.integers(0, 4))
    def make_resident(self, i: int) -> None:
        h = self.handles[i % len(self.handles)]
        if self.desk.a(h).residency_count:
            return
        args = D3DDDI_MAKERESIDENT(hPagingQueue=self.desk.queue, NumAllocations=1, AllocationList=(h,))
        result = self.desk.device.make_resident(args)
        if result == HRESULT.E_PENDING:
            self.desk.device.wait_for_paging_fence(self.desk.queue, args.PagingFenceValue)

    @rule(i=st.integers(0, 4))
    def evict(self, i: int) -> None:
        h = self.handles[i % len(self.handles)]
        if self.desk.a(h).residency_count:
            self.desk.evict(h)

    @precondition(lambda self: not self.squeezed)
    @rule()
    def squeeze(self) -> None:
        """Another process fills local memory: ours leave it, or go to the aperture."""
        self.held = [
            hog
            for hog in self.hogs
            if self.desk.resident(hog, device=self.rival, queue=self.rival_queue) != HRESULT.E_OUTOFMEMORY
        ]
        self.squeezed = True

    @precondition(lambda self: self.squeezed)
    @rule()
    def release(self) -> None:
        if self.held:
            self.desk.evict(*self.held, device=self.rival)
        self.squeezed = False

    @invariant()
    def consistent(self) -> None:
        if hasattr(self, "desk"):
            self.desk.check()
            for h, address in self.address.items():
                assert np.array_equal(self.desk.cpu_read(address, self.desk.a(h).size), self.expected[h])

    def teardown(self) -> None:
        if not hasattr(self, "desk"):
            return
        for i in range(len(self.handles)):
            self.unlock(i)
        if self.squeezed:
            self.release()
        self.gpu_reads_what_the_cpu_wrote()

    def gpu_reads_what_the_cpu_wrote(self) -> None:
        desk = self.desk
        for h in self.handles:
            if not desk.a(h).residency_count:
                self.make_resident(self.handles.index(h))
        if desk.wddm1:
            for h in self.handles:
                got = desk.gpu_bytes(h)
                want = desk.tiled(h, self.expected[h]) if self._swizzled(h) else self.expected[h]
                assert np.array_equal(got, want)
            return
        context = desk.device.create_context()
        readback = desk.buffer(max(desk.a(h).size for h in self.handles))
        desk.resident(readback)
        for h in self.handles:
            size = desk.a(h).size
            src = self._map(h)
            dst = self._map(readback)
            fence = desk.device.submit_command(
                context, cmd.encode(cmd.Copy(hw_address(Space.GPU_VA, src), hw_address(Space.GPU_VA, dst), size))
            )
            desk.device.wait_for_context(context, fence)
            lock = D3DDDICB_LOCK2(hAllocation=readback)
            desk.device.lock2(lock)
            assert np.array_equal(desk.cpu_read(lock.pData, size), self.expected[h]), "the GPU read through its VA"
            desk.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=readback))

    def _map(self, h: HANDLE) -> int:
        desk = self.desk
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=desk.queue,
            hAllocation=h,
            SizeInPages=desk.a(h).size // 4096,
            Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Write=True),
        )
        if desk.device.map_gpu_va(args) == HRESULT.E_PENDING:
            desk.device.wait_for_paging_fence(desk.queue, args.PagingFenceValue)
        return args.VirtualAddress


class LockConfirmWddm1(LockConfirm):
    model = DriverModel.WDDM1


_SETTINGS = settings(max_examples=25, stateful_step_count=30, suppress_health_check=[HealthCheck.too_slow])

TestLockConfirm = LockConfirm.TestCase
TestLockConfirm.settings = _SETTINGS
TestLockConfirmWddm1 = LockConfirmWddm1.TestCase
TestLockConfirmWddm1.settings = _SETTINGS


@pytest.mark.slow
@pytest.mark.parametrize("machine", [LockConfirm, LockConfirmWddm1])
def test_lock_confirm_long(machine: type[LockConfirm]) -> None:
    case = machine.TestCase
    case.settings = settings(max_examples=150, stateful_step_count=60, suppress_health_check=[HealthCheck.too_slow])
    case().runTest()
