"""What ``report.html`` draws, gathered as the records come and bounded whatever the run's length (decision 0190).

The report used to read the whole exported log at the end; a long run cannot keep it.  :class:`ReportData` is a
fold (``see`` each record with its index) that keeps only what the page shows, under these written rules:

* step series (bytes resident per segment, each process's accounting lines) go through a :class:`PeakSampler`:
  points fall in time buckets of ``width`` ns (starting at 1 ns), each bucket keeping its largest and its last
  value; when more than ``SAMPLES`` buckets hold points, the width doubles and neighbouring buckets merge.  Peaks
  survive and times move earlier by less than one bucket; while the width is 1 the chart is exactly the one the
  whole log gives.
* bytes paged per time slice go through :class:`TimeBins` (the same doubling buckets, summing bytes); each bin
  falls in the chart slice its start time is in.
* segment-map moments (the slider): the map is replayed as the ``SegmentRange`` records come, and taken after
  every ``stride``-th of them (stride 1 at first); past ``SNAPSHOTS`` moments every other one is dropped and
  the stride doubles.  The map after the last record is always a moment.
* pressure marks: the first ``MAX_MARKS`` system-wide ones and the first ``MAX_MARKS`` of each process and
  group (a chart shows at most ``MAX_MARKS``, the first: this keeps exactly what it shows).
* incidents: the first ``MAX_INCIDENTS`` and a count; evictions by cause: counters.
* paging-buffer chunks (the disassembly's operation names): only those of buffers ``keep_chunks`` names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from wddmsim.viz.buffers import BufferTracker, Chunk
from wddmsim.viz.eventlog import Record
from wddmsim.viz.processes import PRESSURE_EVENTS, AccountPass, Row
from wddmsim.viz.segmap import Block, SegmentInfo, SegmentMap, segments_of
from wddmsim.viz.summary import BYTE_COUNTERS, byte_counter

SAMPLES: Final = 2400
"""Time buckets a :class:`PeakSampler` or :class:`TimeBins` holds at most (4 x the chart's 600 points)."""
SNAPSHOTS: Final = 32
"""At most this many moments in the segment-map slider."""
MAX_MARKS: Final = 200
"""At most this many pressure events marked on one process's chart (the first ones)."""
MAX_INCIDENTS: Final = 50
"""Incidents listed (the first ones; the rest are counted)."""
ACCOUNT_KEYS: Final = ("budget", "usage", "resident", "aperture", "committed")
"""The accounting lines the report draws per process and group."""


class PeakSampler:
    """A step series kept in at most ``limit`` time buckets of a doubling width (see the module's rule)."""

    __slots__ = ("buckets", "limit", "width")

    def __init__(self, limit: int = SAMPLES) -> None:
        self.limit = limit
        self.width = 1
        self.buckets: dict[int, tuple[int, int]] = {}
        """Bucket (time // width) -> (largest value, last value)."""

    def add(self, time: int, value: int) -> None:
        key = time // self.width
        held = self.buckets.get(key)
        self.buckets[key] = (value, value) if held is None else (max(held[0], value), value)
        if len(self.buckets) > self.limit:
            self._coarsen()

    def _coarsen(self) -> None:
        self.width *= 2
        merged: dict[int, tuple[int, int]] = {}
        for key in sorted(self.buckets):
            peak, last = self.buckets[key]
            held = merged.get(key // 2)
            merged[key // 2] = (peak, last) if held is None else (max(held[0], peak), last)
        self.buckets = merged

    def points(self) -> list[tuple[int, int]]:
        """Each bucket as two points at its start: its peak, then its last value (what a step chart needs)."""
        out: list[tuple[int, int]] = []
        for key in sorted(self.buckets):
            peak, last = self.buckets[key]
            out.append((key * self.width, peak))
            out.append((key * self.width, last))
        return out


class TimeBins:
    """Sums in at most ``limit`` time buckets of a doubling width (see the module's rule)."""

    __slots__ = ("bins", "limit", "width")

    def __init__(self, limit: int = SAMPLES) -> None:
        self.limit = limit
        self.width = 1
        self.bins: Counter[int] = Counter()

    def add(self, time: int, value: int) -> None:
        self.bins[time // self.width] += value
        if len(self.bins) > self.limit:
            self.width *= 2
            merged: Counter[int] = Counter()
            for key, total in self.bins.items():
                merged[key // 2] += total
            self.bins = merged

    def slices(self, start: int, end: int, count: int) -> list[tuple[int, int]]:
        """``(slice, bytes)`` over ``count`` slices of ``[start, end]``, a bin in the slice its start is in."""
        span = max(end - start, 1)
        out: Counter[int] = Counter()
        for key, total in self.bins.items():
            out[min(max((key * self.width - start) * count // span, 0), count - 1)] += total
        return sorted(out.items())


@dataclass(slots=True)
class Account:
    """One process's accounting in one group, as the report draws it."""

    first_budget: int
    lines: dict[str, PeakSampler] = field(default_factory=lambda: {k: PeakSampler() for k in ACCOUNT_KEYS})
    nonzero: set[str] = field(default_factory=set)
    moved: bool = False
    """It committed something or its budget changed: worth a chart."""
    top: int = 0
    final: Row | None = None

    def add(self, row: Row) -> None:
        for key, sampler in self.lines.items():
            value = getattr(row, key)
            sampler.add(row.time, value)
            if value:
                self.nonzero.add(key)
        self.moved = self.moved or bool(row.committed) or row.budget != self.first_budget
        self.top = max(self.top, row.budget, row.committed, row.usage)
        self.final = row


@dataclass(frozen=True, slots=True)
class Moment:
    """The segment maps after record ``index``: per segment, its blocks for the slider."""

    index: int
    time: int
    event: str
    maps: dict[int, SegmentMap]

    @property
    def blocks(self) -> int:
        return sum(len(m.blocks) for m in self.maps.values())


class ReportData:
    """The fold: ``see(record, index)`` for every record in order, then :meth:`finish`.  ``accounts``: a shared
    :class:`AccountPass` the caller feeds (None: this fold feeds its own); ``keep_chunks(fence)`` names the
    paging buffers whose chunks the disassembly needs."""

    def __init__(self, accounts: AccountPass | None = None, keep_chunks: Callable[[int], bool] | None = None) -> None:
        self.count = 0
        self.start: int | None = None
        self.end = 0
        self.segments: dict[int, SegmentInfo] = {}
        self.apertures: frozenset[int] = frozenset()
        self.occupancy: dict[int, PeakSampler] = {}
        self.traffic: dict[str, TimeBins] = {k: TimeBins() for k in BYTE_COUNTERS}
        self.evictions: Counter[str] = Counter()
        self.evicted_bytes: Counter[str] = Counter()
        self.evicted_to: dict[str, Counter[str]] = {}
        self.incidents: list[tuple[int, int, str, str]] = []
        self.incident_count = 0
        self.system_marks: list[tuple[int, Record]] = []
        self.own_marks: dict[tuple[int, int], list[tuple[int, Record]]] = {}
        self.accounts: dict[int, dict[int, Account]] = {}
        self.processes: set[int] = set()
        self.memory_events = 0
        self.stride = 1
        self.moments: list[Moment] = []
        self.held: dict[int, dict[int, Block]] = {}
        self.changed: dict[int, int] = {}
        self.last: Record | None = None
        self.chunks: dict[tuple[int, int], list[Chunk]] = {}
        self._submitted: tuple[tuple[int, int], list[Chunk]] | None = None
        self.buffers = BufferTracker()
        self.keep_chunks = keep_chunks or (lambda fence: False)
        self.feeds = accounts is None
        self.pass_ = AccountPass(keep=False) if accounts is None else accounts
        self.pass_.listeners.append(self._row)

    def see(self, r: Record, index: int) -> None:
        name, time = r["event"], r["time"]
        if self._submitted is not None:
            self._choose()
        if self.start is None:
            self.start = time
        self.end, self.count, self.last = time, index + 1, r
        if self.feeds:
            self.pass_.see(r)
        if name.startswith("PagingOp"):
            self._paged(r)
        elif name == "SegmentRange":
            self._range(r, index)
        elif name == "TotalBytesResidentInSegment" and r["SegmentId"] in self.occupancy:
            self.occupancy[r["SegmentId"]].add(time, r["TotalBytesResident"])
        elif name == "ReportSegment":
            self.segments.update(segments_of((r,)))
            self.apertures = frozenset(s for s, info in self.segments.items() if info.aperture)
            self.occupancy[r["ulSegmentId"]] = PeakSampler()
            self.held[r["ulSegmentId"]] = {}
        elif name == "VidMmEvict":
            self.evictions[r["Cause"]] += 1
            self.evicted_bytes[r["Cause"]] += r["Size"]
            self.evicted_to.setdefault(r["Cause"], Counter())[r["Destination"]] += 1
        elif name in ("BuildPagingBuffer", "PagingBufferSubmitted", "AdapterReset", "DmaBufferCompleted"):
            self._buffer(r, name)
        if name in PRESSURE_EVENTS:
            self._pressure(r, index)
        if name in ("AdapterReset", "AdapterPowerState", "GpuFaultReported", "EngineFaulted"):
            self._incident(r, index)

    def _paged(self, r: Record) -> None:
        counter = byte_counter(r, self.apertures)
        if counter is not None and r["Size"]:
            self.traffic[counter].add(r["time"], r["Size"])

    def _buffer(self, r: Record, name: str) -> None:
        self.buffers.see(r)
        key = (r.get("NodeOrdinal", 0), r.get("SubmissionFenceId", 0))
        if name == "PagingBufferSubmitted":
            buffer = self.buffers.take(*key)
            if buffer is not None:
                self._submitted = (key, buffer.chunks)
        elif name == "DmaBufferCompleted":
            self.buffers.take(*key)

    def _choose(self) -> None:
        """Keep the chunks of the buffer submitted last if ``keep_chunks`` names it: asked one record later,
        once a capture has seen the submission too (it is told after the event)."""
        assert self._submitted is not None
        key, chunks = self._submitted
        self._submitted = None
        if self.keep_chunks(key[1]):
            self.chunks[key] = chunks

    def _range(self, r: Record, index: int) -> None:
        blocks = self.held.get(r["SegmentId"])
        if blocks is None:
            return
        if r["hProcess"]:
            self.processes.add(r["hProcess"])
        if r["Action"] == "allocate":
            offset = r["SegmentOffset"]
            blocks[offset] = Block(offset, r["Size"], r["Owner"], r["hAllocation"], r["hProcess"], r["Label"], index)
        else:
            blocks.pop(r["SegmentOffset"], None)
        self.changed[r["SegmentId"]] = index
        if self.memory_events % self.stride == 0:
            self.moments.append(self._moment(r, index))
            if len(self.moments) > SNAPSHOTS:
                self.moments = self.moments[::2]
                self.stride *= 2
        self.memory_events += 1

    def _moment(self, r: Record, index: int) -> Moment:
        maps = {
            s: SegmentMap(
                info,
                index,
                r["time"],
                tuple(sorted(self.held[s].values(), key=lambda b: b.offset)),
                self.changed.get(s),
            )
            for s, info in self.segments.items()
        }
        return Moment(index, r["time"], r["event"], maps)

    def _pressure(self, r: Record, index: int) -> None:
        if r["event"] == "ProcessLifetime" or "hProcess" not in r:
            if len(self.system_marks) < MAX_MARKS:
                self.system_marks.append((index, r))
            return
        groups = (r["MemorySegmentGroup"],) if "MemorySegmentGroup" in r else (0, 1)
        for group in groups:
            own = self.own_marks.setdefault((r["hProcess"], group), [])
            if len(own) < MAX_MARKS:
                own.append((index, r))

    def marks(self, process: int, group: int) -> list[Record]:
        """The pressure records of ``process`` in ``group`` and of the whole system, in order, the first
        ``MAX_MARKS``; a system-wide record with a group marks that group only."""
        system = [(i, r) for i, r in self.system_marks if r.get("MemorySegmentGroup", group) == group]
        merged = sorted(system + self.own_marks.get((process, group), []), key=lambda m: m[0])
        return [r for _, r in merged[:MAX_MARKS]]

    def _incident(self, r: Record, index: int) -> None:
        self.incident_count += 1
        if len(self.incidents) >= MAX_INCIDENTS:
            return
        name = r["event"]
        if name == "AdapterReset":
            detail = str(r["Reason"])
        elif name == "AdapterPowerState":
            moved = f": {r['Allocations']} allocations, {r['Bytes']} bytes out" if r["DevicePowerState"] == "D3" else ""
            detail = f"{r['DevicePowerState']} ({r['Transition']}){moved}"
        elif name == "GpuFaultReported":
            detail = f"{r['InterruptType']} fence {r['FaultedFenceId']}: {r['Detail']}"
        else:
            detail = f"engine {r['NodeOrdinal']} {r['Kind']}: {r['Reason']}"
        self.incidents.append((index, r["time"], name, detail))

    def _row(self, process: int, group: int, row: Row) -> None:
        groups = self.accounts.setdefault(process, {})
        account = groups.get(group)
        if account is None:
            account = groups[group] = Account(row.budget)
        account.add(row)

    def finish(self) -> None:
        """The map after the last record is the slider's last moment."""
        if self._submitted is not None:
            self._choose()
        if self.last is not None and (not self.moments or self.moments[-1].index != self.count - 1):
            self.moments.append(self._moment(self.last, self.count - 1))

    def span(self) -> tuple[int, int]:
        return (self.start or 0, self.end) if self.count else (0, 0)

    def summary(self) -> dict[str, Any]:
        """Counts for the page's facts."""
        return {"events": self.count, "memory_events": self.memory_events}


__all__ = [
    "ACCOUNT_KEYS",
    "MAX_INCIDENTS",
    "MAX_MARKS",
    "SAMPLES",
    "SNAPSHOTS",
    "Account",
    "Moment",
    "PeakSampler",
    "ReportData",
    "TimeBins",
]
