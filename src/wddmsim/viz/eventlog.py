"""The event log as ``events.jsonl`` shows it: one JSON object per line, named as DxgKrnl's ETW events are.

Models emit typed events with Python field names (:mod:`wddmsim.core.events`); this module is the export
schema (decision 0027).  Each record is ``{"time": ns, "event": Name, ...fields}`` with the field names of the
ETW event where one exists (``PagingOpTransfer.TransferSize``, ``ReportSegment.ulSegmentId``,
``TotalBytesResidentInSegment.TotalBytesResident``), the DDI's names otherwise (``SubmissionFenceId``,
``MultipassOffset``), and PascalCase for wddmsim's own (``Cause``, ``Label``).  ``PagingOp*`` records carry every
scalar field of the operation's payload, flattened (``Source.SegmentId`` becomes ``SourceSegmentId``), the
segment offsets ETW shows (``SourceSegmentOffset``), ``hDmaBuffer`` (the submission fence of the paging buffer
the operation starts in), ``ContinueNextBuffer`` and ``Passes`` (multipass), and ``Size``: the bytes the
operation covers, what the statistics add up.

Records are built from the events alone, in order, so the same run gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from wddmsim.core.events import Event
from wddmsim.vidmm.events import PAGING_OP_NAMES, PagingOperation

Record = dict[str, Any]

SCHEMA: dict[str, tuple[str, dict[str, str]]] = {
    "ReportSegment": (
        "ReportSegment",
        {
            "segment": "ulSegmentId",
            "base_address": "BaseAddress",
            "cpu_translated_address": "CpuTranslatedAddress",
            "size": "Size",
            "flags": "Flags",
            "commit_limit": "CommitLimit",
            "group": "MemorySegmentGroup",
            "aperture": "Aperture",
            "cpu_visible": "CpuVisible",
        },
    ),
    "AdapterAllocation": (
        "AdapterAllocation",
        {
            "allocation": "hVidMmGlobalAlloc",
            "size": "allocSize",
            "action": "Action",
            "process": "hProcess",
            "group": "MemorySegmentGroup",
        },
    ),
    "TotalBytesResidentInSegment": (
        "TotalBytesResidentInSegment",
        {"segment": "SegmentId", "bytes": "TotalBytesResident"},
    ),
    "SegmentRange": (
        "SegmentRange",
        {
            "segment": "SegmentId",
            "offset": "SegmentOffset",
            "size": "Size",
            "action": "Action",
            "owner": "Owner",
            "allocation": "hAllocation",
            "process": "hProcess",
            "label": "Label",
        },
    ),
    "VidMmNoRoom": (
        "VidMmNoRoom",
        {
            "allocation": "hAllocation",
            "size": "Size",
            "device": "hDevice",
            "operation": "Operation",
            "segments": "Segments",
            "blockers": "Blockers",
            "diagnosis": "Diagnosis",
        },
    ),
    "VidMmPageIn": (
        "PageInAllocation",
        {
            "allocation": "hAllocationHandle",
            "segment": "uiSegmentId",
            "offset": "uliOffset",
            "size": "Size",
            "how": "How",
        },
    ),
    "VidMmEvict": (
        "VidMmEvict",
        {
            "allocation": "pVidMmAlloc",
            "segment": "SegmentId",
            "size": "Size",
            "cause": "Cause",
            "destination": "Destination",
            "policy": "Policy",
            "reason": "Reason",
        },
    ),
    "VidMmMakeResident": (
        "VidMmMakeResident",
        {
            "device": "hDevice",
            "allocations": "NumAllocations",
            "result": "Result",
            "paging_fence": "PagingFenceValue",
            "bytes_to_trim": "NumBytesToTrim",
        },
    ),
    "PagingQueuePacket": (
        "PagingQueuePacket",
        {"queue": "hPagingQueue", "device": "hDevice", "value": "PagingFenceValue", "submission": "SubmissionFenceId"},
    ),
    "PagingRequestServiced": (
        "PagingRequestServiced",
        {
            "queue": "hPagingQueue",
            "device": "hDevice",
            "value": "PagingFenceValue",
            "priority": "Priority",
            "allocations": "NumAllocations",
            "placed": "NumPlaced",
            "unplaced": "NumUnplaced",
        },
    ),
    "BuildPagingBuffer": (
        "BuildPagingBuffer",
        {
            "operation": "Operation",
            "status": "Status",
            "multipass_offset": "MultipassOffset",
            "bytes_written": "BytesWritten",
            "buffer_offset": "DmaBufferWriteOffset",
        },
    ),
    "PagingBufferSubmitted": (
        "PagingBufferSubmitted",
        {
            "node": "NodeOrdinal",
            "fence": "SubmissionFenceId",
            "start": "DmaBufferSubmissionStartOffset",
            "end": "DmaBufferSubmissionEndOffset",
            "operations": "NumOperations",
        },
    ),
    "DmaBufferStarted": ("DmaBufferStarted", {"engine": "NodeOrdinal", "fence": "SubmissionFenceId", "size": "Size"}),
    "DmaBufferCompleted": ("DmaBufferCompleted", {"engine": "NodeOrdinal", "fence": "SubmissionFenceId"}),
    "PacketExecuted": (
        "PacketExecuted",
        {"engine": "NodeOrdinal", "fence": "SubmissionFenceId", "offset": "Offset", "opcode": "Opcode"},
    ),
    "EngineNote": ("EngineNote", {"engine": "NodeOrdinal", "kind": "Kind", "a": "A", "b": "B"}),
    "EngineFaulted": (
        "EngineFaulted",
        {
            "engine": "NodeOrdinal",
            "kind": "Kind",
            "address": "Address",
            "fence": "SubmissionFenceId",
            "reason": "Reason",
        },
    ),
    "GpuFaultReported": (
        "GpuFaultReported",
        {
            "interrupt": "InterruptType",
            "fence": "FaultedFenceId",
            "address": "FaultedVirtualAddress",
            "detail": "Detail",
        },
    ),
    "AdapterReset": ("AdapterReset", {"reason": "Reason"}),
    "AdapterPowerState": (
        "AdapterPowerState",
        {"state": "DevicePowerState", "kind": "Transition", "allocations": "Allocations", "bytes": "Bytes"},
    ),
    "ObjectDestroyed": ("ObjectDestroyed", {"kind": "Kind", "handle": "Handle", "owner": "Owner"}),
    "CpuLock": (
        "CpuLock",
        {"allocation": "hAllocation", "action": "Action", "address": "pData", "target": "Target", "count": "LockCount"},
    ),
    "AddressSpaceSuspended": ("AddressSpaceSuspended", {"process": "hProcess", "reason": "Reason"}),
    "AddressSpaceResumed": ("AddressSpaceResumed", {"process": "hProcess"}),
    "PageTablesEvicted": ("PageTablesEvicted", {"process": "hProcess", "tables": "NumPageTables", "bytes": "Size"}),
    "PageTablesRestored": ("PageTablesRestored", {"process": "hProcess", "tables": "NumPageTables"}),
    "PageTableConverted": ("PageTableConverted", {"process": "hProcess", "va": "VirtualAddress"}),
    "VidMmProcessUsageChange": (
        "VidMmProcessUsageChange",
        {"process": "hProcess", "group": "MemorySegmentGroup", "bytes": "CurrentUsage"},
    ),
    "VidMmProcessCommitmentChange": (
        "VidMmProcessCommitmentChange",
        {"process": "hProcess", "group": "MemorySegmentGroup", "bytes": "Commitment"},
    ),
    "VidMmProcessDemotedCommitmentChange": (
        "VidMmProcessDemotedCommitmentChange",
        {"process": "hProcess", "group": "MemorySegmentGroup", "bytes": "DemotedCommitment"},
    ),
    "VidMmProcessBudgetChange": (
        "VidMmProcessBudgetChange",
        {
            "process": "hProcess",
            "group": "MemorySegmentGroup",
            "budget": "Budget",
            "previous": "PreviousBudget",
            "cause": "Cause",
        },
    ),
    "VidMmProcessPriorityChange": (
        "VidMmProcessPriorityChange",
        {"process": "hProcess", "priority_class": "PriorityClass", "foreground": "Foreground"},
    ),
    "VidMmTrimNotification": (
        "VidMmTrimNotification",
        {"process": "hProcess", "flags": "Flags", "bytes_to_trim": "NumBytesToTrim", "delivered": "Delivered"},
    ),
    "ProcessLifetime": ("ProcessLifetime", {"process": "hProcess", "action": "Action"}),
}
"""Model event ``NAME`` -> (exported name, {field: exported field}).  Fields not listed keep their names."""

_RENAMED_ARGS = {
    "hAllocation": None,  # already hAllocationGlobalHandle
    "NumPageTableEntries": "NumPageTableUpdateEntries",
    "FillSizeInBytes": "FillSize",
    "TransferSizeInBytes": "TransferSize",
    "AllocationOffsetInBytes": "AllocationOffset",
}
_SEGMENT_OF = {"Source.SegmentAddress": "Source.SegmentId", "Destination.SegmentAddress": "Destination.SegmentId"}


def _paging_op(event: PagingOperation, bases: dict[int, int]) -> Record:
    record: Record = {
        "time": event.time,
        "event": PAGING_OP_NAMES.get(event.operation, "PagingOp"),
        "Operation": event.operation,
        "hAllocationGlobalHandle": event.allocation,
        "hDmaBuffer": 0,
        "ContinueNextBuffer": event.passes > 1,
        "Passes": event.passes,
        "Size": event.size,
    }
    if event.direction:
        record["TransferDirection"] = event.direction
    args = dict(event.args)
    for name, value in event.args:
        renamed = _RENAMED_ARGS.get(name, name.replace(".", ""))
        if renamed is None or name == "TransferDirection":
            continue
        record[renamed] = value
        if name.endswith("SegmentAddress"):
            segment = args.get(_SEGMENT_OF.get(name, "SegmentId"), 0)
            if segment in bases:
                record[renamed.replace("SegmentAddress", "SegmentOffset")] = value - bases[segment]
    return record


class RecordStream:
    """:func:`records` as a fold: ``see`` each event as it is emitted; every finished record goes to ``sink`` in
    emission order.  A ``PagingOp*`` record is finished when the submission that carries its last part (its
    ``hDmaBuffer``) or an adapter reset comes, so the records from it on wait for that: at most the records of
    one paging buffer are held (decision 0189)."""

    __slots__ = ("_bases", "_held", "_pending", "sink")

    def __init__(self, sink: Callable[[Record], None]) -> None:
        self.sink = sink
        self._bases: dict[int, int] = {}
        self._pending: list[Record] = []  # PagingOp records waiting for the submission that carries their last part
        self._held: list[Record] = []  # every record from the first pending one on, in order

    def see(self, event: Event) -> None:
        if isinstance(event, PagingOperation):
            record = _paging_op(event, self._bases)
            self._pending.append(record)
            self._held.append(record)
            return
        name, fields = SCHEMA.get(event.NAME, (event.NAME, {}))
        record = {"time": event.time, "event": name}
        for key, value in event.fields().items():
            record[fields.get(key, key)] = value
        if name == "ReportSegment":
            self._bases[record["ulSegmentId"]] = record["BaseAddress"]
        elif name == "AdapterReset":
            self._pending.clear()  # built, never submitted: hDmaBuffer stays 0
        elif name == "PagingBufferSubmitted":
            for op in self._pending:
                op["hDmaBuffer"] = record["SubmissionFenceId"] - (op["Passes"] - 1)
            self._pending.clear()
        if not self._held:
            self.sink(record)
            return
        self._held.append(record)
        if not self._pending:
            self.finish()

    def finish(self) -> None:
        """Send what is held (at the end of a run: operations never submitted keep ``hDmaBuffer`` 0)."""
        held, self._held = self._held, []
        self._pending.clear()
        for record in held:
            self.sink(record)


def records(events: Iterable[Event]) -> list[Record]:
    """Every event as its exported record, in emission order."""
    out: list[Record] = []
    stream = RecordStream(out.append)
    for event in events:
        stream.see(event)
    stream.finish()
    return out


def dumps(record: Record) -> str:
    """One line of ``events.jsonl`` (compact, keys in schema order: byte-identical for identical runs)."""
    return json.dumps(record, separators=(",", ":"))


def write_jsonl(path: Path, rows: Iterable[Record]) -> None:
    with path.open("w", encoding="utf-8") as f:
        _write(f, rows)


def _write(f: IO[str], rows: Iterable[Record]) -> None:
    for row in rows:
        f.write(dumps(row))
        f.write("\n")


class EventLogError(ValueError):
    """An ``events.jsonl`` that is not one: a line that is no JSON object with an ``event`` name (a log cut short
    by a killed run, another file)."""


def _why(error: ValueError | RecursionError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if isinstance(error, UnicodeDecodeError):
        return f"byte {error.start} is not UTF-8"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return "an integer too long to read"


_INT, _TEXT, _FLAG = (int,), (str,), (bool,)
READ_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "ReportSegment": {"ulSegmentId": _INT, "BaseAddress": _INT, "Size": _INT, "Aperture": _FLAG, "CpuVisible": _FLAG},
    "SegmentRange": {
        "SegmentId": _INT,
        "SegmentOffset": _INT,
        "Size": _INT,
        "Action": _TEXT,
        "Owner": (int, str),
        "hAllocation": _INT,
        "hProcess": _INT,
        "Label": _TEXT,
    },
    "VidMmEvict": {"pVidMmAlloc": _INT, "SegmentId": _INT, "Size": _INT, "Cause": _TEXT, "Destination": _TEXT},
    "PageInAllocation": {"hAllocationHandle": _INT},
    "VidMmNoRoom": {"Diagnosis": _TEXT},
}
"""The fields ``inspect`` reads of each event, with their types: an edited log is refused by line, not by a
traceback (decision 0248).  ``time`` is every record's."""
_KIND = {_INT: "an integer", _TEXT: "text", _FLAG: "true or false", (int, str): "an integer or text"}
_TIME: tuple[tuple[str, tuple[type, ...]], ...] = (("time", _INT),)
_CHECKED = {event: (*_TIME, *fields.items()) for event, fields in READ_FIELDS.items()}
"""Per event, every field checked (``time`` first), worked out once: a long log is read line by line."""


