"""``trace.json``: the run as a timeline in the Chrome trace event format (opens in Perfetto UI, chrome://tracing).

Built from the exported event log alone (decision 0028):

- process "GPU": one track (``tid``) per engine.  Every DMA buffer is a complete slice (``ph: X``) from the
  moment the engine starts it to its completion, named after its fence; a paging buffer holds one nested slice
  per paging operation it carries (``PagingOpTransfer`` ...), from its first packet's start to its last
  packet's end -- a multipass operation appears in each buffer it was split over, marked ``part k``.
- process "VidMm": one async track per paging queue (``ph: b``/``e``), a slice per fence value from the moment
  VidMm gave it to the work (``PagingQueuePacket``) to the completion of the paging buffer that carries it;
  instants (``ph: i``) for MakeResident, evictions, page-ins, CPU locks, faults and resets on a "VidMm (CPU)" track;
  counters (``ph: C``) of bytes resident per segment and per process (local / non-local), and each process's
  accounting per segment group (``process 0x… local``: budget, usage, committed, resident, aperture, demoted;
  decision 0175); the pressure events (budget and priority changes, trim notifications, process start and
  exit, power transitions) as global instants (``s: g``).
- metadata (``ph: M``) names the processes and tracks.

Timestamps are microseconds of simulated time (``ts`` = ns / 1000).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from wddmsim.viz.buffers import BufferTracker, DmaBuffer
from wddmsim.viz.eventlog import Record
from wddmsim.viz.processes import GROUP_NAMES, PRESSURE_EVENTS, AccountPass, Row
from wddmsim.viz.segmap import SegmentInfo, segments_of

GPU_PID = 1
VIDMM_PID = 2
CPU_TID = 1
QUEUE_CAT = "paging queue"

TraceEvent = dict[str, Any]

TRACKED = ("budget", "usage", "committed", "resident", "aperture", "demoted")
"""The per-process counters of ``trace.json`` (one track each in Perfetto)."""

_INSTANTS = {
    "VidMmMakeResident": ("Result", "NumAllocations", "PagingFenceValue", "NumBytesToTrim", "hDevice"),
    "VidMmEvict": ("Cause", "Destination", "pVidMmAlloc", "SegmentId", "Size", "Policy", "Reason"),
    "PageInAllocation": ("How", "hAllocationHandle", "uiSegmentId", "uliOffset", "Size"),
    "GpuFaultReported": ("InterruptType", "FaultedFenceId", "FaultedVirtualAddress", "Detail"),
    "EngineFaulted": ("NodeOrdinal", "Kind", "Address", "Reason"),
    "AdapterReset": ("Reason",),
    "CpuLock": ("Action", "hAllocation", "pData", "Target", "LockCount"),
}


def _us(ns: int) -> float:
    return ns / 1000


def _complete(
    name: str, cat: str, begin: int, end: int, *, depth: int, pid: int, tid: int, args: dict[str, Any]
) -> TraceEvent:
    """A complete slice (``ph: X``) from ``begin`` to ``end`` ns, its end pulled in by ``2 * (depth + 1)`` ns.

    Viewers turn ``ts`` and ``dur`` (microseconds, as doubles) back into integer nanoseconds, each rounding
    by up to a nanosecond: slices that touch (one buffer ending when the next starts, an operation ending with
    its buffer) could then overlap by a nanosecond and break the nesting.  The trim keeps siblings apart and
    children inside their parents (decision 0028).
    """
    trim = 2 * (depth + 1)
    end = max(begin, end - trim)
    return {
        "name": name,
        "cat": cat,
        "ph": "X",
        "ts": _us(begin),
        "dur": _us(end - begin),
        "pid": pid,
        "tid": tid,
        "args": args,
    }


class TraceStream:
    """The trace built as the records come (decision 0189): each trace event goes to ``emit`` as soon as it is
    known -- an instant at once, a DMA buffer's slices when it completes, a paging-queue slice when the paging
    buffer carrying its fence value completes -- and the metadata and what never completed at :meth:`finish`.
    Nothing is kept beyond the buffers and fence values still in flight.  ``accounts``: a shared
    :class:`~wddmsim.viz.processes.AccountPass` the caller feeds (None: the stream feeds its own)."""

    def __init__(self, emit: Callable[[TraceEvent], None], accounts: AccountPass | None = None) -> None:
        self.emit = emit
        self.buffers = BufferTracker()
        self.segments: dict[int, SegmentInfo] = {}
        self.usage: dict[int, dict[str, int]] = {}
        self.queue: list[Record] = []  # PagingQueuePacket records whose paging buffer has not completed
        self.completed = -1  # the highest fence completed on the paging node
        self.last = 0
        self.feeds = accounts is None
        self.accounts = AccountPass(keep=False) if accounts is None else accounts
        self.accounts.listeners.append(self._account)

    def see(self, r: Record) -> None:
        name = r["event"]
        self.last = r["time"]
        self.buffers.see(r)
        if self.feeds:
            self.accounts.see(r)
        if name == "DmaBufferCompleted":
            self._completed(r["NodeOrdinal"], r["SubmissionFenceId"], r["time"])
        elif name == "PagingQueuePacket":
            self.queue.append(r)
            if r["SubmissionFenceId"] <= self.completed:
                self._close_queue(r["time"])
        elif name in _INSTANTS:
            self.emit(_instant(r, name))
        elif name == "ReportSegment":
            self.segments.update(segments_of((r,)))
        elif name == "TotalBytesResidentInSegment":
            info = self.segments.get(r["SegmentId"])
            kind = "" if info is None else f" ({info.kind})"
            self.emit(_counter(f"segment {r['SegmentId']}{kind} bytes resident", r, {"bytes": r["TotalBytesResident"]}))
        elif name == "SegmentRange" and r["Owner"] == "allocation" and r["hProcess"]:
            self._process_resident(r)
        if name in PRESSURE_EVENTS:
            self.emit(_pressure(r))

    def _completed(self, node: int, fence: int, time: int) -> None:
        buffer = self.buffers.take(node, fence)
        if buffer is not None:
            self._engine_slices(buffer, time)
        if node == self._paging_node():
            self.completed = max(self.completed, fence)
            self._close_queue(time)

    def _paging_node(self) -> int:
        return min(self.buffers.paging_nodes, default=0)

    def _close_queue(self, time: int | None) -> None:
        """Close the fence values whose paging buffer completed (``time`` None: the run's end)."""
        waiting: list[Record] = []
        for r in self.queue:
            if time is not None and r["SubmissionFenceId"] > self.completed:
                waiting.append(r)
                continue
            end = max(self.last if time is None else time, r["time"])
            name = f"paging queue {r['hPagingQueue']:#x}"
            ident = f"{r['hPagingQueue']:#x}:{r['PagingFenceValue']}"
            common = {"name": name, "cat": QUEUE_CAT, "pid": VIDMM_PID, "tid": CPU_TID, "id": ident}
            args = {k: r[k] for k in ("PagingFenceValue", "SubmissionFenceId", "hDevice")}
            self.emit({**common, "ph": "b", "ts": _us(r["time"]), "args": args})
            self.emit({**common, "ph": "e", "ts": _us(end)})
        self.queue = waiting

    def _engine_slices(self, buffer: DmaBuffer, end: int) -> None:
        if buffer.started is None:
            return
        node, fence = buffer.node, buffer.fence
        paging = node in self.buffers.paging_nodes
        self.emit(
            _complete(
                f"{'paging' if paging else 'DMA'} buffer, fence {fence}",
                "paging buffer" if paging else "dma buffer",
                buffer.started,
                end,
                depth=0,
                pid=GPU_PID,
                tid=node + 1,
                args={
                    "SubmissionFenceId": fence,
                    "Size": buffer.size,
                    "SubmittedNs": buffer.submitted if paging else None,
                    "StartedNs": buffer.started,
                    "CompletedNs": buffer.completed,
                    "Operations": [c.name for c in buffer.chunks],
                },
            )
        )
        if paging:
            self._operation_slices(buffer)

    def _operation_slices(self, buffer: DmaBuffer) -> None:
        """One nested slice per chunk that executed packets: from its first packet's start to its last's end."""
        for chunk in buffer.chunks:
            spans = buffer.packet_spans(chunk)
            if not spans:
                continue
            self.emit(
                _complete(
                    chunk.name,
                    "paging operation",
                    spans[0][0],
                    spans[-1][1],
                    depth=1,
                    pid=GPU_PID,
                    tid=buffer.node + 1,
                    args={"Packets": len(spans), "Bytes": chunk.end - chunk.start, "DmaBufferOffset": chunk.start},
                )
            )

    def _process_resident(self, r: Record) -> None:
        info = self.segments.get(r["SegmentId"])
        group = "non-local" if info is not None and info.aperture else "local"
        usage = self.usage.setdefault(r["hProcess"], {"local": 0, "non-local": 0})
        usage[group] += r["Size"] if r["Action"] == "allocate" else -r["Size"]
        self.emit(_counter(f"process {r['hProcess']:#x} bytes resident", r, dict(usage)))

    def _account(self, process: int, group: int, row: Row) -> None:
        """Per process and group, a counter track of its accounting (decision 0175)."""
        self.emit(
            {
                "name": f"process {process:#x} {GROUP_NAMES[group]}",
                "cat": "process accounting",
                "ph": "C",
                "ts": _us(row.time),
                "pid": VIDMM_PID,
                "args": {k: getattr(row, k) for k in TRACKED},
            }
        )

    def finish(self) -> None:
        """What never completed (a buffer still running, a fence value never reached: to the last event), then
        the metadata."""
        for _, buffer in sorted(self.buffers.live.items()):
            self._engine_slices(buffer, buffer.completed if buffer.completed is not None else self.last)
        self.buffers.live.clear()
        self._close_queue(None)
        for event in self._metadata():
            self.emit(event)

    def _metadata(self) -> list[TraceEvent]:
        meta: list[TraceEvent] = [
            {"name": "process_name", "ph": "M", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU (simulated)"}},
            {"name": "process_sort_index", "ph": "M", "pid": GPU_PID, "tid": 0, "args": {"sort_index": 1}},
            {"name": "process_name", "ph": "M", "pid": VIDMM_PID, "tid": 0, "args": {"name": "VidMm"}},
            {"name": "process_sort_index", "ph": "M", "pid": VIDMM_PID, "tid": 0, "args": {"sort_index": 2}},
            {"name": "thread_name", "ph": "M", "pid": VIDMM_PID, "tid": CPU_TID, "args": {"name": "VidMm (CPU)"}},
        ]
        for node in sorted(self.buffers.nodes):
            role = " (paging)" if node in self.buffers.paging_nodes else ""
            meta.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": GPU_PID,
                    "tid": node + 1,
                    "args": {"name": f"engine {node}{role}"},
                }
            )
            meta.append(
                {"name": "thread_sort_index", "ph": "M", "pid": GPU_PID, "tid": node + 1, "args": {"sort_index": node}}
            )
        return meta


