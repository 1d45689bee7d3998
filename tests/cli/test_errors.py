"""Issue 19, the command line: every bad input is refused with one line on stderr naming the option or key, its
value and the rule, exit status 2; a run that fails or diverges exits 1; no input gives a traceback (decision
0047)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wddmsim.cli import main
from wddmsim.scenarios import catalog
from wddmsim.scenarios.runner import run_scenario

SMALL = ["--frames", "2", "--processes", "1", "--vram", "32MiB", "--cpu-visible", "8MiB"]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def refused(result: Result, *parts: str) -> str:
    """Exit 2, nothing on stdout, one line on stderr holding every part; no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small recorded run (version 2: its trailer counts the calls)."""
    path = tmp_path_factory.mktemp("trace") / "calls.jsonl"
    config = catalog.load(
        "default",
        {"workload.frames": 2, "workload.processes": 1, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"},
    )
    with path.open("w") as f:
        assert run_scenario(config, record=f).verified
    return path


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- configuration ----------------------------------------------------------------------------------------------


def test_a_paging_buffer_that_cannot_be_allocated_is_a_configuration_error() -> None:
    refused(invoke("run", "--set", "adapter.paging_buffer=1GiB"), "adapter.paging_buffer='1GiB'", "at most 8 MiB")
    refused(invoke("run", "tour", "--paging-buffer", "1GiB"), "--paging-buffer=1073741824", "at most 8 MiB")


def test_validation_errors_go_to_stderr_on_one_line() -> None:
    line = refused(invoke("run", "--set", "workload.frames=0"))
    assert line == "error: workload.frames=0: must lie between 1 and 100000"


def test_page_table_levels_too_small_for_the_paging_process_are_refused_by_the_rule() -> None:
    refused(invoke("run", "--page-table-levels", "9,9"), "adapter.page_table_levels=[9, 9]", "32 to 57 bits")
    refused(invoke("run", "--page-table-levels", "10,9,9"), "leaf level first and at most 9 bits")


def test_a_size_beyond_the_limit_names_the_limit_not_the_format() -> None:
    refused(invoke("run", "--vram", "1PiB"), "--vram=1125899906842624", "between 4 MiB and 1 TiB")
    refused(invoke("run", "tour", "--vram", "1PiB"), "--vram=1125899906842624", "between 4 MiB and 1 TiB")


@pytest.mark.parametrize("vram", ["64MiB", "96MiB", "128MiB", "160MiB", "192MiB"])
def test_the_tour_runs_scaled_at_every_size_it_fits(vram: str) -> None:
    result = invoke("run", "tour", "--vram", vram)
    assert result.exit_code == 0, result.output
    assert "verified" in result.stdout and not result.stderr


@pytest.mark.parametrize("command", ["run", "disasm"])
def test_too_little_memory_for_the_tour_names_vram(command: str) -> None:
    args = ["run", "tour"] if command == "run" else ["disasm"]
    refused(invoke(*args, "--vram", "8MiB"), "--vram=8388608", "the tour needs")


def test_disasm_of_a_scenario_that_runs_at_64mib_exits_0() -> None:
    result = invoke("disasm", "--vram", "64MiB")
    assert result.exit_code == 0 and "paging buffer fence" in result.stdout


# --- files and numbers ------------------------------------------------------------------------------------------


def test_record_to_a_path_that_cannot_be_written() -> None:
    refused(invoke("run", *SMALL, "--record", "/nonexistent/x.jsonl"), "--record='/nonexistent/x.jsonl'")


def test_disasm_base_must_be_a_number() -> None:
    refused(invoke("disasm", "--base", "zz"), "--base", "'zz'")


@pytest.mark.parametrize("va", ["-5", hex(1 << 64), "0x1ffffffffffffffffff"])
def test_vm_decode_refuses_a_va_outside_64_bits(va: str) -> None:
    refused(invoke("vm-decode", "--", va), "VA", va, "2**64 - 1")


@pytest.mark.parametrize(("content", "rule"), [(b"", "is empty"), (bytes(range(7, 200)), "is not a paging buffer")])
def test_disasm_of_a_file_that_is_not_a_paging_buffer_exits_2(tmp_path: Path, content: bytes, rule: str) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(content)
    refused(invoke("disasm", str(path)), "FILE=", rule)


# --- replay -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n \n"])
def test_replay_of_an_empty_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text)
    refused(invoke("replay", str(path)), "empty")


def test_replay_of_a_field_of_the_wrong_type(tmp_path: Path, trace: Path) -> None:
    records = lines_of(trace)
    index = next(i for i, r in enumerate(records) if r.get("call") == "allocate")
    records[index]["args"] = 7
    refused(invoke("replay", str(write(tmp_path / "t.jsonl", records))), f"line {index + 1}", "malformed")


def test_replay_of_an_unknown_handle(tmp_path: Path, trace: Path) -> None:
    records = lines_of(trace)
    index = next(i for i, r in enumerate(records) if r.get("call") == "make_resident")
    records[index]["device"] = "D99"
    refused(invoke("replay", str(write(tmp_path / "t.jsonl", records))), f"line {index + 1}")


def test_a_trace_cut_at_a_line_boundary_is_refused(tmp_path: Path, trace: Path) -> None:
    lines = trace.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[: len(lines) // 2]))
    refused(invoke("replay", str(cut)), "cut short")
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(lines[:3] + lines[4:]))
    refused(invoke("replay", str(edited)), f"counts {len(lines) - 2} calls; the trace holds {len(lines) - 3}")


def test_a_version_1_trace_with_its_trailer_still_replays(tmp_path: Path, trace: Path) -> None:
    records = lines_of(trace)
    records[0]["version"] = 1
    del records[-1]["end"]["calls"]  # type: ignore[attr-defined]
    result = invoke("replay", str(write(tmp_path / "v1.jsonl", records)))
    assert result.exit_code == 0, result.output


def test_a_json_error_names_its_real_line(tmp_path: Path, trace: Path) -> None:
    lines = trace.read_text().splitlines(keepends=True)
    lines[5] = lines[5][:-5] + "\n"
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines))
    refused(invoke("replay", str(path)), "line 6: not JSON")


def test_a_replay_that_diverges_without_overrides_exits_1(tmp_path: Path, trace: Path) -> None:
    records = lines_of(trace)
    index = next(i for i, r in enumerate(records) if r.get("result") == "S_OK")
    records[index]["result"] = "E_OUTOFMEMORY"
    result = invoke("replay", str(write(tmp_path / "t.jsonl", records)))
    assert result.exit_code == 1, result.output
    assert "REPLAY DIVERGED" in result.stdout and "Traceback" not in result.output


def test_a_call_that_succeeded_when_recorded_and_is_refused_under_overrides_exits_1(
    tmp_path: Path, trace: Path
) -> None:
    records = lines_of(trace)
    index = next(i for i, r in enumerate(records) if r.get("call") == "wait_for_paging_fence")
    records[index]["args"]["hPagingQueue"] = 12345  # type: ignore[index]
    path = write(tmp_path / "t.jsonl", records)
    result = invoke("replay", str(path), "--policy", "lru")
    assert result.exit_code == 1, result.output
    assert "were refused" in result.stdout


def test_the_residency_demo_refuses_more_memory_than_its_system_pages_back_naming_vram() -> None:
    refused(invoke("run", "residency", "--vram", "512MiB"), "--vram='512MiB'", "needs at most 172 MiB")


# --- found by the review of the campaign's change ----------------------------------------------------------------


def test_a_record_file_that_stops_taking_the_trace_is_refused_naming_record() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this machine")
    refused(invoke("run", *SMALL, "--record", "/dev/full"), "--record='/dev/full'", "cannot be written")


def test_an_out_folder_that_cannot_be_written_is_bad_input_like_record(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    refused(invoke("run", *SMALL, "--out", str(blocker)), "--out")


def test_replay_of_a_write_larger_than_any_workload_is_refused(tmp_path: Path, trace: Path) -> None:
    records = lines_of(trace)
    index = next(i for i, r in enumerate(records) if r.get("call") == "cpu_write" and "pattern" in r["args"])  # type: ignore[operator]
    records[index]["args"]["pattern"]["size"] = 2**40  # type: ignore[index]
    refused(invoke("replay", str(write(tmp_path / "t.jsonl", records))), f"line {index + 1}", "pattern size")


def test_replay_refuses_flag_words_with_bits_outside_their_union(tmp_path: Path, trace: Path) -> None:
    """The lock2 Flags were dropped on replay: a trace with any Flags replayed as a clean lock."""
    records = lines_of(trace)
    index = next(i for i, r in enumerate(records) if r.get("call") == "lock2")
    records[index]["args"]["Flags"] = 2**70  # type: ignore[index]
    refused(invoke("replay", str(write(tmp_path / "t.jsonl", records))), f"line {index + 1}", "D3DDDICB_LOCK2FLAGS")


@pytest.mark.parametrize(
    "args",
    [["disasm", "a\x00b"], ["replay", "a\x00b"], ["inspect", "a\x00b"], ["run", "--out", "a\x00b"]],
    ids=["disasm", "replay", "inspect", "run-out"],
)
def test_a_path_with_a_nul_character_is_bad_input_not_a_traceback(args: list[str]) -> None:
    """Found by the slow CLI fuzzer: the OS refuses such a path with ValueError, which escaped as a traceback."""
    refused(invoke(*args), "NUL character")
