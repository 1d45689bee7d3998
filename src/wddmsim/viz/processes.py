"""Per-process accounting over time, from the exported event log (issue 23; decision 0175).

For every process and segment group: budget, usage, committed, resident, aperture, demoted, evicted, at every
record that changes one of them -- one :class:`Row` each.  Records, not model objects, so a saved
``events.jsonl`` gives the same series; ``summary.json``, ``trace.json`` and ``report.html`` all read it from here.

Each number comes from the events that say it, not from VidMm's own counters where the log allows another way:

* budget: the group's capacity (the ``ReportSegment`` sizes of its segments, what a new process is given), then
  each ``VidMmProcessBudgetChange``;
* usage: ``VidMmProcessUsageChange`` (the residency lists are not in the log any other way);
* committed: the sizes of ``AdapterAllocation`` created minus destroyed, by its process and group;
* resident / aperture: ``PageInAllocation`` adds the size to the segment's kind, ``VidMmEvict`` takes it away;
  demoted: the aperture bytes of the local group;
* evicted: committed bytes placed nowhere (``committed - resident - aperture``); ``evicted_total``: bytes that
  left a segment for system memory (``VidMmEvict`` not demoted, not a destruction), cumulative.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from wddmsim.viz.eventlog import Record

PRESSURE_EVENTS: Final = (
    "VidMmProcessBudgetChange",
    "VidMmProcessPriorityChange",
    "VidMmTrimNotification",
    "ProcessLifetime",
    "AdapterPowerState",
)
"""The records that mark pressure on processes: instants in ``trace.json``, lines in the report's charts."""

GROUP_NAMES: Final = ("local", "non_local")
"""``D3DKMT_MEMORY_SEGMENT_GROUP`` 0 and 1 as ``summary.json`` names them."""

FIGURES: Final = ("budget", "usage", "committed", "resident", "aperture", "demoted", "evicted", "evicted_total")


@dataclass(frozen=True, slots=True)
class Row:
    """One process's figures in one group after one record (``time``, ``event``) changed them."""

    time: int
    event: str
    budget: int
    usage: int = 0
    committed: int = 0
    resident: int = 0
    aperture: int = 0
    demoted: int = 0
    evicted: int = 0
    evicted_total: int = 0

    def figures(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in FIGURES}


Series = dict[int, dict[int, list[Row]]]
"""Process handle -> group -> its rows, in log order."""


RowListener = Callable[[int, int, "Row"], None]
"""Told ``(process, group, row)`` of each new row as the pass makes it."""


class AccountPass:
    """The one pass over the records; ``keep = False`` keeps no row (its listeners still get each one)."""

    def __init__(self, *, keep: bool = True) -> None:
        self.keep = keep
        self.listeners: list[RowListener] = []
        self.capacity = [0, 0]
        self.apertures: set[int] = set()
        self.owner: dict[int, tuple[int, int]] = {}
        """Allocation -> (process, group), while it lives."""
        self.now: dict[tuple[int, int], tuple[int, ...]] = {}
        """(process, group) -> its figures now, in the order of :data:`FIGURES`."""
        self.series: Series = {}

    def _change(self, r: Record, process: int, group: int, **delta: int) -> None:
        """Move ``process``'s figures in ``group`` by ``delta`` (``budget``/``usage``: set) and append a row if
        anything moved (or the pair is new)."""
        key = (process, group)
        old = self.now.get(key)
        values = dict(zip(FIGURES, old or (self.capacity[group], 0, 0, 0, 0, 0, 0, 0), strict=True))
        for name, value in delta.items():
            values[name] = value if name in ("budget", "usage") else values[name] + value
        values["demoted"] = values["aperture"] if group == 0 else 0
        values["evicted"] = values["committed"] - values["resident"] - values["aperture"]
        new = tuple(values.values())
        if new == old:
            return
        self.now[key] = new
        row = Row(r["time"], r["event"], *new)
        if self.keep:
            self.series.setdefault(process, {}).setdefault(group, []).append(row)
        for listener in self.listeners:
            listener(process, group, row)

    def see(self, r: Record) -> None:
        name = r["event"]
        if name == "ReportSegment":  # an older log may lack the group: an aperture's is non-local
            self.capacity[r.get("MemorySegmentGroup", int(bool(r.get("Aperture"))))] += r["Size"]
            if r.get("Aperture"):
                self.apertures.add(r["ulSegmentId"])
        elif name == "AdapterAllocation" and r.get("hProcess"):
            self._allocation(r)
        elif name in ("PageInAllocation", "VidMmEvict"):
            self._move(r)
        elif name == "VidMmProcessUsageChange":
            self._change(r, r["hProcess"], r["MemorySegmentGroup"], usage=r["CurrentUsage"])
        elif name == "VidMmProcessBudgetChange":
            self._change(r, r["hProcess"], r["MemorySegmentGroup"], budget=r["Budget"])

    def _allocation(self, r: Record) -> None:
        process, group, size = r["hProcess"], r["MemorySegmentGroup"], r["allocSize"]
        if r["Action"] == "create":
            self.owner[r["hVidMmGlobalAlloc"]] = (process, group)
            self._change(r, process, group, committed=size)
        else:
            self.owner.pop(r["hVidMmGlobalAlloc"], None)
            self._change(r, process, group, committed=-size)

    def _move(self, r: Record) -> None:
        entering = r["event"] == "PageInAllocation"
        handle = r["hAllocationHandle"] if entering else r["pVidMmAlloc"]
        owner = self.owner.get(handle)
        if owner is None:
            return  # the driver's own (no process) or VidMm's
        segment = r["uiSegmentId"] if entering else r["SegmentId"]
        kind = "aperture" if segment in self.apertures else "resident"
        delta = {kind: r["Size"] if entering else -r["Size"]}
        if not entering and r.get("Destination") != "aperture" and r.get("Cause") != "destroy":
            delta["evicted_total"] = r["Size"]
        self._change(r, *owner, **delta)


