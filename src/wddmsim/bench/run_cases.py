"""Whole runs (issue 24): a built-in scenario end to end, ours against the pinned baseline (:mod:`.baseline`).

Each side runs ``python -m wddmsim run NAME --seed 1`` in a child process (interpreter start and imports
included, as a user pays them), best of three, alternating sides so that drift on a shared machine hits both.
``ratio`` is the baseline's time over ours: 2.0 is twice as fast.  Events per second count the event log of the
same run made in this process.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from wddmsim.bench.baseline import BASELINE_COMMIT, NoBaseline, baseline_python, this_python
from wddmsim.bench.cases import REGISTRY
from wddmsim.bench.harness import result
from wddmsim.scenarios import catalog
from wddmsim.scenarios.runner import run_scenario

REPEATS = 3


def _seconds(python: Path, scenario: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [str(python), "-m", "wddmsim", "run", scenario, "--seed", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{python} -m wddmsim run {scenario}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return took


def _whole_run(name: str, scenario: str) -> dict[str, Any]:
    config = catalog.load(scenario, {"seed": 1})
    events = len(run_scenario(config).adapter.events)
    frames = config.workload.frames
    try:
        baseline: Path | None = baseline_python()
        why = ""
    except NoBaseline as error:
        baseline, why = None, str(error)
    ours = theirs = float("inf")
    for _ in range(REPEATS):
        ours = min(ours, _seconds(this_python(), scenario))
        if baseline is not None:
            theirs = min(theirs, _seconds(baseline, scenario))
    extra: dict[str, Any] = {
        "seconds": round(ours, 3),
        "events_per_second": round(events / ours),
        "frames_per_second": round(frames / ours, 2),
        "baseline_commit": BASELINE_COMMIT,
    }
    if baseline is None:
        return result(name, frames / ours, "frames/s", **extra, no_baseline=why)
    extra["baseline_seconds"] = round(theirs, 3)
    return result(name, frames / ours, "frames/s", baseline=frames / theirs, **extra)


@REGISTRY.add("run_default", "`wddmsim run default` end to end, against the pinned baseline", "ratio >= 2.0")
def run_default() -> dict[str, Any]:
    return _whole_run("run_default", "default")


@REGISTRY.add("run_stress", "`wddmsim run stress` end to end, against the pinned baseline", "ratio >= 2.0")
def run_stress() -> dict[str, Any]:
    return _whole_run("run_stress", "stress")