def _instant(r: Record, name: str) -> TraceEvent:
    return {
        "name": name,
        "cat": "vidmm",
        "ph": "i",
        "s": "t",
        "ts": _us(r["time"]),
        "pid": VIDMM_PID,
        "tid": CPU_TID,
        "args": {k: r[k] for k in _INSTANTS[name] if k in r},
    }


def _counter(name: str, r: Record, args: dict[str, int]) -> TraceEvent:
    return {"name": name, "ph": "C", "ts": _us(r["time"]), "pid": VIDMM_PID, "args": args}


def _pressure(r: Record) -> TraceEvent:
    """A pressure event: an instant across the whole timeline."""
    return {
        "name": r["event"],
        "cat": "pressure",
        "ph": "i",
        "s": "g",
        "ts": _us(r["time"]),
        "pid": VIDMM_PID,
        "tid": CPU_TID,
        "args": {k: v for k, v in r.items() if k not in ("time", "event")},
    }


class TraceFile:
    """``trace.json`` written as the run goes: the ``traceEvents`` array opened at the start, one event appended
    per :class:`TraceStream` emit, closed with ``otherData`` at :meth:`close`."""

    def __init__(self, f: IO[str]) -> None:
        self.f = f
        self.first = True
        self.closed = False
        self.error: OSError | None = None
        """The first write that failed (a full disk): no more is written, :meth:`close` raises it."""
        f.write('{"traceEvents":[')

    def emit(self, event: TraceEvent) -> None:
        if self.error is not None:
            return
        try:
            self.f.write(("" if self.first else ",") + json.dumps(event, separators=(",", ":")))
        except OSError as error:
            self.error = error
        self.first = False

    def close(self, metadata: dict[str, Any] | None = None) -> None:
        if self.error is not None:
            raise self.error
        tail = {"displayTimeUnit": "ns", "otherData": _other(metadata)}
        self.f.write("]," + json.dumps(tail, separators=(",", ":"))[1:] + "\n")
        self.closed = True


def _other(metadata: dict[str, Any] | None) -> dict[str, Any]:
    return {"generator": "wddmsim", "clock": "simulated", **(metadata or {})}


def chrome_trace(rows: Iterable[Record], *, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The trace of one run's records, as the JSON object format (``traceEvents`` and friends)."""
    events: list[TraceEvent] = []
    stream = TraceStream(events.append)
    for r in rows:
        stream.see(r)
    stream.finish()
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": _other(metadata)}


def write_trace(path: Path, rows: Iterable[Record], *, metadata: dict[str, Any] | None = None) -> None:
    with path.open("w", encoding="utf-8") as f:
        out = TraceFile(f)
        stream = TraceStream(out.emit)
        for r in rows:
            stream.see(r)
        stream.finish()
        out.close(metadata)


__all__ = [
    "CPU_TID",
    "GPU_PID",
    "QUEUE_CAT",
    "TRACKED",
    "VIDMM_PID",
    "TraceFile",
    "TraceStream",
    "chrome_trace",
    "write_trace",
]
