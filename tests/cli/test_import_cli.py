"""``wddmsim import gpgmm FILE -o scenario.toml``, then ``wddmsim run scenario.toml`` (issue 23 part 4)."""

from __future__ import annotations

import codecs
import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "gpgmm"
DAWN = DATA / "dawn_end2end_queuewritebuffertests_manywritebuffer.json"
DML = DATA / "directml_samples_directmlxsuperresolution.json"


def test_the_dawn_capture_imports_and_runs_verified(tmp_path: Path) -> None:
    out = tmp_path / "dawn.toml"
    result = CliRunner().invoke(main, ["import", "gpgmm", str(DAWN), "-o", str(out), "--frames", "12"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {out}: GPGMM capture {DAWN.name}: 4 heaps (16 MiB)")
    doc = tomllib.loads(out.read_text())
    assert "Captured: heap sizes" in doc["description"] and "Modelled: which live heaps" in doc["description"]
    assert [r["last_frame"] for r in doc["capture"]["resources"]] == [11, 11, 11, 10]
    run = CliRunner().invoke(main, ["run", str(out), "--out", str(tmp_path / "run")])
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["verified"] is True
    assert summary["workload"]["allocations"] == 4 and summary["workload"]["bytes"] == 16 << 20
    assert summary["config"]["capture"]["source"] == DAWN.name


def test_the_directml_capture_imports_with_an_adapter_its_1_gib_heap_fits(tmp_path: Path) -> None:
    out = tmp_path / "dml.toml"
    result = CliRunner().invoke(main, ["import", "gpgmm", str(DML), "-o", str(out), "--name", "sr"])
    assert result.exit_code == 0, result.output
    doc = tomllib.loads(out.read_text())
    assert doc["name"] == "sr" and doc["workload"] == {"processes": 1, "frames": 12}
    assert doc["adapter"] == {"vram": "4GiB", "cpu_visible": "2GiB", "aperture": "32MiB"}
    assert max(r["size"] for r in doc["capture"]["resources"]) == 1 << 30
    # On a 64 MiB adapter the 1 GiB heap fits no segment: refused before anything runs.
    small = CliRunner().invoke(main, ["run", str(out), "--vram", "64MiB"])
    assert small.exit_code == 2
    assert "error: capture.resources[6].size='1GiB': p0.heap6 is larger than every segment" in small.output


def test_a_malformed_capture_is_refused_with_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    events = json.loads(DAWN.read_text())["traceEvents"]
    snapshot = next(e for e in events if e["name"] == "Heap" and e["ph"] == "O")
    del snapshot["args"]["snapshot"]["SizeInBytes"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [\n' + ",\n".join(json.dumps(e) for e in events) + "\n]}\n")
    out = tmp_path / "bad.toml"
    result = CliRunner().invoke(main, ["import", "gpgmm", str(bad), "-o", str(out)])
    assert result.exit_code == 2
    line = events.index(snapshot) + 2
    assert result.output == (
        f"error: bad.json: line {line}, column 1 (event {line - 2}, Heap 'O'): "
        "a Heap snapshot must give its size (SizeInBytes, or Size)\n"
    )
    assert not out.exists()


def test_a_capture_that_is_not_text_is_refused_naming_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\x00{}")
    result = CliRunner().invoke(main, ["import", "gpgmm", str(bad), "-o", str(tmp_path / "x.toml")])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: FILE={str(bad)!r}: cannot be read as UTF-8 text")
    assert not (tmp_path / "x.toml").exists()


WIDE = [
    ("utf-16-le", codecs.BOM_UTF16_LE, "UTF-16 (it starts with a UTF-16 byte-order mark)"),
    ("utf-16-be", codecs.BOM_UTF16_BE, "UTF-16 (it starts with a UTF-16 byte-order mark)"),
    ("utf-16", b"", "UTF-16 (it starts with a UTF-16 byte-order mark)"),  # the codec writes its own mark
    ("utf-32-le", codecs.BOM_UTF32_LE, "UTF-32 (it starts with a UTF-32 byte-order mark)"),
    ("utf-32-be", codecs.BOM_UTF32_BE, "UTF-32 (it starts with a UTF-32 byte-order mark)"),
    ("utf-16-le", b"", "UTF-16 (its first characters have a zero byte each)"),
    ("utf-16-be", b"", "UTF-16 (its first characters have a zero byte each)"),
    ("utf-32-le", b"", "UTF-32 (its first character has three zero bytes)"),
    ("utf-32-be", b"", "UTF-32 (its first character has three zero bytes)"),
]


@pytest.mark.parametrize(("encoding", "mark", "named"), WIDE, ids=[f"{e}{'+mark' if m else ''}" for e, m, _ in WIDE])
def test_a_utf16_or_utf32_capture_is_refused_saying_so(tmp_path: Path, encoding: str, mark: bytes, named: str) -> None:
    """What Windows PowerShell 5.1's ``Out-File`` writes by default, UTF-16 LE, and its kin, with or without a
    byte-order mark: named, with what to do (decision 0229) -- never a JSON error."""
    bad = tmp_path / "wide.json"
    bad.write_bytes(mark + DAWN.read_text(encoding="utf-8").encode(encoding))
    result = CliRunner().invoke(main, ["import", "gpgmm", str(bad), "-o", str(tmp_path / "x.toml")])
    assert result.exit_code == 2
    assert result.output == f"error: FILE={str(bad)!r}: is {named} text: save it as UTF-8\n"
    assert not (tmp_path / "x.toml").exists()


def test_a_capture_saved_with_a_utf8_byte_order_mark_imports_as_without_it(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark (Windows tools write one) is ignored (decision 0229): the same scenario, and errors
    keep their lines and columns."""
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    with_mark = tmp_path / "marked.json"
    with_mark.write_bytes(codecs.BOM_UTF8 + DAWN.read_bytes())
    for source, out in ((DAWN, plain), (with_mark, marked)):
        result = CliRunner().invoke(main, ["import", "gpgmm", str(source), "-o", str(out), "--name", "dawn"])
        assert result.exit_code == 0, result.output
    assert marked.read_text().replace(with_mark.name, DAWN.name) == plain.read_text()
    broken = tmp_path / "broken.json"
    broken.write_bytes(codecs.BOM_UTF8 + b'{"traceEvents": [\n  {"name": 1}\n]}')
    result = CliRunner().invoke(main, ["import", "gpgmm", str(broken), "-o", str(tmp_path / "x.toml")])
    assert result.exit_code == 2
    assert result.output.startswith("error: broken.json: line 2, column 3 (event 0")


def test_an_imported_scenario_refuses_fewer_frames_than_its_lifetimes(tmp_path: Path) -> None:
    out = tmp_path / "dawn.toml"
    assert CliRunner().invoke(main, ["import", "gpgmm", str(DAWN), "-o", str(out)]).exit_code == 0
    result = CliRunner().invoke(main, ["run", str(out), "--frames", "6"])
    assert result.exit_code == 2
    assert "error: capture.resources[0].last_frame=11: must be below workload.frames (6)" in result.output


def test_an_imported_scenario_runs_on_a_larger_card_without_growing(tmp_path: Path) -> None:
    """``--vram`` scales the BAR and the aperture; a capture's bytes stay its own (no oversubscription cap)."""
    out = tmp_path / "dawn.toml"
    assert CliRunner().invoke(main, ["import", "gpgmm", str(DAWN), "-o", str(out)]).exit_code == 0
    result = CliRunner().invoke(main, ["run", str(out), "--vram", "4GiB", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["workload"]["local_memory"] == 4 << 30 and summary["workload"]["bytes"] == 16 << 20


def test_a_number_past_pythons_digit_limit_is_refused_at_its_place(tmp_path: Path) -> None:
    """An integer literal of more digits than Python converts (4300 by default) was a ``ValueError`` traceback;
    now a refusal naming its line and column, and nothing is written."""
    text = DAWN.read_text()
    at = text.index('"ts": 46') + len('"ts": ')
    bad = tmp_path / "long.json"
    bad.write_text(text[:at] + "9" * 5000 + text[at + 2 :])
    out = tmp_path / "x.toml"
    result = CliRunner().invoke(main, ["import", "gpgmm", str(bad), "-o", str(out)])
    assert result.exit_code == 2, result.output
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    assert result.output == (
        f"error: long.json: line {line}, column {column} (a number): has 5000 digits: at most 4300 are read\n"
    )
    assert not out.exists()


def test_a_name_that_is_not_utf8_is_refused_and_a_file_name_that_is_not_is_shown_replaced(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 arrive in a command-line argument or a file name as lone surrogates, which a TOML
    file cannot hold: the import wrote a scenario ``wddmsim run`` could not read.  ``--name`` is refused by name; a
    file name is shown with U+FFFD, and the scenario runs."""
    out = tmp_path / "x.toml"
    result = CliRunner().invoke(main, ["import", "gpgmm", str(DAWN), "-o", str(out), "--name", "n\udcff"])
    assert result.exit_code == 2
    assert result.output == (
        "error: --name='n\\udcff': must be UTF-8 text: the scenario file is TOML, which holds no other\n"
    )
    assert not out.exists()
    odd = tmp_path / "bad\udcff.json"
    odd.write_bytes(DAWN.read_bytes())
    result = CliRunner().invoke(main, ["import", "gpgmm", str(odd), "-o", str(out)])
    assert result.exit_code == 0, result.output
    doc = tomllib.loads(out.read_text(encoding="utf-8"))
    assert doc["name"] == "gpgmm-bad\ufffd" and doc["capture"]["source"] == "bad\ufffd.json"
    run = CliRunner().invoke(main, ["run", str(out), "--out", str(tmp_path / "run")])
    assert run.exit_code == 0, run.output


def test_a_long_number_is_placed_past_digits_in_strings_and_fractions_before_it(tmp_path: Path) -> None:
    """The refusal names the integer literal the decoder refused, not an earlier run of as many digits inside a
    string or in a number's fraction (which the decoder reads as a float, whatever its length)."""
    text = DAWN.read_text().replace('"GPGMM_MainThread"', '"' + "7" * 5000 + '"', 1)
    text = text.replace('"ts": 303', '"ts": 3.' + "3" * 5000, 1)
    at = text.index('"ts": 46') + len('"ts": ')
    bad = tmp_path / "long.json"
    bad.write_text(text[:at] + "9" * 5000 + text[at + 2 :])
    result = CliRunner().invoke(main, ["import", "gpgmm", str(bad), "-o", str(tmp_path / "x.toml")])
    assert result.exit_code == 2, result.output
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    assert result.output == (
        f"error: long.json: line {line}, column {column} (a number): has 5000 digits: at most 4300 are read\n"
    )
