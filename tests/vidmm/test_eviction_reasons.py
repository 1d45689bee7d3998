"""Every eviction names the policy that chose the victim and why (decision 0140): each registered policy's
reason, the rank for a policy from outside that gives none, and the rule when no policy chose (an offered
victim, an ``Evict``, a destroy)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.events import VidMmEvict
from wddmsim.vidmm.policy import EvictionPolicy, Lru, RoomPlan, RoomRequest, SegmentView, eviction_policy
from wddmsim.vidmm.policy.interface import MoveCause, Range
from wddmsim.vidmm.residency.placement import RULES

from .world import SMALL_GPU, MiB, World

PAGE = 2 * MiB

SAYS = {
    "priority-lru": "; priority 0x",
    "lru": "; last used at ",
    "fifo": "; paged in at ",
    "random": "drawn by the seeded shuffle",
    "scan": "overlaps the cheapest hole",
    "clock": "the clock hand found it",
    "mru": "most recently used, at ",
    "lfu": " use(s), aged; ",
    "arc": "least recent of T1 (used once)",
    "gds": "lowest credit H=",
}
"""A fragment of each policy's reason for the victims of :func:`_pressed`."""


def _pressed(policy: str | EvictionPolicy, k: int = 3) -> World:
    """``k + 2`` equal allocations used in turn over room for ``k``: two evictions under pressure."""
    w = World(policy=policy, gpu=replace(SMALL_GPU, local_size=(2 * k + 4) * MiB))
    for a in [w.buffer(PAGE) for _ in range(k + 2)]:
        w.make_resident(a)
        w.evict(a, EvictOnlyIfNecessary=True)
    w.check()
    return w


def _pressure(w: World) -> list[VidMmEvict]:
    return [e for e in w.adapter.events.of_type(VidMmEvict) if e.cause == "pressure"]


@pytest.mark.parametrize("name", sorted(SAYS))
def test_each_policy_names_itself_and_says_why(name: str) -> None:
    events = _pressure(_pressed(name))
    assert len(events) == 2
    for e in events:
        assert e.policy == name
        assert e.reason.startswith("in no residency list; "), e.reason
        assert SAYS[name] in e.reason, e.reason


class Duck:
    """A policy from outside that does not subclass ``BaseEviction`` and has no ``explain``."""

    name = "duck"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return Lru().order(candidates)

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return True

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        return RoomPlan(roster)

    def used(self, a: VidMmAllocation) -> None:
        return None

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        return None

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        return None

    def freed(self, a: VidMmAllocation) -> None:
        return None


@pytest.mark.parametrize("policy", [Duck(), "examples.policies.clock:Clock"], ids=["no-explain", "explain-none"])
def test_a_policy_from_outside_that_gives_no_reason_is_reported_by_rank(policy: object) -> None:
    chosen = eviction_policy(policy if isinstance(policy, str) else Duck())
    events = _pressure(_pressed(chosen))
    assert [e.policy for e in events] == [chosen.name] * 2
    assert [e.reason for e in events] == [f"ranked 1 of 3 by {chosen.name}"] * 2


def test_when_no_policy_chose_the_event_gives_the_rule_of_the_cause() -> None:
    """An offered victim goes by the mechanism's offer rule, before any ranked one; ``Evict`` and a destroy by
    theirs."""
    w = World(policy="lru", gpu=replace(SMALL_GPU, local_size=(2 * 3 + 4) * MiB))
    first = [w.buffer(PAGE) for _ in range(3)]
    for a in first:
        w.make_resident(a)
        w.evict(a, EvictOnlyIfNecessary=True)
    w.offer(first[2])
    w.make_resident(w.buffer(PAGE))
    listed = w.buffer(PAGE)
    w.make_resident(listed)
    w.evict(listed)  # the last reference: it leaves
    w.rm.destroy_allocation(first[0].handle)
    w.check()
    seen = [(int(e.allocation), e.cause, e.policy, e.reason) for e in w.adapter.events.of_type(VidMmEvict)]
    outcomes = []
    want = [
        (
            int(first[2].handle),
            "offer",
            "",
            "offered (D3DDDI_OFFER_PRIORITY_LOW): its content is dropped before any ranked victim",
        ),
        (int(first[0].handle), "pressure", "lru", "in no residency list; last used at 1"),
        (int(listed.handle), "evict", "", RULES[MoveCause.EVICT]),
    ]
    for event in want:
        with campaign.case("eviction-reason") as box:
            box.append(Outcome.ACCEPTED if event in seen else Outcome.MISMATCHED)
            outcomes += box
    assert seen[: len(want)] == want
    assert Outcome.MISMATCHED not in outcomes
    assert all(e.reason for e in w.adapter.events.of_type(VidMmEvict)), "every eviction says why"


def test_the_policy_written_in_docs_research_runs_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``docs/research.md``'s LRU-2 example, saved as a module and named ``module:Class``: twice-used allocations
    stay while once-used ones go (LRU would evict 1 and 2 first), and its reasons are in the events."""
    text = (Path(__file__).parents[2] / "docs" / "research.md").read_text()
    code = re.search(r"<!-- research-example: lru2.py -->\n```python\n(.*?)```", text, re.S)
    assert code is not None
    assert len(code.group(1).splitlines()) <= 45, "a short example"
    (tmp_path / "lru2_example.py").write_text(code.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    w = World(policy="lru2_example:Lru2", gpu=replace(SMALL_GPU, local_size=(2 * 3 + 4) * MiB))
    pages = [w.buffer(PAGE) for _ in range(5)]
    for r in (1, 1, 2, 2, 3, 4, 5):
        w.make_resident(pages[r - 1])
        w.evict(pages[r - 1], EvictOnlyIfNecessary=True)
    w.check()
    events = _pressure(w)
    assert [int(e.allocation) for e in events] == [int(pages[2].handle), int(pages[3].handle)]
    assert all(e.policy == "lru-2" and "; used once; last used at " in e.reason for e in events)
