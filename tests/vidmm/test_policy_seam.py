"""The policy seam (decision 0065): vetoes are honoured, notifications arrive in the order things happen, the
contiguous-hole scan evicts only what frees one hole, Belady's MIN never faults more than LRU, and policies are
named in one registry (``module:Class`` from outside, refused with the setting, value and rule otherwise)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.status import HRESULT
from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import from_dict
from wddmsim.scenarios.replay import read_trace, replay
from wddmsim.scenarios.runner import run_scenario
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.events import AdapterAllocation, VidMmEvict, VidMmPageIn
from wddmsim.vidmm.policy import (
    EVICTION,
    BaseEviction,
    Belady,
    Lru,
    PolicyError,
    RoomPlan,
    RoomRequest,
    SegmentView,
    eviction_policy,
    placement_policy,
)
from wddmsim.vidmm.policy.interface import MoveCause, Range

from .world import SMALL_GPU, MiB, World, pattern

LOCAL = 2
"""The large local segment (5 x 1 MiB fit; the CPU-visible one takes a sixth)."""


class Vetoing(BaseEviction):
    """LRU ranking; vetoes the allocations named in ``vetoed`` and records every veto it was asked."""

    name = "vetoing"

    def __init__(self, vetoed: set[int] | None = None, *, everything: bool = False) -> None:
        self.vetoed = vetoed or set()
        self.everything = everything
        self.asked: list[tuple[int, int]] = []

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return Lru().order(candidates)

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        self.asked.append((int(victim.handle), request.segment))
        return not self.everything and int(victim.handle) not in self.vetoed


class Recording(BaseEviction):
    """LRU ranking; records every notification."""

    name = "recording"

    def __init__(self) -> None:
        self.log: list[tuple[str, int, int, str]] = []

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return Lru().order(candidates)

    def used(self, a: VidMmAllocation) -> None:
        self.log.append(("used", int(a.handle), 0, ""))

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.log.append(("placed", int(a.handle), where.segment_id, str(where.offset)))

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.log.append(("evicted", int(a.handle), where.segment_id, cause.value))

    def freed(self, a: VidMmAllocation) -> None:
        self.log.append(("freed", int(a.handle), 0, ""))


def _filled(w: World, count: int = 6, size: int = 1 * MiB) -> list[VidMmAllocation]:
    """``count`` allocations placed and written, none in a residency list (victims for the unreferenced rung)."""
    out = []
    for i in range(count):
        a = w.buffer(size)
        w.make_resident(a)
        w.write(a, pattern(a.size, i))
        w.evict(a, EvictOnlyIfNecessary=True)
        out.append(a)
    return out


def _evicted(w: World) -> list[int]:
    return [int(e.allocation) for e in w.adapter.events.of_type(VidMmEvict) if e.cause == "pressure"]


@pytest.mark.parametrize("deferred", [True, False], ids=["deferred", "within-the-call"])
def test_a_vetoed_victim_is_never_evicted_and_the_next_in_rank_goes_instead(deferred: bool) -> None:
    policy = Vetoing()
    w = World(policy=policy, deferred=deferred)
    first = _filled(w)
    policy.vetoed = {int(first[0].handle)}  # the least recently used: the victim without the veto
    newcomer = w.buffer(1 * MiB)
    result, _ = w.make_resident(newcomer)
    assert result == HRESULT.E_PENDING and newcomer.placement is not None
    assert _evicted(w) == [int(first[1].handle)], "the next in LRU order goes instead"
    assert first[0].placement is not None and (int(first[0].handle), LOCAL) in policy.asked
    w.check()
    for i, a in enumerate(first):
        w.make_resident(a)
        assert np.array_equal(w.read(a), pattern(a.size, i))
        w.evict(a)


def _refusal(w: World, newcomer: VidMmAllocation) -> tuple[object, ...]:
    before = {a.handle: a.placement for a in w.rm.allocations.values()}
    result, args = w.make_resident(newcomer)
    after = {a.handle: a.placement for a in w.rm.allocations.values()}
    assert before == after, "a refused MakeResident moves nothing"
    return result, args.NumBytesToTrim, args.NumAllocations, args.PagingFenceValue, newcomer.residency_count


@pytest.mark.parametrize("deferred", [True, False], ids=["deferred", "within-the-call"])
def test_when_every_candidate_is_vetoed_the_request_fails_as_when_nothing_is_evictable(deferred: bool) -> None:
    """All pinned (nothing evictable) and all vetoed give the same refusal: E_OUTOFMEMORY, NumBytesToTrim."""
    pinned = World(deferred=deferred)
    for a in _filled(pinned):
        pinned.rm.lifetimes.pin(a.handle)
    vetoed = World(policy=Vetoing(everything=True), deferred=deferred)
    _filled(vetoed)
    want = _refusal(pinned, pinned.buffer(5 * MiB))  # more than the aperture: only evictions could make room
    got = _refusal(vetoed, vetoed.buffer(5 * MiB))
    assert want[0] == HRESULT.E_OUTOFMEMORY and isinstance(want[1], int) and want[1] > 0
    assert got == want
    assert _evicted(vetoed) == []
    vetoed.check()


def test_notifications_arrive_in_the_order_of_the_event_log_and_each_allocation_lives_in_order() -> None:
    policy = Recording()
    w = World(policy=policy)
    first = _filled(w, 7)  # the seventh makes room: an eviction under pressure
    w.make_resident(first[0], first[1])
    w.evict(first[1])
    gone = next(a for a in first[2:] if a.placement is not None)
    w.rm.destroy_allocation(gone.handle)
    w.rm.placement.touch([first[0]])
    events = w.adapter.events
    placed = [(h, s, int(o)) for kind, h, s, o in policy.log if kind == "placed"]
    assert placed == [(int(e.allocation), e.segment, e.offset) for e in events.of_type(VidMmPageIn)]
    evicted = [(h, s, c) for kind, h, s, c in policy.log if kind == "evicted"]
    assert evicted == [(int(e.allocation), e.segment, e.cause) for e in events.of_type(VidMmEvict)]
    freed = [h for kind, h, _, _ in policy.log if kind == "freed"]
    destroyed = [int(e.allocation) for e in events.of_type(AdapterAllocation) if e.action == "destroy"]
    assert freed == destroyed == [int(gone.handle)]
    assert {"pressure", "evict", "destroy"} <= {c for _, _, c in evicted}
    for a in first:  # per allocation: used before placed; placed and evicted alternate; nothing after freed
        mine = [kind for kind, h, _, _ in policy.log if h == int(a.handle)]
        assert mine[0] == "used", mine
        moves = [k for k in mine if k in ("placed", "evicted")]
        assert moves == ["placed", "evicted"] * (len(moves) // 2) + ["placed"] * (len(moves) % 2), mine
        assert "freed" not in mine[:-1]
    assert policy.log[-1] == ("used", int(first[0].handle), 0, ""), "GPU work's use (touch) is a use too"


def test_the_contiguous_hole_scan_evicts_only_what_frees_one_hole() -> None:
    """Five 1 MiB allocations fill the local segment, used in the order 0, 2, 4, 1, 3: a 2 MiB request evicts
    0, 2, 4 and 1 under "evict until it fits" (no two of the first three are adjacent) but only 0 and 1 under
    the scan (drm_mm's eviction scan stops at the first hole and evicts the ranges in it)."""
    evictions = {}
    for name in ("priority-lru", "scan"):
        w = World(policy=name)
        first = _filled(w)
        assert [a.placement.segment_id for a in first if a.placement] == [LOCAL] * 5 + [1]
        w.rm.placement.touch([first[i] for i in (0, 2, 4, 1, 3, 5)])
        big = w.buffer(2 * MiB)
        result, _ = w.make_resident(big)
        assert result == HRESULT.E_PENDING and big.placement is not None and big.placement.segment_id == LOCAL
        evictions[name] = [next(i for i, a in enumerate(first) if a.handle == h) for h in _evicted(w)]
        w.check()
        for i, a in enumerate(first):
            w.make_resident(a)
            assert np.array_equal(w.read(a), pattern(a.size, i)), name
            w.evict(a)
    assert evictions == {"priority-lru": [0, 2, 4, 1], "scan": [0, 1]}


class Outsider(BaseEviction):
    """A broken policy: its plan names an allocation that was not offered as a victim."""

    name = "outsider"

    def __init__(self, outsider: VidMmAllocation) -> None:
        self.outsider = outsider

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        return RoomPlan([self.outsider])


def test_a_plan_naming_a_victim_outside_the_roster_is_a_policy_error() -> None:
    w = World()
    first = _filled(w)
    w.rm.lifetimes.pin(first[0].handle)
    w.rm.placement.policy = Outsider(first[0])
    with pytest.raises(PolicyError, match=r"'outsider' chose .* not among the victims allowed"):
        w.make_resident(w.buffer(1 * MiB))
    assert first[0].placement is not None


def _faults(policy: str, refs: Sequence[int], frames: int) -> int:
    """Page-ins of the reference string over ``frames`` 2 MiB frames: the local segment holds that many (the
    CPU-visible one, with the page tables at its top, none), every page is unreferenced between uses."""
    w = World(policy="lru" if policy == "min" else policy, gpu=replace(SMALL_GPU, local_size=(2 * frames + 4) * MiB))
    pages = [w.buffer(2 * MiB) for _ in range(max(refs))]
    if policy == "min":  # the future: the uses to come, by handle
        w.rm.placement.policy = Belady([int(pages[r - 1].handle) for r in refs])
    for r in refs:
        w.make_resident(pages[r - 1])
        w.evict(pages[r - 1], EvictOnlyIfNecessary=True)
    w.check()
    return len(w.adapter.events.of_type(VidMmPageIn))


@pytest.mark.parametrize(("frames", "clock"), [(3, 9), (4, 10)])
def test_the_clock_example_from_outside_the_package_gives_second_chances(frames: int, clock: int) -> None:
    """``examples/policies/clock.py`` by ``module:Class``: CLOCK on Belady's string (worked by hand: the hits on
    1 and 2 give them a second chance, then the hand evicts in ring order)."""
    refs = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]
    assert _faults("examples.policies.clock:Clock", refs, frames) == clock


