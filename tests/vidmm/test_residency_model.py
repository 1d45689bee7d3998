"""Content survives any residency history, at every oversubscription factor: a Hypothesis state machine drives
two processes' MakeResident / Evict / writes / offers / trims / destroys against a plain dict of expected bytes,
and after every step the residency invariants are checked (segments tile, ranges match owners, aperture pages
map their own backing store, no system page backs two allocations).

A second test runs one operation trace with unlimited local memory and with local memory at 1/2 and 1/8 of the
working set, and requires identical application-visible results.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from wddmsim.core.addresses import FenceValue
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.ddi.residency import (
    D3DDDI_MAKERESIDENT,
    D3DDDI_MAKERESIDENT_FLAGS,
    D3DDDI_OFFER_PRIORITY,
    D3DDDI_RECLAIM_RESULT,
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DKMT_OFFER_FLAGS,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError
from wddmsim.hw.faults import AccessKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.memsys import read_runs
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.kmd.config import DriverModel
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.testing.residency import check_residency
from wddmsim.testing.tlb import TlbWatch, check_tlb
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue
from wddmsim.vidmm.events import PagingRequestServiced, VidMmEvict

from .world import SMALL_GPU, World, pattern

LOCAL_BYTES = 8 * MiB
USAGES = [0, 0, 0, AllocationUsage.CPU_VISIBLE, AllocationUsage.APERTURE_ONLY]


class ResidencyModel(RuleBasedStateMachine):
    """VidMm against a dict: handle -> the bytes the application last wrote (None: undefined after a discard)."""

    factor = 2.0
    options: ClassVar[dict[str, object]] = {}
    press_first: ClassVar[bool] = False
    """Every example begins by paging out under pressure (:meth:`_press`): the coverage the run needs is built,
    not left to the search (decision 0219)."""
    pressure_evictions: ClassVar[int] = 0
    """``VidMmEvict`` events with cause ``pressure`` over every run of this machine (before its teardown)."""
    examples: ClassVar[int] = 0
    """Runs of this machine that reached their teardown."""

    @initialize(
        first=st.lists(
            st.tuples(st.integers(0, 1), st.integers(1, 256), st.sampled_from(USAGES)), min_size=4, max_size=16
        )
    )
    def setup(self, first: list[tuple[int, int, int]]) -> None:
        self.world = World(**self.options)  # type: ignore[arg-type]
        w = self.world
        self.watch = TlbWatch(w.adapter)
        second = w.rm.create_device(w.rm.create_process())
        self.devices: list[tuple[Device, PagingQueue]] = [(w.device, w.queue), (second, w.new_queue(second))]
        self.queues = [[queue, *(w.new_queue(device, p) for p in (-1, 1))] for device, queue in self.devices]
        """Every device's queues: normal, below normal, above normal."""
        self.expected: dict[int, ByteArray | None] = {}
        self.allocations: dict[int, VidMmAllocation] = {}
        self.vas: dict[int, int] = {}
        self.written_at_move: dict[int, int] = {}
        """The allocation's page-in count when the application last wrote it (NotWrittenTo is legal only if a
        page-in happened since)."""
        self.budget = int(self.factor * LOCAL_BYTES)
        self.seed = 0
        for device, pages, usage in first:
            self.create(device, pages, usage)
        if self.press_first:
            self._press()

    # --- helpers ---------------------------------------------------------------------------------------------

    def _of(self, device: Device) -> list[VidMmAllocation]:
        return [a for a in self.allocations.values() if a.device is device]

    def _listed(self, device: Device) -> list[VidMmAllocation]:
        return [a for a in self._of(device) if a.residency_count]

    def _reachable(self, a: VidMmAllocation) -> bool:
        """Make the device's list resident (as before running its work); whether ``a`` is now GPU-reachable.

        A list within budget can still be impossible to place at once (segment sets, fragmentation): VidMm
        then refuses to run the device, and the application's bytes must be intact regardless.
        """
        try:
            self.world.rm.servicing.ensure_resident(a.device)
        except DdiError as error:
            if error.status != NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY:
                raise
            return False
        return a.placement is not None

    def _press(self) -> None:
        """Both processes make 2 MiB resident, device 0's written first: on a 4 MiB GPU that also holds page
        tables, the second list is placed only by evicting under pressure, and the bytes written must survive."""
        marker = len(self.world.adapter.events.of_type(VidMmEvict))
        written: list[tuple[VidMmAllocation, ByteArray]] = []
        for index, (_, queue) in enumerate(self.devices):
            chosen = [self._create(index, 256, 0) for _ in range(2)]
            result, _ = self.world.make_resident(*chosen, queue=queue)
            assert result in (HRESULT.S_OK, HRESULT.E_PENDING), f"{result!r}"
            for a in chosen if index == 0 else ():
                self.seed += 1
                payload = self.expected[a.handle] = pattern(a.size, self.seed)
                self.world.write(a, payload)
                self.written_at_move[a.handle] = a.moves
                written.append((a, payload))
        evicted = self.world.adapter.events.of_type(VidMmEvict)[marker:]
        assert any(e.cause == "pressure" for e in evicted), "the second list was placed without paging out"
        for a, payload in written:  # back in place for device 0's work: the bytes came through the eviction
            assert self._reachable(a) and np.array_equal(self.world.read(a), payload), f"{a!r} lost its content"

    # --- rules -----------------------------------------------------------------------------------------------

    @precondition(lambda self: sum(a.size for a in self.allocations.values()) < self.budget)
    @rule(device=st.integers(0, 1), pages=st.integers(1, 256), usage=st.sampled_from(USAGES))
    def create(self, device: int, pages: int, usage: int) -> None:
        self._create(device, pages, usage)

    def _create(self, device: int, pages: int, usage: int) -> VidMmAllocation:
        a = self.world.buffer(pages * PAGE_SIZE, usage=usage, device=self.devices[device][0])
        self.allocations[a.handle] = a
        va = self.world.vidmm.va
        if va is not None:  # every allocation is also mapped in its process's VA space: the mapping must follow
            self.vas[a.handle] = va.mappings.map(va.create_space(a.device.process), a).va
        self.expected[a.handle] = np.zeros(a.size, dtype=np.uint8)
        self.written_at_move[a.handle] = -1
        return a

    @precondition(lambda self: self.allocations)
    @rule(data=st.data(), device=st.integers(0, 1), cant_trim=st.booleans())
    def make_resident(self, data: st.DataObject, device: int, cant_trim: bool) -> None:
        dev, queue = self.devices[device]
        mine = [a for a in self._of(dev) if a.offered is None]
        if not mine:
            return
        chosen = data.draw(st.lists(st.sampled_from(mine), min_size=1, max_size=4, unique_by=lambda a: a.handle))
        before = {a.handle: a.residency_count for a in self.allocations.values()}
        result, args = self.world.make_resident(*chosen, queue=queue, CantTrimFurther=cant_trim)
        if result == HRESULT.E_OUTOFMEMORY:
            assert args.NumBytesToTrim > 0
            assert {a.handle: a.residency_count for a in self.allocations.values()} == before, "atomic"
        else:
            assert result in (HRESULT.S_OK, HRESULT.E_PENDING)
            assert all(a.residency_count == before[a.handle] + 1 for a in chosen)
            unplaced = [a for a in chosen if a.placement is None]
            if unplaced:  # decision 0043: only if the worker reported it could not place them for this value
                served = [
                    e
                    for e in self.world.adapter.events.of_type(PagingRequestServiced)
                    if e.queue == queue.handle and e.value == args.PagingFenceValue
                ]
                assert result == HRESULT.E_PENDING and served and served[-1].unplaced >= len(unplaced), unplaced
            assert self.world.rm.fences.fence_value(queue) >= args.PagingFenceValue

    @precondition(lambda self: self.allocations)
    @rule(data=st.data(), count=st.integers(1, 4))
    def make_resident_without_waiting(self, data: st.DataObject, count: int) -> None:
        """Requests pile up on queues of every priority (decision 0043); a wait on one of them lets the worker
        service them all, the highest priority first and each queue's in order, and reach the value."""
        marker = len(self.world.adapter.events.of_type(PagingRequestServiced))
        admitted: list[tuple[PagingQueue, int]] = []
        for _ in range(count):
            index = data.draw(st.integers(0, 1))
            dev = self.devices[index][0]
            queue = data.draw(st.sampled_from(self.queues[index]))
            mine = [a for a in self._of(dev) if a.offered is None]
            if not mine:
                continue
            chosen = data.draw(st.lists(st.sampled_from(mine), min_size=1, max_size=3, unique_by=lambda a: a.handle))
            before = {a.handle: a.residency_count for a in self.allocations.values()}
            args = D3DDDI_MAKERESIDENT(
                hPagingQueue=queue.handle,
                NumAllocations=len(chosen),
                AllocationList=tuple(a.handle for a in chosen),
                Flags=D3DDDI_MAKERESIDENT_FLAGS(CantTrimFurther=True),
            )
            result = self.world.rm.make_resident(args)
            if result == HRESULT.E_OUTOFMEMORY:
                assert {a.handle: a.residency_count for a in self.allocations.values()} == before, "atomic"
                continue
            assert all(a.residency_count == before[a.handle] + 1 for a in chosen)
            if result == HRESULT.E_PENDING:
                assert args.PagingFenceValue == queue.issued
                admitted.append((queue, args.PagingFenceValue))
        self._check()  # invariants hold with requests admitted and not serviced
        if not admitted:
            return
        queue, value = data.draw(st.sampled_from(admitted))
        self.world.rm.wait(queue, FenceValue(value))
        assert self.world.rm.fences.fence_value(queue) >= value
        serviced = self.world.adapter.events.of_type(PagingRequestServiced)[marker:]
        assert sorted((q.handle, v) for q, v in admitted) == sorted((e.queue, e.value) for e in serviced)
        priorities = [e.priority for e in serviced]
        assert priorities == sorted(priorities, reverse=True), "higher-priority queues are serviced first"
        for q, _ in admitted:
            values = [e.value for e in serviced if e.queue == q.handle]
            assert values == sorted(values), "a queue's requests are serviced in order"

    @precondition(lambda self: any(a.residency_count for a in self.allocations.values()))
    @rule(data=st.data(), only_if_necessary=st.booleans(), not_written=st.booleans())
    def evict(self, data: st.DataObject, only_if_necessary: bool, not_written: bool) -> None:
        listed = [a for a in self.allocations.values() if a.residency_count]
        a = data.draw(st.sampled_from(listed))
        legal = a.moves > self.written_at_move[a.handle]
        self.world.evict(a, EvictOnlyIfNecessary=only_if_necessary, NotWrittenTo=not_written and legal)

    @precondition(lambda self: any(a.residency_count for a in self.allocations.values()))
    @rule(data=st.data())
    def write(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from([a for a in self.allocations.values() if a.residency_count]))
        if not self._reachable(a):
            return
        expected = self.expected[a.handle]
        start = data.draw(st.integers(0, a.size // PAGE_SIZE - 1)) * PAGE_SIZE
        length = min(data.draw(st.integers(1, 3)) * PAGE_SIZE, a.size - start)
        self.seed += 1
        payload = pattern(length, self.seed)
        if expected is None:  # undefined after a discard: the application rewrites all of it
            start, length, payload = 0, a.size, pattern(a.size, self.seed)
            expected = self.expected[a.handle] = np.zeros(a.size, dtype=np.uint8)
        self.world.write(a, payload, start)
        expected[start : start + length] = payload
        self.written_at_move[a.handle] = a.moves
        assert np.array_equal(self.world.read(a), expected)

    @precondition(lambda self: any(a.residency_count for a in self.allocations.values()))
    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from([a for a in self.allocations.values() if a.residency_count]))
        expected = self.expected[a.handle]
        if expected is not None and self._reachable(a):
            assert np.array_equal(self.world.read(a), expected), f"{a!r} lost its content"
            if a.handle in self.vas:
                self.world.settle()
                assert np.array_equal(self._through_va(a), expected), f"{a!r}'s mapping does not follow it"

    def _through_va(self, a: VidMmAllocation) -> ByteArray:
        va = self.world.vidmm.va
        assert va is not None
        space = va.create_space(a.device.process)
        # As before the process's work runs: its page tables back (pressure may have taken them), its list back.
        va.bring_back(a.device.process)
        self.world.rm.servicing.ensure_resident(a.device)
        va.resume(a.device.process)
        address = va.root_address(space)
        root = TablePointer(Target.LOCAL, self.world.vidmm.spaces.get(address.SegmentId).base + address.SegmentOffset)
        return read_runs(self.world.adapter.gpu.mmu.translate(root, self.vas[a.handle], a.size, AccessKind.READ))

    @precondition(lambda self: any(not a.residency_count for a in self.allocations.values()))
    @rule(data=st.data())
    def destroy(self, data: st.DataObject) -> None:
        a = data.draw(st.sampled_from([a for a in self.allocations.values() if not a.residency_count]))
        self.world.rm.destroy_allocation(a.handle)
        del self.allocations[a.handle], self.expected[a.handle]
        self.vas.pop(a.handle, None)

    @precondition(lambda self: any(not a.residency_count and a.offered is None for a in self.allocations.values()))
    @rule(data=st.data(), immediately=st.booleans(), decommit=st.booleans())
    def offer_and_reclaim(self, data: st.DataObject, immediately: bool, decommit: bool) -> None:
        a = data.draw(
            st.sampled_from([a for a in self.allocations.values() if not a.residency_count and a.offered is None])
        )
        dev, queue = next(d for d in self.devices if d[0] is a.device)
        self.world.rm.offer(
            D3DKMT_OFFERALLOCATIONS(
                hDevice=dev.handle,
                HandleList=(a.handle,),
                NumAllocations=1,
                Priority=D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_NORMAL,
                Flags=D3DKMT_OFFER_FLAGS(OfferImmediately=immediately, AllowDecommit=decommit),
            )
        )
        self._check()
        args = D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=queue.handle, NumAllocations=1, HandleList=(a.handle,))
        self.world.rm.reclaim(args)
        (outcome,) = args.pResults
        assert (outcome == D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_OK) == (not immediately)
        if outcome != D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_OK:
            self.expected[a.handle] = None

    @rule(device=st.integers(0, 1), periodic=st.booleans(), to_budget=st.integers(0, 4 * MiB), rare=st.integers(0, 7))
    def trim(self, device: int, periodic: bool, to_budget: int, rare: int) -> None:
        if rare:  # a trim empties lists: keep it one step in eight, so that lists grow
            return
        flags = D3DDDI_TRIMRESIDENCYSET_FLAGS(PeriodicTrim=periodic, TrimToBudget=bool(to_budget))
        self.world.rm.trim_residency_set(
            self.devices[device][0], D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=flags, NumBytesToTrim=to_budget)
        )

    @rule(data=st.data(), victim=st.integers(0, 1), queued=st.integers(0, 3), rare=st.integers(0, 3))
    def kill(self, data: st.DataObject, victim: int, queued: int, rare: int) -> None:
        """The process of device ``victim`` is killed with ``queued`` requests admitted and not serviced
        (reliability-plan F13): they are cancelled, everything it held is reclaimed, the other process's bytes
        are untouched (every later read and the final teardown check them); a new process takes its place."""
        if rare:  # a kill empties half the model: keep it one step in four
            return
        w = self.world
        dev = self.devices[victim][0]
        mine = [a for a in self._of(dev) if a.offered is None]
        for _ in range(queued if mine else 0):
            queue = data.draw(st.sampled_from(self.queues[victim]))
            chosen = data.draw(st.lists(st.sampled_from(mine), min_size=1, max_size=3, unique_by=lambda a: a.handle))
            w.rm.make_resident(
                D3DDDI_MAKERESIDENT(
                    hPagingQueue=queue.handle,
                    NumAllocations=len(chosen),
                    AllocationList=tuple(a.handle for a in chosen),
                )
            )
        marker = len(w.adapter.events.of_type(PagingRequestServiced))
        w.vidmm.destroy_process(dev.process.handle)
        gone = {q.handle for q in self.queues[victim]}
        assert not [e for e in w.adapter.events.of_type(PagingRequestServiced)[marker:] if e.queue in gone]
        for a in self._of(dev):
            del self.allocations[a.handle], self.expected[a.handle]
            self.vas.pop(a.handle, None)
        assert not [a for a in w.rm.allocations.values() if a.device is dev]
        assert dev.process.handle not in w.rm.processes and not gone & set(w.rm.queues)
        fresh = w.rm.create_device(w.rm.create_process())
        self.devices[victim] = (fresh, w.new_queue(fresh))
        self.queues[victim] = [self.devices[victim][1], *(w.new_queue(fresh, p) for p in (-1, 1))]

    # --- invariants --------------------------------------------------------------------------------------------

    @invariant()
    def consistent(self) -> None:
        self._check()

    def _check(self) -> None:
        self.world.settle()
        problems = check_residency(self.world.adapter) + check_tlb(self.world.adapter) + self.watch.problems
        va = self.world.vidmm.va
        if va is not None:
            ranges = MemoryRanges.of(self.world.adapter.driver)
            for space in va.spaces.values():
                if space.evicted:  # its tables left their segment under pressure: nothing of it is in memory
                    continue
                address = va.root_address(space)
                root = TablePointer(
                    Target.LOCAL, self.world.vidmm.spaces.get(address.SegmentId).base + address.SegmentOffset
                )
                problems += check_page_tables(self.world.adapter.gpu, root, ranges, root_entries=space.root_entries)
        assert not problems, "\n".join(problems)

    def teardown(self) -> None:
        """Every allocation, verified where VidMm puts it, one at a time after every list was emptied."""
        if not hasattr(self, "world"):
            return
        evictions = self.world.adapter.events.of_type(VidMmEvict)
        type(self).pressure_evictions += sum(1 for e in evictions if e.cause == "pressure")
        type(self).examples += 1
        for a in self.allocations.values():
            while a.residency_count:
                self.world.evict(a)
        for a in list(self.allocations.values()):
            expected = self.expected[a.handle]
            if expected is None:
                continue
            queue = next(q for d, q in self.devices if d is a.device)
            result, _ = self.world.make_resident(a, queue=queue)
            assert result in (HRESULT.S_OK, HRESULT.E_PENDING), f"{a!r} alone does not fit: {result!r}"
            assert np.array_equal(self.world.read(a), expected), f"{a!r} lost its content"
            self.world.evict(a)
        self._check()
        for device, _ in self.devices:  # both processes exit: the adapter is back where it started (I19)
            self.world.vidmm.destroy_process(device.process.handle)
        leaks = self.world.adapter.footprint().leaks(self.world.start)
        assert not leaks, "\n".join(leaks)
        assert self.world.driver_statistics() == self.world.start_statistics, "the driver holds what it held at start"


