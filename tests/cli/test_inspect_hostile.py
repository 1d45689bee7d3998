"""Hostile review of ``wddmsim inspect`` (decision 0140's ``--why-evicted`` and the segment maps): a saved run a
crash cut short, and options out of range.  Each test here is a defect found by review, now fixed (decision
0164)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

from .saved_run import save_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short default run, saved."""
    return save_run(tmp_path_factory, frames=2)


@pytest.mark.parametrize("why", [False, True], ids=["maps", "why-evicted"])
def test_a_truncated_event_log_is_refused_naming_the_file(run: Path, tmp_path: Path, why: bool) -> None:
    cut = tmp_path / "cut"
    shutil.copytree(run, cut)
    events = (run / "events.jsonl").read_bytes()
    (cut / "events.jsonl").write_bytes(events[: len(events) // 2])  # very likely mid-line; made sure below
    if (cut / "events.jsonl").read_bytes().endswith(b"\n"):
        (cut / "events.jsonl").write_bytes(events[: len(events) // 2 - 1])
    result = CliRunner().invoke(main, ["inspect", str(cut), *(["--why-evicted", "0x1000"] if why else [])])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "events.jsonl" in result.output


@pytest.mark.parametrize(
    "option", [["--segment", "99"], ["--rows", "-3"], ["--width", "-1"], ["--time", "-5"]], ids=lambda o: o[0]
)
def test_an_option_out_of_range_is_refused_naming_it(run: Path, option: list[str]) -> None:
    result = CliRunner().invoke(main, ["inspect", str(run), *option])
    assert result.exit_code == 2, result.output
    assert option[0] in result.output
