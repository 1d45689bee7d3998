"""The JSON files the command line reads back -- a call trace for ``replay``, a run's ``events.jsonl`` for
``inspect`` -- refuse what the decoder cannot read with the file and the line, exit 2, never a traceback: an integer
past Python's digit limit (a ``ValueError`` that is not a ``JSONDecodeError``), nesting past the decoder's depth,
and bytes that are not UTF-8."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

SEGMENT = (
    '{"time":0,"event":"ReportSegment","ulSegmentId":1,"BaseAddress":0,"Size":16777216,"CommitLimit":16777216,'
    '"CpuTranslatedAddress":1099511627776,"Flags":524292,"MemorySegmentGroup":0,"Aperture":false,"CpuVisible":true}\n'
)
LONG = "9" * (sys.get_int_max_str_digits() + 1)
DAMAGE = [
    ("long", f'{{"event":"X","time":{LONG}}}\n'.encode(), "an integer too long to read"),
    ("deep", b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deeply"),
    ("bytes", b'{"event":"\xff"}\n', "byte 10 is not UTF-8"),
]


@pytest.mark.parametrize(("damage", "line", "why"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_inspect_names_the_line_it_cannot_read(tmp_path: Path, damage: str, line: bytes, why: str) -> None:
    (tmp_path / "events.jsonl").write_bytes(SEGMENT.encode() + line)
    result = CliRunner().invoke(main, ["inspect", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"events.jsonl, line 2: not JSON ({why}); was the run cut short?" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_replay_names_the_line_with_an_integer_too_long_to_read(tmp_path: Path) -> None:
    trace = tmp_path / "calls.jsonl"
    trace.write_text(f'{{"trace":"wddmsim-calls","version":{LONG}}}\n')
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == 2
    digits = sys.get_int_max_str_digits()
    assert result.output == f"error: {trace}: line 1: not JSON: an integer of more than {digits} digits\n"
