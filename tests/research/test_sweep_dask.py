"""Issue 22 item 5: the Dask backend on a local cluster of worker processes gives the table local processes give
(same seeds, same numbers; only the wall-clock ``seconds`` differ) (decision 0153)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.research.sweep import Backend, DaskBackend, LocalBackend, Plan, run_sweep

from .sweeping import SHORT, SerialBackend, read_csv


def wall_clock(column: str) -> bool:
    return column == "seconds"


def same_table_both_ways(plan: Plan, tmp_path: Path, local_backend: Backend) -> list[dict[str, str]]:
    local = run_sweep(plan, tmp_path / "local", local_backend)
    dask = run_sweep(plan, tmp_path / "dask", DaskBackend(None, 2))
    assert (
        (dask.total, dask.ran, dask.failed)
        == (local.total, local.ran, local.failed)
        == (len(plan.runs()), len(plan.runs()), local.failed)
    )
    rows = read_csv(tmp_path / "local" / "results.csv", drop=wall_clock)
    assert read_csv(tmp_path / "dask" / "results.csv", drop=wall_clock) == rows
    assert [r["id"] for r in rows] == [s.id for s in plan.runs()]
    return rows


def test_a_small_dask_sweep_equals_the_same_runs_in_this_process(tmp_path: Path) -> None:
    """Ten runs, the 2x and 4x ones failing (their working set does not fit 16 MiB): the Dask table is the
    in-process one."""
    plan = Plan(
        "default", {"policy": ["lru", "fifo"], "workload.oversubscription": [1.1, 1.25, 1.5, 2, 4]}, [1], dict(SHORT)
    )
    rows = same_table_both_ways(plan, tmp_path, SerialBackend())
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "failed", "failed"] * 2


@pytest.mark.slow
def test_a_hundred_and_twenty_runs_on_dask_equal_local_processes(tmp_path: Path) -> None:
    plan = Plan(
        "default",
        {"policy": ["lru", "fifo", "clock", "arc", "random"], "workload.oversubscription": [1.1, 1.25, 1.5, 2]},
        [1, 2, 3, 4, 5, 6],
        dict(SHORT),
    )
    rows = same_table_both_ways(plan, tmp_path, LocalBackend(2))
    assert len(rows) == 120 and len({r["paged_in_bytes"] for r in rows}) > 10
