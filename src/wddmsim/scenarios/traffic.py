"""Paging traffic of a run, from its event log: what a replay under another policy or configuration compares.

What it counts, in residency terms that mean the same in both driver models: bytes paged in from system memory
(``VidMmPageIn`` by transfer), zero-filled on first use, mapped into an aperture; bytes paged out (every
transfer of the paging stream that was not a page-in); evictions by cause and where they went (``VidMmEvict``);
paging operations by name; paging buffers submitted and ``DxgkDdiBuildPagingBuffer`` calls (multipass shows
as more calls than operations); the simulated time.  The byte counters named after ``D3DKMT_QUERYSTATISTICS``
are the summary's (``wddmsim.viz.summary``); these are the replay's own, computed the same way for both runs.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable

from wddmsim.core.events import Event, EventLog
from wddmsim.vidmm.events import (
    PAGING_OP_NAMES,
    BuildPagingBuffer,
    PagingBufferSubmitted,
    PagingOperation,
    VidMmEvict,
    VidMmMakeResident,
    VidMmPageIn,
)

_TRANSFERS = frozenset(
    {"DXGK_OPERATION_TRANSFER", "DXGK_OPERATION_VIRTUAL_TRANSFER", "DXGK_OPERATION_SPECIAL_LOCK_TRANSFER"}
)


class Traffic:
    """The counters of :func:`traffic` as a fold: ``see`` each event as it is emitted, ``counters()`` at any time
    (a run that keeps no event log still has its traffic).  :meth:`attach` follows a log's events of
    :data:`KINDS` only, and takes the simulated time from the log (decision 0207)."""

    KINDS = (PagingOperation, BuildPagingBuffer, PagingBufferSubmitted, VidMmPageIn, VidMmEvict, VidMmMakeResident)
    """The events that move a counter (besides every event's time)."""
    TALLIED = (PagingOperation, BuildPagingBuffer)
    """Of :data:`KINDS`, those an attached fold reads from the log's tallies instead (decision 0223): a plain run
    then builds none of them."""

    __slots__ = ("_log", "_out", "_transferred", "end")

    def __init__(self) -> None:
        self._out: Counter[str] = Counter()
        self._transferred = 0
        self.end = 0
        self._log: EventLog | None = None

    def attach(self, log: EventLog) -> None:
        """Count ``log``'s events kept so far and every later one: paging operations and DDI calls from its
        tallies (decision 0223), the others as they are emitted."""
        self._log = log
        log.follow(self.see_counted, tuple(k for k in self.KINDS if k not in self.TALLIED))

    def see(self, e: Event) -> None:
        self.end = max(self.end, e.time)
        self.see_counted(e)

    def see_counted(self, e: Event) -> None:
        """``see`` without the time: for events of :data:`KINDS`, whose log keeps the time (:meth:`attach`)."""
        out = self._out
        if isinstance(e, BuildPagingBuffer):
            out["BuildPagingBufferCalls"] += 1
        elif isinstance(e, PagingOperation):
            out[_op_key(e.operation)] += 1
            if e.operation in _TRANSFERS:
                self._transferred += e.size
        elif isinstance(e, VidMmPageIn):
            out["PageIns"] += 1
            out[_PAGE_IN_KEYS.get(e.how, f"BytesPagedIn.{e.how}")] += e.size
        elif isinstance(e, VidMmEvict):
            out["Evictions"] += 1
            out[f"Evictions.{e.cause}"] += 1
            out[f"BytesEvicted.{e.cause}"] += e.size
            out[f"EvictedTo.{e.destination}"] += 1
        elif isinstance(e, PagingBufferSubmitted):
            out["PagingBuffers"] += 1
            out["PagingBufferBytes"] += e.end - e.start
        elif isinstance(e, VidMmMakeResident):
            out["MakeResidentCalls"] += 1
            if e.result == "E_PENDING":
                out["MakeResidentPending"] += 1

    def counters(self) -> dict[str, int]:
        out = Counter(self._out)
        transferred = self._transferred
        if self._log is not None:
            for (kind, key), amount in self._log.tallies.items():
                if kind is BuildPagingBuffer:
                    out["BuildPagingBufferCalls"] += amount
                elif kind is PagingOperation:
                    operation, _, unit = key.partition(" ")
                    if unit:
                        transferred += amount if operation in _TRANSFERS else 0
                    elif amount:
                        out[_op_key(operation)] += amount
        out["BytesPagedOut"] = transferred - out["BytesPagedIn"]
        out["SimulatedTimeNs"] = self.end if self._log is None else max(self.end, self._log.latest)
        return dict(sorted(out.items()))


_OP_KEYS: dict[str, str] = {}
"""Operation -> its counter's name (made once per operation)."""


def _op_key(operation: str) -> str:
    key = _OP_KEYS.get(operation)
    if key is None:
        key = _OP_KEYS[operation] = f"PagingOp.{PAGING_OP_NAMES.get(operation, operation)}"
    return key


_PAGE_IN_KEYS = {"transfer": "BytesPagedIn", "fill": "BytesZeroFilled", "map": "BytesMappedIntoAperture"}


def traffic(events: Iterable[Event]) -> dict[str, int]:
    """Flat counters (``Evictions.pressure``, ``PagingOp.PagingOpFill`` ...), sorted by name."""
    fold = Traffic()
    for e in events:
        fold.see(e)
    return fold.counters()


HEADLINE = (
    "BytesPagedIn",
    "BytesPagedOut",
    "BytesZeroFilled",
    "BytesMappedIntoAperture",
    "Evictions",
    "PagingBuffers",
    "BuildPagingBufferCalls",
    "SimulatedTimeNs",
)
"""The counters a summary table shows first."""


class Digest:
    """:func:`event_digest` as a fold: the same ``(count, SHA-256)`` from events seen one at a time."""

    __slots__ = ("_hash", "count")

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.count = 0

    def see(self, e: Event) -> None:
        self._hash.update((json.dumps(e.to_record()) + "\n").encode())
        self.count += 1

    def value(self) -> tuple[int, str]:
        return self.count, self._hash.hexdigest()


def event_digest(events: Iterable[Event]) -> tuple[int, str]:
    """``(count, SHA-256)`` of the event log as ``events.jsonl`` writes it: equal digests, identical logs."""
    fold = Digest()
    for e in events:
        fold.see(e)
    return fold.value()


def difference(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int, int]]:
    """Per counter present in either: ``(before, after, after - before)``, only those that differ."""
    out: dict[str, tuple[int, int, int]] = {}
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key, 0), after.get(key, 0)
        if a != b:
            out[key] = (a, b, b - a)
    return out
