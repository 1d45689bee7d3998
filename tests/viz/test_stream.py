"""Streamed outputs (decisions 0189, 0190): a run whose adapter keeps no event writes the same files, counts the
same traffic and research metrics and digests to the same SHA-256 as a run that kept its event log; the
report's bounded data follows its written rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wddmsim.core.clock import Clock
from wddmsim.core.events import Event, EventLog
from wddmsim.research.frames import FrameMarks
from wddmsim.research.runs import measured_run, observed_run, run_research
from wddmsim.scenarios import catalog
from wddmsim.scenarios.traffic import Digest, event_digest, traffic
from wddmsim.system import Adapter
from wddmsim.viz.outputs import OutputStream, recorder, write_outputs
from wddmsim.viz.report_data import SNAPSHOTS, PeakSampler, ReportData, TimeBins
from wddmsim.viz.svg import envelope

FILES = ("events.jsonl", "summary.json", "trace.json", "report.html", "frames.csv")


def test_an_event_log_that_keeps_nothing_still_tells_its_listeners() -> None:
    log = EventLog(Clock(), keep=False)
    seen: list[Event] = []
    log.subscribe(seen.append)
    for t in range(1000):
        log.emit(Event(time=t))
    assert len(log) == 0 and list(log) == [] and log.emitted == 1000
    assert [e.time for e in seen] == list(range(1000))


def test_follow_gives_the_kept_events_first_and_stop_keeping_drops_them() -> None:
    log = EventLog(Clock())
    log.emit(Event(time=1))
    log.emit(Event(time=2))
    seen: list[int] = []
    log.follow(lambda e: seen.append(e.time))
    log.stop_keeping()
    log.emit(Event(time=3))
    assert seen == [1, 2, 3]
    assert len(log) == 0 and log.emitted == 3


def _streamed(config: Any, out: Path) -> tuple[Any, str]:
    stream = OutputStream(out)
    digest = Digest()

    def attach(adapter: Adapter) -> None:
        stream.capture = recorder(adapter)
        stream.attach(adapter)
        adapter.events.follow(digest.see)
        adapter.events.stop_keeping()

    run = measured_run(config, on_adapter=attach)
    assert len(run.result.adapter.events) == 0, "nothing kept"
    stream.finish(run.result.adapter, {**run.result.summary(), **run.metrics}, frames=run.frames)
    return run, digest.value()[1]


@pytest.mark.parametrize(("scenario", "frames"), [("default", 3), ("uploads", 2)])
def test_a_streamed_run_writes_what_a_kept_run_writes(scenario: str, frames: int, tmp_path: Path) -> None:
    config = catalog.load(scenario, {"seed": 2, "workload.frames": frames})
    run, digest = _streamed(config, tmp_path / "streamed")

    captures = []
    marks = FrameMarks()
    kept, refs, clairvoyance = observed_run(
        config, marks=marks, on_adapter=lambda adapter: captures.append(recorder(adapter))
    )
    metrics, rows = run_research(
        kept.adapter.events, refs, marks, window=config.research.thrash_window, clairvoyance=clairvoyance
    )
    assert len(kept.adapter.events) > 1000
    assert metrics == run.metrics and rows == run.frames
    assert traffic(kept.adapter.events) == run.result.traffic
    assert event_digest(kept.adapter.events)[1] == digest
    summary = {**kept.summary(), **metrics}
    write_outputs(tmp_path / "kept", kept.adapter, summary, capture=captures[0], frames=rows)
    for name in FILES:
        want = (tmp_path / "kept" / name).read_bytes()
        assert (tmp_path / "streamed" / name).read_bytes() == want, name
    assert b"; PagingOp" in (tmp_path / "streamed" / "report.html").read_bytes(), "the disassembly names operations"


def test_a_peak_sampler_is_exact_while_its_buckets_are_one_nanosecond() -> None:
    points = [(t * 7, (t * 37) % 101) for t in range(300)] + [(2100, 5), (2100, 3)]
    sampler = PeakSampler(limit=1000)
    for t, v in points:
        sampler.add(t, v)
    assert sampler.width == 1
    assert envelope(sampler.points(), 0, 2100, 60) == envelope(points, 0, 2100, 60)


def test_a_peak_sampler_stays_bounded_and_keeps_every_peak_and_the_last_value() -> None:
    sampler = PeakSampler(limit=64)
    for t in range(100_000):
        sampler.add(t, 1_000_000 if t == 77_777 else t % 10)
    sampler.add(100_000, 4)
    assert len(sampler.buckets) <= 64 and sampler.width == 2048  # doubled until 100 001 ns fit in 64 buckets
    points = sampler.points()
    assert max(v for _, v in points) == 1_000_000
    peak_at = next(t for t, v in points if v == 1_000_000)
    assert peak_at <= 77_777 < peak_at + sampler.width, "a time moves earlier by less than one bucket"
    assert points[-1] == (100_000 // 2048 * 2048, 4)


def test_time_bins_keep_the_total_and_put_each_bin_in_the_slice_of_its_start() -> None:
    bins = TimeBins(limit=16)
    for t in range(1000):
        bins.add(t, 3)
    assert len(bins.bins) <= 16 and bins.width == 64
    slices = bins.slices(0, 999, 4)
    assert sum(v for _, v in slices) == 3000
    # bins start at 0, 64 ... 960; slice k holds the bins whose start s has 4 * s // 999 == k: four each
    assert slices == [(0, 4 * 64 * 3), (1, 4 * 64 * 3), (2, 4 * 64 * 3), (3, (3 * 64 + 40) * 3)]


def _range(time: int, offset: int, action: str) -> dict[str, Any]:
    return {
        "time": time,
        "event": "SegmentRange",
        "SegmentId": 1,
        "SegmentOffset": offset,
        "Size": 4096,
        "Action": action,
        "Owner": "allocation",
        "hAllocation": offset + 1,
        "hProcess": 4,
        "Label": "",
    }


def test_the_segment_map_moments_thin_by_doubling_their_stride() -> None:
    segment = {
        "time": 0,
        "event": "ReportSegment",
        "ulSegmentId": 1,
        "BaseAddress": 0,
        "Size": 1 << 30,
        "Aperture": False,
        "CpuVisible": False,
    }
    data = ReportData()
    data.see(segment, 0)
    for i in range(1, 1001):  # 1000 memory events: allocate 0..499, then free them
        data.see(_range(i, (i - 1) % 500 * 4096, "allocate" if i <= 500 else "free"), i)
    data.see({"time": 2000, "event": "AdapterReset", "Reason": "test"}, 1001)
    data.finish()
    # stride 1 until a 33rd moment, then 2, 4 ...: 32 is the first stride whose multiples below 1000 are <= 32
    assert data.memory_events == 1000 and data.stride == 32
    ordinals = range(0, 1000, 32)
    assert [m.index for m in data.moments] == [1 + o for o in ordinals] + [1001], "each stride-th, then the end"
    assert len(data.moments) == SNAPSHOTS + 1
    want = [o + 1 if o < 500 else 999 - o for o in ordinals]  # 500 allocated one by one, then freed
    assert [len(m.maps[1].blocks) for m in data.moments[:-1]] == want
    assert len(data.moments[-1].maps[1].blocks) == 0


def test_a_plain_run_counts_the_events_it_does_not_build() -> None:
    """A run that keeps no event and has only the traffic and frame folds (``wddmsim run`` without ``--out``)
    skips building the events no one wants (decision 0207) but counts them: the same number of events, the same
    traffic and the same research metrics as a run that kept them all."""
    config = catalog.load("default", {"seed": 3, "workload.frames": 2})
    adapters: list[Adapter] = []

    def plain(adapter: Adapter) -> None:
        adapters.append(adapter)
        adapter.events.stop_keeping()

    run = measured_run(config, on_adapter=plain)
    kept = measured_run(config)
    assert len(adapters) == 1 and len(adapters[0].events) == 0
    assert adapters[0].events.emitted == len(kept.result.adapter.events) > 1000
    assert run.result.traffic == kept.result.traffic
    assert run.metrics == kept.metrics and run.frames == kept.frames
