"""A reader of GPGMM allocation captures: what a real D3D12 application allocated, how large, where and for how long.

What it models: GPGMM's event-trace recorder writes Chrome trace-event JSON (``traceEvents``).  Objects are created
(``ph: "N"``), snapshotted (``"O"``, with ``args.snapshot``) and destroyed (``"D"``); instant events (``"i"``)
record calls such as ``Heap.CreateHeap`` and ``ResourceAllocator.CreateResource``.  A ``Heap`` is what becomes a
WDDM allocation (what ``MakeResident`` and ``Evict`` see); its snapshot gives its size (``SizeInBytes``, or
``Size`` in older captures), its memory segment group (``HeapSegment`` or ``MemorySegmentGroup``: 0 local,
1 non-local) and, in older captures, whether it was resident at creation (``IsResident``; D3D12 makes a heap
resident when it creates it, so absent means resident).  The ``Heap.CreateHeap`` call just before a heap's
creation says whether the CPU can see it (its heap type, or its CPU page property for a custom heap).
Placed resources (``ResourceAllocation``) are read for their lifetimes and sizes (the ``CreateResource`` call that
precedes them), but a scenario replays the heaps.

Events of other names and phases are tolerated (a capture carries allocator and pool bookkeeping); a malformed
event is refused with its file, line and column, and the rule it breaks.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import GiB

SIZE_LIMIT: Final = 2 * GiB
"""The largest heap a capture may hold: what a scenario's reference model keeps in RAM at most."""

_SPACE: Final = re.compile(r"[ \t\n\r]*")
_CPU_VISIBLE_TYPES: Final = {2, 3}
"""``D3D12_HEAP_TYPE_UPLOAD`` and ``_READBACK``: CPU-visible; ``_DEFAULT`` (1) is not."""
_CUSTOM: Final = 4
_CPU_PAGES: Final = {2, 3}
"""``D3D12_CPU_PAGE_PROPERTY_WRITE_COMBINE`` and ``_WRITE_BACK``: a custom heap the CPU can see."""


class CaptureError(ConfigurationError):
    """A capture breaks a rule: the message names the file, the line and column of the event, and the rule."""

    def __init__(self, source: str, line: int, column: int, what: str, rule: str) -> None:
        super().__init__(source, what, rule)
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"{self.setting}: line {self.line}, column {self.column} ({self.value}): {self.rule}"


@dataclass(frozen=True, slots=True)
class CapturedHeap:
    """A heap: one WDDM allocation of the application."""

    id: str
    pid: int
    size: int
    local: bool
    """Memory segment group: local (True) or non-local."""
    resident: bool
    """Resident at creation."""
    cpu_visible: bool
    created: float
    destroyed: float | None
    """None: the capture never destroys it."""


@dataclass(frozen=True, slots=True)
class CapturedResource:
    """A resource GPGMM placed (sub-allocated) for the application."""

    id: str
    pid: int
    size: int
    """``Width`` of the ``CreateResource`` call that made it (0: no call recorded)."""
    created: float
    destroyed: float | None


@dataclass(frozen=True, slots=True)
class Capture:
    """What a capture holds, in event order."""

    source: str
    heaps: tuple[CapturedHeap, ...]
    resources: tuple[CapturedResource, ...]
    events: int

    @property
    def processes(self) -> tuple[int, ...]:
        """The pids that own heaps, in order of their first heap."""
        return tuple(dict.fromkeys(h.pid for h in self.heaps))

    @property
    def start(self) -> float:
        """The first heap's creation: where the replayed span begins."""
        return min(h.created for h in self.heaps)

    @property
    def end(self) -> float:
        """The last heap creation or destruction: where the replayed span ends."""
        return max(max(h.created, h.destroyed or h.created) for h in self.heaps)


# --- the JSON layer: events with their positions ------------------------------------------------------------


