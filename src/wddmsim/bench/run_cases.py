"""Whole runs (issue 24): a built-in scenario end to end, ours against the pinned baseline (:mod:`.baseline`).

Each side runs ``python -m wddmsim run NAME --seed 1`` in a child process (interpreter start and imports
included, as a user pays them), best of three, alternating sides so that drift on a shared machine hits both.
``ratio`` is the baseline's time over ours: 2.0 is twice as fast.  Events per second count the event log of the
same run made in this process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
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


LONG_FRAMES = (100, 2000)
"""The two lengths ``run_long`` compares (issue 24: the cost of a frame must not depend on the frames before)."""

_CHILD = """
import json, resource, sys, time
from wddmsim.cli import main
start, cpu = time.perf_counter(), time.process_time()
try:
    main(sys.argv[2:], prog_name="wddmsim")
except SystemExit as stop:
    code = stop.code
else:
    code = 0
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(sys.argv[1], "w") as f:
    json.dump({"seconds": seconds, "cpu_seconds": cpu, "max_rss_kib": rss, "exit": code}, f)
"""
"""Runs ``wddmsim run`` in a fresh interpreter and writes what it took: the command's wall and CPU time
(interpreter start excluded) and the child's own peak RSS (``ru_maxrss`` of itself: ``RUSAGE_CHILDREN`` would
be the largest of every child so far)."""


def _long_run(frames: int, work: Path) -> dict[str, Any]:
    measured = work / f"took-{frames}.json"
    out = work / f"out-{frames}"
    args = ["run", "default", "--seed", "1", "--frames", str(frames), "--out", str(out)]
    done = subprocess.run(
        [str(this_python()), "-c", _CHILD, str(measured), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    if done.returncode != 0 or not measured.exists():
        raise RuntimeError(f"wddmsim {' '.join(args)}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    took: dict[str, Any] = json.loads(measured.read_text())
    if took["exit"] != 0:
        raise RuntimeError(f"wddmsim {' '.join(args)}: exit {took['exit']}: {done.stderr.decode()[-300:]}")
    with (out / "events.jsonl").open("rb") as f:
        took["events"] = sum(1 for _ in f)
    shutil.rmtree(out)
    return took


@REGISTRY.add(
    "run_long",
    "`wddmsim run default --out` at 100 and at 2000 frames: time per frame and peak RSS, long over short",
    "per_frame_ratio <= 1.2 and rss_ratio <= 1.2",
)
def run_long() -> dict[str, Any]:
    short, long = LONG_FRAMES
    with tempfile.TemporaryDirectory(prefix="wddmsim-run-long-") as tmp:
        a, b = _long_run(short, Path(tmp)), _long_run(long, Path(tmp))
    # CPU time: on a shared machine other processes stretch wall time, unevenly over a long and a short run.
    per_frame = (b["cpu_seconds"] / long) / (a["cpu_seconds"] / short)
    per_event = (b["cpu_seconds"] / b["events"]) / (a["cpu_seconds"] / a["events"])
    wall = (b["seconds"] / long) / (a["seconds"] / short)
    return result(
        "run_long",
        round(per_frame, 3),
        "ratio",
        per_frame_ratio=round(per_frame, 3),
        rss_ratio=round(b["max_rss_kib"] / a["max_rss_kib"], 3),
        per_event_ratio=round(per_event, 3),
        per_frame_ratio_wall=round(wall, 3),
        **{f"cpu_ms_per_frame_{n}": round(r["cpu_seconds"] / n * 1000, 2) for n, r in ((short, a), (long, b))},
        **{f"ms_per_frame_{n}": round(r["seconds"] / n * 1000, 2) for n, r in ((short, a), (long, b))},
        **{f"events_per_frame_{n}": round(r["events"] / n) for n, r in ((short, a), (long, b))},
        **{f"peak_rss_mib_{n}": round(r["max_rss_kib"] / 1024, 1) for n, r in ((short, a), (long, b))},
    )
