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
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wddmsim.viz.buffers import DmaBuffer, dma_buffers
from wddmsim.viz.eventlog import Record
from wddmsim.viz.processes import GROUP_NAMES, pressure_events, process_series
from wddmsim.viz.segmap import segments_of

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


class _Builder:
    def __init__(self, rows: Sequence[Record]) -> None:
        self.rows = rows
        self.out: list[TraceEvent] = []
        self.buffers = dma_buffers(rows)
        self.paging_nodes = {b.node for b in self.buffers.values() if b.paging}
        self.last = rows[-1]["time"] if rows else 0

    def build(self) -> list[TraceEvent]:
        queue_packets: list[Record] = []
        completions: dict[int, list[tuple[int, int]]] = defaultdict(list)  # node -> (fence, time)
        for r in self.rows:
            name = r["event"]
            if name == "DmaBufferCompleted":
                completions[r["NodeOrdinal"]].append((r["SubmissionFenceId"], r["time"]))
            elif name == "PagingQueuePacket":
                queue_packets.append(r)
            elif name in _INSTANTS:
                self.out.append(
                    {
                        "name": name,
                        "cat": "vidmm",
                        "ph": "i",
                        "s": "t",
                        "ts": _us(r["time"]),
                        "pid": VIDMM_PID,
                        "tid": CPU_TID,
                        "args": {k: r[k] for k in _INSTANTS[name] if k in r},
                    }
                )
        self._engine_slices()
        self._queue_slices(queue_packets, completions)
        self._counters()
        self._process_accounts()
        return self._metadata() + self.out

    def _engine_slices(self) -> None:
        for (node, fence), buffer in sorted(self.buffers.items()):
            if buffer.started is None:
                continue
            end = buffer.completed if buffer.completed is not None else self.last
            paging = node in self.paging_nodes
            names = [c.name for c in buffer.chunks]
            self.out.append(
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
                        "Operations": names,
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
            self.out.append(
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

    def _queue_slices(self, packets: list[Record], completions: dict[int, list[tuple[int, int]]]) -> None:
        done = sorted(completions.get(min(self.paging_nodes, default=0), []))
        for r in packets:
            end = next((t for fence, t in done if fence >= r["SubmissionFenceId"]), self.last)
            end = max(end, r["time"])
            name = f"paging queue {r['hPagingQueue']:#x}"
            ident = f"{r['hPagingQueue']:#x}:{r['PagingFenceValue']}"
            common = {"name": name, "cat": QUEUE_CAT, "pid": VIDMM_PID, "tid": CPU_TID, "id": ident}
            self.out.append(
                {
                    **common,
                    "ph": "b",
                    "ts": _us(r["time"]),
                    "args": {
                        "PagingFenceValue": r["PagingFenceValue"],
                        "SubmissionFenceId": r["SubmissionFenceId"],
                        "hDevice": r["hDevice"],
                    },
                }
            )
            self.out.append({**common, "ph": "e", "ts": _us(end)})

    def _counters(self) -> None:
        segments = segments_of(self.rows)
        per_process: dict[int, dict[str, int]] = {}
        for r in self.rows:
            if r["event"] == "TotalBytesResidentInSegment":
                info = segments.get(r["SegmentId"])
                kind = "" if info is None else f" ({info.kind})"
                self.out.append(
                    {
                        "name": f"segment {r['SegmentId']}{kind} bytes resident",
                        "ph": "C",
                        "ts": _us(r["time"]),
                        "pid": VIDMM_PID,
                        "args": {"bytes": r["TotalBytesResident"]},
                    }
                )
            elif r["event"] == "SegmentRange" and r["Owner"] == "allocation" and r["hProcess"]:
                info = segments.get(r["SegmentId"])
                group = "non-local" if info is not None and info.aperture else "local"
                usage = per_process.setdefault(r["hProcess"], {"local": 0, "non-local": 0})
                usage[group] += r["Size"] if r["Action"] == "allocate" else -r["Size"]
                self.out.append(
                    {
                        "name": f"process {r['hProcess']:#x} bytes resident",
                        "ph": "C",
                        "ts": _us(r["time"]),
                        "pid": VIDMM_PID,
                        "args": dict(usage),
                    }
                )

    def _process_accounts(self) -> None:
        """Per process and group, a counter track of its accounting (decision 0175); every pressure event an
        instant across the whole timeline."""
        for process, groups in process_series(self.rows).items():
            for group, series in groups.items():
                name = f"process {process:#x} {GROUP_NAMES[group]}"
                for row in series:
                    self.out.append(
                        {
                            "name": name,
                            "cat": "process accounting",
                            "ph": "C",
                            "ts": _us(row.time),
                            "pid": VIDMM_PID,
                            "args": {k: getattr(row, k) for k in TRACKED},
                        }
                    )
        for r in pressure_events(self.rows):
            self.out.append(
                {
                    "name": r["event"],
                    "cat": "pressure",
                    "ph": "i",
                    "s": "g",
                    "ts": _us(r["time"]),
                    "pid": VIDMM_PID,
                    "tid": CPU_TID,
                    "args": {k: v for k, v in r.items() if k not in ("time", "event")},
                }
            )

    def _metadata(self) -> list[TraceEvent]:
        meta: list[TraceEvent] = [
            {"name": "process_name", "ph": "M", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU (simulated)"}},
            {"name": "process_sort_index", "ph": "M", "pid": GPU_PID, "tid": 0, "args": {"sort_index": 1}},
            {"name": "process_name", "ph": "M", "pid": VIDMM_PID, "tid": 0, "args": {"name": "VidMm"}},
            {"name": "process_sort_index", "ph": "M", "pid": VIDMM_PID, "tid": 0, "args": {"sort_index": 2}},
            {"name": "thread_name", "ph": "M", "pid": VIDMM_PID, "tid": CPU_TID, "args": {"name": "VidMm (CPU)"}},
        ]
        for node in sorted({node for node, _ in self.buffers}):
            role = " (paging)" if node in self.paging_nodes else ""
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


def chrome_trace(rows: Sequence[Record], *, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The trace of one run's records, as the JSON object format (``traceEvents`` and friends)."""
    return {
        "traceEvents": _Builder(rows).build(),
        "displayTimeUnit": "ns",
        "otherData": {"generator": "wddmsim", "clock": "simulated", **(metadata or {})},
    }


def write_trace(path: Path, rows: Sequence[Record], *, metadata: dict[str, Any] | None = None) -> None:
    path.write_text(json.dumps(chrome_trace(rows, metadata=metadata), separators=(",", ":")) + "\n", encoding="utf-8")


__all__ = ["CPU_TID", "GPU_PID", "QUEUE_CAT", "TRACKED", "VIDMM_PID", "chrome_trace", "write_trace"]
