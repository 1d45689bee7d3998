"""Per-process accounting over time (decision 0175): the series from the log, against VidMm's own counters and
against a second reading of the log; in summary.json, trace.json and report.html."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.system import Adapter
from wddmsim.viz.eventlog import Record
from wddmsim.viz.outputs import Outputs
from wddmsim.viz.processes import FIGURES, PRESSURE_EVENTS, process_series, process_summary
from wddmsim.viz.report import MAX_MARKS, build_report
from wddmsim.viz.svg import human
from wddmsim.viz.trace import TRACKED, chrome_trace

from .conftest import LOCAL, SavedRun, WorkloadRun

MiB = 1 << 20


def _records() -> list[Record]:
    def seg(number: int, size: int, group: int, aperture: bool) -> Record:
        return {"time": 0, "event": "ReportSegment", "ulSegmentId": number, "Size": size,
                "MemorySegmentGroup": group, "Aperture": aperture}  # fmt: skip

    def alloc(time: int, handle: int, process: int, group: int, action: str) -> Record:
        return {"time": time, "event": "AdapterAllocation", "hVidMmGlobalAlloc": handle, "allocSize": MiB,
                "Action": action, "hProcess": process, "MemorySegmentGroup": group}  # fmt: skip

    def page_in(time: int, handle: int, segment: int) -> Record:
        return {"time": time, "event": "PageInAllocation", "hAllocationHandle": handle, "uiSegmentId": segment,
                "Size": MiB}  # fmt: skip

    def evict(time: int, handle: int, segment: int, cause: str, destination: str) -> Record:
        return {"time": time, "event": "VidMmEvict", "pVidMmAlloc": handle, "SegmentId": segment, "Size": MiB,
                "Cause": cause, "Destination": destination}  # fmt: skip

    return [
        seg(1, 8 * MiB, 0, False),
        seg(2, 4 * MiB, 1, True),
        alloc(10, 100, 7, 0, "create"),
        alloc(10, 101, 7, 1, "create"),
        alloc(10, 102, 0, 0, "create"),  # the driver's own: no process
        {"time": 20, "event": "VidMmProcessUsageChange", "hProcess": 7, "MemorySegmentGroup": 0, "CurrentUsage": MiB},
        page_in(20, 100, 1),
        page_in(21, 101, 2),
        page_in(22, 102, 1),
        page_in(30, 100, 2),  # demoted: in the aperture first, then out of memory
        evict(30, 100, 1, "pressure", "aperture"),
        {"time": 40, "event": "VidMmProcessBudgetChange", "hProcess": 7, "MemorySegmentGroup": 0, "Budget": 2 * MiB},
        evict(50, 100, 2, "trim", "system"),
        evict(60, 101, 2, "destroy", "discarded"),
        alloc(60, 101, 7, 1, "destroy"),
    ]


def test_the_series_from_a_few_records_by_hand() -> None:
    series = process_series(_records())
    assert list(series) == [7], "the driver's own allocation belongs to no process"
    local = [(r.time, r.event, r.budget, r.usage, r.resident, r.aperture, r.demoted, r.evicted, r.evicted_total)
             for r in series[7][0]]  # fmt: skip
    assert local == [
        (10, "AdapterAllocation", 8 * MiB, 0, 0, 0, 0, MiB, 0),
        (20, "VidMmProcessUsageChange", 8 * MiB, MiB, 0, 0, 0, MiB, 0),
        (20, "PageInAllocation", 8 * MiB, MiB, MiB, 0, 0, 0, 0),
        (30, "PageInAllocation", 8 * MiB, MiB, MiB, MiB, MiB, -MiB, 0),  # both places for a moment
        (30, "VidMmEvict", 8 * MiB, MiB, 0, MiB, MiB, 0, 0),  # a demotion is no eviction
        (40, "VidMmProcessBudgetChange", 2 * MiB, MiB, 0, MiB, MiB, 0, 0),
        (50, "VidMmEvict", 2 * MiB, MiB, 0, 0, 0, MiB, MiB),
    ]
    non_local = [(r.time, r.committed, r.aperture, r.demoted, r.evicted_total) for r in series[7][1]]
    assert non_local == [(10, MiB, 0, 0, 0), (21, MiB, MiB, 0, 0), (60, MiB, 0, 0, 0), (60, 0, 0, 0, 0)], (
        "the non-local group's aperture bytes are not demoted; a destruction is no eviction"
    )
    summary = process_summary(series, [])
    assert summary["by_process"]["0x7"]["local"]["final"]["budget"] == 2 * MiB
    assert summary["by_process"]["0x7"]["local"]["peak"]["budget"] == 8 * MiB
    assert summary["by_process"]["0x7"]["local"]["lowest_budget"] == 2 * MiB
    assert summary["by_process"]["0x7"]["non_local"]["changes"] == 4
    assert summary["pressure_events"] == {}


def _last(rows: list[Record], event: str, field: str) -> dict[tuple[int, int], int]:
    return {(r["hProcess"], r["MemorySegmentGroup"]): r[field] for r in rows if r["event"] == event}


def _ranges(rows: list[Record]) -> dict[tuple[int, int], list[int]]:
    """(process, group) -> [resident, aperture], read from the segment ranges (another record than the series's)."""
    apertures = {r["ulSegmentId"] for r in rows if r["event"] == "ReportSegment" and r["Aperture"]}
    group = {r["hVidMmGlobalAlloc"]: r["MemorySegmentGroup"] for r in rows if r["event"] == "AdapterAllocation"}
    out: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["event"] == "SegmentRange" and r["Owner"] == "allocation" and r["hProcess"]:
            sign = 1 if r["Action"] == "allocate" else -1
            out[(r["hProcess"], group[r["hAllocation"]])][r["SegmentId"] in apertures] += sign * r["Size"]
    return out


def _check_run(rows: list[Record], saved: Outputs, adapter: Adapter) -> dict[str, Any]:
    """The summary's figures against the last change events, the segment ranges, and VidMm's own counters."""
    summary: dict[str, Any] = json.loads(saved.summary.read_text())["processes"]
    processes = {int(h): p for h, p in adapter.vidmm.residency.processes.items()}
    usage = _last(rows, "VidMmProcessUsageChange", "CurrentUsage")
    commitment = _last(rows, "VidMmProcessCommitmentChange", "Commitment")
    demoted = _last(rows, "VidMmProcessDemotedCommitmentChange", "DemotedCommitment")
    ranges = _ranges(rows)
    assert summary["by_process"], "some process allocated"
    for name, groups in summary["by_process"].items():
        pid = int(name, 16)
        process = processes.get(pid)
        for g, figures in ((0, groups.get("local")), (1, groups.get("non_local"))):
            if figures is None:
                continue
            final = figures["final"]
            assert final["usage"] == usage.get((pid, g), 0)
            assert final["committed"] == commitment.get((pid, g), 0)
            assert final["demoted"] == demoted.get((pid, g), 0)
            assert [final["resident"], final["aperture"]] == ranges[(pid, g)]
            assert final["evicted"] == final["committed"] - final["resident"] - final["aperture"] >= 0
            assert all(figures["peak"][k] >= final[k] for k in FIGURES)
            if process is None:  # exited: nothing of it is left
                assert final["committed"] == final["usage"] == 0
                continue
            kept = process.account.figures(g)  # VidMm's incremental counters
            assert (kept.usage, kept.committed, kept.resident, kept.aperture, kept.demoted) == (
                final["usage"], final["committed"], final["resident"], final["aperture"], final["demoted"]
            )  # fmt: skip
            assert final["budget"] == process.budgets[D3DKMT_MEMORY_SEGMENT_GROUP(g)]
    pressure = Counter(r["event"] for r in rows if r["event"] in PRESSURE_EVENTS)
    assert summary["pressure_events"] == dict(sorted(pressure.items()))
    return summary


def test_the_per_process_counters_are_the_sums_of_the_event_log(residency: SavedRun) -> None:
    summary = _check_run(residency.rows, residency.outputs, residency.run.adapter)
    assert len(summary["by_process"]) == 4 and summary["pressure_events"] == {"ProcessLifetime": 4}


def test_a_run_of_the_driver_alone_has_no_process(tour: SavedRun) -> None:
    processes = json.loads(tour.outputs.summary.read_text())["processes"]
    assert processes == {"by_process": {}, "pressure_events": {}}, "the tour's allocations are the driver's own"


def test_under_pressure_the_counters_still_add_up_and_budgets_follow_their_changes(newcomer: WorkloadRun) -> None:
    rows = newcomer.rows
    summary = _check_run(rows, newcomer.outputs, newcomer.adapter)
    assert len(summary["by_process"]) == 2
    events = summary["pressure_events"]
    assert events["VidMmProcessBudgetChange"] > 0 and events["VidMmTrimNotification"] > 0
    assert events["ProcessLifetime"] == 4, "each process starts and exits"
    series = process_series(rows)
    for pid, groups in series.items():
        for group, got in groups.items():
            changes = [(r["time"], r["Budget"]) for r in rows if r["event"] == "VidMmProcessBudgetChange"
                       and (r["hProcess"], r["MemorySegmentGroup"]) == (pid, group)]  # fmt: skip
            assert [(r.time, r.budget) for r in got if r.event == "VidMmProcessBudgetChange"] == changes
            assert all(r.budget == changes[-1][1] for r in got if changes and r.time > changes[-1][0])
    first = min(series)
    assert min(r.budget for r in series[first][LOCAL]) < series[first][LOCAL][0].budget, "the newcomer took a share"


def test_the_trace_has_counter_tracks_per_process_and_pressure_instants(newcomer: WorkloadRun) -> None:
    rows = newcomer.rows
    events = json.loads(newcomer.outputs.trace.read_text())["traceEvents"]
    assert events == chrome_trace(rows, metadata={"scenario": "newcomer", "seed": 0})["traceEvents"]
    counters = [e for e in events if e["ph"] == "C" and e.get("cat") == "process accounting"]
    series = process_series(rows)
    assert len(counters) == sum(len(r) for groups in series.values() for r in groups.values())
    for pid, groups in series.items():
        for group, got in groups.items():
            name = f"process {pid:#x} {('local', 'non_local')[group]}"
            track = [e for e in counters if e["name"] == name]
            assert [e["args"] for e in track] == [{k: getattr(r, k) for k in TRACKED} for r in got]
            assert [e["ts"] for e in track] == [r.time / 1000 for r in got]
    instants = [e for e in events if e["ph"] == "i" and e.get("cat") == "pressure"]
    pressure = [r for r in rows if r["event"] in PRESSURE_EVENTS]
    assert [(e["name"], e["ts"], e["s"]) for e in instants] == [(r["event"], r["time"] / 1000, "g") for r in pressure]
    trims = [e for e in instants if e["name"] == "VidMmTrimNotification"]
    assert trims and all(e["args"]["NumBytesToTrim"] >= 0 and e["args"]["hProcess"] in series for e in trims)


def test_the_report_charts_usage_against_budget_per_process_with_the_pressure_marked(newcomer: WorkloadRun) -> None:
    rows = newcomer.rows
    page = newcomer.outputs.report.read_text()
    series = process_series(rows)
    pressure = [r for r in rows if r["event"] in PRESSURE_EVENTS]
    for pid, groups in series.items():
        for group in groups:
            name = ("local", "non-local")[group]
            start = page.index(f'data-process="{pid:#x}" data-group="{name}"')
            chart = page[start : page.index("</div>", start)]
            concern = [r for r in pressure if r["event"] == "ProcessLifetime" or (
                r.get("hProcess", pid) == pid and r.get("MemorySegmentGroup", group) == group)]  # fmt: skip
            assert chart.count('class="mark"') == min(len(concern), MAX_MARKS)
            assert "usage (residency lists)" in chart and "budget" in chart
            for r in concern[:MAX_MARKS]:
                if r["event"] == "VidMmProcessBudgetChange":
                    assert f"budget {human(r['Budget'])} ({r['Cause']})" in chart
    assert page.count('class="process-chart"') == sum(len(g) for g in series.values())


def test_a_run_without_processes_says_so() -> None:
    page = build_report([{"time": 0, "event": "AdapterReset", "Reason": "x"}], summary={"verified": True})
    assert "no process allocated video memory" in page
