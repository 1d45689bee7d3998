"""``wddmsim sweep`` on the command line: bad input refused before anything runs (exit 2, naming the option, value
and rule), a sweep's files and exit status, a rerun that skips what is done (decisions 0151-0153)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wddmsim.cli import main

from .test_errors import refused

SHORT = ["--set", "workload.frames=1", "--set", "workload.processes=1", "--set", "adapter.vram=16MiB"]
SHORT += ["--set", "adapter.cpu_visible=4MiB"]


def sweep(out: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["sweep", *args, "--out", str(out)])


@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (["--grid", "policy=lru,nope"], ["--grid policy='nope'", "must be one of the eviction policies"]),
        (["--grid", "workload.oversubscription=1.5,x"], ["--grid workload.oversubscription='x'", "must be a number"]),
        (["--grid", "workload.framez=1,2"], ["--grid workload.framez=1", "is not a setting"]),
        (["--grid", "policy"], ["--grid='policy'", "must be KEY=V1,V2"]),
        (["--set", "workload.frames=zero"], ["--set workload.frames='zero'"]),
        (["--set", "policy=lru", "--grid", "policy=fifo"], ["--set='policy=lru'", "is a grid key too"]),
        (["--seeds", "0"], ["--seeds=0", "must be at least 1"]),
        (["--seed-list", "1,b"], ["--seed-list='1,b'", "integers separated by commas"]),
        (["--seeds", "2", "--seed-list", "1"], ["--seed-list='1'", "not both"]),
        (["--jobs", "0"], ["--jobs=0", "must be at least 1"]),
        (["--scheduler", "tcp://127.0.0.1:1"], ["--scheduler='tcp://127.0.0.1:1'", "--backend dask only"]),
        (["tour"], ["SCENARIO='tour'", "neither a built-in scenario"]),
        # bytes that are not UTF-8 (they arrive as lone surrogates) stopped the tables' writing after every run
        (["--grid", "name=a\udcff,b"], ["--grid='name=a\\udcff,b'", "must be UTF-8 text"]),
        (["s\udcff.toml"], ["SCENARIO='s\\udcff.toml'", "must be UTF-8 text"]),
    ],
)
def test_bad_input_exits_2_naming_the_option_and_runs_nothing(
    tmp_path: Path, args: list[str], parts: list[str]
) -> None:
    out = tmp_path / "sweep"
    refused(sweep(out, *args), *parts)
    assert not out.exists()


def test_dask_backend_without_dask_names_the_pip_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    out = tmp_path / "sweep"
    refused(sweep(out, "--backend", "dask"), "--backend='dask'", "pip install 'wddmsim[dask]'")
    assert not out.exists()


def test_a_sweep_writes_its_table_and_a_rerun_skips_what_is_done(tmp_path: Path) -> None:
    out = tmp_path / "sweep[red]"  # brackets in a path the user chose are printed as written, not read as markup
    args = ["default", "--grid", "policy=lru,fifo", "--seed-list", "1,2", *SHORT, "--jobs", "2"]
    first = sweep(out, *args)
    assert first.exit_code == 0, first.output
    assert "sweep of 4 runs on 2 local worker process(es): 0 already done, skipped" in first.stderr
    assert f"done: ran 4 (0 failed), skipped 0; wrote {out / 'results.csv'}, " in first.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "figures",
        "report.html",
        "results.csv",
        "results.parquet",
        "runs",
        "sweep.json",
    ]
    assert f"figure files and {out / 'report.html'}" in first.stderr
    assert "paged_in_over_lower_bound" in (out / "report.html").read_text()
    lines = (out / "results.csv").read_text().splitlines()
    assert len(lines) == 5 and lines[0].startswith("id,scenario,seed,policy,status,error,seconds,")
    again = sweep(out, *args)
    assert again.exit_code == 0
    assert "4 already done, skipped" in again.stderr and "done: ran 0 (0 failed), skipped 4" in again.stderr
    assert (out / "results.csv").read_text().splitlines() == lines


def test_a_failed_run_makes_exit_status_1_and_is_listed(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    result = sweep(out, "--grid", "workload.oversubscription=1.1,4", *SHORT, "--jobs", "1")
    assert result.exit_code == 1
    assert "done: ran 2 (1 failed), skipped 0" in result.stderr
    assert "failed " in result.stderr and "workload.oversubscription=4): did not verify" in result.stderr
    assert "1 of 2 runs have no ok result: rerun the same command to retry them" in result.stderr


def test_an_out_directory_that_cannot_be_made_exits_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "sweep"
    refused(sweep(out, *SHORT, "--jobs", "1"), f"--out='{out}'", "cannot be written")


@pytest.mark.slow
def test_a_scheduler_that_does_not_answer_exits_2(tmp_path: Path) -> None:
    """Nothing listens on port 9: the Dask client gives up after its 10 s timeout."""
    refused(
        sweep(tmp_path / "sweep", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9"),
        "--scheduler=",
        "no Dask scheduler answers there",
    )


@pytest.mark.slow
def test_the_sweep_scaleout_benchmark_reports_its_fields() -> None:
    """The numbers are printed by CI, never asserted (wall clock); the record's shape and its runs are."""
    result = CliRunner().invoke(main, ["bench", "sweep_scaleout", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output.splitlines()[0])
    assert record["name"] == "sweep_scaleout" and record["unit"] == "x"
    assert (record["runs"], record["failed_runs"]) == (40, 0)
    ratio = record["seconds_1_worker"] / record["seconds_2_workers"]
    assert record["speedup_2_workers"] == pytest.approx(ratio, abs=0.01)