@pytest.mark.parametrize(("frames", "want"), [(2, (12, 12, 9)), (3, (9, 10, 7)), (4, (10, 8, 6))])
def test_beladys_reference_string_gives_the_classic_fault_counts(frames: int, want: tuple[int, int, int]) -> None:
    """Belady, Nelson and Shedler (1969): FIFO faults more with four frames than with three; LRU and OPT do not
    (first touches counted)."""
    refs = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]
    assert tuple(_faults(name, refs, frames) for name in ("fifo", "lru", "min")) == want


def test_min_on_a_recorded_trace_never_faults_more_than_lru(tmp_path: Path) -> None:
    """A recorded run replayed under LRU and under MIN (given the recorded uses): MIN pages in no more."""
    for seed, access in ((1, "hot-cold"), (2, "sequential")):
        config = catalog.load("default", {"seed": seed, "workload.frames": 6, "workload.access": access})
        path = tmp_path / f"trace-{seed}.jsonl"
        with path.open("w") as sink:
            run_scenario(config, record=sink)
        trace = read_trace(path)
        lru = replay(trace, {"adapter.policy": "lru"})
        opt = replay(trace, {"adapter.policy": "min"})
        assert lru.content_preserved and opt.content_preserved
        assert opt.traffic["PageIns"] <= lru.traffic["PageIns"], (seed, access, opt.traffic, lru.traffic)


