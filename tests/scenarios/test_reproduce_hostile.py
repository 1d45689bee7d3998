"""Hostile review of ``wddmsim reproduce`` (issue 22, decision 0148): odd arguments and policies that misbehave.
Each test here is a defect found by review, now fixed (decision 0164)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenarios.reproduce import BELADY_STRING, ReproductionError, run_string
from wddmsim.testing.fakes import RanksNobody, VetoEveryVictim
from wddmsim.vidmm.policy.interface import BaseEviction


@pytest.mark.parametrize("policy", [VetoEveryVictim, RanksNobody], ids=["veto", "empty-order"])
def test_a_reference_that_never_became_resident_is_not_counted_as_a_hit(policy: type[BaseEviction]) -> None:
    # Five distinct allocations: at least five faults, or the counts are not the string's.
    try:
        counts = run_string(BELADY_STRING, 3, policy())
    except ReproductionError:
        return  # refused: the run could not count what it claims to
    assert counts.faults >= 5, counts


def test_an_absurd_loops_is_refused_naming_it() -> None:
    loops = 10**20  # 10**10 gives MemoryError: not tried here, a machine that overcommits would try to fill it
    result = CliRunner().invoke(main, ["reproduce", "lru-cliff", "--published-only", "--loops", str(loops)])
    assert result.exit_code == 2, result.output
    assert "--loops" in result.output


@pytest.mark.parametrize("value", ["inf", "-inf"])
def test_an_infinite_expectation_is_refused(value: str) -> None:
    result = CliRunner().invoke(
        main, ["reproduce", "belady-anomaly", "--published-only", "--expect", f"fifo@3={value}"]
    )
    assert result.exit_code == 2, result.output
    assert "--expect" in result.output
