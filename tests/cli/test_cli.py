"""The command line, end to end: what a user types and what they get back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenarios.tour import run_tour
from wddmsim.vidmm.events import PAGING_OP_NAMES


def test_run_verifies_every_check_and_writes_the_four_files(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "verified" in result.output
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
        assert runner.invoke(main, ["run", "--out", str(tmp_path / name)]).exit_code == 0
    assert (tmp_path / "a" / "events.jsonl").read_bytes() == (tmp_path / "b" / "events.jsonl").read_bytes()


def test_run_with_wddm1_and_an_80_gib_sparse_gpu() -> None:
    result = CliRunner().invoke(main, ["run", "--driver-model", "wddm1", "--vram", "80GiB"])
    assert result.exit_code == 0, result.output
    assert "80 GiB local memory" in result.output


def test_bad_sizes_are_refused_with_the_text() -> None:
    result = CliRunner().invoke(main, ["run", "--vram", "lots"])
    assert result.exit_code == 2
    assert "'lots'" in result.output


def test_a_paging_buffer_too_small_for_the_driver_is_a_configuration_error() -> None:
    result = CliRunner().invoke(main, ["run", "--paging-buffer", "32"])
    assert result.exit_code == 2
    assert "paging_buffer_size=32" in result.output


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
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert "FILL" in lines[0] and "pattern=0x000000ab" in lines[0]
    assert "SYNC" in lines[1]
    assert "!! invalid: length 0xffffffff is not a positive multiple of 16" in lines[2]


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


@pytest.mark.parametrize("command", ["run", "inspect", "disasm", "bench", "vm-decode"])
def test_every_command_has_help_with_examples(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output
    assert "Examples:" in result.output and f"wddmsim {command}" in result.output


def test_the_top_level_help_names_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "inspect", "disasm", "vm-decode", "bench"):
        assert f"wddmsim {command}" in result.output
