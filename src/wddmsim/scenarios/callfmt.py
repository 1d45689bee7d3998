"""The call-trace format: one JSON object per line, every user-mode call of a run with its arguments, its result
and its ``[out]`` fields -- handles, GPU virtual addresses, CPU addresses and fence values written as symbols,
so that a replay on another configuration (where VidMm hands out other values) can map them.

Lines (``version`` 2)::

    {"trace": "wddmsim-calls", "version": 2, "scenario": {...}}          the header: the run's configuration
    {"seq": 7, "call": "make_resident", "device": "D0",
     "args": {"hPagingQueue": "Q0", "AllocationList": ["A3", "A4"], "Flags": 0},
     "result": "E_PENDING", "out": {"PagingFenceValue": 5, "NumBytesToTrim": 0}}
    {"seq": 8, "call": "wait_for_paging_fence", "device": "D0", "args": {"hPagingQueue": "Q0", "value": {"fence": 7}}}
    ...
    {"end": {"calls": 812, "traffic": {...}, "verified": true, "events": 1234, "events_sha256": "..."}}   the trailer

Symbols: ``P``/``D`` processes and devices, ``A`` allocations, ``Q`` paging queues, ``C`` contexts, ``S``
synchronisation objects, each numbered in order of creation.  An address is ``{"va": "V2", "offset": 4096}``
(inside a GPU VA range a Map or Reserve returned) or ``{"view": "A3", "offset": 0}`` (inside the CPU view a lock
of allocation A3 returned); a fence value a call returned is ``{"fence": seq}``.  Values not known as symbols are
written as plain integers.  CPU writes of a :mod:`pattern <wddmsim.scenarios.patterns>` are written as
``{"pattern": {"seed": s, "size": n}}``, other writes as base64; reads as the SHA-256 of what was read, which a
replay compares.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
from bisect import bisect_right
from typing import Any, Final

import numpy as np

from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address, split_address

FORMAT: Final = "wddmsim-calls"
VERSION: Final = 2
"""Version 2: the trailer counts the calls (``"calls": n``), so a trace cut short is refused (decision 0038)."""
READABLE_VERSIONS: Final = (1, 2)

Json = Any
"""A JSON value."""

KINDS: Final = {"process": "P", "device": "D", "allocation": "A", "queue": "Q", "context": "C", "sync": "S", "va": "V"}


class TraceFormatError(ValueError):
    """A trace line that does not follow the format (names the line and what is wrong)."""


class Symbols:
    """Handle <-> symbol, per kind, in both directions (the recorder names, the replayer resolves)."""

    def __init__(self) -> None:
        self._names: dict[str, dict[int, str]] = {k: {} for k in KINDS}
        self._values: dict[str, int] = {}
        self._count: dict[str, int] = dict.fromkeys(KINDS, 0)

    def new(self, kind: str, value: int) -> str:
        name = f"{KINDS[kind]}{self._count[kind]}"
        self._count[kind] += 1
        self._names[kind][value] = name
        self._values[name] = value
        return name

    def name(self, kind: str, value: int) -> Json:
        """The symbol of a known handle, else the integer itself (a forged or stale handle stays a number)."""
        return self._names[kind].get(int(value), int(value))

    def bind(self, name: str, value: int) -> None:
        """Replay: the symbol ``name`` now stands for ``value``."""
        self._values[name] = value
        self._names[_kind_of(name)][value] = name

    def value(self, symbol: Json) -> int:
        """Replay: what a symbol stands for (an integer stands for itself)."""
        if isinstance(symbol, int):
            return symbol
        if not isinstance(symbol, str) or symbol not in self._values:
            raise TraceFormatError(f"unknown symbol {symbol!r}")
        return self._values[symbol]


def _kind_of(name: str) -> str:
    for kind, prefix in KINDS.items():
        if name.startswith(prefix):
            return kind
    raise TraceFormatError(f"symbol {name!r} has no known kind")


class Ranges:
    """Named address ranges (GPU VA ranges, or CPU views), for writing addresses as ``symbol + offset``."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._starts: list[int] = []
        self._ranges: list[tuple[int, int, str]] = []
        self._by_name: dict[str, int] = {}

    def add(self, name: str, base: int, size: int) -> None:
        i = bisect_right(self._starts, base)
        if i and self._starts[i - 1] == base:
            self._ranges[i - 1] = (base, size, name)
        else:
            self._starts.insert(i, base)
            self._ranges.insert(i, (base, size, name))
        self._by_name[name] = base

    def remove(self, base: int) -> None:
        i = bisect_right(self._starts, base) - 1
        if i >= 0 and self._starts[i] == base:
            _, _, name = self._ranges[i]
            del self._starts[i]
            del self._ranges[i]
            self._by_name.pop(name, None)

    def find(self, address: int) -> tuple[str, int] | None:
        i = bisect_right(self._starts, address) - 1
        if i >= 0:
            base, size, name = self._ranges[i]
            if base <= address < base + size:
                return name, address - base
        return None

    def express(self, address: int) -> Json:
        found = self.find(address)
        return int(address) if found is None else {self.key: found[0], "offset": found[1]}

    def base(self, name: str) -> int:
        if name not in self._by_name:
            raise TraceFormatError(f"no {self.key} named {name!r}")
        return self._by_name[name]

    def resolve(self, expression: Json) -> int:
        if isinstance(expression, int):
            return expression
        if not isinstance(expression, dict) or self.key not in expression:
            raise TraceFormatError(f"not a {self.key} address: {expression!r}")
        return self.base(expression[self.key]) + int(expression.get("offset", 0))


