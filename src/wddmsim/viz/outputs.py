"""``--out DIR``: the four files of a run -- ``summary.json``, ``events.jsonl``, ``trace.json``, ``report.html``.

:class:`OutputStream` writes them as the run goes (decision 0189): attached to the adapter before the run, it
turns each event into its exported record as it is emitted, appends it to ``events.jsonl``, appends its trace
events to ``trace.json``, and folds it into the statistics, the process accounting and the report's bounded data
(decision 0190); :meth:`OutputStream.finish` closes the files, takes the end-of-run read-only snapshots the
report needs (page-table trees) and writes ``summary.json`` and ``report.html``.  Nothing it holds grows with
the number of events.  :func:`write_outputs` does the same at the end of a run whose adapter kept its events
(the same bytes).  Attach a :class:`~wddmsim.viz.capture.PagingCapture` before the run (:func:`recorder`) to get
paging-buffer disassembly into the report.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wddmsim.core.events import Event
from wddmsim.research.frames import Frame, write_frames_csv
from wddmsim.scenarios.result import Check, ScenarioRun
from wddmsim.system import Adapter
from wddmsim.viz.capture import PagingCapture
from wddmsim.viz.eventlog import Record, RecordStream, dumps
from wddmsim.viz.pagetables import address_spaces
from wddmsim.viz.processes import AccountPass, ProcessTotals
from wddmsim.viz.report import render_report
from wddmsim.viz.report_data import ReportData
from wddmsim.viz.summary import Statistics
from wddmsim.viz.trace import TraceFile, TraceStream

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


_WRITTEN_AT_THE_END = ("summary.json", "report.html", "frames.csv")
"""The files :meth:`OutputStream.finish` writes: an earlier run's are removed when a stream opens (decision 0238),
so a run killed before it finished leaves no summary that is not its own."""


class OutputStream:
    """The files of one run in ``out`` (created if needed), written as its events come: :meth:`attach` before
    the run (or :meth:`see` each event), :meth:`finish` after it.  A path that cannot be written raises
    ``OSError`` when the stream is made or written to."""

    def __init__(self, out: Path, *, capture: PagingCapture | None = None) -> None:
        out.mkdir(parents=True, exist_ok=True)
        for stale in _WRITTEN_AT_THE_END:  # an earlier run's: beside this run's log they would speak for it
            (out / stale).unlink(missing_ok=True)
        self.out = out
        self.capture = capture
        self._events = (out / "events.jsonl").open("w", encoding="utf-8")
        self._trace_file = (out / "trace.json").open("w", encoding="utf-8")
        self._trace = TraceFile(self._trace_file)
        self.accounts = AccountPass(keep=False)
        self.statistics = Statistics()
        self.processes = ProcessTotals(self.accounts)
        self.trace = TraceStream(self._trace.emit, self.accounts)
        self.report = ReportData(self.accounts, keep_chunks=self._captured)
        self.records = RecordStream(self._record)
        self.count = 0
        self.error: OSError | None = None
        """The first write that failed (a full disk): raised by :meth:`finish`, the run itself goes on."""

    def _captured(self, fence: int) -> bool:
        buffers = self.capture.buffers if self.capture is not None else []
        return bool(buffers) and buffers[-1].fence == fence

    def attach(self, adapter: Adapter) -> None:
        """See the events ``adapter`` kept so far and every later one."""
        adapter.events.follow(self.see)

    def see(self, event: Event) -> None:
        self.records.see(event)

    def _record(self, r: Record) -> None:
        if self.error is None:
            try:
                self._events.write(dumps(r) + "\n")
            except OSError as error:
                self.error = error
        self.accounts.see(r)  # first: the trace has a record's accounting rows before its own events
        self.trace.see(r)
        self.statistics.see(r)
        self.processes.see(r)
        self.report.see(r, self.count)
        self.count += 1

    def finish(self, adapter: Adapter, summary: dict[str, Any], *, frames: Sequence[Frame] | None = None) -> Outputs:
        """Close the files and write ``summary.json`` and ``report.html`` (and ``frames.csv`` with ``frames``,
        decision 0157: ``summary.json`` then names ``EvictionsByCause`` as the research metrics do too,
        ``evictions_by_cause``).  ``summary`` needs at least ``verified``; the statistics are added to it (they
        win over keys of the same name)."""
        try:
            return self._finish(adapter, summary, frames)
        finally:
            self.close()

    def _finish(self, adapter: Adapter, summary: dict[str, Any], frames: Sequence[Frame] | None) -> Outputs:
        self.records.finish()
        self._events.close()
        if self.error is not None:
            raise self.error
        stats = self.statistics.result()
        values = {**summary, **stats, "processes": self.processes.result()}
        if frames is not None:
            values["evictions_by_cause"] = stats["EvictionsByCause"]
            write_frames_csv(self.out / "frames.csv", frames)
        values.setdefault("verified", False)
        self.trace.finish()
        stopped = {"completed": False} if values.get("completed") is False else {}
        self._trace.close({"scenario": values.get("scenario", ""), "seed": values.get("seed", 0), **stopped})
        self._trace_file.close()
        out = self.out
        paths = Outputs(out / "summary.json", out / "events.jsonl", out / "trace.json", out / "report.html", values)
        self.report.finish()
        checks = [Check(c["step"], c["operation"], c["ok"], c["detail"]) for c in values.get("checks", [])]
        html = render_report(
            self.report,
            summary=values,
            checks=checks,
            trees=address_spaces(adapter),
            buffers=self.capture.buffers if self.capture is not None else (),
        )
        # summary.json last, each file whole or absent: a summary on disk means every file beside it is complete,
        # even if the command is interrupted while it writes them.
        _write_whole(paths.report, html)
        _write_whole(paths.summary, json.dumps(values, indent=2) + "\n")
        return paths

    def close(self) -> None:
        """Close the files without finishing them (a run abandoned): ``events.jsonl`` holds whole lines, and
        ``trace.json`` is closed as valid JSON as far as it went, ``otherData.completed`` false (decision 0238)."""
        self._events.close()
        if not self._trace.closed and not self._trace_file.closed:
            with contextlib.suppress(OSError):  # a full disk: the trace stays as far as it could be written
                self._trace.close({"completed": False})
        self._trace_file.close()


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file renamed over it: a reader finds the whole file or none."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8", errors="backslashreplace")  # a stray surrogate of a message
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_outputs(
    out: Path,
    adapter: Adapter,
    summary: dict[str, Any],
    *,
    capture: PagingCapture | None = None,
    frames: Sequence[Frame] | None = None,
) -> Outputs:
    """Write the four files of a finished run whose adapter kept its events into ``out``: an
    :class:`OutputStream` fed the kept events, then finished (the bytes a stream attached before the run
    writes)."""
    stream = OutputStream(out, capture=capture)
    kept = capture.buffers if capture is not None else ()
    stream.report.keep_chunks = {b.fence for b in kept}.__contains__
    try:
        for event in adapter.events:
            stream.see(event)
        return stream.finish(adapter, summary, frames=frames)
    finally:
        stream.close()


__all__ = ["REPORT_BUFFERS", "OutputStream", "Outputs", "recorder", "run_summary", "write_outputs"]
