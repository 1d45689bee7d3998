"""What the figures of a sweep show: the checked options of ``wddmsim plot`` and the runs grouped for them.

The x axis is a column of results.csv (default: the first numeric grid key), the y axis a numeric metric
(default ``paged_in_over_lower_bound``); one line per value of the remaining grid keys (the policy, most often),
each point the runs of every seed at that grid point.  Failed runs are left out of every figure and counted.
Each bad option is a :class:`~wddmsim.core.errors.ConfigurationError` naming it (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.core.errors import ConfigurationError
from wddmsim.viz.sweep_data import POLICY_KEYS, Interval, Run, Sweep, interval, number

DEFAULT_Y = "paged_in_over_lower_bound"
FORMATS = ("png", "svg")
_NOT_AXES = ("id", "scenario", "seed", "status", "error")


@dataclass(frozen=True, slots=True)
class PlotOptions:
    """``wddmsim plot``'s options; ``None`` / empty means the default."""

    x: str | None = None
    y: str = DEFAULT_Y
    runs: tuple[str, ...] = ()
    formats: tuple[str, ...] = FORMATS


@dataclass(slots=True)
class Point:
    """The runs of one line at one x value."""

    values: list[float] = field(default_factory=list)
    """The metric of each successful run (failed runs and empty cells left out)."""
    ok: int = 0
    failed: int = 0

    def stats(self) -> Interval | None:
        return interval(self.values) if self.values else None


@dataclass(frozen=True, slots=True)
class Plan:
    """The sweep arranged for its figures."""

    sweep: Sweep
    x: str
    y: str
    x_numeric: bool
    x_values: list[str]
    series_keys: list[str]
    """The grid keys (other than x) whose values make a line."""
    series: list[str]
    """One label per line, in order."""
    points: dict[tuple[str, str], Point]
    """(line, x value) -> its runs."""
    occupancy_runs: list[Run]
    formats: tuple[str, ...]

    def label(self, run: Run) -> str:
        return series_label(self.series_keys, run, self.sweep.scenario)

    def at_x(self, x_value: str) -> dict[str, list[Run]]:
        """The successful runs at ``x_value``, per line in line order."""
        out: dict[str, list[Run]] = {s: [] for s in self.series}
        for run in self.sweep.ok_runs:
            if run.cells.get(self.x, "") == x_value:
                out[self.label(run)].append(run)
        return out


def series_label(keys: list[str], run: Run, scenario: str) -> str:
    """A policy key stands alone (``lru``); other keys as ``key=value``; no key left: the scenario's name."""
    if not keys:
        return scenario
    parts = [run.cells.get(k, "") if k in POLICY_KEYS else f"{k}={run.cells.get(k, '')}" for k in keys]
    return ", ".join(parts)


def _choose_x(sweep: Sweep, given: str | None) -> str:
    if given is not None:
        if given not in sweep.columns or given in _NOT_AXES:
            axes = [c for c in sweep.columns if c not in _NOT_AXES]
            raise ConfigurationError("--x", given, f"must be a column of results.csv: {', '.join(axes) or 'none'}")
        return given
    grid = [k for k in sweep.grid if k in sweep.columns]
    numeric = [k for k in grid if all(number(r.cells.get(k)) is not None for r in sweep.runs)]
    if numeric:
        return numeric[0]
    if grid:
        return grid[0]
    raise ConfigurationError("--x", None, "the sweep has no grid key: name a column of results.csv")


def _choose_y(sweep: Sweep, given: str) -> str:
    numeric = [c for c in sweep.numeric_columns() if c not in _NOT_AXES]
    if given not in numeric:
        if given in sweep.columns and not sweep.ok_runs:
            raise ConfigurationError("--y", given, "no run of the sweep succeeded: there is nothing to plot")
        rule = "is not a numeric metric column of results.csv" if given in sweep.columns else "no such column"
        shown = ", ".join(numeric[:40]) + (" ..." if len(numeric) > 40 else "")
        raise ConfigurationError("--y", given, f"{rule}; numeric columns: {shown or 'none'}")
    return given


def _check_formats(formats: tuple[str, ...]) -> tuple[str, ...]:
    if not formats:
        raise ConfigurationError("--format", "", f"name at least one of {', '.join(FORMATS)}")
    for f in formats:
        if f not in FORMATS:
            raise ConfigurationError("--format", f, f"must be one of {', '.join(FORMATS)} (comma-separated)")
    return tuple(dict.fromkeys(formats))


def _occupancy_runs(sweep: Sweep, chosen: tuple[str, ...], default: list[Run]) -> list[Run]:
    if not chosen:
        return default
    by_id = {r.id: r for r in sweep.runs}
    out = []
    for run_id in dict.fromkeys(chosen):
        run = by_id.get(run_id)
        if run is None:
            raise ConfigurationError("--runs", run_id, "is no run of this sweep (the id column of results.csv)")
        if not run.ok:
            raise ConfigurationError("--runs", run_id, f"failed ({run.error or 'no error recorded'}): it has no frames")
        out.append(run)
    return out


def _seed_key(run: Run) -> tuple[float, str]:
    value = number(run.seed)
    return (value if value is not None else float("inf"), run.seed)


def plan(sweep: Sweep, options: PlotOptions) -> Plan:
    """Check the options against the sweep and group its runs."""
    formats = _check_formats(options.formats)
    x = _choose_x(sweep, options.x)
    y = _choose_y(sweep, options.y)
    keys = [k for k in sweep.grid if k in sweep.columns and k != x]
    x_values = sweep.values(x)
    x_numeric = all(number(v) is not None for v in x_values)
    series = list(dict.fromkeys(series_label(keys, r, sweep.scenario) for r in _ordered(sweep, keys)))
    points = {(s, v): Point() for s in series for v in x_values}
    for run in sweep.runs:
        point = points[(series_label(keys, run, sweep.scenario), run.cells.get(x, ""))]
        if not run.ok:
            point.failed += 1
            continue
        point.ok += 1
        value = number(run.cells.get(y))
        if value is not None:
            point.values.append(value)
    last = x_values[-1] if x_values else ""
    default = []
    for s in series:
        candidates = [
            r for r in sweep.ok_runs if r.cells.get(x, "") == last and series_label(keys, r, sweep.scenario) == s
        ]
        if candidates:
            default.append(min(candidates, key=_seed_key))
    runs = _occupancy_runs(sweep, options.runs, default)
    return Plan(sweep, x, y, x_numeric, x_values, keys, series, points, runs, formats)


def _ordered(sweep: Sweep, keys: list[str]) -> list[Run]:
    """The runs sorted by the grid order of each line key, so that lines come in the order the grid gives."""
    orders = {k: sweep.values(k) for k in keys}
    return sorted(sweep.runs, key=lambda r: [orders[k].index(r.cells.get(k, "")) for k in keys])


__all__ = ["DEFAULT_Y", "FORMATS", "Plan", "PlotOptions", "Point", "plan", "series_label"]
