"""The per-frame metrics (decision 0157) against hand-computed values: a constructed event log whose bytes and
paging-engine times are known, then a real run and its replay (``frames.csv`` against ``summary.json``)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.events import Event
from wddmsim.hw.events import DmaBufferCompleted, DmaBufferStarted
from wddmsim.research.frames import CSV_COLUMNS, Frame, FrameMarks, frame_metrics, write_frames_csv
from wddmsim.research.runs import frame_calls, observed_replay, observed_run, run_research
from wddmsim.scenarios import catalog
from wddmsim.scenarios.callfmt import TraceFormatError
from wddmsim.scenarios.replay import read_trace
from wddmsim.vidmm.events import (
    PagingBufferSubmitted,
    PagingQueuePacket,
    ReportSegment,
    VidMmEvict,
    VidMmMakeResident,
    VidMmPageIn,
)

LOCAL, APERTURE = 1, 2


def segment(number: int, *, aperture: bool) -> ReportSegment:
    return ReportSegment(
        time=0,
        segment=number,
        base_address=0,
        size=1 << 20,
        commit_limit=1 << 20,
        cpu_translated_address=0,
        flags=0,
        group=int(aperture),
        aperture=aperture,
        cpu_visible=False,
    )


def page_in(time: int, allocation: int, seg: int, size: int) -> VidMmPageIn:
    return VidMmPageIn(time=time, allocation=allocation, segment=seg, offset=0, size=size, how="transfer")


def evict(time: int, allocation: int, seg: int, size: int, cause: str, destination: str) -> VidMmEvict:
    return VidMmEvict(
        time=time,
        allocation=allocation,
        segment=seg,
        size=size,
        cause=cause,
        destination=destination,
        policy="",
        reason="",
    )


# Setup pages A10 in; frame 0 (t 10..100) runs paging buffer 1 for 30 ns, places A11 in the aperture and
# evicts A10; frame 1 (t 100..200) brings A10 back (a fault, one frame after its eviction) while buffer 2 runs
# from 180 to 230 (20 ns in frame 1, 30 in frame 2); frame 2 discards A11; after the frames A10 is destroyed and
# its handle placed again (a first use again).
EVENTS: list[Event] = [
    segment(LOCAL, aperture=False),
    segment(APERTURE, aperture=True),
    page_in(0, 10, LOCAL, 100),
    PagingBufferSubmitted(time=10, node=0, fence=1, start=0, end=64, operations=1),  # frame 0 from index 3
    DmaBufferStarted(time=20, engine=0, fence=1, size=64),
    DmaBufferCompleted(time=50, engine=0, fence=1),
    page_in(50, 11, APERTURE, 200),
    evict(60, 10, LOCAL, 100, "pressure", "system"),
    PagingBufferSubmitted(time=150, node=0, fence=2, start=0, end=64, operations=1),  # frame 1 from index 8
    DmaBufferStarted(time=180, engine=0, fence=2, size=64),
    page_in(180, 10, LOCAL, 100),
    DmaBufferStarted(time=185, engine=1, fence=2, size=64),  # a render buffer: not paging
    DmaBufferCompleted(time=230, engine=0, fence=2),  # frame 2 from index 12
    evict(250, 11, APERTURE, 200, "evict", "discarded"),
    evict(400, 10, LOCAL, 100, "destroy", "discarded"),  # after the frames, from index 14
    page_in(400, 10, LOCAL, 100),
]
MARKS = [(3, 10), (8, 100), (12, 200), (14, 300)]


def test_each_frame_and_the_totals_match_the_hand_computed_values() -> None:
    summary, frames = frame_metrics(EVENTS, MARKS, window=1)
    assert frames == [
        Frame(200, 100, 30, 0, 1, 0, 200),
        Frame(100, 0, 20, 1, 0, 100, 200),
        Frame(0, 0, 30, 0, 1, 100, 0),
    ]
    assert summary == {
        "paged_out_bytes": 100,
        "faults": 1,
        "compulsory_faults": 3,
        "unframed_paged_in_bytes": 200,
        "thrash_bytes": 100,
        "thrash_window_frames": 1,
        "frames": 3,
        "frame_paging_bytes_p50": 100,  # of 300, 100, 0: the smallest value with half the frames at or below
        "frame_paging_bytes_p99": 300,
        "frame_paging_bytes_max": 300,
        "frame_stall_ns_p50": 30,  # of 30, 20, 30
        "frame_stall_ns_p99": 30,
        "frame_stall_ns_max": 30,
        "frame_residency_stall_ns_p50": 0,  # no MakeResident returned E_PENDING
        "frame_residency_stall_ns_p99": 0,
        "frame_residency_stall_ns_max": 0,
    }


def pending(time: int, value: int) -> VidMmMakeResident:
    return VidMmMakeResident(
        time=time, device=5, allocations=1, result="E_PENDING", paging_fence=value, bytes_to_trim=0
    )


def packet(time: int, value: int, submission: int) -> PagingQueuePacket:
    return PagingQueuePacket(time=time, queue=6, device=5, value=value, submission=submission)


# Frame 0 (t 10..100): two calls wait together -- value 1 from 20 to 60, value 2 from 30 to 90 (70 ns covered);
# value 3 needed no paging buffer (no packet: reached at once); a call that returned S_OK never waits.  Frame 1
# (t 100..200): value 4 from 120 until its buffer completes at 250, in frame 2 -- the frame that called waits.
STALLS: list[Event] = [
    PagingBufferSubmitted(time=10, node=0, fence=1, start=0, end=64, operations=1),
    pending(20, 1),
    packet(20, 1, 1),
    pending(30, 2),
    pending(35, 3),
    VidMmMakeResident(time=36, device=5, allocations=1, result="S_OK", paging_fence=0, bytes_to_trim=0),
    packet(40, 2, 2),
    PagingBufferSubmitted(time=40, node=0, fence=2, start=0, end=64, operations=1),
    DmaBufferCompleted(time=60, engine=0, fence=1),
    DmaBufferCompleted(time=90, engine=1, fence=2),  # a render engine's fence 2: not the paging buffer
    DmaBufferCompleted(time=90, engine=0, fence=2),
    pending(120, 4),  # frame 1 from index 11
    packet(120, 4, 3),
    PagingBufferSubmitted(time=120, node=0, fence=3, start=0, end=64, operations=1),
    DmaBufferCompleted(time=250, engine=0, fence=3),  # frame 2 from index 14
]


def test_the_residency_stall_is_the_time_pending_calls_wait_for_their_paging_fence() -> None:
    summary, frames = frame_metrics(STALLS, [(0, 10), (11, 100), (14, 200), (15, 300)])
    assert [f.residency_stall_ns for f in frames] == [70, 130, 0]
    assert (
        summary["frame_residency_stall_ns_p50"],
        summary["frame_residency_stall_ns_p99"],
        summary["frame_residency_stall_ns_max"],
    ) == (70, 130, 130)


def test_a_refetch_later_than_the_window_is_not_thrash() -> None:
    assert frame_metrics(EVENTS, MARKS, window=0)[0]["thrash_bytes"] == 0


def test_without_marks_there_is_no_frame() -> None:
    summary, frames = frame_metrics(EVENTS, [])
    assert frames == [] and summary["frames"] == 0 and summary["unframed_paged_in_bytes"] == 500
    assert summary["frame_stall_ns_p50"] is None and summary["frame_paging_bytes_max"] is None
    assert summary["thrash_bytes"] == 0, "a re-fetch outside the frames is never thrash"


def test_frames_csv_has_the_contract_header_and_a_row_per_frame(tmp_path: Path) -> None:
    path = tmp_path / "frames.csv"
    write_frames_csv(path, frame_metrics(EVENTS, MARKS)[1])
    assert path.read_text(encoding="utf-8").splitlines() == [
        "frame,paged_in_bytes,paged_out_bytes,paging_stall_ns,faults,evictions,resident_local_bytes,"
        "resident_aperture_bytes,residency_stall_ns",
        "0,200,100,30,0,1,0,200,0",
        "1,100,0,20,1,0,100,200,0",
        "2,0,0,30,0,1,100,0,0",
    ]
    assert ",".join(CSV_COLUMNS) == path.read_text(encoding="utf-8").splitlines()[0]


SMALL = {"workload.frames": 5, "workload.processes": 2}


def test_a_run_and_its_replay_mark_the_same_frames(tmp_path: Path) -> None:
    stream = io.StringIO()
    marks = FrameMarks()
    result, refs, _ = observed_run(catalog.load("default", SMALL), record=stream, marks=marks)
    summary, frames = run_research(result.adapter.events, refs, marks)
    assert summary["frames"] == len(frames) == 5 and len(marks.marks) == 6
    assert sum(f.paged_in_bytes for f in frames) + summary["unframed_paged_in_bytes"] == summary["paged_in_bytes"]
    assert sum(f.faults for f in frames) <= summary["faults"]
    assert sum(f.paging_stall_ns for f in frames) <= marks.marks[-1][1] - marks.marks[0][1]
    assert summary["frame_stall_ns_max"] == max(f.paging_stall_ns for f in frames) > 0
    assert sum(f.residency_stall_ns for f in frames) <= marks.marks[-1][1] - marks.marks[0][1]
    placements = result.adapter.events.of_type(VidMmPageIn)
    assert summary["compulsory_faults"] + summary["faults"] == len(placements)
    assert summary["compulsory_faults"] == len({e.allocation for e in placements}), "no handle is used again"
    path = tmp_path / "trace.jsonl"
    path.write_text(stream.getvalue(), encoding="utf-8")
    trace = read_trace(path)
    again = FrameMarks()
    replayed, replay_refs, _ = observed_replay(trace, marks=again)
    assert [index for index, _ in again.marks] == [index for index, _ in marks.marks]
    assert run_research(replayed.adapter.events, replay_refs, again)[1] == frames


def test_a_trace_without_frames_is_one_frame_and_bad_frames_are_refused(tmp_path: Path) -> None:
    stream = io.StringIO()
    observed_run(catalog.load("default", {**SMALL, "workload.frames": 1}), record=stream)
    path = tmp_path / "trace.jsonl"
    path.write_text(stream.getvalue(), encoding="utf-8")
    trace = read_trace(path)
    assert trace.trailer is not None
    del trace.trailer["frames"]
    assert frame_calls(trace) == [0, len(trace.calls)]
    trace.trailer["frames"] = [5, 3]
    with pytest.raises(TraceFormatError, match=r"the trailer's frames=\[5, 3\]: must be call counts"):
        frame_calls(trace)


def test_the_thrash_window_is_a_scenario_setting(tmp_path: Path) -> None:
    small = ["--frames", "3", "--processes", "2"]
    result = CliRunner().invoke(main, ["run", *small, "--set", "research.thrash_window=0", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["thrash_window_frames"] == 0 and summary["config"]["research"] == {"thrash_window": 0}
    rows = list(csv.DictReader((tmp_path / "frames.csv").read_text(encoding="utf-8").splitlines()))
    assert len(rows) == summary["frames"] == 3
    assert sum(int(r["paged_in_bytes"]) for r in rows) + summary["unframed_paged_in_bytes"] == summary["paged_in_bytes"]
    bad = CliRunner().invoke(main, ["run", *small, "--set", "research.thrash_window=-1"])
    assert bad.exit_code == 2 and "research.thrash_window=-1: must lie between 0 and 100000" in bad.output