class _Text:
    """The capture's text, for positions: offset -> line and column (both from 1)."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text

    def where(self, offset: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def error(self, offset: int, what: str, rule: str) -> CaptureError:
        line, column = self.where(offset)
        return CaptureError(self.source, line, column, what, rule)

    def skip(self, at: int) -> int:
        match = _SPACE.match(self.text, at)
        assert match is not None
        return match.end()


def _long_number(doc: _Text, error: ValueError) -> CaptureError:
    """The integer literal the decoder would not convert (more digits than ``sys.get_int_max_str_digits``)."""
    limit = sys.get_int_max_str_digits()
    # A string is passed over whole, and digits after a point or an exponent's letter or sign are a float's
    # (read whatever their length): what is left is an integer literal, the decoder's only refusal of this kind.
    token = re.compile(rf'"[^"\\]*(?:\\.[^"\\]*)*"|(?<![\d.eE+-])-?(\d{{{limit + 1},}})(?![\d.eE])')
    for found in token.finditer(doc.text) if limit else ():
        digits = found.group(1)
        if digits is not None:
            return doc.error(found.start(), "a number", f"has {len(digits)} digits: at most {limit} are read")
    return doc.error(0, "the document", f"is not JSON wddmsim can read: {error}")


def _events(doc: _Text) -> list[tuple[int, object]]:
    """Each element of ``traceEvents`` with the offset where its text starts (the JSON is valid here)."""
    text, decoder = doc.text, json.JSONDecoder()
    at = doc.skip(0)
    if text.startswith("[", at):  # the trace-event format also allows a bare array of events
        return _array(doc, at)
    if not text.startswith("{", at):
        raise doc.error(at, "the document", "must be a JSON object holding a traceEvents array")
    at = doc.skip(at + 1)
    found: list[tuple[int, object]] | None = None
    while not text.startswith("}", at):
        key, at = decoder.raw_decode(text, at)
        at = doc.skip(doc.skip(at) + 1)  # the colon
        if key == "traceEvents":
            if not text.startswith("[", at):
                raise doc.error(at, "traceEvents", "must be an array of events")
            found = _array(doc, at)
            at = _after_array(doc, at)
        else:
            _, at = decoder.raw_decode(text, at)
        at = doc.skip(at)
        if text.startswith(",", at):
            at = doc.skip(at + 1)
    if found is None:
        raise doc.error(0, "the document", "has no traceEvents array: not a GPGMM capture")
    return found


def _array(doc: _Text, at: int) -> list[tuple[int, object]]:
    text, decoder = doc.text, json.JSONDecoder()
    out: list[tuple[int, object]] = []
    at = doc.skip(at + 1)
    while not text.startswith("]", at):
        value, end = decoder.raw_decode(text, at)
        out.append((at, value))
        at = doc.skip(end)
        if text.startswith(",", at):
            at = doc.skip(at + 1)
    return out


def _after_array(doc: _Text, at: int) -> int:
    _, end = json.JSONDecoder().raw_decode(doc.text, at)
    return end


# --- the GPGMM layer --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Open:
    """A heap or resource created and not yet destroyed."""

    offset: int
    pid: int
    created: float
    size: int = 0
    local: bool = True
    resident: bool = True
    cpu_visible: bool = False
    snapshotted: bool = False


@dataclass(slots=True)
class _Reader:
    doc: _Text
    heaps: dict[tuple[int, str], _Open] = field(default_factory=dict)
    resources: dict[tuple[int, str], _Open] = field(default_factory=dict)
    done_heaps: list[tuple[str, _Open, float | None]] = field(default_factory=list)
    done_resources: list[tuple[str, _Open, float | None]] = field(default_factory=list)
    heap_calls: dict[int, bool] = field(default_factory=dict)
    """pid -> CPU visibility of its last ``Heap.CreateHeap`` call not yet matched to a heap."""
    resource_calls: dict[int, int] = field(default_factory=dict)
    """pid -> ``Width`` of its last ``CreateResource`` call not yet matched to a resource."""

    def event(self, index: int, offset: int, event: object) -> None:
        def bad(rule: str) -> CaptureError:
            return self.doc.error(offset, f"event {index}", rule)

        if not isinstance(event, Mapping):
            raise bad("an event must be a JSON object")
        name, phase = event.get("name"), event.get("ph")
        if not isinstance(name, str) or not isinstance(phase, str):
            raise bad("an event must have a string name and a string ph")
        if phase == "M":  # metadata (thread names): no time
            return
        what = f"event {index}, {name} {phase!r}"
        ts, pid = event.get("ts"), event.get("pid", 0)
        if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts) or ts < 0:
            raise self.doc.error(offset, what, f"ts={ts!r}: must be a time in microseconds, at least 0")
        if isinstance(pid, bool) or not isinstance(pid, int):
            raise self.doc.error(offset, what, f"pid={pid!r}: must be an integer")
        step = _Step(self, offset, what, event, float(ts), pid)
        if name == "Heap":
            step.heap(phase)
        elif name == "ResourceAllocation":
            step.resource(phase)
        elif name == "Heap.CreateHeap" and phase == "i":
            step.heap_call()
        elif name == "ResourceAllocator.CreateResource" and phase == "i":
            step.resource_call()


@dataclass(slots=True)
class _Step:
    """One event of a known name, read against what is open."""

    reader: _Reader
    offset: int
    what: str
    event: Mapping[str, object]
    ts: float
    pid: int

    def bad(self, rule: str) -> CaptureError:
        return self.reader.doc.error(self.offset, self.what, rule)

    def ident(self) -> str:
        value = self.event.get("id")
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise self.bad(f"id={value!r}: must be a string or an integer")
        return str(value)

    def heap(self, phase: str) -> None:
        r = self.reader
        key = (self.pid, self.ident())
        if phase == "N":
            if key in r.heaps:
                raise self.bad(f"Heap {key[1]} is created twice without being destroyed")
            cpu = r.heap_calls.pop(self.pid, False)
            r.heaps[key] = _Open(self.offset, self.pid, self.ts, cpu_visible=cpu)
        elif phase == "O":
            if key not in r.heaps:
                raise self.bad(f"snapshot of Heap {key[1]}, which is not alive (never created, or destroyed)")
            self.snapshot(r.heaps[key])
        elif phase == "D":
            if key not in r.heaps:
                raise self.bad(f"destroys Heap {key[1]}, which is not alive (never created, or destroyed)")
            r.done_heaps.append((key[1], self.ended("Heap", key[1], r.heaps.pop(key)), self.ts))

    def snapshot(self, heap: _Open) -> None:
        args = self.event.get("args")
        snap = args.get("snapshot") if isinstance(args, Mapping) else None
        if not isinstance(snap, Mapping):
            raise self.bad("a Heap snapshot must carry args.snapshot, an object")
        size = snap.get("SizeInBytes", snap.get("Size"))
        if size is None:
            raise self.bad("a Heap snapshot must give its size (SizeInBytes, or Size)")
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise self.bad(f"size {size!r}: must be a positive integer (bytes)")
        if size > SIZE_LIMIT:
            raise self.bad(f"size {size}: exceeds 2 GiB, the most a scenario's reference model holds")
        group = snap.get("HeapSegment", snap.get("MemorySegmentGroup", 0))
        if group not in (0, 1) or isinstance(group, bool):
            raise self.bad(f"memory segment group {group!r}: must be 0 (local) or 1 (non-local)")
        resident = snap.get("IsResident", True)
        if not isinstance(resident, (bool, int)) or resident not in (0, 1):
            raise self.bad(f"IsResident={resident!r}: must be true, false, 0 or 1")
        heap.size, heap.local, heap.resident, heap.snapshotted = size, group == 0, bool(resident), True

    def resource(self, phase: str) -> None:
        r = self.reader
        key = (self.pid, self.ident())
        if phase == "N":
            if key in r.resources:
                raise self.bad(f"ResourceAllocation {key[1]} is created twice without being destroyed")
            r.resources[key] = _Open(self.offset, self.pid, self.ts, size=r.resource_calls.pop(self.pid, 0))
        elif phase == "D":
            if key not in r.resources:
                raise self.bad(
                    f"destroys ResourceAllocation {key[1]}, which is not alive (never created, or destroyed)"
                )
            r.done_resources.append((key[1], self.ended("ResourceAllocation", key[1], r.resources.pop(key)), self.ts))

    def ended(self, kind: str, ident: str, alive: _Open) -> _Open:
        """``alive``, destroyed by this event: not timed before its creation (events may come in any order of time,
        but a lifetime cannot be negative)."""
        if self.ts < alive.created:
            raise self.bad(f"destroys {kind} {ident} at ts={self.ts:g}, before its creation at ts={alive.created:g}")
        return alive

    def heap_call(self) -> None:
        args = self.event.get("args")
        heap = args.get("Heap") if isinstance(args, Mapping) else None
        props = heap.get("Properties") if isinstance(heap, Mapping) else None
        if not isinstance(props, Mapping):
            return  # nothing said about CPU access: the heap is taken as GPU-only
        kind, pages = props.get("Type"), props.get("CPUPageProperty")
        self.reader.heap_calls[self.pid] = kind in _CPU_VISIBLE_TYPES or (kind == _CUSTOM and pages in _CPU_PAGES)

    def resource_call(self) -> None:
        args = self.event.get("args")
        desc = args.get("resourceDescriptor") if isinstance(args, Mapping) else None
        width = desc.get("Width") if isinstance(desc, Mapping) else None
        if isinstance(width, int) and not isinstance(width, bool) and width > 0:
            self.reader.resource_calls[self.pid] = width


MOST_PROCESSES = 64
"""A scenario's processes at most (``workload.processes``)."""


