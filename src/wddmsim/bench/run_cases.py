"""Whole runs (issue 24): a built-in scenario end to end, ours against the pinned baseline (:mod:`.baseline`).

Each side runs ``wddmsim run NAME --seed 1`` in a child process, which times itself: the imports, then the
command (simulation, verification, research metrics and the printed report).  ``ratio`` compares the command's
time -- the work that grows with the events a run simulates, which is what "events per second" measures -- best
of three after an untimed run of each side (bytecode caches written, files cached), alternating sides so that
drift on a shared machine hits both (decision 0196).  Interpreter start and
imports are a fixed cost per process, reported beside it (``import_seconds``, ``process_ratio``) but not in the
ratio: how the package is installed (editable or not) changes them by a third, whatever the simulator does.
Events per second count the event log of the same run made in this process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from wddmsim.bench.baseline import BASELINE_COMMIT, NoBaseline, baseline_python, this_python
from wddmsim.bench.cases import REGISTRY
from wddmsim.bench.harness import result
from wddmsim.scenarios import catalog
from wddmsim.scenarios.runner import run_scenario

REPEATS = 3

_CHILD = """
import json, sys, time
began = time.perf_counter()
from wddmsim.cli import main
imported = time.perf_counter()
try:
    main(["run", sys.argv[1], "--seed", "1"])
except SystemExit as done:
    if done.code:
        raise
ran = time.perf_counter()
print(json.dumps({"import": imported - began, "run": ran - imported}), file=sys.stderr)
"""
"""The child: it times its own imports and the command (the same code runs under both installations)."""


class Timing(NamedTuple):
    process: float
    """Wall time of the whole child process (interpreter start included)."""
    imports: float
    run: float


def _child_env() -> dict[str, str]:
    """The children may write bytecode caches (an environment that forbids it would make the checkout under test
    compile every module it imports, every run, while the baseline's pip install ships compiled ones)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timing(python: Path, scenario: str) -> Timing:
    start = time.perf_counter()
    done = subprocess.run(
        [str(python), "-c", _CHILD, scenario],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{python} wddmsim run {scenario}: exit {done.returncode}: {done.stderr[-300:]}")
    measured = json.loads(done.stderr.strip().splitlines()[-1])
    return Timing(took, measured["import"], measured["run"])


def _best(timings: list[Timing]) -> Timing:
    return Timing(*(min(column) for column in zip(*timings, strict=True)))


def _whole_run(name: str, scenario: str) -> dict[str, Any]:
    config = catalog.load(scenario, {"seed": 1})
    events = len(run_scenario(config).adapter.events)
    frames = config.workload.frames
    try:
        baseline: Path | None = baseline_python()
        why = ""
    except NoBaseline as error:
        baseline, why = None, str(error)
    ours: list[Timing] = []
    theirs: list[Timing] = []
    _timing(this_python(), scenario)  # untimed: bytecode caches written, files in the page cache, on both sides
    if baseline is not None:
        _timing(baseline, scenario)
    for _ in range(REPEATS):
        ours.append(_timing(this_python(), scenario))
        if baseline is not None:
            theirs.append(_timing(baseline, scenario))
    mine = _best(ours)
    extra: dict[str, Any] = {
        "seconds": round(mine.run, 3),
        "import_seconds": round(mine.imports, 3),
        "process_seconds": round(mine.process, 3),
        "events": events,
        "events_per_second": round(events / mine.run),
        "frames_per_second": round(frames / mine.run, 2),
        "baseline_commit": BASELINE_COMMIT,
    }
    if baseline is None:
        return result(name, events / mine.run, "events/s", **extra, no_baseline=why)
    other = _best(theirs)
    extra["baseline_seconds"] = round(other.run, 3)
    extra["baseline_import_seconds"] = round(other.imports, 3)
    extra["process_ratio"] = round(other.process / mine.process, 3)
    return result(name, events / mine.run, "events/s", baseline=events / other.run, **extra)


@REGISTRY.add("run_default", "`wddmsim run default` end to end, against the pinned baseline", "ratio >= 2.0")
def run_default() -> dict[str, Any]:
    return _whole_run("run_default", "default")


@REGISTRY.add("run_stress", "`wddmsim run stress` end to end, against the pinned baseline", "ratio >= 2.0")
def run_stress() -> dict[str, Any]:
    return _whole_run("run_stress", "stress")


LONG_FRAMES = (100, 2000)
"""The two lengths ``run_long`` compares (issue 24: the cost of a frame must not depend on the frames before)."""

_LONG_CHILD = """
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
        [str(this_python()), "-c", _LONG_CHILD, str(measured), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_child_env(),
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
