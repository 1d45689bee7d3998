"""Per-frame paging metrics of a run (decision 0157): what a frame paged, how long its work waited on paging,
and what was resident when it ended -- the stutter a researcher reports beside the run's totals.

A frame is a span of the event log between two :class:`FrameMarks` (a scenario run marks the start of each
iteration of its frame loop and the loop's end; a replay marks the same calls, from the trace's trailer).  Events
before the first mark (setup) and after the last (verification, teardown) belong to no frame: they count in the
run's totals but in no row of ``frames.csv`` (``unframed_paged_in_bytes`` says how much they paged in).

Everything is computed from the event log in one pass (plus one ``numpy`` pass for the stall):

* paged in: ``VidMmPageIn`` (transfers, zero fills, aperture maps -- as decision 0146 counts them);
* paged out: ``VidMmEvict`` whose content left for system memory or the aperture (``destination`` is not
  ``discarded``: a destroyed or discarded allocation is not paged out);
* faults: a ``VidMmPageIn`` of an allocation placed before (a re-fetch); its first placement is compulsory;
* thrash: the bytes of a re-fetch within ``window`` frames of that allocation's last eviction, both in frames;
* stall: the simulated time the paging engine spent running paging buffers inside the frame (the clock runs
  only while the CPU waits, so that is time the frame's work waited on paging);
* residency stall, the client's side (decision 0176): for each ``MakeResident`` of the frame that returned
  ``E_PENDING``, the time from the call to the completion of the paging buffer carrying its paging fence value
  (``PagingQueuePacket`` names it); calls waiting at once count once (the union of the spans).  A value whose
  work needed no paging buffer was reached at the call: no stall.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from wddmsim.core.events import Event
from wddmsim.hw.events import DmaBufferCompleted, DmaBufferStarted
from wddmsim.system import Adapter
from wddmsim.vidmm.events import (
    PagingBufferSubmitted,
    PagingQueuePacket,
    ReportSegment,
    VidMmEvict,
    VidMmMakeResident,
    VidMmPageIn,
)

THRASH_WINDOW: Final = 4
"""Frames after an eviction within which a re-fetch counts as thrash (``thrash_window_frames``)."""

CSV_COLUMNS: Final = (
    "frame",
    "paged_in_bytes",
    "paged_out_bytes",
    "paging_stall_ns",
    "faults",
    "evictions",
    "resident_local_bytes",
    "resident_aperture_bytes",
    "residency_stall_ns",
)


class FrameMarks:
    """Frame boundaries of a run as it goes: ``(event index, simulated time)`` at the start of each frame and
    at the end of the last; ``n`` marks delimit ``n - 1`` frames.

    Given ``fold`` (a :class:`FrameFold`), the marks also drive it and it follows the adapter's events as they
    are emitted: the metrics are then ready at the end of the run without the event log (decision 0189)."""

    def __init__(self, fold: FrameFold | None = None) -> None:
        self.adapter: Adapter | None = None
        self.marks: list[tuple[int, int]] = []
        self.fold = fold

    def attach(self, adapter: Adapter) -> None:
        self.adapter = adapter
        if self.fold is not None:
            adapter.events.follow(self.fold.see, FrameFold.KINDS)

    def mark(self) -> None:
        assert self.adapter is not None, "mark before the adapter is attached"
        self.marks.append((self.adapter.events.emitted, self.adapter.clock.now))
        if self.fold is not None:
            self.fold.mark(self.adapter.clock.now)


@dataclass(slots=True)
class Frame:
    """One row of ``frames.csv``."""

    paged_in_bytes: int = 0
    paged_out_bytes: int = 0
    paging_stall_ns: int = 0
    faults: int = 0
    evictions: int = 0
    resident_local_bytes: int = 0
    resident_aperture_bytes: int = 0
    residency_stall_ns: int = 0
    """Waiting for residency, the client's side (decision 0176)."""