def _at_most_processes(doc: _Text, heaps: list[_Open]) -> None:
    """Refuse a capture of more processes than a scenario runs, at the first heap of the first one too many."""
    pids: dict[int, None] = {}
    for heap in heaps:
        pids.setdefault(heap.pid)
        if len(pids) > MOST_PROCESSES:
            raise doc.error(
                heap.offset,
                "Heap creation",
                f"the capture's {len(pids)}th process (pid {heap.pid}): a scenario runs at most {MOST_PROCESSES} "
                "processes",
            )


BOM: Final = "\ufeff"
"""A byte-order mark: JSON forbids writing one but lets a parser ignore it (RFC 8259 section 8.1), and Windows
tools save UTF-8 with one (decision 0229)."""


def parse(text: str, source: str = "<capture>") -> Capture:
    """The capture in ``text`` (``source`` names it in errors); :class:`CaptureError` if it breaks a rule.  A
    leading byte-order mark is ignored; lines and columns count from the character after it."""
    text = text.removeprefix(BOM)
    doc = _Text(source, text)
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        raise CaptureError(source, error.lineno, error.colno, "the document", f"is not JSON: {error.msg}") from None
    except RecursionError:  # arrays or objects nested past the decoder's depth: no capture nests so
        raise CaptureError(source, 1, 1, "the document", "is not JSON: nested too deeply") from None
    except ValueError as error:  # an integer past Python's conversion limit: no time, id or size is that long
        raise _long_number(doc, error) from None
    events = _events(doc)
    reader = _Reader(doc)
    for index, (offset, event) in enumerate(events):
        reader.event(index, offset, event)
    heaps = reader.done_heaps + [(key[1], h, None) for key, h in reader.heaps.items()]
    for _, heap, _ in heaps:
        if not heap.snapshotted:
            raise doc.error(heap.offset, "Heap creation", "the heap is never snapshotted: its size is unknown")
    if not heaps:
        raise doc.error(0, "the document", "holds no Heap: no allocation to replay")
    heaps.sort(key=lambda item: item[1].offset)
    _at_most_processes(doc, [h for _, h, _ in heaps])
    resources = reader.done_resources + [(key[1], r, None) for key, r in reader.resources.items()]
    resources.sort(key=lambda item: item[1].offset)
    return Capture(
        source,
        tuple(
            CapturedHeap(i, h.pid, h.size, h.local, h.resident, h.cpu_visible, h.created, end) for i, h, end in heaps
        ),
        tuple(CapturedResource(i, r.pid, r.size, r.created, end) for i, r, end in resources),
        len(events),
    )
