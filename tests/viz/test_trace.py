"""trace.json: valid Chrome trace event format, one track per engine and paging queue, operations inside their
paging buffers, counters per segment and per process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wddmsim.testing.chrome_trace import check_trace
from wddmsim.viz.eventlog import Record
from wddmsim.viz.trace import GPU_PID, QUEUE_CAT, chrome_trace

from .conftest import SavedRun


def _load(saved: SavedRun) -> dict[str, Any]:
    trace: dict[str, Any] = json.loads(saved.outputs.trace.read_text())
    return trace


def test_the_trace_file_is_valid_chrome_trace_format(saved: SavedRun) -> None:
    trace = _load(saved)
    assert check_trace(trace) == []
    assert trace["displayTimeUnit"] == "ns"
    assert {e["ph"] for e in trace["traceEvents"]} >= {"M", "X", "C"}


def test_one_track_per_engine_and_a_slice_per_dma_buffer(saved: SavedRun) -> None:
    events = _load(saved)["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[(GPU_PID, 1)] == "engine 0 (paging)"
    buffers = [e for e in events if e["ph"] == "X" and e["cat"] == "paging buffer"]
    started = {r["SubmissionFenceId"] for r in saved.rows if r["event"] == "DmaBufferStarted" and r["NodeOrdinal"] == 0}
    assert sorted(b["args"]["SubmissionFenceId"] for b in buffers) == sorted(started)
    assert all((e["pid"], e["tid"]) in names for e in events if e["ph"] == "X")


def _inside(child: dict[str, Any], parent: dict[str, Any]) -> bool:
    return bool(parent["ts"] <= child["ts"] and child["ts"] + child["dur"] <= parent["ts"] + parent["dur"] + 1e-9)


def test_paging_operations_are_slices_inside_their_buffer(tour: SavedRun) -> None:
    events = _load(tour)["traceEvents"]
    buffers = [e for e in events if e["ph"] == "X" and e["cat"] == "paging buffer"]
    ops = [e for e in events if e["ph"] == "X" and e["cat"] == "paging operation"]
    assert ops and all(op["name"].startswith("PagingOp") for op in ops)
    for op in ops:
        assert any(_inside(op, b) for b in buffers), op
    parts = [op["name"] for op in ops if "(part" in op["name"]]
    assert "PagingOpTransfer (part 1)" in parts and "PagingOpTransfer (part 2)" in parts, "the multipass transfer"
    listed = {name for b in buffers for name in b["args"]["Operations"]}
    assert "PagingOpTransfer (part 1)" in listed


def test_a_track_per_paging_queue_and_counters_per_segment_and_process(residency: SavedRun) -> None:
    events = _load(residency)["traceEvents"]
    packets = [r for r in residency.rows if r["event"] == "PagingQueuePacket"]
    begins = [e for e in events if e["ph"] == "b" and e["cat"] == QUEUE_CAT]
    assert len(begins) == len(packets) > 0
    assert {e["name"] for e in begins} == {f"paging queue {r['hPagingQueue']:#x}" for r in packets}
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert {"segment 1 (local, CPU-visible) bytes resident", "segment 3 (aperture) bytes resident"} <= counters
    assert {"VidMmMakeResident", "VidMmEvict", "PageInAllocation"} <= {e["name"] for e in events if e["ph"] == "i"}
    processes = {r["hProcess"] for r in residency.rows if r["event"] == "SegmentRange" and r["hProcess"]}
    assert {f"process {p:#x} bytes resident" for p in processes} <= counters
    last = {}
    for e in events:
        if e["ph"] == "C" and e["name"].startswith("segment 2"):
            last = e["args"]
    final = residency.rows[-1]
    assert last["bytes"] == json.loads(residency.outputs.summary.read_text())["Segments"]["2"]["TotalBytesResident"]
    assert final["time"] >= 0


def _rows(*spec: tuple[int, str, dict[str, Any]]) -> list[Record]:
    return [{"time": t, "event": name, **fields} for t, name, fields in spec]


def test_a_buffer_and_its_operations_from_a_few_records() -> None:
    rows = _rows(
        (
            0,
            "ReportSegment",
            {"ulSegmentId": 1, "BaseAddress": 0, "Size": 1 << 20, "Aperture": False, "CpuVisible": True},
        ),
        (
            0,
            "BuildPagingBuffer",
            {
                "Operation": "DXGK_OPERATION_FILL",
                "Status": "STATUS_SUCCESS",
                "DmaBufferWriteOffset": 0,
                "BytesWritten": 32,
            },
        ),
        (
            0,
            "BuildPagingBuffer",
            {
                "Operation": "DXGK_OPERATION_TRANSFER",
                "Status": "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER",
                "DmaBufferWriteOffset": 32,
                "BytesWritten": 48,
            },
        ),
        (
            0,
            "PagingBufferSubmitted",
            {
                "NodeOrdinal": 0,
                "SubmissionFenceId": 1,
                "DmaBufferSubmissionStartOffset": 0,
                "DmaBufferSubmissionEndOffset": 80,
            },
        ),
        (10, "DmaBufferStarted", {"NodeOrdinal": 0, "SubmissionFenceId": 1, "Size": 80}),
        (1000, "PacketExecuted", {"NodeOrdinal": 0, "SubmissionFenceId": 1, "Offset": 0, "Opcode": "FILL"}),
        (3000, "PacketExecuted", {"NodeOrdinal": 0, "SubmissionFenceId": 1, "Offset": 32, "Opcode": "COPY"}),
        (3000, "DmaBufferCompleted", {"NodeOrdinal": 0, "SubmissionFenceId": 1}),
        (
            3000,
            "BuildPagingBuffer",
            {
                "Operation": "DXGK_OPERATION_TRANSFER",
                "Status": "STATUS_SUCCESS",
                "DmaBufferWriteOffset": 0,
                "BytesWritten": 16,
            },
        ),
        (
            3000,
            "PagingBufferSubmitted",
            {
                "NodeOrdinal": 0,
                "SubmissionFenceId": 2,
                "DmaBufferSubmissionStartOffset": 0,
                "DmaBufferSubmissionEndOffset": 16,
            },
        ),
        (3000, "DmaBufferStarted", {"NodeOrdinal": 0, "SubmissionFenceId": 2, "Size": 16}),
        (3500, "PacketExecuted", {"NodeOrdinal": 0, "SubmissionFenceId": 2, "Offset": 0, "Opcode": "SYNC"}),
        (3500, "DmaBufferCompleted", {"NodeOrdinal": 0, "SubmissionFenceId": 2}),
        (
            3600,
            "SegmentRange",
            {
                "SegmentId": 1,
                "SegmentOffset": 0,
                "Size": 4096,
                "Action": "allocate",
                "Owner": "allocation",
                "hAllocation": 8,
                "hProcess": 12,
                "Label": "",
            },
        ),
        (3600, "TotalBytesResidentInSegment", {"SegmentId": 1, "TotalBytesResident": 4096}),
    )
    trace = chrome_trace(rows)
    assert check_trace(trace) == []
    slices = [(e["name"], e["ts"], e["dur"]) for e in trace["traceEvents"] if e["ph"] == "X"]
    assert slices == [
        ("paging buffer, fence 1", 0.01, 2.988),  # ends 2 ns early: slices that touch never overlap (decision 0028)
        ("PagingOpFill", 0.01, 0.986),
        ("PagingOpTransfer (part 1)", 1.0, 1.996),
        ("paging buffer, fence 2", 3.0, 0.498),
        ("PagingOpTransfer (part 2)", 3.0, 0.496),
    ]
    counters = [(e["name"], e["args"]) for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters == [
        ("process 0xc bytes resident", {"local": 4096, "non-local": 0}),
        ("segment 1 (local, CPU-visible) bytes resident", {"bytes": 4096}),
    ]


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([{"ph": "Q", "name": "x", "ts": 0, "pid": 1, "tid": 1}], "not a phase"),
        ([{"ph": "X", "name": "x", "ts": 0, "pid": 1, "tid": 1}], "dur must be"),
        ([{"ph": "B", "name": "x", "ts": 0, "pid": 1, "tid": 1}], "never ended"),
        ([{"ph": "E", "ts": 0, "pid": 1, "tid": 1}], "no open B"),
        (
            [{"ph": "B", "name": "x", "ts": 5, "pid": 1, "tid": 1}, {"ph": "E", "ts": 4, "pid": 1, "tid": 1}],
            "goes back in time",
        ),
        ([{"ph": "b", "name": "x", "cat": "c", "ts": 0, "pid": 1, "tid": 1}], "needs an id"),
        ([{"ph": "e", "name": "x", "cat": "c", "id": 1, "ts": 0, "pid": 1, "tid": 1}], "no open b"),
        ([{"ph": "C", "name": "x", "ts": 0, "pid": 1, "args": {"v": "a"}}], "numeric"),
        (
            [
                {"ph": "C", "name": "x", "ts": 5, "pid": 1, "args": {"v": 1}},
                {"ph": "C", "name": "x", "ts": 4, "pid": 1, "args": {"v": 2}},
            ],
            "goes back in time",
        ),
        (
            [
                {"ph": "X", "name": "a", "ts": 0, "dur": 2, "pid": 1, "tid": 1},
                {"ph": "X", "name": "b", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
            ],
            "overlaps",
        ),
        ([{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {}}], "args.name"),
        ([{"ph": "i", "name": "x", "ts": -1, "pid": 1, "tid": 1}], "non-negative"),
        ([{"ph": "i", "name": "x", "ts": 1, "pid": 1}], "needs a tid"),
    ],
)
def test_the_checker_finds_each_kind_of_breach(events: list[dict[str, Any]], problem: str) -> None:
    problems = check_trace({"traceEvents": events})
    assert any(problem in p for p in problems), problems


def test_the_checker_accepts_nested_and_disjoint_slices_and_the_array_form() -> None:
    events = [
        {"ph": "X", "name": "a", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
        {"ph": "X", "name": "b", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "c", "ts": 10, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "B", "name": "d", "ts": 0, "pid": 1, "tid": 2},
        {"ph": "E", "ts": 3, "pid": 1, "tid": 2},
    ]
    assert check_trace(events) == []
    assert check_trace({"traceEvents": events, "displayTimeUnit": "ns"}) == []
    assert check_trace({"displayTimeUnit": "ns"}) == ["the object form needs a traceEvents array"]


def test_a_run_with_an_adapter_reset_still_gives_a_valid_trace_and_report() -> None:
    from wddmsim.core.units import KiB
    from wddmsim.kmd.allocations import AllocationUsage
    from wddmsim.vidmm.errors import DeviceRemoved
    from wddmsim.viz.eventlog import records
    from wddmsim.viz.report import build_report
    from wddmsim.viz.summary import statistics

    from ..vidmm.world import World

    w = World()
    for a in (w.buffer(64 * KiB), w.buffer(64 * KiB, usage=AllocationUsage.APERTURE_ONLY)):
        w.make_resident(a)
    with pytest.raises(DeviceRemoved):
        w.vidmm.reset.trigger("watchdog")
    rows = records(w.adapter.events)
    assert check_trace(chrome_trace(rows)) == []
    stats = statistics(rows)
    assert stats["EvictionsDueToReset"] == 2
    assert "AdapterReset" in build_report(rows, summary={"verified": False, **stats})
    names = {e["name"] for e in chrome_trace(rows)["traceEvents"] if e["ph"] == "i"}
    assert "AdapterReset" in names
