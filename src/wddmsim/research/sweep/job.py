"""One run of a sweep, as a worker executes it: load, run, measure -- never raise.

The run goes through :func:`~wddmsim.research.runs.measured_run`, the function ``wddmsim run`` uses, so a sweep's
numbers are those of ``wddmsim run --out`` for the same scenario, seed and settings.  The worker returns the
run's record and the text of its files; the sweep's own process writes them (:mod:`.store`), so workers on
other machines need no shared file system.  Any exception, and a run that did not verify, makes a failed run
with its error (decision 0152).
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Mapping
from typing import Any

from wddmsim.research.frames import frames_csv
from wddmsim.research.runs import measured_run
from wddmsim.research.sweep.grid import RunSpec
from wddmsim.scenarios import catalog

SUMMARY = "summary.json"
FRAMES = "frames.csv"
ERROR = "error.txt"


def flatten(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The table's metrics of a summary: scalar top-level keys, and nested dicts' scalars one level down as
    ``parent.child``; strings only for the scenario, the policy and the driver model."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if isinstance(value, Mapping):
            out.update({f"{key}.{k}": v for k, v in value.items() if _scalar(v)})
        elif _scalar(value) or (key in ("scenario", "policy", "driver_model") and isinstance(value, str)):
            out[key] = value
    return out


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float)


def run_one(spec_json: Mapping[str, Any]) -> dict[str, Any]:
    """Run the spec (``RunSpec.to_json``); return ``{"record": result.json's content, "files": {name: text}}``.

    Top-level and taking plain data: a process pool or a Dask worker pickles it by name."""
    spec = RunSpec.from_json(spec_json)
    start = time.perf_counter()
    summary: dict[str, Any] = {}
    files: dict[str, str] = {}
    try:
        # Its summary and frames come from folds: the adapter need keep no event (decision 0189).
        run = measured_run(catalog.load(spec.scenario, spec.overrides), on_adapter=lambda a: a.events.stop_keeping())
        summary = run.summary()
        files[SUMMARY] = json.dumps(summary, indent=2) + "\n"
        files[FRAMES] = frames_csv(run.frames)
        error = None if run.result.verified else _unverified(summary)
    except Exception as exc:  # a failed run is a result of the sweep, never its end
        error = f"{type(exc).__name__}: {exc}"
        files[ERROR] = traceback.format_exc()
    record = {
        "id": spec.id,
        **spec.to_json(),
        "status": "ok" if error is None else "failed",
        "error": error,
        "seconds": round(time.perf_counter() - start, 3),
        "metrics": flatten(summary),
    }
    return {"record": record, "files": files}


def lost(spec: RunSpec, error: str) -> dict[str, Any]:
    """The outcome of a run whose worker died or was lost before it could report."""
    record = {"id": spec.id, **spec.to_json(), "status": "failed", "error": error, "seconds": 0.0, "metrics": {}}
    return {"record": record, "files": {}}


def _unverified(summary: Mapping[str, Any]) -> str:
    failed = [c for c in summary.get("checks", []) if not c.get("ok")]
    first = f": {failed[0]['step']}: {failed[0]['operation']}: {failed[0]['detail']}" if failed else ""
    return f"did not verify, {len(failed)} check(s) failed{first}"


__all__ = ["ERROR", "FRAMES", "SUMMARY", "flatten", "lost", "run_one"]
