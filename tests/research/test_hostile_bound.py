"""Hostile review of the research metrics (issue 22): reference strings a user can build, and a run whose policy
leaves a used allocation out of memory.  Each test here is a defect found by review, kept as a strict xfail until
it is fixed (the suite stays green; a fix turns the xfail into an XPASS, which fails strict mode: drop the mark)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from wddmsim.research.bound import lower_bound
from wddmsim.research.reference import ReferenceRecorder, ReferenceString
from wddmsim.research.runs import paged_in_bytes
from wddmsim.scenarios.reproduce import BELADY_STRING, run_string
from wddmsim.system import Adapter
from wddmsim.vidmm.policy.interface import BaseEviction, RoomRequest, VidMmAllocation


class VetoEveryVictim(BaseEviction):
    """A policy that uses its right to veto (``may_evict``: TTM's ``eviction_valuable``) on every victim."""

    name = "veto-every-victim"

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return False


class RanksNobody(BaseEviction):
    """A policy whose ranking leaves every candidate out."""

    name = "ranks-nobody"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return []


@pytest.mark.xfail(
    strict=True,
    reason="HiGHS's rounding subtracts a relative 1e-6 tolerance from an exact integer optimum: from 1e6 units of "
    "refetched bytes on, the 'highs' bound is floor(v * 1e-6) units under the exact LP value (greedy is right)",
)
def test_highs_equals_greedy_when_a_million_units_are_refetched() -> None:
    # Object 0 (3 000 001 bytes) spans a use of object 1 (1 000 001 bytes): 1 000 001 of its units cannot stay.
    refs = ReferenceString.of([(0, 3_000_001), (1, 1_000_001), (0, 3_000_001)], 3_000_001)
    greedy = lower_bound(refs, solver="greedy")
    assert greedy.bytes == 4_000_002 + 1_000_001  # compulsory + the part of object 0 that cannot stay
    assert lower_bound(refs, solver="highs").bytes == greedy.bytes


@pytest.mark.xfail(
    strict=True,
    reason="intervals() sums sizes in int64: three objects of ~2**62 bytes give a negative compulsory count, "
    "so the bound is negative (a wrong answer, not a refusal)",
)
def test_huge_sizes_never_give_a_negative_bound() -> None:
    sizes = [2**62 + 1, 2**62 + 2, 2**62 + 3]
    refs = ReferenceString.of(list(enumerate(sizes)), 2**62 + 5)
    try:
        bound = lower_bound(refs)
    except ValueError:
        return  # refusing sizes the bound cannot count is an answer too
    assert bound.bytes >= refs.compulsory_bytes == sum(sizes)


@pytest.mark.xfail(
    strict=True,
    reason="a capacity of 2**63 bytes or more raises numpy's OverflowError from intervals() instead of a "
    "ValueError naming the capacity (or an answer)",
)
def test_a_capacity_past_int64_is_answered_or_refused_by_name() -> None:
    refs = ReferenceString.of([(0, 4096), (1, 4097), (0, 4096)], 2**64)  # coprime sizes: the unit is one byte
    try:
        answer: int | str = lower_bound(refs).bytes
    except ValueError as error:
        answer = str(error)
    assert answer == 4096 + 4097 or (isinstance(answer, str) and "capacity" in answer)


@pytest.mark.parametrize("policy", [VetoEveryVictim, RanksNobody], ids=["veto", "empty-order"])
@pytest.mark.xfail(
    strict=True,
    reason="ReferenceRecorder records a use VidMm then never satisfies (MakeResident admitted, the allocation "
    "left unplaced because the policy gave no victim): the 'lower bound' counts bytes no schedule paged in, so it "
    "exceeds what the run paged in",
)
def test_the_bound_of_a_run_never_exceeds_what_it_paged_in(policy: type[BaseEviction]) -> None:
    recorder = ReferenceRecorder(policy())
    seen: list[Adapter] = []
    run_string(BELADY_STRING, 3, recorder, inspect=seen.append)
    refs = recorder.reference_string(seen[0].vidmm.spaces.spaces)
    assert lower_bound(refs).bytes <= paged_in_bytes(seen[0].events)
