"""Hostile review of ``wddmsim reproduce`` (issue 22, decision 0148): odd arguments and policies that misbehave.
Each test here is a defect found by review, kept as a strict xfail until it is fixed."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenarios.reproduce import BELADY_STRING, ReproductionError, run_string
from wddmsim.vidmm.policy.interface import BaseEviction, RoomRequest, VidMmAllocation


class VetoEveryVictim(BaseEviction):
    """A policy that vetoes every victim (``may_evict``, a hook of the interface)."""

    name = "veto-every-victim"

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return False


class RanksNobody(BaseEviction):
    """A policy whose ranking leaves every candidate out."""

    name = "ranks-nobody"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return []


@pytest.mark.parametrize("policy", [VetoEveryVictim, RanksNobody], ids=["veto", "empty-order"])
@pytest.mark.xfail(
    strict=True,
    reason="run_string never checks that a referenced allocation is resident after MakeResident (E_PENDING, then "
    "the paging fence): allocations 4 and 5 are never placed, and it reports 3 faults for 5 distinct allocations",
)
def test_a_reference_that_never_became_resident_is_not_counted_as_a_hit(policy: type[BaseEviction]) -> None:
    # Five distinct allocations: at least five faults, or the counts are not the string's.
    try:
        counts = run_string(BELADY_STRING, 3, policy())
    except ReproductionError:
        return  # refused: the run could not count what it claims to
    assert counts.faults >= 5, counts


@pytest.mark.xfail(
    strict=True,
    reason="--loops has no upper bound: 1e20 raises OverflowError (1e10 MemoryError) from the tuple of references "
    "(a traceback, exit 1 as if a number mismatched); large values that fit hang for hours",
)
def test_an_absurd_loops_is_refused_naming_it() -> None:
    loops = 10**20  # 10**10 gives MemoryError: not tried here, a machine that overcommits would try to fill it
    result = CliRunner().invoke(main, ["reproduce", "lru-cliff", "--published-only", "--loops", str(loops)])
    assert result.exit_code == 2, result.output
    assert "--loops" in result.output


@pytest.mark.parametrize("value", ["inf", "-inf"])
@pytest.mark.xfail(
    strict=True,
    reason="--expect accepts an infinite published number (only NaN is refused): the reproduction runs and "
    "reports a mismatch against 'published inf' instead of refusing the argument",
)
def test_an_infinite_expectation_is_refused(value: str) -> None:
    result = CliRunner().invoke(
        main, ["reproduce", "belady-anomaly", "--published-only", "--expect", f"fifo@3={value}"]
    )
    assert result.exit_code == 2, result.output
    assert "--expect" in result.output
