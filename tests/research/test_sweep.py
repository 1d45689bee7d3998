"""Issue 22 item 5, ``wddmsim sweep``: the grid and its ids, the table, failures recorded, resumption
(decisions 0150-0153).  The sweep's logic runs here on an in-process backend; one test uses real worker
processes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.research.runs import measured_run
from wddmsim.research.sweep import LocalBackend, Plan, RunSpec, parse_fixed, parse_grid, parse_seeds, run_sweep
from wddmsim.research.sweep.job import flatten
from wddmsim.research.sweep.store import Store, write_atomic
from wddmsim.scenarios import catalog

from .sweeping import SHORT, SerialBackend, header, read_csv

LEADING = ["id", "scenario", "seed", "policy", "workload.oversubscription", "status", "error", "seconds"]


def small_plan(policies: list[object] | None = None, seeds: list[int] | None = None) -> Plan:
    return Plan(
        "default",
        {"policy": policies or ["lru", "fifo"], "workload.oversubscription": [1.1, 1.5]},
        seeds or [1],
        dict(SHORT),
    )


def test_grid_expands_every_combination_first_key_slowest_seed_fastest() -> None:
    plan = Plan("default", parse_grid(["policy=lru,clock", "workload.oversubscription=1.1,2"]), [1, 2], {})
    runs = plan.runs()
    assert [(r.settings["policy"], r.settings["workload.oversubscription"], r.seed) for r in runs] == [
        ("lru", 1.1, 1), ("lru", 1.1, 2), ("lru", 2, 1), ("lru", 2, 2),
        ("clock", 1.1, 1), ("clock", 1.1, 2), ("clock", 2, 1), ("clock", 2, 2),
    ]  # fmt: skip
    assert type(runs[2].settings["workload.oversubscription"]) is int  # read as --set reads a value
    assert len({r.id for r in runs}) == 8


def test_a_run_id_hashes_scenario_seed_and_canonical_settings() -> None:
    spec = RunSpec("default", 3, {"policy": "lru", "workload.frames": 2})
    canonical = {"scenario": "default", "seed": 3, "settings": {"adapter.policy": "lru", "workload.frames": 2}}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    assert spec.id == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert spec.id == RunSpec("default", 3, {"workload.frames": 2, "adapter.policy": "lru"}).id
    assert spec.id != RunSpec("default", 4, {"policy": "lru", "workload.frames": 2}).id
    assert spec.id != RunSpec("stress", 3, {"policy": "lru", "workload.frames": 2}).id
    assert spec.overrides == {"adapter.policy": "lru", "workload.frames": 2, "seed": 3}


@pytest.mark.parametrize(
    ("texts", "rule"),
    [
        (["policy"], "must be KEY=V1,V2"),
        (["policy=lru,,fifo"], "no empty value"),
        (["policy=lru", "adapter.policy=fifo"], "already a grid key"),
        (["seed=1,2"], "--seeds N or --seed-list"),
        (["policy=lru,lru"], "a value is repeated"),
    ],
)
def test_bad_grid_options_are_refused_naming_them(texts: list[str], rule: str) -> None:
    with pytest.raises(ConfigurationError, match=rule) as caught:
        parse_grid(texts)
    assert caught.value.setting == "--grid"


def test_fixed_settings_and_seeds() -> None:
    assert parse_fixed(["workload.frames=2", "adapter.vram=64MiB"], {}) == {
        "workload.frames": 2,
        "adapter.vram": "64MiB",
    }
    with pytest.raises(ConfigurationError, match="is a grid key too"):
        parse_fixed(["adapter.policy=lru"], {"policy": ["fifo"]})
    assert parse_seeds(None, None) == [1]
    assert parse_seeds(3, None) == [1, 2, 3]
    assert parse_seeds(None, "5,1,2") == [5, 1, 2]
    for count, listed, option in ((0, None, "--seeds"), (None, "1,x", "--seed-list"), (None, "1,1", "--seed-list")):
        with pytest.raises(ConfigurationError) as caught:
            parse_seeds(count, listed)
        assert caught.value.setting == option


def test_validation_names_the_option_that_gave_a_bad_key_or_value() -> None:
    for grid, fixed, option in (
        ({"policy": ["lru", "nope"]}, {}, "--grid policy"),
        ({"workload.oversubscription": ["x"]}, {}, "--grid workload.oversubscription"),
        ({"policy": ["lru"]}, {"workload.framez": 2}, "--set workload.framez"),
    ):
        with pytest.raises(ConfigurationError) as caught:
            Plan("default", grid, [1], fixed).validate()
        assert caught.value.setting == option


def test_flatten_keeps_scalars_one_level_down_and_three_strings() -> None:
    summary = {
        "verified": True,
        "scenario": "default",
        "policy": "lru",
        "driver_model": "wddm2",
        "description": "not a metric",
        "paged_in_bytes": 4096,
        "paged_in_over_lower_bound": None,
        "evictions_by_cause": {"pressure": 3, "trim": 0},
        "config": {"adapter": {"vram": 1}, "name": "default", "seed": 1},
        "checks": [{"ok": True}],
    }
    assert flatten(summary) == {
        "verified": True,
        "scenario": "default",
        "policy": "lru",
        "driver_model": "wddm2",
        "paged_in_bytes": 4096,
        "paged_in_over_lower_bound": None,
        "evictions_by_cause.pressure": 3,
        "evictions_by_cause.trim": 0,
        "config.seed": 1,
    }


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Plan]:
    """Four short runs, one seed, in this process."""
    out = tmp_path_factory.mktemp("sweep")
    plan = small_plan()
    outcome = run_sweep(plan, out, SerialBackend())
    assert (outcome.total, outcome.skipped, outcome.ran, outcome.failed, outcome.interrupted) == (4, 0, 4, 0, False)
    return out, plan


def test_the_sweep_directory_follows_the_contract(swept: tuple[Path, Plan]) -> None:
    out, plan = swept
    assert json.loads((out / "sweep.json").read_text()) == {
        "scenario": "default",
        "grid": {"policy": ["lru", "fifo"], "workload.oversubscription": [1.1, 1.5]},
        "seeds": [1],
        "settings": SHORT,
        "version": 1,
    }
    ids = [s.id for s in plan.runs()]
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(ids)
    record = json.loads((out / "runs" / ids[0] / "result.json").read_text())
    assert set(record) == {"id", "scenario", "seed", "settings", "status", "error", "seconds", "metrics"}
    assert record["settings"] == {**SHORT, "policy": "lru", "workload.oversubscription": 1.1}
    assert (record["id"], record["status"], record["error"]) == (ids[0], "ok", None)
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    frames = (out / "runs" / ids[0] / "frames.csv").read_text().splitlines()
    assert frames[0] == (
        "frame,paged_in_bytes,paged_out_bytes,paging_stall_ns,faults,evictions,resident_local_bytes,"
        "resident_aperture_bytes,residency_stall_ns"
    )
    summary = json.loads((out / "runs" / ids[0] / "summary.json").read_text())
    assert len(frames) - 1 == summary["frames"] == record["metrics"]["frames"] > 0
    assert sum(int(row.split(",")[1]) for row in frames[1:]) <= summary["paged_in_bytes"]


def test_a_sweep_run_has_the_numbers_of_the_same_run_done_directly(swept: tuple[Path, Plan]) -> None:
    """The sweep runs through measured_run, the function ``wddmsim run --out`` uses (decision 0150)."""
    out, plan = swept
    spec = plan.runs()[3]
    direct = measured_run(catalog.load("default", spec.overrides)).summary()
    saved = json.loads((out / "runs" / spec.id / "summary.json").read_text())
    assert saved == json.loads(json.dumps(direct))
    assert saved["config"]["adapter"]["policy"] == "fifo" and saved["config"]["workload"]["oversubscription"] == 1.5
    record = json.loads((out / "runs" / spec.id / "result.json").read_text())
    assert record["metrics"] == flatten(saved)
    evictions = {k.split(".")[1]: v for k, v in saved["traffic"].items() if k.startswith("Evictions.")}
    assert saved["evictions_by_cause"] == evictions and sum(evictions.values()) == saved["traffic"]["Evictions"] > 0


def test_evictions_by_cause_match_the_d3dkmt_counters_of_run_out(tmp_path: Path) -> None:
    """The sweep's ``evictions_by_cause`` (from the run's traffic) is the event log's ``EvictionsByCause`` that
    ``wddmsim run --out`` writes (viz's statistics)."""
    from wddmsim.viz.eventlog import records
    from wddmsim.viz.summary import statistics

    run = measured_run(catalog.load("default", {**SHORT, "workload.oversubscription": 1.5}))
    assert run.summary()["evictions_by_cause"] == statistics(records(run.result.adapter.events))["EvictionsByCause"]


def test_results_csv_has_the_contract_columns_one_row_per_run_in_grid_order(swept: tuple[Path, Plan]) -> None:
    out, plan = swept
    columns = header(out / "results.csv")
    assert columns[: len(LEADING)] == LEADING
    metrics = columns[len(LEADING) :]
    assert metrics == sorted(metrics)
    assert {"paged_in_bytes", "paged_in_over_lower_bound", "verified", "driver_model", "config.seed"} <= set(metrics)
    assert "policy" not in metrics  # the grid column already
    rows = read_csv(out / "results.csv")
    assert [r["id"] for r in rows] == [s.id for s in plan.runs()]
    assert [(r["policy"], r["workload.oversubscription"], r["status"]) for r in rows] == [
        ("lru", "1.1", "ok"), ("lru", "1.5", "ok"), ("fifo", "1.1", "ok"), ("fifo", "1.5", "ok"),
    ]  # fmt: skip
    for row, spec in zip(rows, plan.runs(), strict=True):
        summary = json.loads((out / "runs" / spec.id / "summary.json").read_text())
        assert int(row["paged_in_bytes"]) == summary["paged_in_bytes"]
        assert row["verified"] == "True"
    frame = pd.read_csv(out / "results.csv")
    assert list(frame.columns) == columns and len(frame) == 4
    assert frame["paged_in_bytes"].dtype.kind == "i" and frame["workload.oversubscription"].dtype.kind == "f"


def test_parquet_round_trip_equals_the_csv(swept: tuple[Path, Plan]) -> None:
    out, _ = swept
    from_csv = pd.read_csv(out / "results.csv")
    from_parquet = pd.read_parquet(out / "results.parquet")
    assert list(from_parquet.columns) == list(from_csv.columns)
    assert str(from_parquet["error"].dtype) in ("object", "str") and from_parquet["error"].isna().all()

    def values(frame: pd.DataFrame) -> pd.DataFrame:  # empty is NaN in one, None in the other
        return frame.astype(object).where(frame.notna(), None)

    pd.testing.assert_frame_equal(values(from_parquet), values(from_csv), check_dtype=False)


def test_a_failed_run_is_recorded_and_the_others_continue(tmp_path: Path) -> None:
    plan = Plan(
        "default",
        {"policy": ["lru", "tests.research.sweep_policies:Exploding"], "workload.oversubscription": [1.1, 4]},
        [1],
        dict(SHORT),
    )
    plan.validate()  # the policy exists: it only fails when it runs
    outcome = run_sweep(plan, tmp_path, SerialBackend())
    assert (outcome.ran, outcome.failed, outcome.missing) == (4, 3, 3)
    rows = read_csv(tmp_path / "results.csv")
    assert [r["status"] for r in rows] == ["ok", "failed", "failed", "failed"]
    assert rows[1]["error"].startswith("did not verify, ") and "E_OUTOFMEMORY" in rows[1]["error"]
    assert rows[1]["paged_in_bytes"] != ""  # a run that did not verify still has its numbers
    for row in rows[2:]:
        assert row["error"] == "RuntimeError: exploding policy: no placement today"
        assert row["paged_in_bytes"] == ""
        assert "RuntimeError" in (tmp_path / "runs" / row["id"] / "error.txt").read_text()


def test_an_interrupted_sweep_resumes_without_redoing_finished_runs(tmp_path: Path) -> None:
    plan = small_plan(seeds=[1, 2])
    first = SerialBackend(interrupt_after=3)
    outcome = run_sweep(plan, tmp_path, first)
    assert outcome.interrupted and first.stopped and first.closed
    assert (outcome.ran, outcome.missing) == (3, 5)
    assert len(read_csv(tmp_path / "results.csv")) == 3  # the table holds what finished
    kept = {i: (tmp_path / "runs" / i / "result.json").stat().st_mtime_ns for i in first.given}
    again = SerialBackend()
    outcome = run_sweep(plan, tmp_path, again)
    assert (outcome.skipped, outcome.ran, outcome.missing, outcome.interrupted) == (3, 5, 0, False)
    assert set(again.given).isdisjoint(first.given) and len(set(first.given + again.given)) == 8
    assert {i: (tmp_path / "runs" / i / "result.json").stat().st_mtime_ns for i in first.given} == kept
    assert [r["id"] for r in read_csv(tmp_path / "results.csv")] == [s.id for s in plan.runs()]


def test_failed_runs_are_retried_on_a_rerun(tmp_path: Path) -> None:
    plan = Plan("default", {"workload.oversubscription": [1.1, 4]}, [1], dict(SHORT))
    assert run_sweep(plan, tmp_path, SerialBackend()).failed == 1
    again = SerialBackend()
    outcome = run_sweep(plan, tmp_path, again)
    assert (outcome.skipped, outcome.ran, outcome.failed) == (1, 1, 1)
    assert again.given == [plan.runs()[1].id]


def test_a_write_cut_short_leaves_the_previous_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "result.json"
    write_atomic(path, '{"status": "ok"}\n')

    def killed(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, '{"status": "failed", "error": "a long text"}\n')
    assert json.loads(path.read_text()) == {"status": "ok"}
    assert Store(tmp_path).result("missing") is None


def test_local_processes_give_the_table_of_the_in_process_run(swept: tuple[Path, Plan], tmp_path: Path) -> None:
    """Two spawn-started worker processes, one pool for the four runs: the same table but for wall-clock time."""
    _, plan = swept
    outcome = run_sweep(plan, tmp_path, LocalBackend(2))
    assert (outcome.ran, outcome.failed) == (4, 0)
    serial = read_csv(swept[0] / "results.csv", drop=lambda k: k == "seconds")
    assert read_csv(tmp_path / "results.csv", drop=lambda k: k == "seconds") == serial
