"""The whole-run benchmarks' records (decision 0196): the child times itself, the ratio compares command times."""

from __future__ import annotations

import pytest

from wddmsim.bench import run_cases
from wddmsim.bench.baseline import BASELINE_COMMIT, NoBaseline, this_python


@pytest.fixture(autouse=True)
def _once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_cases, "REPEATS", 1)


def test_a_run_against_a_baseline_reports_the_command_ratio_and_the_fixed_costs_beside_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(run_cases, "baseline_python", this_python)  # the same code on both sides
    record = run_cases._whole_run("run_default", "default")
    assert record["name"] == "run_default" and record["unit"] == "events/s"
    assert record["events"] > 1000
    assert 0 < record["import_seconds"] < record["process_seconds"]
    assert record["seconds"] < record["process_seconds"]
    # the ratio is the baseline's command time over ours (events per second, the same events on both sides)
    assert record["ratio"] == pytest.approx(record["baseline_seconds"] / record["seconds"], rel=0.02)
    assert record["events_per_second"] == pytest.approx(record["events"] / record["seconds"], rel=0.01)
    assert record["baseline_commit"] == BASELINE_COMMIT


def test_without_a_baseline_the_record_says_why_and_has_no_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise NoBaseline("this installation is not a git checkout")

    monkeypatch.setattr(run_cases, "baseline_python", refuse)
    record = run_cases._whole_run("run_default", "default")
    assert "ratio" not in record and record["no_baseline"] == "this installation is not a git checkout"
    assert record["value"] == pytest.approx(record["events"] / record["seconds"], rel=0.01)


def test_a_failing_child_names_the_scenario_and_its_exit_status() -> None:
    with pytest.raises(RuntimeError, match=r"wddmsim run no-such-scenario: exit 2"):
        run_cases._timing(this_python(), "no-such-scenario")
