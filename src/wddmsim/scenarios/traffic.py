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

from wddmsim.core.events import Event
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


def traffic(events: Iterable[Event]) -> dict[str, int]:
    """Flat counters (``Evictions.pressure``, ``PagingOp.PagingOpFill`` ...), sorted by name."""
    out: Counter[str] = Counter()
    transferred = 0
    end = 0
    for e in events:
        end = max(end, e.time)
        if isinstance(e, VidMmPageIn):
            out["PageIns"] += 1
            key = {"transfer": "BytesPagedIn", "fill": "BytesZeroFilled", "map": "BytesMappedIntoAperture"}
            out[key.get(e.how, f"BytesPagedIn.{e.how}")] += e.size
        elif isinstance(e, VidMmEvict):
            out["Evictions"] += 1
            out[f"Evictions.{e.cause}"] += 1
            out[f"BytesEvicted.{e.cause}"] += e.size
            out[f"EvictedTo.{e.destination}"] += 1
        elif isinstance(e, PagingOperation):
            name = PAGING_OP_NAMES.get(e.operation, e.operation)
            out[f"PagingOp.{name}"] += 1
            if e.operation in _TRANSFERS:
                transferred += e.size
        elif isinstance(e, PagingBufferSubmitted):
            out["PagingBuffers"] += 1
            out["PagingBufferBytes"] += e.end - e.start
        elif isinstance(e, BuildPagingBuffer):
            out["BuildPagingBufferCalls"] += 1
        elif isinstance(e, VidMmMakeResident):
            out["MakeResidentCalls"] += 1
            if e.result == "E_PENDING":
                out["MakeResidentPending"] += 1
    out["BytesPagedOut"] = transferred - out["BytesPagedIn"]
    out["SimulatedTimeNs"] = end
    return dict(sorted(out.items()))


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


def event_digest(events: Iterable[Event]) -> tuple[int, str]:
    """``(count, SHA-256)`` of the event log as ``events.jsonl`` writes it: equal digests, identical logs."""
    h = hashlib.sha256()
    count = 0
    for e in events:
        h.update((json.dumps(e.to_record()) + "\n").encode())
        count += 1
    return count, h.hexdigest()


def difference(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int, int]]:
    """Per counter present in either: ``(before, after, after - before)``, only those that differ."""
    out: dict[str, tuple[int, int, int]] = {}
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key, 0), after.get(key, 0)
        if a != b:
            out[key] = (a, b, b - a)
    return out
