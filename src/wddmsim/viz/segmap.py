"""Segment maps rebuilt from the event log: what held each range of each segment after any event.

The log says which segments exist (``ReportSegment``) and every range taken or given back (``SegmentRange``:
allocations and VidMm's own page tables).  Replaying those up to event ``i`` gives the segment as GPUView's
segment viewer shows it at that moment: blocks along the segment with their owner, process and size, the
allocated and free totals, the largest free block, and the memory events just before and after.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wddmsim.viz.eventlog import Record


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """A segment as ``ReportSegment`` described it."""

    id: int
    base: int
    size: int
    aperture: bool
    cpu_visible: bool

    @property
    def kind(self) -> str:
        if self.aperture:
            return "aperture"
        return "local, CPU-visible" if self.cpu_visible else "local"


@dataclass(frozen=True, slots=True)
class Block:
    """One held range."""

    offset: int
    size: int
    owner: str
    """``allocation``, ``page-table`` or ``other``."""
    allocation: int
    process: int
    label: str
    since: int
    """Index of the event that placed it."""

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def name(self) -> str:
        return f"allocation {self.allocation:#x}" if self.owner == "allocation" else self.label


@dataclass(frozen=True, slots=True)
class SegmentMap:
    """One segment after event ``index``: its blocks in address order."""

    segment: SegmentInfo
    index: int
    time: int
    blocks: tuple[Block, ...]
    last_change: int | None
    """Index of the last ``SegmentRange`` of this segment at or before ``index`` (None: none yet)."""

    @property
    def allocated(self) -> int:
        return sum(b.size for b in self.blocks)

    @property
    def free(self) -> int:
        return self.segment.size - self.allocated

    def free_extents(self) -> list[tuple[int, int]]:
        """``(offset, size)`` of every free range, in address order."""
        out: list[tuple[int, int]] = []
        cursor = 0
        for b in self.blocks:
            if b.offset > cursor:
                out.append((cursor, b.offset - cursor))
            cursor = max(cursor, b.end)
        if cursor < self.segment.size:
            out.append((cursor, self.segment.size - cursor))
        return out

    @property
    def largest_free(self) -> int:
        return max((size for _, size in self.free_extents()), default=0)

    @property
    def fragmentation(self) -> float:
        """1 - largest free block / free bytes (0: all free room is one block)."""
        return 0.0 if self.free == 0 else 1.0 - self.largest_free / self.free


def segments_of(rows: Iterable[Record]) -> dict[int, SegmentInfo]:
    """The segments the log reports (``ReportSegment``), by id."""
    out: dict[int, SegmentInfo] = {}
    for r in rows:
        if r["event"] == "ReportSegment":
            out[r["ulSegmentId"]] = SegmentInfo(
                r["ulSegmentId"], r["BaseAddress"], r["Size"], bool(r["Aperture"]), bool(r["CpuVisible"])
            )
    return out


class SegmentReplay:
    """Segment maps at any event index of one log (a replay of its ``SegmentRange`` records)."""

    def __init__(self, rows: Sequence[Record]) -> None:
        self.rows = rows
        self.segments = segments_of(rows)
        self.memory_events = [i for i, r in enumerate(rows) if r["event"] == "SegmentRange"]
        """Indices of every range change: the 'memory events' one steps through."""

    def previous_event(self, index: int) -> int | None:
        """The last memory event strictly before ``index``."""
        at = bisect.bisect_left(self.memory_events, index)
        return self.memory_events[at - 1] if at else None

    def next_event(self, index: int) -> int | None:
        """The first memory event strictly after ``index``."""
        at = bisect.bisect_right(self.memory_events, index)
        return self.memory_events[at] if at < len(self.memory_events) else None

    def at(self, index: int) -> dict[int, SegmentMap]:
        """Every segment's map after event ``index`` (clamped to the log)."""
        return self.snapshots([index])[0]

    def snapshots(self, indices: Sequence[int]) -> list[dict[int, SegmentMap]]:
        """Maps after each of ``indices`` (ascending), in one pass over the log."""
        if not self.rows:
            return [{} for _ in indices]
        last = len(self.rows) - 1
        wanted = sorted({min(max(i, 0), last) for i in indices})
        held: dict[int, dict[int, Block]] = {s: {} for s in self.segments}
        changed: dict[int, int] = {}
        taken: dict[int, dict[int, SegmentMap]] = {}
        cursor = 0
        for index in wanted:
            while cursor <= index:
                r = self.rows[cursor]
                if r["event"] == "SegmentRange" and r["SegmentId"] in held:
                    blocks = held[r["SegmentId"]]
                    if r["Action"] == "allocate":
                        blocks[r["SegmentOffset"]] = Block(
                            r["SegmentOffset"],
                            r["Size"],
                            r["Owner"],
                            r["hAllocation"],
                            r["hProcess"],
                            r["Label"],
                            cursor,
                        )
                    else:
                        blocks.pop(r["SegmentOffset"], None)
                    changed[r["SegmentId"]] = cursor
                cursor += 1
            time = self.rows[index]["time"]
            taken[index] = {
                s: SegmentMap(
                    info,
                    index,
                    time,
                    tuple(sorted(held[s].values(), key=lambda b: b.offset)),
                    changed.get(s),
                )
                for s, info in self.segments.items()
            }
        return [taken[min(max(i, 0), last)] for i in indices]


def index_at_time(rows: Sequence[Record], time: int) -> int:
    """The last event index whose time is at or before ``time`` (0 if none)."""
    times = [r["time"] for r in rows]
    return max(bisect.bisect_right(times, time) - 1, 0)


__all__ = ["Block", "SegmentInfo", "SegmentMap", "SegmentReplay", "index_at_time", "segments_of"]