def test_the_registry_names_every_policy_and_refuses_what_is_not_one() -> None:
    assert set(EVICTION) >= {
        "priority-lru",
        "lru",
        "fifo",
        "random",
        "scan",
        "min",
        "opt",
        "clock",
        "mru",
        "lfu",
        "arc",
        "gds",
    }
    assert eviction_policy("scan").name == "scan" and placement_policy("near-first").name == "near-first"
    cases = {
        "best": "eviction_policy='best': known policies: arc, clock, fifo, gds, lfu, lru, min, mru, opt, priority-lru, random, "
        "scan "
        "(or module:Class)",
        "min": "eviction_policy='min': is an offline policy",
        "opt": "eviction_policy='opt': is an offline policy",
        "no_such_module_here:Clock": "module no_such_module_here cannot be imported",
        "wddmsim.vidmm.policy.lru:Nope": "module wddmsim.vidmm.policy.lru has no class Nope",
        "wddmsim.vidmm.policy.ladder:Ladder": "Ladder is not an eviction policy: it lacks order, may_evict, scan",
        "wddmsim.vidmm.policy.offline:Belady": "Belady() failed (a policy is built without arguments)",
    }
    outcomes: list[tuple[str, Outcome]] = []
    for value, message in cases.items():
        with campaign.case("policy") as box:
            try:
                eviction_policy(value)
                box.append(Outcome.ACCEPTED_WRONGLY)
            except ConfigurationError as error:
                clean = error.setting == "eviction_policy" and error.value == value and message in str(error)
                box.append(Outcome.REFUSED if clean else Outcome.ACCEPTED_WRONGLY)
            outcomes.extend((value, o) for o in box)
    assert [v for v, o in outcomes if o is not Outcome.REFUSED] == [], outcomes
    assert eviction_policy("wddmsim.vidmm.policy.lru:Lru").name == "lru"


def test_scenario_files_name_policies_from_the_registry_or_as_module_class() -> None:
    config = from_dict({"adapter": {"policy": "wddmsim.vidmm.policy.scan:ScanLru", "placement": "near-first"}})
    assert (config.adapter.policy, config.adapter.placement) == ("wddmsim.vidmm.policy.scan:ScanLru", "near-first")
    assert config.to_dict()["adapter"]["placement"] == "near-first"
    assert "placement" not in from_dict({}).to_dict()["adapter"], "left out at its default (older summaries)"
    with pytest.raises(ConfigurationError, match=r"adapter.placement='x': must be one of the placement policies"):
        from_dict({"adapter": {"placement": "x"}})
    with pytest.raises(ConfigurationError, match=r"adapter.policy='nowhere:X': module nowhere cannot be imported"):
        from_dict({"adapter": {"policy": "nowhere:X"}})
