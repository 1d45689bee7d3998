"""What the command-line tests share: a short default run saved with ``--out`` (each module makes its own, once)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main


def save_run(factory: pytest.TempPathFactory, frames: int) -> Path:
    """``wddmsim run --set workload.frames=FRAMES --out DIR`` into a fresh directory, which it returns."""
    out = factory.mktemp("saved")
    result = CliRunner().invoke(main, ["run", "--set", f"workload.frames={frames}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out
