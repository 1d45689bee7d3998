"""A checker of the Chrome trace event format (the JSON that Perfetto UI and chrome://tracing open).

It checks what the format requires (Google's "Trace Event Format" document) plus what Perfetto needs to draw
the slices the way they were meant: the object or array form; every event an object with a known ``ph`` and
the fields that phase requires (``name``, ``ts``, ``pid``, ``tid``, ``dur`` for ``X``, ``id`` for async events,
numeric ``args`` for counters, ``args.name`` for naming metadata); ``B``/``E`` properly paired per thread and
never going back in time; async ``b``/``e`` paired by (``cat``, ``id``); complete slices of one thread nested
or disjoint -- never overlapping in part -- once their times are nanoseconds again (as viewers read them);
counter samples of one series in time order.  Problems come back as prose (an empty list: a valid trace).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

PHASES = frozenset("BEXiIbenCMsftPOND")
_METADATA = frozenset(
    {
        "process_name",
        "process_labels",
        "process_sort_index",
        "thread_name",
        "thread_sort_index",
        "process_uptime_seconds",
    }
)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _ns(us: float) -> int:
    return round(us * 1000)


def check_trace(trace: object) -> list[str]:
    """Every problem of ``trace`` (a parsed JSON value), as prose."""
    if isinstance(trace, dict):
        events = trace.get("traceEvents")
        if not isinstance(events, list):
            return ["the object form needs a traceEvents array"]
        unit = trace.get("displayTimeUnit", "ms")
        if unit not in ("ms", "ns"):
            return [f"displayTimeUnit={unit!r}: must be 'ms' or 'ns'"]
    elif isinstance(trace, list):
        events = trace
    else:
        return ["a trace is a JSON object or array"]
    problems: list[str] = []
    stacks: dict[tuple[object, object], list[tuple[str, float]]] = defaultdict(list)
    last_ts: dict[tuple[object, object], float] = {}
    open_async: dict[tuple[object, object], list[float]] = defaultdict(list)
    complete: dict[tuple[object, object], list[tuple[int, int, str]]] = defaultdict(list)
    counters: dict[tuple[object, object], float] = {}
    for n, event in enumerate(events):
        where = f"event {n}"
        if not isinstance(event, dict):
            problems.append(f"{where}: not an object")
            continue
        ph = event.get("ph")
        if ph not in PHASES:
            problems.append(f"{where}: ph={ph!r} is not a phase of the format")
            continue
        if not isinstance(event.get("name", ""), str) or (ph != "E" and "name" not in event):
            problems.append(f"{where} ({ph}): needs a string name")
        if "args" in event and not isinstance(event["args"], dict):
            problems.append(f"{where}: args must be an object")
        if ph == "M":
            problems += _metadata(where, event)
            continue
        if not _number(event.get("ts")) or event["ts"] < 0:
            problems.append(f"{where} ({ph}): ts must be a non-negative number")
            continue
        if "pid" not in event:
            problems.append(f"{where} ({ph}): needs a pid")
        if ph in "BEXiI" and "tid" not in event:
            problems.append(f"{where} ({ph}): needs a tid")
        track = (event.get("pid"), event.get("tid"))
        ts = float(event["ts"])
        if ph in "BE":
            if ts < last_ts.get(track, 0.0):
                problems.append(f"{where} ({ph}): ts {ts} goes back in time on pid/tid {track}")
            last_ts[track] = ts
            if ph == "B":
                stacks[track].append((event.get("name", ""), ts))
            elif not stacks[track]:
                problems.append(f"{where} (E): no open B on pid/tid {track}")
            else:
                name, _ = stacks[track].pop()
                if event.get("name") not in (None, name):
                    problems.append(f"{where} (E): closes {name!r} but is named {event.get('name')!r}")
        elif ph == "X":
            if not _number(event.get("dur")) or event["dur"] < 0:
                problems.append(f"{where} (X): dur must be a non-negative number")
            else:
                start = _ns(ts)
                complete[track].append((start, start + _ns(float(event["dur"])), str(event.get("name"))))
        elif ph in "be":
            if "id" not in event and "id2" not in event:
                problems.append(f"{where} ({ph}): an async event needs an id")
                continue
            key = (event.get("cat"), event.get("id", event.get("id2")))
            if ph == "b":
                open_async[key].append(ts)
            elif not open_async[key]:
                problems.append(f"{where} (e): no open b with cat/id {key}")
            elif ts < open_async[key].pop():
                problems.append(f"{where} (e): ends before its b")
        elif ph == "C":
            args = event.get("args")
            if not isinstance(args, dict) or not args or not all(_number(v) for v in args.values()):
                problems.append(f"{where} (C): args must hold numeric series values")
            series = (event.get("pid"), event.get("name"))
            if ts < counters.get(series, 0.0):
                problems.append(f"{where} (C): counter {series} goes back in time")
            counters[series] = ts
        elif ph in "iI" and event.get("s", "t") not in ("g", "p", "t"):
            problems.append(f"{where} ({ph}): scope s must be g, p or t")
    for track, stack in stacks.items():
        if stack:
            problems.append(f"pid/tid {track}: {len(stack)} B event(s) never ended ({stack[-1][0]!r})")
    for key, starts in open_async.items():
        if starts:
            problems.append(f"async cat/id {key}: {len(starts)} b event(s) never ended")
    for track, slices in complete.items():
        problems += _nesting(track, slices)
    return problems


def _metadata(where: str, event: dict[str, Any]) -> list[str]:
    name = event.get("name")
    if name not in _METADATA:
        return [f"{where} (M): unknown metadata {name!r}"]
    args = event.get("args")
    if not isinstance(args, dict):
        return [f"{where} (M): needs args"]
    if name.endswith("_name") and not isinstance(args.get("name"), str):
        return [f"{where} (M): {name} needs args.name"]
    if name.endswith("_sort_index") and not isinstance(args.get("sort_index"), int):
        return [f"{where} (M): {name} needs an integer args.sort_index"]
    if "pid" not in event:
        return [f"{where} (M): needs a pid"]
    return []


def _nesting(track: tuple[object, object], slices: list[tuple[int, int, str]]) -> list[str]:
    """Complete slices of one thread must nest or be disjoint (in integer nanoseconds)."""
    problems: list[str] = []
    stack: list[tuple[int, int, str]] = []
    for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][1] <= start:
            stack.pop()
        if stack and end > stack[-1][1]:
            parent = stack[-1]
            problems.append(
                f"pid/tid {track}: {name!r} [{start}, {end}) ns overlaps {parent[2]!r} [{parent[0]}, {parent[1]}) in part"
            )
            if len(problems) > 5:
                break
        stack.append((start, end, name))
    return problems


__all__ = ["PHASES", "check_trace"]
