"""The in-package policies (decision 0141) against small textbook models of them: on reference strings of
equal-size allocations, driven through VidMm (``MakeResident`` then ``Evict``, each allocation unreferenced
between its uses), each policy evicts exactly the allocations its model evicts, in the same order.

The models count pages, not bytes: ``k`` frames are the ``k`` 2 MiB allocations the local segment holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.ddi.allocation import D3DDDICB_SETPRIORITY
from wddmsim.ddi.status import HRESULT
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.events import VidMmEvict, VidMmPageIn
from wddmsim.vidmm.policy import EvictionPolicy, Lfu
from wddmsim.vidmm.policy.stable import REACH as STABLE_REACH

from .world import SMALL_GPU, MiB, World

PAGE = 2 * MiB
Model = Callable[[Sequence[int], int], list[int]]
"""A textbook policy: the victims (page numbers, in order) of a reference string over ``k`` frames."""


def through_vidmm(policy: str | EvictionPolicy, refs: Sequence[int], k: int) -> tuple[list[int], int]:
    """The victims (page numbers, in order) and the page-ins of ``refs`` run through VidMm with ``k`` frames."""
    w = World(policy=policy, gpu=replace(SMALL_GPU, local_size=(2 * k + 4) * MiB))
    pages = [w.buffer(PAGE) for _ in range(max(refs))]
    number = {int(a.handle): i + 1 for i, a in enumerate(pages)}
    for r in refs:
        result, _ = w.make_resident(pages[r - 1])
        assert result in (HRESULT.S_OK, HRESULT.E_PENDING), result
        w.evict(pages[r - 1], EvictOnlyIfNecessary=True)
    w.check()
    events = w.adapter.events
    victims = [number[int(e.allocation)] for e in events.of_type(VidMmEvict)]
    assert all(e.cause == "pressure" for e in events.of_type(VidMmEvict))
    return victims, len(events.of_type(VidMmPageIn))


# --- the textbook models --------------------------------------------------------------------------------------


def clock_model(refs: Sequence[int], k: int) -> list[int]:
    """Second chance: the ring in the order the hand meets it; a newcomer goes behind the hand, its bit set."""
    ring: list[int] = []
    bit: dict[int, bool] = {}
    victims: list[int] = []
    for x in refs:
        if x in bit:
            bit[x] = True
            continue
        if len(ring) == k:
            while bit[ring[0]]:
                bit[ring[0]] = False
                ring.append(ring.pop(0))
            victims.append(ring.pop(0))
            del bit[victims[-1]]
        ring.append(x)
        bit[x] = True
    return victims


def recency_model(most: bool) -> Model:
    """LRU (``most`` False) or MRU (True)."""

    def model(refs: Sequence[int], k: int) -> list[int]:
        last: dict[int, int] = {}
        victims: list[int] = []
        for t, x in enumerate(refs):
            if x not in last and len(last) == k:
                victims.append((max if most else min)(last, key=last.__getitem__))
                del last[victims[-1]]
            last[x] = t
        return victims

    return model


def lfu_model(period: int) -> Model:
    """In-memory LFU: a page-in counts one use, a hit one more; every ``period`` uses every count is halved; ties
    go to the least recently used."""

    def model(refs: Sequence[int], k: int) -> list[int]:
        count: dict[int, int] = {}
        last: dict[int, int] = {}
        victims: list[int] = []
        uses = 0
        for t, x in enumerate(refs):
            if x in count:
                count[x] += 1
            uses += 1
            if uses == period:
                uses, count = 0, {p: n // 2 for p, n in count.items()}
            if x not in count:
                if len(count) == k:
                    victims.append(min(count, key=lambda p: (count[p], last[p])))
                    del count[victims[-1]]
                count[x] = 1
            last[x] = t
        return victims

    return model


def gds_model(refs: Sequence[int], k: int) -> list[int]:
    """GreedyDual-Size with cost 1: ``H = L + 1/size`` at a page-in and a hit; the lowest ``H`` goes (ties: least
    recently used) and ``L`` rises to it."""
    credit: dict[int, float] = {}
    last: dict[int, int] = {}
    inflation = 0.0
    victims: list[int] = []
    for t, x in enumerate(refs):
        if x not in credit and len(credit) == k:
            victims.append(min(credit, key=lambda p: (credit[p], last[p])))
            inflation = max(inflation, credit.pop(victims[-1]))
        credit[x] = inflation + 1.0 / PAGE
        last[x] = t
    return victims


def arc_model(refs: Sequence[int], c: int) -> list[int]:
    """ARC as Megiddo and Modha give it (FAST 2003, figure 4), in pages."""
    t1: list[int] = []
    t2: list[int] = []
    b1: list[int] = []
    b2: list[int] = []
    p = 0.0
    victims: list[int] = []

    def replace_one(x: int) -> None:
        if t1 and ((x in b2 and len(t1) == p) or len(t1) > p):
            victims.append(t1.pop(0))
            b1.append(victims[-1])
        else:
            victims.append(t2.pop(0))
            b2.append(victims[-1])

    for x in refs:
        if x in t1 or x in t2:
            (t1 if x in t1 else t2).remove(x)
            t2.append(x)
        elif x in b1:
            p = min(float(c), p + max(len(b2) / len(b1), 1.0))
            replace_one(x)
            b1.remove(x)
            t2.append(x)
        elif x in b2:
            p = max(0.0, p - max(len(b1) / len(b2), 1.0))
            replace_one(x)
            b2.remove(x)
            t2.append(x)
        else:
            if len(t1) + len(b1) == c:
                if len(t1) < c:
                    b1.pop(0)
                    replace_one(x)
                else:
                    victims.append(t1.pop(0))
            elif len(t1) + len(t2) + len(b1) + len(b2) >= c:
                if len(t1) + len(t2) + len(b1) + len(b2) == 2 * c:
                    b2.pop(0)
                replace_one(x)
            t1.append(x)
    return victims


def stable_model(refs: Sequence[int], k: int) -> list[int]:
    """``stable`` (decision 0165) in pages: the candidates not among the last ``REACH x c`` pages used go first, least
    recently used first; then the most recently paged in.  ``c`` (``k`` pages) is learnt at the first eviction,
    after that eviction's ranking, so the recent list is unbounded until then."""
    recent: dict[int, None] = {}
    last: dict[int, int] = {}
    arrival: dict[int, int] = {}
    reach = 0
    victims: list[int] = []
    for t, x in enumerate(refs):
        recent.pop(x, None)
        recent[x] = None
        while reach and len(recent) > reach:
            del recent[next(iter(recent))]
        last[x] = t
        if x in arrival:
            continue
        if len(arrival) == k:
            others = [p for p in arrival if p != x]
            victims.append(min(others, key=lambda p: (p in recent, -arrival[p] if p in recent else last[p])))
            del arrival[victims[-1]]
            reach = STABLE_REACH * k
            while len(recent) > reach:
                del recent[next(iter(recent))]
        arrival[x] = t
    return victims