def process_series(rows: Iterable[Record]) -> Series:
    """Every process's rows per group (see the module's docstring for where each number comes from)."""
    state = AccountPass()
    for r in rows:
        state.see(r)
    return {p: dict(sorted(groups.items())) for p, groups in sorted(state.series.items())}


def pressure_events(rows: Iterable[Record]) -> list[Record]:
    """The records of :data:`PRESSURE_EVENTS`, in order."""
    return [r for r in rows if r["event"] in PRESSURE_EVENTS]


def _peaks(rows: Sequence[Row]) -> dict[str, int]:
    return {name: max(getattr(row, name) for row in rows) for name in FIGURES}


def process_summary(series: Series, pressure: Sequence[Record]) -> dict[str, Any]:
    """``summary.json``'s ``processes``: per process (``0x``-hex handle) and group, the final and peak figures,
    the lowest budget it was given (where pressure shows), and how many rows the series has (the rows themselves
    are ``trace.json``'s counter tracks); then the pressure events by name."""
    processes: dict[str, Any] = {}
    for process, groups in series.items():
        processes[f"{process:#x}"] = {
            GROUP_NAMES[g]: {
                "final": rows[-1].figures(),
                "peak": _peaks(rows),
                "lowest_budget": min(row.budget for row in rows),
                "changes": len(rows),
            }
            for g, rows in groups.items()
        }
    counts: dict[str, int] = {}
    for r in pressure:
        counts[r["event"]] = counts.get(r["event"], 0) + 1
    return {"by_process": processes, "pressure_events": dict(sorted(counts.items()))}


class ProcessTotals:
    """:func:`process_summary` as a fold: an :class:`AccountPass` listener for the rows, ``see`` for the pressure
    records; ``result()`` equals ``process_summary(process_series(rows), pressure_events(rows))``."""

    def __init__(self, accounts: AccountPass) -> None:
        self.groups: dict[tuple[int, int], dict[str, Any]] = {}
        self.pressure: dict[str, int] = {}
        accounts.listeners.append(self.row)

    def row(self, process: int, group: int, row: Row) -> None:
        seen = self.groups.get((process, group))
        figures = row.figures()
        if seen is None:
            self.groups[(process, group)] = {"final": figures, "peak": dict(figures), "low": row.budget, "n": 1}
            return
        seen["final"] = figures
        peak = seen["peak"]
        for name, value in figures.items():
            if value > peak[name]:
                peak[name] = value
        seen["low"] = min(seen["low"], row.budget)
        seen["n"] += 1

    def see(self, r: Record) -> None:
        if r["event"] in PRESSURE_EVENTS:
            self.pressure[r["event"]] = self.pressure.get(r["event"], 0) + 1

    def result(self) -> dict[str, Any]:
        processes: dict[str, Any] = {}
        for (process, group), seen in sorted(self.groups.items()):
            processes.setdefault(f"{process:#x}", {})[GROUP_NAMES[group]] = {
                "final": seen["final"],
                "peak": seen["peak"],
                "lowest_budget": seen["low"],
                "changes": seen["n"],
            }
        return {"by_process": processes, "pressure_events": dict(sorted(self.pressure.items()))}


__all__ = [
    "FIGURES",
    "GROUP_NAMES",
    "PRESSURE_EVENTS",
    "AccountPass",
    "ProcessTotals",
    "Row",
    "Series",
    "pressure_events",
    "process_series",
    "process_summary",
]
