"""events.jsonl: deterministic, named after DxgKrnl's ETW events, and consistent with itself."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest

from wddmsim.core.events import Event
from wddmsim.hw import events as hw_events
from wddmsim.scenarios.demos import run_scenario
from wddmsim.vidmm import events as vidmm_events
from wddmsim.viz.eventlog import SCHEMA, EventLogError, read_jsonl, records, write_jsonl
from wddmsim.viz.outputs import run_summary, write_outputs
from wddmsim.viz.segmap import SegmentReplay

from .conftest import SavedRun


def _events_file(tmp_path: Path, name: str, scenario: str, seed: int) -> bytes:
    run = run_scenario(scenario, seed=seed)
    out = tmp_path / name
    write_outputs(out, run.adapter, run_summary(run))
    return (out / "events.jsonl").read_bytes()


def test_the_same_scenario_and_seed_give_a_byte_identical_event_log(tmp_path: Path) -> None:
    first = _events_file(tmp_path, "a", "residency", 7)
    assert first == _events_file(tmp_path, "b", "residency", 7)
    assert len(first.splitlines()) > 1000
    assert first != _events_file(tmp_path, "c", "residency", 8), "another seed, another story"
    assert _events_file(tmp_path, "d", "tour", 0) == _events_file(tmp_path, "e", "tour", 0)


def _event_classes() -> list[type[Event]]:
    found = []
    for module in (vidmm_events, hw_events):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Event) and cls is not Event and cls.__module__ == module.__name__:
                found.append(cls)
    return found


@pytest.mark.parametrize("cls", _event_classes(), ids=lambda c: c.__name__)
def test_every_model_event_has_an_export_schema_naming_each_of_its_fields(cls: type[Event]) -> None:
    if cls is vidmm_events.PagingOperation:
        return  # exported per operation (PagingOpTransfer ...) with its payload's DDI names
    name, fields = SCHEMA[cls.NAME]
    assert name[0].isupper()
    model = {f.name for f in dataclasses.fields(cls)} - {"time"}
    assert set(fields) == model, f"{cls.__name__}: schema {sorted(fields)} vs fields {sorted(model)}"


def test_the_log_starts_with_the_segments_and_uses_etw_names(residency: SavedRun) -> None:
    rows = residency.rows
    first = rows[:3]
    assert [r["event"] for r in first] == ["ReportSegment"] * 3
    assert [r["ulSegmentId"] for r in first] == [1, 2, 3]
    assert all(r["time"] == 0 for r in first)
    assert [r["Aperture"] for r in first] == [False, False, True]
    names = {r["event"] for r in rows}
    assert {
        "ReportSegment",
        "AdapterAllocation",
        "VidMmMakeResident",
        "VidMmEvict",
        "PageInAllocation",
        "PagingOpVirtualTransfer",
        "PagingOpVirtualFill",
        "PagingOpUpdatePageTable",
        "PagingOpFlushTlb",
        "PagingOpMapApertureSegment",
        "PagingOpUnmapApertureSegment",
        "PagingOpSignalMonitoredFence",
        "TotalBytesResidentInSegment",
        "PagingQueuePacket",
        "SegmentRange",
    } <= names
    evict = next(r for r in rows if r["event"] == "VidMmEvict")
    assert {"pVidMmAlloc", "SegmentId", "Size", "Cause", "Destination"} <= evict.keys()
    upt = next(r for r in rows if r["event"] == "PagingOpUpdatePageTable")
    assert {"PageTableLevel", "NumPageTableUpdateEntries", "StartIndex", "UpdateMode", "hDmaBuffer"} <= upt.keys()


def test_times_never_go_back(saved: SavedRun) -> None:
    times = [r["time"] for r in saved.rows]
    assert times == sorted(times)


def test_paging_ops_name_the_buffer_they_start_in_and_say_when_they_continue(saved: SavedRun) -> None:
    rows = saved.rows
    fences = {r["SubmissionFenceId"] for r in rows if r["event"] == "PagingBufferSubmitted"}
    ops = [r for r in rows if r["event"].startswith("PagingOp")]
    assert ops
    for op in ops:
        assert op["hDmaBuffer"] in fences, op
        assert op["ContinueNextBuffer"] == (op["Passes"] > 1)
    assert any(op["Passes"] > 1 for op in ops), "both runs have a multipass operation"


def test_segment_offsets_are_segment_addresses_less_the_reported_base(tour: SavedRun) -> None:
    rows = tour.rows
    bases = {r["ulSegmentId"]: r["BaseAddress"] for r in rows if r["event"] == "ReportSegment"}
    checked = 0
    for r in rows:
        if r["event"] == "PagingOpTransfer" and r["SourceSegmentId"] in bases:
            assert r["SourceSegmentOffset"] == r["SourceSegmentAddress"] - bases[r["SourceSegmentId"]]
            checked += 1
    assert checked


def test_total_bytes_resident_follows_the_ranges_taken_and_given_back(saved: SavedRun) -> None:
    rows = saved.rows
    replay = SegmentReplay(rows)
    totals = [(i, r) for i, r in enumerate(rows) if r["event"] == "TotalBytesResidentInSegment"]
    assert totals
    picks = totals[:: max(len(totals) // 25, 1)]
    maps = replay.snapshots([i for i, _ in picks])
    for (_, r), per in zip(picks, maps, strict=True):
        assert per[r["SegmentId"]].allocated == r["TotalBytesResident"]


def test_records_round_trip_through_the_file(tmp_path: Path, tour: SavedRun) -> None:
    rows = records(tour.run.adapter.events)
    write_jsonl(tmp_path / "e.jsonl", rows)
    assert read_jsonl(tmp_path / "e.jsonl") == rows
    assert (tmp_path / "e.jsonl").read_bytes() == tour.outputs.events.read_bytes()


@pytest.mark.parametrize("model", ["wddm1", "wddm2"])
def test_cpu_locks_export_and_trace(model: str) -> None:
    from wddmsim.core.units import KiB
    from wddmsim.kmd.config import DriverModel
    from wddmsim.testing.chrome_trace import check_trace
    from wddmsim.viz.summary import statistics
    from wddmsim.viz.trace import chrome_trace

    from ..api.desk import Desk

    desk = Desk(model=DriverModel(model))
    h = desk.buffer(128 * KiB)
    desk.resident(h)
    desk.lock(h)
    desk.evict(h)  # leaves local memory while the CPU holds it: the view rotates onto the backing pages
    desk.unlock(h)
    rows = records(desk.adapter.events)
    locks = [r for r in rows if r["event"] == "CpuLock"]
    assert [r["Action"] for r in locks] == ["lock", "rotate", "unlock"]
    assert {"hAllocation", "pData", "Target", "LockCount"} <= locks[0].keys()
    assert check_trace(chrome_trace(rows)) == []
    assert statistics(rows)["EvictionsDueToEvict"] == 1


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"event":"X","time":true}', "X field time=True must be an integer"),
        ('{"event":"X","time":1.5}', "X field time=1.5 must be an integer"),
        ('{"event":"X","time":"soon"}', "X field time='soon' must be an integer"),
        ('{"event":"X","time":null}', "X field time=None must be an integer"),
        ('{"event":"X"}', "X has no field time"),
        ('{"event":"PageInAllocation","time":1,"hAllocationHandle":false}', "hAllocationHandle=False must be an"),
        ('{"event":"VidMmNoRoom","time":1}', "VidMmNoRoom has no field Diagnosis"),
    ],
)
def test_a_field_inspect_reads_of_another_type_is_refused_by_line(tmp_path: Path, line: str, problem: str) -> None:
    """Decision 0248, on an event of which only the time is read as on one whose fields are checked."""
    path = tmp_path / "events.jsonl"
    path.write_text(f'{{"event":"Y","time":0}}\n{line}\n', encoding="utf-8")
    with pytest.raises(EventLogError, match=re.escape(f"{path}, line 2: ") + ".*" + re.escape(problem)):
        read_jsonl(path)
    path.write_text('{"event":"Y","time":0}\n{"event":"X","time":7}\n', encoding="utf-8")
    assert read_jsonl(path) == [{"event": "Y", "time": 0}, {"event": "X", "time": 7}]