@dataclass(slots=True)
class _Pass:
    """The state of the one pass over the events."""

    window: int
    frames: list[Frame]
    apertures: set[int] = field(default_factory=set)
    placed: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Allocation -> (segment, bytes) where it is now."""
    seen: set[int] = field(default_factory=set)
    evicted_in: dict[int, int] = field(default_factory=dict)
    """Allocation -> the frame of its last eviction (absent: not evicted in a frame)."""
    resident: list[int] = field(default_factory=lambda: [0, 0])
    """Bytes resident now: [local, aperture]."""
    paging: set[tuple[int, int]] = field(default_factory=set)
    started: dict[tuple[int, int], int] = field(default_factory=dict)
    busy: list[tuple[int, int]] = field(default_factory=list)
    pending: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    """(device, paging fence value) -> (frame, time) of each ``MakeResident`` that returned ``E_PENDING`` with it
    and awaits the packet that carries its work."""
    carried: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    """(paging node, submission fence) -> (frame, time) of the pending ``MakeResident`` calls it completes."""
    waits: list[list[tuple[int, int]]] = field(default_factory=list)
    """Per frame: (call, paging fence reached) of its ``MakeResident`` calls that returned ``E_PENDING``."""
    paging_node: int | None = None
    totals: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("in", "out", "unframed", "faults", "compulsory", "thrash"), 0)
    )

    def see(self, e: Event, frame: int | None) -> None:
        row = self.frames[frame] if frame is not None else None
        if isinstance(e, VidMmPageIn):
            self._page_in(e, frame, row)
        elif isinstance(e, VidMmEvict):
            self._evict(e, frame, row)
        elif isinstance(e, PagingBufferSubmitted):
            self.paging.add((e.node, e.fence))
            self.paging_node = e.node
        elif isinstance(e, DmaBufferStarted) and (e.engine, e.fence) in self.paging:
            self.started[(e.engine, e.fence)] = e.time
        elif isinstance(e, DmaBufferCompleted):
            if (e.engine, e.fence) in self.started:
                self.busy.append((self.started.pop((e.engine, e.fence)), e.time))
            for call_frame, called in self.carried.pop((e.engine, e.fence), ()):
                self.waits[call_frame].append((called, e.time))
        elif isinstance(e, VidMmMakeResident) and e.result == "E_PENDING" and frame is not None:
            self.pending.setdefault((e.device, e.paging_fence), []).append((frame, e.time))
        elif isinstance(e, PagingQueuePacket):
            self._packet(e)
        elif isinstance(e, ReportSegment) and e.aperture:
            self.apertures.add(e.segment)

    def _packet(self, e: PagingQueuePacket) -> None:
        """The work of a paging fence value is carried by paging buffer ``submission``: the calls that wait for
        the value wait for that buffer's completion (on the paging node, where the paging buffers run)."""
        calls = self.pending.pop((e.device, e.value), None)
        if calls is not None and self.paging_node is not None:
            self.carried.setdefault((self.paging_node, e.submission), []).extend(calls)

    def _page_in(self, e: VidMmPageIn, frame: int | None, row: Frame | None) -> None:
        self.totals["in"] += e.size
        refetch = e.allocation in self.seen
        self.seen.add(e.allocation)
        self.totals["faults" if refetch else "compulsory"] += 1
        evicted = self.evicted_in.pop(e.allocation, None)
        if frame is not None and evicted is not None and frame - evicted <= self.window:
            self.totals["thrash"] += e.size
        self.placed[e.allocation] = (e.segment, e.size)
        self.resident[e.segment in self.apertures] += e.size
        if row is not None:
            row.paged_in_bytes += e.size
            row.faults += refetch
        else:
            self.totals["unframed"] += e.size

    def _evict(self, e: VidMmEvict, frame: int | None, row: Frame | None) -> None:
        out = e.size if e.destination != "discarded" else 0
        self.totals["out"] += out
        if self.placed.pop(e.allocation, None) is not None:
            self.resident[e.segment in self.apertures] -= e.size
        if e.cause == "destroy":
            self.seen.discard(e.allocation)  # a handle used again later names a new allocation
            self.evicted_in.pop(e.allocation, None)
        elif frame is not None:
            self.evicted_in[e.allocation] = frame
        if row is not None:
            row.paged_out_bytes += out
            row.evictions += 1

    def close(self, frame: int) -> None:
        self.frames[frame].resident_local_bytes = self.resident[0]
        self.frames[frame].resident_aperture_bytes = self.resident[1]


def _busy_until(busy: list[tuple[int, int]], times: np.ndarray) -> np.ndarray:
    """For each time: nanoseconds the paging engine was busy before it (its buffers run one after another)."""
    if not busy:
        return np.zeros(len(times), dtype=np.int64)
    spans = np.array(sorted(busy), dtype=np.int64)
    starts, lengths = spans[:, 0], spans[:, 1] - spans[:, 0]
    done = np.concatenate(([0], np.cumsum(lengths)))
    over = np.searchsorted(spans[:, 1], times, side="right")  # buffers complete by then
    running = np.minimum(over, len(spans) - 1)  # the one that may be under way
    partial = np.where(over < len(spans), np.clip(times - starts[running], 0, lengths[running]), 0)
    return np.asarray(done[over] + partial, dtype=np.int64)


def _covered(spans: list[tuple[int, int]]) -> int:
    """Nanoseconds covered by the union of ``(start, end)`` spans (calls waiting together stall once)."""
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _percentiles(values: Sequence[int], name: str) -> dict[str, int | None]:
    """p50, p99 and max of the frames' values: observed values (numpy's ``inverted_cdf``), None without frames."""
    if not values:
        return {f"{name}_p50": None, f"{name}_p99": None, f"{name}_max": None}
    p50, p99 = np.percentile(np.asarray(values), [50, 99], method="inverted_cdf")
    return {f"{name}_p50": int(p50), f"{name}_p99": int(p99), f"{name}_max": int(max(values))}


