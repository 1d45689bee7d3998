"""The benchmark of ``wddmsim sweep`` (issue 22): the same 40 short runs on one and on two local workers.

Each pool is started before the clock starts (the sweep reuses one pool for all its runs; process start-up is
paid once per sweep, not per run), so the ratio measures how the runs spread over the workers.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from wddmsim.bench.cases import REGISTRY
from wddmsim.bench.harness import result
from wddmsim.research.sweep import LocalBackend, Plan, run_sweep

SHORT = {"workload.frames": 2, "workload.processes": 1, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}
"""A run of about a quarter of a second."""


def _plan() -> Plan:
    grid: dict[str, list[object]] = {
        "policy": ["lru", "fifo", "clock", "arc"],
        "workload.oversubscription": [1.1, 1.25],
    }
    return Plan("default", grid, [1, 2, 3, 4, 5], dict(SHORT))


def _seconds(workers: int) -> tuple[float, int]:
    """Wall-clock seconds of the sweep on ``workers`` warm worker processes, and its runs that failed."""
    backend = LocalBackend(workers)
    backend.warm()
    with tempfile.TemporaryDirectory(prefix="wddmsim-bench-sweep-") as out:
        start = time.perf_counter()
        outcome = run_sweep(_plan(), Path(out), backend)
        return time.perf_counter() - start, outcome.failed


@REGISTRY.add(
    "sweep_scaleout",
    "wddmsim sweep: 40 short runs (4 policies x 2 oversubscriptions x 5 seeds) on 1 and on 2 local workers",
    "speedup_2_workers >= 1.7",
)
def sweep_scaleout() -> dict[str, Any]:
    one, failed = _seconds(1)
    two, _ = _seconds(2)
    return result(
        "sweep_scaleout",
        one / two,
        "x",
        speedup_2_workers=round(one / two, 3),
        seconds_1_worker=round(one, 3),
        seconds_2_workers=round(two, 3),
        runs=len(_plan().runs()),
        failed_runs=failed,
    )
