"""Hostile review of the new policies (clock, gds) against VidMm's placement: a device's residency list that fits
its segments was refused because the allocations of the list already placed were never moved -- under clock and
gds they sat scattered in the 8 MiB aperture, the largest hole 1.71 MB, and a 1.8 MiB aperture-only allocation
found no range.  Decision 0172: the list is packed anew (its placed members leave the segments the failing one may
use, then everything unplaced is placed again, the most confined first), so the run completes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main


@pytest.mark.parametrize("policy", ["clock", "gds"])
def test_stress_on_a_small_card_completes_under_every_policy(policy: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["run", "stress", "--vram", "16MiB", "--cpu-visible", "4MiB", "--policy", policy, "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, (result.output, result.exception)
    assert (out / "summary.json").is_file()
