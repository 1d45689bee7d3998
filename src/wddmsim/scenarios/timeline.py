"""Pressure on a timeline: what the OS and other processes do to a workload at chosen frames (issue 23).

A scenario's ``[[timeline]]`` entries, each at the start of a frame (before any process's work in it)::

    [[timeline]]
    frame = 4
    event = "focus"        # the process loses (foreground = false) or regains the foreground
    process = 0
    foreground = false

Events:

- ``focus`` (``process``, ``foreground``): the process loses or gains the foreground.  Without it a process
  renders nothing (a game paused in the background); its residency client decides what it releases.  Its
  weight in the sharing of budgets halves (doubles) -- ``adapter.budgets = "shared"``.
- ``priority`` (``process``, ``priority``): ``D3DKMTSetProcessSchedulingPriorityClass`` (0 IDLE ... 5 REALTIME).
- ``budget`` (``process``, ``local`` and/or ``non_local``: a size, or ``"released"``): the OS sets the process's
  budget outright, or gives it back to the model.
- ``start`` (``bytes``, or ``share`` of local memory; optional ``client``, ``foreground``): another process starts;
  it creates ``bytes`` (or ``share x adapter.vram``: it scales with ``--vram``) of
  resources (the workload's kinds and sizes) and uses them frame by frame as the workload's access pattern and
  working set say.  It takes the next process index.
- ``exit`` (``process``): the process verifies what it holds and exits.
- ``trim`` (``process``, optional; ``flags``: ``trim-to-budget`` or ``periodic``): the OS asks the process (every
  process when none is named) to trim -- the callback registered with ``D3DKMTRegisterTrimNotification``.
- ``sleep`` (``kind``: ``standby``, ``hibernate`` or ``hybrid_sleep``): the system sleeps and wakes.

Each entry is checked as it is read; a bad one is a :class:`~wddmsim.core.errors.ConfigurationError` naming
``timeline[2].frame``, the value and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import parse_size

EVENTS: Final = ("focus", "priority", "budget", "start", "exit", "trim", "sleep")
SLEEPS: Final = ("standby", "hibernate", "hybrid_sleep")
TRIMS: Final = ("trim-to-budget", "periodic")
RELEASED: Final = "released"

_KEYS: Final = {
    "focus": {"process", "foreground"},
    "priority": {"process", "priority"},
    "budget": {"process", "local", "non_local"},
    "start": {"bytes", "share", "client", "foreground"},
    "exit": {"process"},
    "trim": {"process", "flags"},
    "sleep": {"kind"},
}
_REQUIRED: Final = {
    "focus": {"process", "foreground"},
    "priority": {"process", "priority"},
    "budget": {"process"},
    "start": set(),
    "exit": {"process"},
    "trim": set(),
    "sleep": {"kind"},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineEvent:
    """One entry of ``[[timeline]]``."""

    frame: int
    event: str
    process: int | None = None
    foreground: bool = True
    priority: int = 2
    local: int | None = None
    """``budget``: the local budget in bytes; None: unchanged; -1: released (back to the model)."""
    non_local: int | None = None
    bytes: int = 0
    share: float | None = None
    """``start``: the newcomer's bytes as a share of local memory (``bytes`` is then that share of it)."""
    client: str = ""
    """``start``: the newcomer's residency client ("": the workload's)."""
    flags: str = "trim-to-budget"
    kind: str = "standby"
    index: int = field(default=0, compare=False)
    """Where the entry stood in the file (``timeline[index]`` in errors found once the adapter is known)."""

    def to_dict(self) -> dict[str, Any]:
        """The TOML table this event reads back from (only the keys its kind takes)."""
        out: dict[str, Any] = {"frame": self.frame, "event": self.event}
        for key in sorted(_KEYS[self.event]):
            value = getattr(self, key)
            if key in ("local", "non_local"):
                if value is None:
                    continue
                value = RELEASED if value < 0 else value
            if key == "process" and value is None:
                continue
            if (key == "share" and value is None) or (key == "bytes" and self.share is not None):
                continue
            if key == "client" and not value:
                continue
            out[key] = value
        return out