MODELS: dict[str, Model] = {
    "stable": stable_model,
    "clock": clock_model,
    "mru": recency_model(most=True),
    "lru": recency_model(most=False),
    "lfu": lfu_model(1024),
    "gds": gds_model,
    "arc": arc_model,
}

BELADY = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]


def _agrees(policy: str | EvictionPolicy, model: Model, refs: Sequence[int], k: int) -> None:
    name = policy if isinstance(policy, str) else policy.name
    with campaign.case("policy-model") as box:
        victims, page_ins = through_vidmm(policy, refs, k)
        want = model(refs, k)
        box.append(Outcome.ACCEPTED if victims == want else Outcome.MISMATCHED)
    assert victims == want, (name, k, list(refs))
    assert page_ins == len(want) + min(k, len(set(refs))), "a page-in per miss: what stays, and every victim's"


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("k", [3, 4])
def test_beladys_string_evicts_as_the_textbook_model(name: str, k: int) -> None:
    _agrees(name, MODELS[name], BELADY, k)


def test_the_models_give_the_known_fault_counts() -> None:
    """The models themselves, on strings whose answers are known: LRU's Belady counts (10, 8 with first touches),
    MRU on a cyclic loop (worked by hand: victims 3, 2, 1, 4, 3; LRU misses every reference), ARC on a scan after a hot set (the hot set stays)."""
    assert [len(MODELS["lru"](BELADY, k)) + k for k in (3, 4)] == [10, 8]
    loop = [1, 2, 3, 4] * 4
    assert MODELS["mru"](loop, 3) == [3, 2, 1, 4, 3] and len(MODELS["lru"](loop, 3)) == len(loop) - 3
    hot_then_scan = [1, 2, 1, 2, 3, 4, 5, 6, 7, 1, 2]
    assert 1 not in MODELS["arc"](hot_then_scan, 3) and 2 not in MODELS["arc"](hot_then_scan, 3)
    assert {1, 2} <= set(MODELS["lru"](hot_then_scan, 3)), "LRU lets the scan flush the hot set"