class FrameFold:
    """The one pass of :func:`frame_metrics` as a fold: ``mark(time)`` at each frame mark, ``see(event)`` for each
    event between, ``result()`` at the end.  ``marks`` is how many marks the run will make (the last ends the
    last frame: what follows it is unframed).  It needs the events of :data:`KINDS` only."""

    KINDS = (
        VidMmPageIn,
        VidMmEvict,
        PagingBufferSubmitted,
        DmaBufferStarted,
        DmaBufferCompleted,
        VidMmMakeResident,
        PagingQueuePacket,
        ReportSegment,
    )
    """The events :meth:`see` reads (decision 0207: a log calls it for these only)."""

    def __init__(self, marks: int, *, window: int = THRASH_WINDOW) -> None:
        self.count = max(marks - 1, 0)
        self.window = window
        self.state = _Pass(window, [])
        self.times: list[int] = []
        self.frame: int | None = None

    def mark(self, time: int) -> None:
        if self.frame is not None:
            self.state.close(self.frame)
        following = len(self.times)
        self.times.append(time)
        self.frame = following if following < self.count else None
        if self.frame is not None:
            self.state.frames.append(Frame())
            self.state.waits.append([])

    def see(self, e: Event) -> None:
        self.state.see(e, self.frame)

    def paged_in_bytes(self) -> int:
        """Bytes placed in a segment (every ``VidMmPageIn``), frames or not."""
        return self.state.totals["in"]

    def result(self) -> tuple[dict[str, Any], list[Frame]]:
        """The run's paging metrics (``summary.json`` keys) and its frames (``frames.csv`` rows)."""
        state, count = self.state, len(self.state.frames)
        times = np.array(self.times[: count + 1], dtype=np.int64)
        stalls = np.diff(_busy_until(state.busy, times)) if count else np.zeros(0, dtype=np.int64)
        for row, stall, waits in zip(state.frames, stalls, state.waits, strict=True):
            row.paging_stall_ns = int(stall)
            row.residency_stall_ns = _covered(waits)
        t = state.totals
        summary: dict[str, Any] = {
            "paged_out_bytes": t["out"],
            "faults": t["faults"],
            "compulsory_faults": t["compulsory"],
            "unframed_paged_in_bytes": t["unframed"],
            "thrash_bytes": t["thrash"],
            "thrash_window_frames": self.window,
            "frames": count,
            **_percentiles([f.paged_in_bytes + f.paged_out_bytes for f in state.frames], "frame_paging_bytes"),
            **_percentiles([f.paging_stall_ns for f in state.frames], "frame_stall_ns"),
            **_percentiles([f.residency_stall_ns for f in state.frames], "frame_residency_stall_ns"),
        }
        return summary, state.frames


def frame_metrics(
    events: Iterable[Event], marks: Sequence[tuple[int, int]], *, window: int = THRASH_WINDOW
) -> tuple[dict[str, Any], list[Frame]]:
    """The run's paging metrics (``summary.json`` keys) and its frames (``frames.csv`` rows), from its event log
    and frame marks (a :class:`FrameFold` fed the log, each mark given before the event it precedes)."""
    return fed(events, marks, window=window).result()


def fed(events: Iterable[Event], marks: Sequence[tuple[int, int]], *, window: int) -> FrameFold:
    fold = FrameFold(len(marks), window=window)
    following = 0  # the next mark to cross
    for index, e in enumerate(events):
        while following < len(marks) and index >= marks[following][0]:
            fold.mark(marks[following][1])
            following += 1
        fold.see(e)
    for _, time in marks[following:]:  # marks after the last event
        fold.mark(time)
    return fold


def frames_csv(frames: Sequence[Frame]) -> str:
    """``frames.csv``'s text: one row per frame, the columns of :data:`CSV_COLUMNS`."""
    import csv  # only --out writes the file (a plain run need not import it)

    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for number, f in enumerate(frames):
        writer.writerow(
            (
                number,
                f.paged_in_bytes,
                f.paged_out_bytes,
                f.paging_stall_ns,
                f.faults,
                f.evictions,
                f.resident_local_bytes,
                f.resident_aperture_bytes,
                f.residency_stall_ns,
            )
        )
    return stream.getvalue()


def write_frames_csv(path: Path, frames: Sequence[Frame]) -> None:
    """``frames.csv``: :func:`frames_csv` written to ``path``."""
    path.write_text(frames_csv(frames), encoding="utf-8", newline="")


__all__ = [
    "CSV_COLUMNS",
    "THRASH_WINDOW",
    "Frame",
    "FrameFold",
    "FrameMarks",
    "fed",
    "frame_metrics",
    "frames_csv",
    "write_frames_csv",
]