# --- bytes -----------------------------------------------------------------------------------------------------


def blob(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unblob(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


# --- GPU packets ------------------------------------------------------------------------------------------------

_ADDRESS_FIELDS: Final = frozenset({"src", "dst", "address"})
_PACKETS: Final = {
    cls.__name__: cls for cls in (cmd.Nop, cmd.Copy, cmd.Fill, cmd.ReadMem, cmd.WriteMem, cmd.Signal, cmd.Sync)
}


def packets_to_json(data: bytes, vas: Ranges) -> Json:
    """A DMA buffer as packets, GPU VAs written as ``{"va": ..., "offset": ...}``; a buffer that does not decode
    to the packets a user buffer may hold is kept whole (``{"raw": base64}``)."""
    try:
        decoded = cmd.decode_all(data)
    except cmd.DecodeError:
        return {"raw": blob(data)}
    out: list[Json] = []
    for _, packet in decoded:
        name = type(packet).__name__
        if name not in _PACKETS:
            return {"raw": blob(data)}
        record: dict[str, Json] = {"op": name}
        for f in dataclasses.fields(packet):
            value = getattr(packet, f.name)
            if f.name in _ADDRESS_FIELDS:
                space, address = split_address(value)
                record[f.name] = vas.express(address) if space == Space.GPU_VA else {"word": int(value)}
            elif isinstance(value, np.ndarray):
                record[f.name] = [int(v) for v in value]
            elif isinstance(value, bool):
                record[f.name] = value
            elif isinstance(value, (int, enum.IntEnum)):
                record[f.name] = int(value)
            else:
                return {"raw": blob(data)}
        out.append(record)
    return out


def packets_from_json(doc: Json, vas: Ranges) -> bytes:
    """The DMA buffer :func:`packets_to_json` described, with the replay's VAs."""
    if isinstance(doc, dict) and "raw" in doc:
        return unblob(doc["raw"])
    if not isinstance(doc, list):
        raise TraceFormatError(f"packets must be a list or a raw buffer, not {doc!r}")
    parts: list[bytes] = []
    for record in doc:
        cls = _PACKETS.get(record.get("op", ""))
        if cls is None:
            raise TraceFormatError(f"unknown packet {record!r}")
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in record:
                continue
            value = record[f.name]
            if f.name in _ADDRESS_FIELDS:
                value = (
                    int(value["word"])
                    if isinstance(value, dict) and "word" in value
                    else hw_address(Space.GPU_VA, vas.resolve(value))
                )
            elif f.name == "extents":
                value = np.asarray(value, dtype=np.uint64)
            elif f.name == "transform":
                value = cmd.Transform(value)
            kwargs[f.name] = value
        parts.append(cmd.encode(cls(**kwargs)))
    return b"".join(parts)
