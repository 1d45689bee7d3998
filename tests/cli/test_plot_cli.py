"""``wddmsim plot SWEEP_DIR``: the files it writes, bad input refused naming the option (exit 2), the missing
extra named with its pip command, and an end-to-end sweep directory assembled from real ``wddmsim run --out`` runs."""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from html import escape
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wddmsim.cli import main
from wddmsim.viz.sweep_figures import NO_FRAMES

from ..viz.sweep_fixture import SweepSpec, make_sweep
from .test_errors import refused


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    root = tmp_path / "sweep"
    make_sweep(root, SweepSpec(policies=("lru", "opt"), xs=(1.25, 2.0), seeds=(1, 2)))
    return root


def test_plot_writes_the_figures_and_the_report_and_prints_their_paths(sweep: Path) -> None:
    result = invoke("plot", str(sweep), "--format", "svg,png")
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines()
    assert printed[-1] == str(sweep / "report.html")
    assert len(printed) == 7 and all(Path(p).is_file() and Path(p).stat().st_size > 0 for p in printed)
    assert printed[0] == str(sweep / "figures/paged_in_over_lower_bound-by-workload_oversubscription.svg")


@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (["--x", "nope"], ["--x='nope'", "must be a column of results.csv"]),
        (["--y", "nope"], ["--y='nope'", "no such column", "paged_in_over_lower_bound"]),
        (["--runs", "abc,def"], ["--runs='abc'", "is no run of this sweep"]),
        (["--format", "png,gif"], ["--format='gif'", "png, svg"]),
    ],
)
def test_bad_options_exit_2_naming_the_option(sweep: Path, args: list[str], parts: list[str]) -> None:
    refused(invoke("plot", str(sweep), *args), *parts)
    assert not (sweep / "report.html").exists()


def test_a_missing_directory_or_results_csv_exits_2(tmp_path: Path) -> None:
    refused(invoke("plot", str(tmp_path / "nowhere")), "SWEEP_DIR=", "must be a directory")
    refused(invoke("plot", str(tmp_path)), "SWEEP_DIR=", "holds no results.csv")
    (tmp_path / "results.csv").write_text("a,b\n1,2\n")
    refused(invoke("plot", str(tmp_path)), "SWEEP_DIR=", "results.csv has no column id, status")
    (tmp_path / "results.csv").write_text("id,status\n")
    (tmp_path / "sweep.json").write_text("{not json")
    refused(invoke("plot", str(tmp_path)), "SWEEP_DIR=", "sweep.json is not JSON")


def test_without_matplotlib_plot_exits_2_with_the_pip_command(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    line = refused(invoke("plot", str(sweep)), "matplotlib", "pip install 'wddmsim[plot]'")
    assert line == "error: figures need matplotlib: pip install 'wddmsim[plot]'"
    assert not (sweep / "figures").exists()


def test_plot_help_has_examples() -> None:
    result = invoke("plot", "--help")
    assert result.exit_code == 0
    assert "Examples:" in result.output and "wddmsim plot sweep/" in result.output
    assert "wddmsim plot sweep/" in invoke("--help").output


def _scalars(summary: dict[str, object]) -> dict[str, object]:
    """summary.json's scalar keys and its dicts flattened one level (the contract's metric columns)."""
    out: dict[str, object] = {}
    for key, value in summary.items():
        if isinstance(value, bool | int | float) or value is None or key in ("scenario", "policy", "driver_model"):
            out[key] = value
        elif isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items() if isinstance(v, bool | int | float) or v is None})
    return out


def test_end_to_end_from_real_runs(tmp_path: Path) -> None:
    """Three short real runs (two policies; one of them with two seeds) laid out as a sweep directory by hand."""
    root = tmp_path / "sweep"
    grid = {"policy": ["lru", "fifo"], "workload.oversubscription": [1.5]}
    rows = []
    for policy, seed in (("lru", 1), ("lru", 2), ("fifo", 1)):
        settings = {"policy": policy, "workload.oversubscription": 1.5}
        text = json.dumps({"scenario": "default", "seed": seed, "settings": settings}, sort_keys=True)
        rid = hashlib.sha256(text.encode()).hexdigest()[:16]
        out = root / "runs" / rid
        args = ["run", "--seed", str(seed), "--policy", policy, "--oversubscription", "1.5", "--frames", "3"]
        result = invoke(*args, "--out", str(out))
        assert result.exit_code == 0, result.output
        summary = json.loads((out / "summary.json").read_text())
        row: dict[str, object] = {"id": rid, "scenario": "default", "seed": seed, **settings, "status": "ok"}
        rows.append(row | {"error": "", "seconds": 1.0} | _scalars(summary))
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with (root / "results.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)
    (root / "sweep.json").write_text(
        json.dumps({"scenario": "default", "grid": grid, "seeds": [1, 2], "settings": {}, "version": 1})
    )
    result = invoke("plot", str(root))
    assert result.exit_code == 0, result.output
    metric = (root / "figures/paged_in_over_lower_bound-by-workload_oversubscription.svg").read_text()
    assert ">lru<" in metric and "fifo (1 seed: no band)" in metric
    html = (root / "report.html").read_text()
    assert "3 runs · 3 ok · 0 failed" in html and "No run failed." in html
    stalls = (root / "figures/frame-stalls.svg").read_text()
    has_frames = all((root / "runs" / str(r["id"]) / "frames.csv").is_file() for r in rows)
    if has_frames:  # the per-frame metrics are there: one ECDF per policy
        assert "lru: p50" in stalls and "fifo: p50" in stalls
    else:  # not yet: a note in the figure, not a crash
        assert escape(NO_FRAMES, quote=False) in stalls


def test_png_only_writes_no_svg_file_yet_the_report_embeds_the_figures(sweep: Path) -> None:
    result = invoke("plot", str(sweep), "--format", "png")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (sweep / "figures").iterdir()) == [
        "frame-stalls.png",
        "occupancy.png",
        "paged_in_over_lower_bound-by-workload_oversubscription.png",
    ]
    html = (sweep / "report.html").read_text()
    assert html.count('src="data:image/svg+xml;base64,') == 3
    assert "figures/occupancy.png</span>" in html and "figures/occupancy.svg" not in html