@st.composite
def reference_strings(draw: st.DrawFn) -> tuple[list[int], int]:
    k = draw(st.integers(2, 4))
    pages = draw(st.integers(k + 1, k + 3))
    refs = draw(st.lists(st.integers(1, pages), min_size=1, max_size=22))
    return refs, k


@pytest.mark.parametrize("name", ["clock", "mru", "lfu", "gds", "arc", "stable"])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(case=reference_strings())
def test_random_reference_strings_evict_as_the_textbook_model(name: str, case: tuple[list[int], int]) -> None:
    refs, k = case
    _agrees(name, MODELS[name], refs, k)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(case=reference_strings(), period=st.integers(2, 6))
def test_lfu_ages_as_the_model_does(case: tuple[list[int], int], period: int) -> None:
    """A short aging period, so that halving happens within the string."""
    refs, k = case
    _agrees(Lfu(period=period), lfu_model(period), refs, k)


def test_lfu_refuses_a_period_below_one() -> None:
    with pytest.raises(ValueError, match=r"period=0: must be at least 1"):
        Lfu(period=0)


def test_gds_evicts_the_larger_allocation_first_where_lru_evicts_the_older() -> None:
    """Size-aware: a 3 MiB allocation used last still goes before a 2 MiB one used earlier (``H = L + 1/size``).
    The local segment holds both, with less than 1 MiB free; the CPU-visible one less than 2 MiB."""
    victims = {}
    for name in ("gds", "lru"):
        w = World(policy=name)
        big, small = w.buffer(3 * MiB), w.buffer(2 * MiB)
        for a in (small, big):
            w.make_resident(a)
            w.evict(a, EvictOnlyIfNecessary=True)
        newcomer = w.buffer(2 * MiB)
        w.make_resident(newcomer)
        victims[name] = [int(e.allocation) for e in w.adapter.events.of_type(VidMmEvict)]
        w.check()
        assert victims[name] == ([int(big.handle)] if name == "gds" else [int(small.handle)])


@pytest.mark.parametrize("name", ["clock", "mru", "lfu", "gds", "arc", "stable"])
def test_a_lower_priority_goes_first_under_every_new_policy(name: str) -> None:
    """``pfnSetPriorityCb``: whatever the policy's own rule, the allocation set to a lower priority is the victim
    (as under ``priority-lru``)."""
    w = World(policy=name, gpu=replace(SMALL_GPU, local_size=(2 * 3 + 4) * MiB))
    pages = [w.buffer(PAGE) for _ in range(4)]
    for a in pages[:3]:
        w.make_resident(a)
        w.evict(a, EvictOnlyIfNecessary=True)
    low = pages[1]
    args = D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(low.handle,), pPriorities=(0x10000000,))
    assert w.rm.set_priority(w.device, args) == HRESULT.S_OK
    w.make_resident(pages[3])
    assert [int(e.allocation) for e in w.adapter.events.of_type(VidMmEvict)] == [int(low.handle)]
    w.check()