PRESSED_GPU = GpuConfig(local_size=6 * MiB, bar_size=2 * MiB, aperture_size=2 * MiB, system_size=256 * MiB)
"""Smaller than the model's 8 MiB: room is made under pressure often, so the contiguous-hole scan (the ``scan``
policy, decision 0065) plans holes -- not only free room is used."""


def _machine(factor: float, **options: object) -> type[ResidencyModel]:
    name = f"Residency{str(factor).replace('.', '_')}x"
    return type(name, (ResidencyModel,), {"factor": factor, "options": options})


@pytest.mark.parametrize(
    "options",
    [
        {"physical": True},
        {"model": DriverModel.WDDM1},
        {"policy": "random"},
        {"map_aperture2": True},
        {"package": "simple"},
        {"policy": "scan", "gpu": PRESSED_GPU},
        {"policy": "scan", "gpu": PRESSED_GPU, "model": DriverModel.WDDM1},
    ],
    ids=[
        "physical-moves",
        "wddm1",
        "random-policy",
        "map-aperture2",
        "simple-driver",
        "scan-policy",
        "scan-policy-wddm1",
    ],
)
def test_content_survives_random_residency_histories_in_every_configuration(options: dict[str, object]) -> None:
    machine = _machine(2.0, **options)
    machine.TestCase.settings = settings(
        max_examples=10, stateful_step_count=40, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()


NEW_POLICIES = ("clock", "mru", "lfu", "arc", "gds")
"""The in-package policies of decision 0141: each runs the model under pressure (WDDM 1.x by default, fast; the
WDDM 2.x runs under ``-m slow``)."""


@pytest.mark.parametrize("policy", NEW_POLICIES)
def test_content_survives_random_residency_histories_under_each_policy(policy: str) -> None:
    machine = _machine(2.0, policy=policy, gpu=PRESSED_GPU, model=DriverModel.WDDM1)
    machine.TestCase.settings = settings(
        max_examples=10, stateful_step_count=40, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()


@pytest.mark.slow
@pytest.mark.parametrize("policy", NEW_POLICIES)
def test_content_survives_random_residency_histories_under_each_policy_on_wddm2(policy: str) -> None:
    machine = _machine(2.0, policy=policy, gpu=PRESSED_GPU)
    machine.TestCase.settings = settings(
        max_examples=10, stateful_step_count=40, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()


@pytest.mark.parametrize("factor", [1.1, 1.5, 2.0, 3.0, 8.0])
def test_content_survives_random_residency_histories(factor: float) -> None:
    machine = _machine(factor)
    machine.TestCase.settings = settings(
        max_examples=15, stateful_step_count=50, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()


TINY_GPU = GpuConfig(local_size=4 * MiB, bar_size=1 * MiB, aperture_size=1 * MiB, system_size=256 * MiB)
"""Half the model's 8 MiB: a 1 MiB CPU-visible segment, a ~3 MiB one and a 1 MiB aperture, so the working set the
model creates (up to ``factor`` x 8 MiB) is many times what fits and MakeResident must evict to place."""


def _pressing_machine() -> type[ResidencyModel]:
    """The 4 MiB GPU's machine, every example beginning with :meth:`ResidencyModel._press` (decision 0219)."""
    machine = _machine(2.0, gpu=TINY_GPU)
    machine.press_first = True
    return machine


def test_content_survives_random_residency_histories_under_pressure() -> None:
    """The run must actually page out under pressure (on the 8 MiB GPU no placement went past free room), and an
    admitted request is placed or reported unplaced by the worker (decisions 0043, 0090).  Every example begins
    by paging out under pressure (decision 0219): a search left to itself can spend all its examples on histories
    too small to press."""
    machine = _pressing_machine()
    machine.TestCase.settings = settings(
        max_examples=30, stateful_step_count=40, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()
    assert machine.pressure_evictions > 0, "no allocation was evicted under pressure"


def test_the_pressure_run_pages_out_under_pressure_even_where_the_search_stays_small() -> None:
    """Hypothesis seed 1015 (random mode) drew 30 histories of which none evicted anything under pressure: the
    pressure run failed "no allocation was evicted under pressure".  Replayed with the same seed, every example
    now pages out (decision 0219)."""
    machine = seed(1015)(_pressing_machine())
    machine.TestCase.settings = settings(
        max_examples=30,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=False,
    )
    machine.TestCase().runTest()
    assert machine.pressure_evictions >= machine.examples > 0, (machine.pressure_evictions, machine.examples)


@pytest.mark.parametrize("factor", [1.1, 3.0, 8.0])
def test_content_survives_random_residency_histories_on_the_simple_driver(factor: float) -> None:
    """The second driver package (decision 0075): the same machine, every invariant checked after every step."""
    machine = _machine(factor, package="simple")
    machine.TestCase.settings = settings(
        max_examples=15, stateful_step_count=50, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1.1, 1.5, 2.0, 3.0, 8.0])
def test_content_survives_long_random_residency_histories(factor: float) -> None:
    machine = _machine(factor)
    machine.TestCase.settings = settings(
        max_examples=120, stateful_step_count=80, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine.TestCase().runTest()


# --- one trace, three memory sizes ---------------------------------------------------------------------------


WORKING_SET = 4 * MiB


def _run_trace(local: int, seed: int = 7, package: str = "reference") -> list[bytes]:
    """A seeded application: 32 allocations of 128 KiB (the working set), two at a time made resident, written
    and read back; returns every read."""
    bar = local // 4
    gpu = GpuConfig(local_size=local, bar_size=bar, aperture_size=256 * KiB, system_size=256 * MiB)
    world = World(gpu=gpu, package=package)
    rng = np.random.default_rng(seed)
    allocations = [world.buffer(WORKING_SET // 32) for _ in range(32)]
    reads: list[bytes] = []
    for step in range(100):
        chosen = [allocations[i] for i in rng.choice(len(allocations), size=2, replace=False)]
        result, _ = world.make_resident(*chosen)
        assert result in (HRESULT.S_OK, HRESULT.E_PENDING), f"step {step}: {result!r}"
        target = chosen[int(rng.integers(0, 2))]
        data = pattern(PAGE_SIZE, int(rng.integers(0, 1 << 30)))
        world.write(target, data, int(rng.integers(0, target.size // PAGE_SIZE)) * PAGE_SIZE)
        reads += [world.read(a).tobytes() for a in chosen]
        world.evict(*chosen)
        world.check()
    return reads


def test_one_trace_gives_identical_results_with_unlimited_half_and_an_eighth_of_the_working_set() -> None:
    unlimited = _run_trace(8 * WORKING_SET)
    for local in (WORKING_SET // 2, WORKING_SET // 8):
        assert _run_trace(local) == unlimited, f"local memory {local:#x} changed what the application saw"


def test_one_trace_gives_the_application_the_same_bytes_on_the_simple_driver() -> None:
    """The second driver package (decision 0075) changes where things go, never what the application reads."""
    assert _run_trace(WORKING_SET // 2, package="simple") == _run_trace(WORKING_SET // 2)


def test_the_small_gpu_is_what_the_factors_are_measured_against() -> None:
    assert SMALL_GPU.local_size == LOCAL_BYTES
