"""Hostile GPGMM captures (issue 23): what the parser must refuse with its line and rule, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenarios.capture import gpgmm


def test_json_nested_past_the_parsers_depth_is_refused_as_not_json() -> None:
    with pytest.raises(gpgmm.CaptureError) as caught:
        gpgmm.parse("[" * 100_000 + "]" * 100_000, "deep.json")
    assert "deep.json: line 1, column 1 (the document): is not JSON: nested too deeply" in str(caught.value)


def test_the_cli_refuses_a_deeply_nested_capture_with_exit_2(tmp_path: Path) -> None:
    capture = tmp_path / "deep.json"
    capture.write_text('{"traceEvents": ' + "[" * 50_000 + "]" * 50_000 + "}", encoding="utf-8")
    result = CliRunner().invoke(main, ["import", "gpgmm", str(capture), "-o", str(tmp_path / "out.toml")])
    assert result.exit_code == 2, result.output
    assert "is not JSON: nested too deeply" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out.toml").exists()
