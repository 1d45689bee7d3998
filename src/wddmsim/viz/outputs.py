"""``--out DIR``: the four files of a run -- ``summary.json``, ``events.jsonl``, ``trace.json``, ``report.html``.

:func:`write_outputs` is the one entry point (``wddmsim run`` and any workload driver use it): it exports the
adapter's event log, computes the statistics from it, takes the end-of-run read-only snapshots the report
needs (page-table trees), and writes the files.  Attach a :class:`~wddmsim.viz.capture.PagingCapture` before
the run (:func:`recorder`) to get paging-buffer disassembly into the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wddmsim.research.frames import Frame, write_frames_csv
from wddmsim.scenarios.result import Check, ScenarioRun
from wddmsim.system import Adapter
from wddmsim.viz.capture import PagingCapture
from wddmsim.viz.eventlog import records, write_jsonl
from wddmsim.viz.pagetables import address_spaces
from wddmsim.viz.processes import pressure_events, process_series, process_summary
from wddmsim.viz.report import build_report
from wddmsim.viz.summary import statistics
from wddmsim.viz.trace import write_trace

REPORT_BUFFERS = 8
"""Paging buffers the report disassembles from the start of a run (multipass splits come on top)."""


@dataclass(frozen=True, slots=True)
class Outputs:
    summary: Path
    events: Path
    trace: Path
    report: Path
    values: dict[str, Any]
    """What ``summary.json`` holds."""


def recorder(adapter: Adapter) -> PagingCapture:
    """A bounded paging-buffer capture for the report, attached to ``adapter`` (call before the run)."""
    capture = PagingCapture(first=REPORT_BUFFERS, splits=16)
    capture.attach(adapter)
    return capture


def run_summary(run: ScenarioRun) -> dict[str, Any]:
    """What the caller knows of a scenario run, for :func:`write_outputs`."""
    return {
        "verified": run.verified,
        "scenario": run.scenario,
        "seed": run.seed,
        "driver_model": run.adapter.config.driver.model.value,
        "simulated_time_ns": run.adapter.clock.now,
        "checks": [
            {"operation": c.operation, "step": c.step, "ok": c.ok, "detail": c.detail} for c in run.result.checks
        ],
    }


def write_outputs(
    out: Path,
    adapter: Adapter,
    summary: dict[str, Any],
    *,
    capture: PagingCapture | None = None,
    frames: Sequence[Frame] | None = None,
) -> Outputs:
    """Write the four files of a finished run into ``out`` (created if needed), and ``frames.csv`` when the
    run's ``frames`` are given (decision 0157; ``summary.json`` then names ``EvictionsByCause`` as the research
    metrics do too, ``evictions_by_cause``).

    ``summary`` needs at least ``verified``; the statistics computed from the event log are added to it (they
    win over keys of the same name).
    """
    out.mkdir(parents=True, exist_ok=True)
    rows = records(adapter.events)
    stats = statistics(rows)
    values = {**summary, **stats, "processes": process_summary(process_series(rows), pressure_events(rows))}
    if frames is not None:
        values["evictions_by_cause"] = stats["EvictionsByCause"]
        write_frames_csv(out / "frames.csv", frames)
    values.setdefault("verified", False)
    paths = Outputs(out / "summary.json", out / "events.jsonl", out / "trace.json", out / "report.html", values)
    paths.summary.write_text(json.dumps(values, indent=2) + "\n", encoding="utf-8")
    write_jsonl(paths.events, rows)
    write_trace(paths.trace, rows, metadata={"scenario": values.get("scenario", ""), "seed": values.get("seed", 0)})
    checks = [Check(c["step"], c["operation"], c["ok"], c["detail"]) for c in values.get("checks", [])]
    html = build_report(
        rows,
        summary=values,
        checks=checks,
        trees=address_spaces(adapter),
        buffers=capture.buffers if capture is not None else (),
    )
    paths.report.write_text(html, encoding="utf-8")
    return paths


__all__ = ["REPORT_BUFFERS", "Outputs", "recorder", "run_summary", "write_outputs"]
