"""The command line, end to end: what a user types and what they get back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenarios.tour import run_tour
from wddmsim.vidmm.events import PAGING_OP_NAMES


def test_run_verifies_the_default_workload_and_writes_the_four_files(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "verified" in result.output and "paging traffic" in result.output and "research metrics" in result.output
    files = {"summary.json", "events.jsonl", "trace.json", "report.html", "frames.csv"}
    assert {p.name for p in tmp_path.iterdir()} == files
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verified"] is True and summary["scenario"] == "default"
    assert all(c["ok"] for c in summary["checks"])
    assert summary["workload"]["bytes"] > summary["workload"]["local_memory"], "oversubscribed"
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    names = {e["event"] for e in events}
    assert {"VidMmMakeResident", "VidMmEvict", "PagingOpVirtualTransfer", "PagingBufferSubmitted", "CpuLock"} <= names
    evicted = sum(e["Size"] for e in events if e["event"] == "VidMmEvict" and e["Cause"] == "pressure")
    assert evicted == summary["traffic"]["BytesEvicted.pressure"], "counters agree with the event log"


def test_run_tour_verifies_every_check_and_writes_the_four_files(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "tour", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert {p.name for p in tmp_path.iterdir()} == {"summary.json", "events.jsonl", "trace.json", "report.html"}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verified"] is True and summary["scenario"] == "tour"
    assert all(c["ok"] for c in summary["checks"])
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    names = {e["event"] for e in events}
    assert {
        "ReportSegment",
        "PagingOpTransfer",
        "PagingOpFill",
        "BuildPagingBuffer",
        "PagingBufferSubmitted",
        "DmaBufferCompleted",
    } <= names
    transfers_in = sum(
        e["TransferSize"] for e in events if e["event"] == "PagingOpTransfer" and e["SourceSegmentId"] == 0
    )
    assert transfers_in == summary["BytesTransferredFromMdlToMemory"], "counters agree with the event log"
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_run_the_residency_scenario_with_a_seed(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "residency", "--seed", "5"])
    assert result.exit_code == 0, result.output
    assert "EvictionsDueToPreparation" in result.output and "5/5 checks passed" in result.output
    bad = CliRunner().invoke(main, ["run", "nope"])
    assert bad.exit_code == 2
    wddm1 = CliRunner().invoke(main, ["run", "residency", "--driver-model", "wddm1"])
    assert wddm1.exit_code == 2 and "GPU VAs" in wddm1.output


def test_the_tour_covers_every_modelled_operation_across_both_driver_models() -> None:
    seen: set[str] = set()
    for model in ("wddm2", "wddm1"):
        from wddmsim.kmd.config import DriverConfig, DriverModel
        from wddmsim.system import SystemConfig

        rig, result = run_tour(SystemConfig(driver=DriverConfig(model=DriverModel(model))))
        assert result.verified, [c for c in result.checks if not c.ok]
        seen |= {e.operation for e in rig.adapter.events if type(e).__name__ == "PagingOperation"}  # type: ignore[attr-defined]
    missing = (
        set(PAGING_OP_NAMES)
        - seen
        - {
            "DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES",  # covered by tests/kmd/test_operations.py
            "DXGK_OPERATION_MAP_APERTURE_SEGMENT2",  # needs the MapAperture2Supported opt-in: tests/kmd
        }
    )
    assert not missing


def test_run_is_deterministic(tmp_path: Path) -> None:
    runner = CliRunner()
    for name in ("a", "b"):
        result = runner.invoke(main, ["run", "--frames", "4", "--seed", "3", "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    assert (tmp_path / "a" / "events.jsonl").read_bytes() == (tmp_path / "b" / "events.jsonl").read_bytes()


def test_run_tour_with_wddm1_and_an_80_gib_sparse_gpu() -> None:
    result = CliRunner().invoke(main, ["run", "tour", "--driver-model", "wddm1", "--vram", "80GiB"])
    assert result.exit_code == 0, result.output
    assert "80 GiB local memory" in result.output


def test_run_options_override_the_scenario(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "run",
            "uploads",
            "--frames",
            "3",
            "--processes",
            "2",
            "--policy",
            "lru",
            "--set",
            "workload.uploads=4",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["driver_model"], summary["policy"], summary["workload"]["processes"]) == ("wddm1", "lru", 2)
    assert summary["config"]["workload"]["uploads"] == 4 and summary["workload"]["frames"] == 3


def test_bad_sizes_are_refused_with_the_text() -> None:
    result = CliRunner().invoke(main, ["run", "--vram", "lots"])
    assert result.exit_code == 2
    assert "'lots'" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--paging-buffer", "32"], "adapter.paging_buffer=32: must be a multiple of 4096"),
        (["tour", "--paging-buffer", "32"], "--paging-buffer=32: must be a multiple of 4096"),
        (["--set", "workload.frames=0"], "workload.frames=0: must lie between 1 and 100000"),
        (["--set", "workload.frame=3"], "workload.frame=3: is not a setting"),
        (["--set", "frames"], "--set='frames': must be KEY=VALUE"),
        (["--policy", "best"], "adapter.policy='best': must be one of the eviction policies"),
        (["--oversubscription", "20"], "workload.oversubscription=20.0: must lie between 0.05 and 16"),
        (["nope"], "SCENARIO='nope': is neither a built-in scenario"),
        (
            ["tour", "--frames", "3"],
            "--frames: the tour demonstration takes --driver-model, --vram, --paging-buffer and --seed only",
        ),
    ],
)
def test_bad_settings_exit_2_naming_the_key_the_value_and_the_rule(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["run", *args])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()), result.output


def test_a_failed_verification_exits_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from wddmsim.scenarios import timeline_run as runner
    from wddmsim.scenarios.app import App
    from wddmsim.scenarios.result import Check
    from wddmsim.scenarios.verify import verify

    def corrupted(app: App) -> list[Check]:
        name = app.resources[0].name
        wrong = app.model.bytes[name][:1].copy()  # one byte of one expectation
        wrong ^= 1
        app.model.write(name, 0, wrong)
        return verify(app)

    monkeypatch.setattr(runner, "verify", corrupted)
    result = CliRunner().invoke(main, ["run", "--frames", "2", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "VERIFICATION FAILED" in result.output
    assert json.loads((tmp_path / "summary.json").read_text())["verified"] is False


def test_run_list_shows_the_scenarios_and_the_settings() -> None:
    result = CliRunner().invoke(main, ["run", "--list"])
    assert result.exit_code == 0
    for word in ("default", "stress", "uploads", "tiles", "tour", "adapter.vram", "workload.oversubscription"):
        assert word in result.output


def test_record_then_replay(tmp_path: Path) -> None:
    runner = CliRunner()
    trace = tmp_path / "calls.jsonl"
    recorded = runner.invoke(
        main, ["run", "--frames", "6", "--set", "workload.oversubscription=2", "--record", str(trace)]
    )
    assert recorded.exit_code == 0, recorded.output
    same = runner.invoke(main, ["replay", str(trace)])
    assert same.exit_code == 0, same.output
    text = " ".join(same.output.split())
    assert "no difference" in text and "the event log is identical" in text and "content preserved" in text
    other = runner.invoke(main, ["replay", str(trace), "--policy", "random", "--out", str(tmp_path / "out")])
    assert other.exit_code == 0, other.output
    text = " ".join(other.output.split())
    assert "recorded run -> replay" in text and "policy random" in text
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verified"] is True and summary["difference"]
    bad = runner.invoke(main, ["replay", str(trace), "--vram", "1MiB"])
    assert bad.exit_code == 2 and "adapter.vram=1048576" in bad.output
    (tmp_path / "junk.jsonl").write_text("{}\n")
    junk = runner.invoke(main, ["replay", str(tmp_path / "junk.jsonl")])
    assert junk.exit_code == 2 and "is not a wddmsim-calls header" in junk.output


def test_disasm_of_the_default_run_shows_multipass_splits() -> None:
    result = CliRunner().invoke(main, ["disasm"])
    assert result.exit_code == 0, result.output
    assert "paging buffer fence 1:" in result.output
    assert "0 complete operation(s)" in result.output, "a partial buffer of a multipass transfer"
    assert "ends mid-operation: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER" in result.output
    assert "COPY" in result.output and "WRITE_QWORDS" in result.output and "SIGNAL" in result.output


def test_disasm_of_a_file(tmp_path: Path) -> None:
    from wddmsim.hw import commands as cmd

    path = tmp_path / "buffer.bin"
    path.write_bytes(cmd.encode(cmd.Fill(0x1000, 64, 0xAB)) + cmd.encode(cmd.Sync()) + b"\xff" * 16)
    result = CliRunner().invoke(main, ["disasm", str(path)])
    lines = result.stdout.splitlines()
    assert "FILL" in lines[0] and "pattern=0x000000ab" in lines[0]
    assert "SYNC" in lines[1]
    assert "!! invalid: length 0xffffffff is not a positive multiple of 16" in lines[2]
    # Decision 0047: what decoded is shown, then the file is refused as not a paging buffer.
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: FILE='{path}': is not a paging buffer: at offset 0x30: length 0xffffffff is not a positive "
        "multiple of 16\n"
    )


def test_bench_lists_and_runs_with_json() -> None:
    runner = CliRunner()
    listing = runner.invoke(main, ["bench", "--list"])
    assert "transfer_1gib" in listing.output and "small_roundtrip" in listing.output
    result = runner.invoke(main, ["bench", "sparse_80gib", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output.splitlines()[0])
    assert record["name"] == "sparse_80gib" and {"value", "unit", "create_ms", "rss_over_written_mib"} <= record.keys()
    bad = runner.invoke(main, ["bench", "nope"])
    assert bad.exit_code == 2 and "unknown benchmark" in bad.output


def test_vm_decode_walks_level_by_level_to_the_page_or_the_fault() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["vm-decode", "0x1001000"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("VA 0x1001000 in the paging process's address space")
    assert [line.split()[1] for line in lines if line.startswith("  level")] == ["3", "2", "1", "0"]
    assert "4 KB table: Valid" in result.output and "64 KB table: invalid" in result.output
    assert lines[-1].startswith("  => LOCAL 0x")
    missing = runner.invoke(main, ["vm-decode", "0x7000000000"])
    assert missing.output.splitlines()[-1] == "  => fault: level 2 entry is invalid"
    assert runner.invoke(main, ["vm-decode", "nope"]).exit_code == 2
    assert runner.invoke(main, ["vm-decode", "0x1000", "--driver-model", "wddm1"]).exit_code == 2


@pytest.mark.parametrize(
    "command", ["run", "replay", "inspect", "disasm", "bench", "vm-decode", "include-dir", "sweep"]
)
def test_every_command_has_help_with_examples(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output
    assert "Examples:" in result.output and f"wddmsim {command}" in result.output


def test_the_top_level_help_names_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "inspect", "disasm", "vm-decode", "bench", "include-dir", "sweep"):
        assert f"wddmsim {command}" in result.output


WIDE = {"COLUMNS": "200"}
"""A terminal wide enough that no line of the output is wrapped."""


def test_the_header_names_the_settings_the_command_line_changed() -> None:
    """The scenario's description speaks of its own settings (12 frames): the ones changed here follow it, sizes as
    typed; a run with none changed prints the description alone."""
    changed = CliRunner().invoke(
        main, ["run", "--frames", "2", "--vram", "64MiB", "--set", "workload.oversubscription=2"], env=WIDE
    )
    assert changed.exit_code == 0, changed.output
    first, second = changed.output.splitlines()[:2]
    assert first.startswith("default: 3 processes, 12 frames")
    assert second == "  changed here: workload.frames=2, adapter.vram=64MiB, workload.oversubscription=2"
    plain = CliRunner().invoke(main, ["run", "tiles"], env=WIDE)
    assert plain.exit_code == 0, plain.output
    assert "changed here" not in plain.output