def _int(key: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigurationError(key, value, f"must be an integer between {lo} and {hi}")
    return value


def _size(key: str, value: object, *, released: bool) -> int:
    if released and value == RELEASED:
        return -1
    if isinstance(value, str):
        try:
            return parse_size(value)
        except ValueError:
            pass
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    extra = f' or "{RELEASED}"' if released else ""
    raise ConfigurationError(key, value, f"must be a size such as 64MiB or 0{extra}")


def _entry(index: int, doc: object, frames: int, clients: Sequence[str], vram: int) -> TimelineEvent:
    at = f"timeline[{index}]"
    if not isinstance(doc, Mapping):
        raise ConfigurationError(at, doc, "must be a table")
    event = doc.get("event")
    if event not in EVENTS:
        raise ConfigurationError(f"{at}.event", event, f"must be one of {', '.join(EVENTS)}")
    allowed = _KEYS[event] | {"frame", "event"}
    for key in doc:
        if key not in allowed:
            raise ConfigurationError(
                f"{at}.{key}", doc[key], f"is not a key of a {event} event; known: {', '.join(sorted(allowed))}"
            )
    for key in _REQUIRED[event] | {"frame"}:
        if key not in doc:
            raise ConfigurationError(f"{at}.{key}", None, f"is required by a {event} event")
    values: dict[str, Any] = {"event": event, "frame": _int(f"{at}.frame", doc["frame"], 0, frames - 1), "index": index}
    if "process" in doc:
        values["process"] = _int(f"{at}.process", doc["process"], 0, 63)
    if "foreground" in doc:
        if not isinstance(doc["foreground"], bool):
            raise ConfigurationError(f"{at}.foreground", doc["foreground"], "must be true or false")
        values["foreground"] = doc["foreground"]
    if "priority" in doc:
        values["priority"] = _int(f"{at}.priority", doc["priority"], 0, 5)
    for key in ("local", "non_local"):
        if key in doc:
            values[key] = _size(f"{at}.{key}", doc[key], released=True)
    if event == "budget" and "local" not in doc and "non_local" not in doc:
        raise ConfigurationError(f"{at}.local", None, "a budget event sets local, non_local or both")
    if event == "start" and ("bytes" in doc) == ("share" in doc):
        raise ConfigurationError(f"{at}.bytes", doc.get("bytes"), "a start event gives bytes or share, one of them")
    if "share" in doc:
        share = doc["share"]
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 16:
            raise ConfigurationError(f"{at}.share", share, "must be a number in (0, 16]: bytes / local memory")
        values["share"] = float(share)
        values["bytes"] = int(share * vram)
    if "bytes" in doc:
        values["bytes"] = _size(f"{at}.bytes", doc["bytes"], released=False)
    if event == "start" and values["bytes"] < 4096:
        raise ConfigurationError(
            f"{at}.{'share' if 'share' in doc else 'bytes'}",
            doc.get("share", doc.get("bytes")),
            "must give at least 4 KiB",
        )
    if "client" in doc:
        if doc["client"] not in clients:
            raise ConfigurationError(f"{at}.client", doc["client"], f"must be one of {', '.join(clients)}")
        values["client"] = doc["client"]
    if "flags" in doc:
        if doc["flags"] not in TRIMS:
            raise ConfigurationError(f"{at}.flags", doc["flags"], f"must be one of {', '.join(TRIMS)}")
        values["flags"] = doc["flags"]
    if "kind" in doc:
        if doc["kind"] not in SLEEPS:
            raise ConfigurationError(f"{at}.kind", doc["kind"], f"must be one of {', '.join(SLEEPS)}")
        values["kind"] = doc["kind"]
    return TimelineEvent(**values)


def read_timeline(
    doc: object, frames: int, processes: int, clients: Sequence[str], vram: int
) -> tuple[TimelineEvent, ...]:
    """The ``[[timeline]]`` array, checked entry by entry and as a whole (a process named must exist then: one
    of the workload's, or one a ``start`` event before it began, and not exited)."""
    if doc is None:
        return ()
    if not isinstance(doc, list):
        raise ConfigurationError("timeline", doc, "must be an array of tables ([[timeline]])")
    events = [_entry(i, entry, frames, clients, vram) for i, entry in enumerate(doc)]
    order = sorted(range(len(events)), key=lambda i: events[i].frame)  # stable: same-frame entries keep their order
    alive = set(range(processes))
    count = processes
    for i in order:
        e = events[i]
        if e.event == "start":
            if count >= 64:
                raise ConfigurationError(f"timeline[{i}].event", e.event, "at most 64 processes in all")
            alive.add(count)
            count += 1
        elif e.process is not None and e.process not in alive:
            raise ConfigurationError(
                f"timeline[{i}].process",
                e.process,
                f"is not running at frame {e.frame} (running: {', '.join(map(str, sorted(alive))) or 'none'})",
            )
        if e.event == "exit":
            alive.discard(e.process if e.process is not None else -1)
    return tuple(events[i] for i in order)