def _field_problem(row: Record) -> str | None:
    """What is wrong with the fields ``inspect`` reads of ``row`` (None: nothing)."""
    checked = _CHECKED.get(row["event"])
    if checked is None:
        if type(row.get("time")) is int:  # most records: only their time is read (never True: bool is no int here)
            return None
        checked = _TIME
    for key, types in checked:
        if key not in row:
            return f"{row['event']} has no field {key}"
        value = row[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"{row['event']} field {key}={value!r} must be {_KIND[types]}"
    return None


def read_jsonl(path: Path) -> list[Record]:
    """The records of an ``events.jsonl`` (index ``i`` is line ``i + 1``); a damaged line -- or a field ``inspect``
    reads missing or of another type -- raises :class:`EventLogError` naming the file and the line."""
    rows: list[Record] = []
    with path.open(encoding="utf-8", errors="surrogateescape") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line.encode("utf-8", "surrogateescape").decode("utf-8"))  # each line its own
            except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                raise EventLogError(
                    f"{path}, line {number}: not JSON ({_why(error)}); was the run cut short?"
                ) from None
            if not isinstance(row, dict) or not isinstance(row.get("event"), str):
                raise EventLogError(f"{path}, line {number}: not an event (a JSON object with an 'event' name)")
            problem = _field_problem(row)
            if problem is not None:
                raise EventLogError(f"{path}, line {number}: {problem}")
            rows.append(row)
    return rows


def iter_named(rows: Iterable[Record], *names: str) -> Iterator[tuple[int, Record]]:
    """``(index, record)`` of the records whose event is one of ``names``."""
    wanted = set(names)
    for index, row in enumerate(rows):
        if row["event"] in wanted:
            yield index, row


__all__ = [
    "SCHEMA",
    "EventLogError",
    "Record",
    "RecordStream",
    "dumps",
    "iter_named",
    "read_jsonl",
    "records",
    "write_jsonl",
]
