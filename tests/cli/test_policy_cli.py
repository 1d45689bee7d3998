"""Policies on the command line (decision 0065): the registry is the one list ``--policy``, ``--placement`` and
``run --list`` show; a policy of your own runs as ``module:Class``; the offline policy runs through a replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.vidmm.policy import EVICTION, PLACEMENT

ROOT = Path(__file__).resolve().parents[2]
"""The repository: ``examples/`` is there."""
CLOCK = "examples.policies.clock:Clock"
WDDMSIM = [str(Path(sys.executable).parent / "wddmsim")]
"""The installed command (its ``sys.path`` holds neither the current folder nor the repository)."""
SMALL = ["--frames", "4", "--seed", "3"]


def test_run_list_and_help_name_every_registered_policy() -> None:
    listing = CliRunner().invoke(main, ["run", "--list"], terminal_width=200)
    assert listing.exit_code == 0, listing.output
    for name in [*EVICTION, *PLACEMENT]:
        assert name in listing.output, name
    assert "priority-lru (default)" in listing.output and "ladder (default)" in listing.output
    shown = CliRunner().invoke(main, ["run", "--help"], terminal_width=200)
    assert "arc, clock, fifo, gds, lfu, lru, min, mru, opt, priority-lru, random, scan, or module:Class" in " ".join(
        shown.output.split()
    )


def test_a_clock_policy_written_outside_the_package_runs_from_the_cli(tmp_path: Path) -> None:
    """``PYTHONPATH=. wddmsim run --policy examples.policies.clock:Clock``, as the example's docstring says."""
    assert len((ROOT / "examples" / "policies" / "clock.py").read_text().splitlines()) < 60
    env = {**os.environ, "PYTHONPATH": "."}
    command = [*WDDMSIM, "run", "--policy", CLOCK, *SMALL]
    done = subprocess.run(
        [*command, "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verified"] and summary["policy"] == CLOCK
    assert summary["traffic"]["Evictions.pressure"] > 0, "the policy chose victims"


def test_a_module_class_that_cannot_be_imported_is_bad_input_naming_the_setting() -> None:
    """Without the folder on PYTHONPATH the module is not found: exit 2, one line naming setting and value."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [*WDDMSIM, "run", "--policy", CLOCK]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"error: adapter.policy='{CLOCK}': module examples.policies.clock cannot be imported"
    ), done.stderr
    assert "PYTHONPATH" in done.stderr


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("wddmsim.vidmm.policy.ladder:Ladder", "Ladder is not an eviction policy: it lacks order, may_evict, scan"),
        (
            "not a name",
            "must be one of the eviction policies arc, clock, fifo, gds, lfu, lru, min, mru, opt, priority-lru, random, scan",
        ),
    ],
)
def test_a_policy_that_is_not_one_is_refused_with_the_rule(value: str, rule: str) -> None:
    result = CliRunner().invoke(main, ["run", "--policy", value])
    assert result.exit_code == 2
    assert f"adapter.policy={value!r}: {rule}" in result.output


def test_opt_runs_by_name_and_as_a_setting_with_its_future_recorded_first(tmp_path: Path) -> None:
    """``run --policy opt``: the default run records the uses, the clairvoyant run keeps to them (decision 0161)."""
    out = tmp_path / "opt"
    result = CliRunner().invoke(main, ["run", "--policy", "opt", *SMALL, "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verified"] and summary["policy"] == "opt"
    assert summary["opt"] == {"future_uses": summary["reference_string"]["uses"], "diverged": 0}
    assert summary["paged_in_bytes"] >= summary["lower_bound_bytes"] >= summary["compulsory_bytes"] > 0
    assert summary["paged_in_over_lower_bound"] == round(summary["paged_in_bytes"] / summary["lower_bound_bytes"], 4)
    by_setting = tmp_path / "set"
    again = CliRunner().invoke(main, ["run", "--set", "adapter.policy=min", *SMALL, "--out", str(by_setting)])
    assert again.exit_code == 0, again.output
    alias = json.loads((by_setting / "summary.json").read_text())
    assert alias["policy"] == "min" and alias["paged_in_bytes"] == summary["paged_in_bytes"]
    default = tmp_path / "default"
    assert CliRunner().invoke(main, ["run", *SMALL, "--out", str(default)]).exit_code == 0
    assert "opt" not in json.loads((default / "summary.json").read_text())


def test_opt_replays_a_trace_and_never_pages_in_more_than_the_recorded_lru_run(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    recorded = CliRunner().invoke(main, ["run", "--policy", "lru", *SMALL, "--record", str(trace)])
    assert recorded.exit_code == 0, recorded.output
    out = tmp_path / "opt"
    result = CliRunner().invoke(main, ["replay", str(trace), "--policy", "opt", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verified"] and summary["traffic"]["PageIns"] <= summary["recorded_traffic"]["PageIns"]
    assert summary["opt"]["diverged"] == 0 and summary["opt"]["future_uses"] > 0


def test_the_placement_policy_is_chosen_by_name_and_the_run_still_verifies(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--placement", "near-first", *SMALL, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verified"] and summary["config"]["adapter"]["placement"] == "near-first"


def test_a_trace_recorded_under_opt_replays_to_the_same_event_log(tmp_path: Path) -> None:
    """The replay records the trace's future under the default policy, as the run did the scenario's: the same
    uses, so the same clairvoyant choices, byte for byte (decision 0161)."""
    trace = tmp_path / "opt.jsonl"
    recorded = CliRunner().invoke(main, ["run", "--policy", "opt", *SMALL, "--record", str(trace)])
    assert recorded.exit_code == 0, recorded.output
    replayed = CliRunner().invoke(main, ["replay", str(trace)])
    assert replayed.exit_code == 0, replayed.output
    assert "the event log is identical to the recorded run's" in replayed.output
