"""Hostile GPGMM captures (issue 23): what the parser must refuse with its line and rule, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenarios.capture import gpgmm, scenario
from wddmsim.scenarios.config import from_dict
from wddmsim.scenarios.runner import run_scenario


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


DAWN = (
    Path(__file__).resolve().parents[1] / "data" / "gpgmm" / "dawn_end2end_queuewritebuffertests_manywritebuffer.json"
)


def test_a_newcomer_on_a_captures_timeline_creates_the_bytes_it_was_given() -> None:
    """The capture is process 0's; a timeline's newcomer creates its own ``bytes`` of the workload's kinds, not
    a second copy of the captured heaps' total (decision 0188)."""
    doc = scenario.document(gpgmm.parse(DAWN.read_text(encoding="utf-8"), DAWN.name), frames=6)
    doc["timeline"] = [
        {"frame": 1, "event": "start", "bytes": "1MiB", "client": "residency-library"},
        {"frame": 4, "event": "exit", "process": 1},
    ]
    result = run_scenario(from_dict(doc))
    assert [c for c in result.checks if not c.ok] == []
    captured, newcomer = result.processes
    assert captured.bytes == 16 << 20
    assert 1 << 20 <= newcomer.bytes < 2 << 20, newcomer
    assert newcomer.frames == 3


def test_a_capture_of_more_processes_than_a_scenario_runs_is_refused_at_the_first_one_too_many() -> None:
    events = []
    for pid in range(65):
        events.append({"name": "Heap", "ph": "N", "id": f"0x{pid:x}", "ts": pid, "pid": pid})
        snapshot = {"SizeInBytes": 65536, "HeapSegment": 0}
        events.append(
            {"name": "Heap", "ph": "O", "id": f"0x{pid:x}", "ts": pid, "pid": pid, "args": {"snapshot": snapshot}}
        )
    text = '{"traceEvents": [\n' + ",\n".join(json.dumps(e) for e in events) + "\n]}\n"
    with pytest.raises(gpgmm.CaptureError) as caught:
        gpgmm.parse(text, "crowd.json")
    assert str(caught.value) == (
        "crowd.json: line 130, column 1 (Heap creation): the capture's 65th process (pid 64): a scenario runs at "
        "most 64 processes"
    )
