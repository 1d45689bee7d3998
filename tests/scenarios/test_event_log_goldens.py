"""The built-in scenarios give the event logs and summaries recorded in ``tests/golden/runs/``, byte for byte.

These runs pin behaviour across refactors of VidMm and the driver (issue 20: the house reshaped, behaviour
unchanged): every scenario in both driver models it supports, fixed seeds, and the default scenario under each
shipped eviction policy.  A difference is either a defect or an intended change of behaviour; an intended one is
its own commit, with its reason, made by ``pytest tests/scenarios/test_event_log_goldens.py --update-goldens``.
"""

from __future__ import annotations

import difflib
import lzma
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

GOLDEN = Path(__file__).parent.parent / "golden" / "runs"

RUNS: dict[str, list[str]] = {
    "default-wddm1": ["default", "--driver-model", "wddm1", "--seed", "1"],
    "default-wddm2": ["default", "--driver-model", "wddm2", "--seed", "1"],
    "default-wddm2-lru": ["default", "--driver-model", "wddm2", "--seed", "2", "--policy", "lru"],
    "default-wddm2-fifo": ["default", "--driver-model", "wddm2", "--seed", "3", "--policy", "fifo"],
    "default-wddm1-random": ["default", "--driver-model", "wddm1", "--seed", "4", "--policy", "random"],
    "default-wddm2-clock": ["default", "--driver-model", "wddm2", "--seed", "5", "--policy", "clock"],
    "default-wddm2-mru": ["default", "--driver-model", "wddm2", "--seed", "6", "--policy", "mru"],
    "default-wddm2-lfu": ["default", "--driver-model", "wddm2", "--seed", "7", "--policy", "lfu"],
    "default-wddm2-arc": ["default", "--driver-model", "wddm2", "--seed", "8", "--policy", "arc"],
    "default-wddm2-gds": ["default", "--driver-model", "wddm2", "--seed", "9", "--policy", "gds"],
    "default-wddm2-former": [
        *("default", "--driver-model", "wddm2", "--seed", "1"),
        *("--policy", "priority-lru", "--placement", "ladder"),
    ],
    "stress-wddm1": ["stress", "--driver-model", "wddm1", "--seed", "1"],
    "stress-wddm2": ["stress", "--driver-model", "wddm2", "--seed", "1"],
    "uploads-wddm1": ["uploads", "--driver-model", "wddm1", "--seed", "1"],
    "uploads-wddm2": ["uploads", "--driver-model", "wddm2", "--seed", "1"],
    "tiles-wddm2": ["tiles", "--driver-model", "wddm2", "--seed", "1"],
    "tour-wddm1": ["tour", "--driver-model", "wddm1", "--seed", "1"],
    "tour-wddm2": ["tour", "--driver-model", "wddm2", "--seed", "1"],
    "residency-wddm2": ["residency", "--driver-model", "wddm2", "--seed", "1"],
}
"""Tiled resources and the residency demonstration need GPU virtual addresses: they have no WDDM 1.x run."""

FILES = ("events.jsonl", "summary.json")


def _first_difference(name: str, want: bytes, got: bytes) -> str:
    """The first differing lines, as a unified diff short enough to read in a failure."""
    diff = difflib.unified_diff(
        want.decode().splitlines(), got.decode().splitlines(), f"golden/{name}", "this run", n=2, lineterm=""
    )
    return "\n".join(line[:300] for _, line in zip(range(40), diff, strict=False))


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_built_in_run_gives_its_recorded_event_log(run: str, tmp_path: Path, update_goldens: bool) -> None:
    result = CliRunner().invoke(main, ["run", *RUNS[run], "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for file in FILES:
        got = (tmp_path / file).read_bytes()
        golden = GOLDEN / run / f"{file}.xz"
        if update_goldens:
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_bytes(lzma.compress(got, preset=9))
            continue
        want = lzma.decompress(golden.read_bytes())
        assert got == want, f"{run}/{file} differs from its golden:\n" + _first_difference(f"{run}/{file}", want, got)
