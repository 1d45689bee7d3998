"""The default policies of decision 0165: ``stable`` (eviction) and ``free-first`` (placement).

``stable`` is checked against its page model (``stable_model``) on strings long and wide enough for the "long
unused first" rule to act, on a loop (where it keeps a fixed set as MIN does and LRU misses every use), and on a
phase change (where the old set leaves first); ``free-first`` by its rungs and by where VidMm puts an allocation.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.vidmm.events import VidMmEvict, VidMmPageIn
from wddmsim.vidmm.policy import registry
from wddmsim.vidmm.policy.interface import VictimClass
from wddmsim.vidmm.policy.ladder import FreeFirst
from wddmsim.vidmm.policy.stable import REACH, Stable

from .test_policy_models import MODELS, PAGE, _agrees, through_vidmm
from .world import SMALL_GPU, MiB, World


def test_stable_and_free_first_are_the_defaults() -> None:
    assert registry.DEFAULT_EVICTION == Stable.name == "stable"
    assert registry.DEFAULT_PLACEMENT == FreeFirst.name == "free-first"
    assert isinstance(registry.eviction_policy("stable"), Stable)


@st.composite
def wide_strings(draw: st.DrawFn) -> tuple[list[int], int]:
    """More pages than ``REACH x k``, so that some candidates are long unused when room is made."""
    k = draw(st.integers(2, 3))
    pages = draw(st.integers(k + 1, REACH * k + 4))
    refs = draw(st.lists(st.integers(1, pages), min_size=k + 1, max_size=40))
    return refs, k


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(case=wide_strings())
def test_stable_evicts_as_its_model_when_the_long_unused_rule_acts(case: tuple[list[int], int]) -> None:
    refs, k = case
    _agrees("stable", MODELS["stable"], refs, k)


def test_the_model_applies_the_long_unused_rule() -> None:
    """k = 2, so the reach is 4 x 2 pages: page 1 stays while it is among the last 8 pages used -- each newcomer
    evicts the previous one (last in, first out) -- and leaves first once eight others have passed it."""
    assert REACH == 4
    assert MODELS["stable"]([1, 2, 1, *range(3, 13)], 2) == [2, 3, 4, 5, 6, 7, 8, 1, 10, 11]
    assert MODELS["stable"]([1, 2, 3], 2) == [2], "both in use: the most recently paged in leaves"


def test_on_a_loop_stable_keeps_a_fixed_set_where_lru_misses_every_use() -> None:
    """A cyclic loop of 5 equal allocations over room for 4, 20 times (within the reach, 4 x 4): LRU pages in on
    every use; ``stable`` keeps pages 1-3 resident and cycles 4 and 5 through the last frame: 2 misses a loop after
    the first."""
    loop = [1, 2, 3, 4, 5] * 20
    _, lru_ins = through_vidmm("lru", loop, 4)
    victims, ins = through_vidmm("stable", loop, 4)
    assert lru_ins == len(loop)
    assert ins == 5 + 2 * 19, ins
    assert set(victims) == {4, 5}, "the first three never leave"


def test_after_a_phase_change_the_old_set_leaves_first() -> None:
    """Pages 1-3 are used for a while, then a new loop over pages 4-17 only (more than the reach, 4 x 3 pages):
    the old pages leave (3, the last paged in, while all are in use; then 1 and 2, long unused, least recently used
    first), and from then on only the new loop's pages are victims."""
    refs = [1, 2, 3] * 3 + list(range(4, 18)) * 2
    victims, _ = through_vidmm("stable", refs, 3)
    assert victims == MODELS["stable"](refs, 3)
    old = [v for v in victims if v <= 3]
    assert old == [3, 1, 2], victims
    assert all(v > 3 for v in victims[victims.index(old[-1]) + 1 :]), victims


def test_stable_explains_each_rule_in_the_event_log() -> None:
    """Two victims, one by each rule: the reason names it (decision 0140)."""
    refs = [1, 2, 3, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    w = World(policy="stable", gpu=replace(SMALL_GPU, local_size=(2 * 2 + 4) * MiB))
    pages = [w.buffer(PAGE) for _ in range(max(refs))]
    for r in refs:
        w.make_resident(pages[r - 1])
        w.evict(pages[r - 1], EvictOnlyIfNecessary=True)
    w.check()
    reasons = [e.reason for e in w.adapter.events.of_type(VidMmEvict)]
    assert all(e.policy == "stable" for e in w.adapter.events.of_type(VidMmEvict))
    assert any("still in use: placed most recently first" in r for r in reasons), reasons
    assert any("not used within the last 4 x" in r and "least recently used first" in r for r in reasons), reasons


def test_free_first_takes_free_room_in_every_group_before_any_victim() -> None:
    w = World(policy="stable", placement="free-first")
    segments = list(w.vidmm.spaces)
    ladder = FreeFirst().rungs(w.buffer(PAGE), segments)
    victims = [r.victims for r in ladder]
    assert victims == [
        VictimClass.NONE,
        VictimClass.NONE,
        VictimClass.UNREFERENCED,
        VictimClass.UNREFERENCED,
        VictimClass.ANYONE,
    ]
    assert ladder[0].segments == ladder[2].segments and ladder[1].segments == ladder[3].segments
    assert set(ladder[0].segments).isdisjoint(ladder[1].segments)


def test_free_first_spills_to_the_aperture_where_the_ladder_evicts() -> None:
    """Local memory full of allocations no list needs, the aperture empty: under ``free-first`` a newcomer is
    mapped into the aperture and nobody leaves; under the ladder one of them is evicted to make room."""
    outcome = {}
    for placement in ("free-first", "ladder"):
        w = World(policy="stable", placement=placement)
        aperture = {s.id for s in w.vidmm.spaces if s.aperture}
        local = sum(s.size for s in w.vidmm.spaces if not s.aperture)
        fillers = [w.buffer(PAGE) for _ in range(local // PAGE)]
        for a in fillers:
            w.make_resident(a)
            w.evict(a, EvictOnlyIfNecessary=True)
        placed_before = len(w.adapter.events.of_type(VidMmPageIn))
        newcomer = w.buffer(PAGE)
        w.make_resident(newcomer)
        w.check()
        page_in = w.adapter.events.of_type(VidMmPageIn)[placed_before:]
        outcome[placement] = (
            [e.segment in aperture for e in page_in if e.allocation == int(newcomer.handle)],
            len([e for e in w.adapter.events.of_type(VidMmEvict) if e.cause == "pressure"]),
        )
    assert outcome["free-first"] == ([True], 0), outcome
    assert outcome["ladder"][0] == [False] and outcome["ladder"][1] >= 1, outcome
