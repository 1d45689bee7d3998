"""A sweep directory as the figures and the report read it: the grid, one row per run, and each run's frames.

The layout is the sweep's contract (``sweep.json``, ``results.csv``, ``runs/<id>/frames.csv``); this module only
reads it, with the standard library's ``csv`` and numpy (no table library), and refuses a bad directory or a
column that is not there as a :class:`~wddmsim.core.errors.ConfigurationError` naming the option.  Statistics
over seeds: the mean and a 95 % Student t-interval (decision 0155).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from wddmsim.core.errors import ConfigurationError
from wddmsim.research.frames import CSV_COLUMNS

POLICY_KEYS = ("policy", "adapter.policy")
"""Grid keys that name the eviction policy (the alias and the setting)."""

FRAME_COLUMNS: Final = CSV_COLUMNS
"""The columns of a run's ``frames.csv`` (decision 0157)."""
LATER_FRAME_COLUMNS: Final = frozenset({"residency_stall_ns"})
"""Columns added after decision 0157 (0176): a ``frames.csv`` written before them is read with them NaN."""

_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip
"""The 0.975 quantile of Student's t with 1..30 degrees of freedom (to 6 decimals)."""
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom: tabled to 30, then the Cornish-Fisher
    expansion around the normal quantile (error below 2e-6 from 31 on)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


@dataclass(frozen=True, slots=True)
class Interval:
    """The mean of ``n`` values and the half-width of its 95 % t-interval (``None`` for a single value)."""

    mean: float
    half: float | None
    n: int

    @property
    def low(self) -> float:
        return self.mean - (self.half or 0.0)

    @property
    def high(self) -> float:
        return self.mean + (self.half or 0.0)


def interval(values: Sequence[float]) -> Interval:
    """Mean ± t(0.975, n-1) · s / √n, s the sample standard deviation (n - 1 in the denominator)."""
    if not values:
        raise ValueError("no values")
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if len(data) == 1:
        return Interval(mean, None, 1)
    s = float(data.std(ddof=1))
    return Interval(mean, t975(len(data) - 1) * s / math.sqrt(len(data)), len(data))


def number(text: str | None) -> float | None:
    """A cell of results.csv as a number; empty, non-numeric and NaN cells are no number."""
    if text is None or text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _parses(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Run:
    """One row of results.csv."""

    id: str
    seed: str
    status: str
    error: str
    cells: dict[str, str]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(slots=True)
class Sweep:
    """A sweep directory: its description (``sweep.json``), the runs (``results.csv``) in file order."""

    root: Path
    scenario: str
    grid: dict[str, list[Any]]
    seeds: list[Any]
    settings: dict[str, Any]
    columns: list[str]
    runs: list[Run]
    _frames: dict[str, dict[str, np.ndarray[Any, np.dtype[np.float64]]] | None] = field(default_factory=dict)

    @property
    def ok_runs(self) -> list[Run]:
        return [r for r in self.runs if r.ok]

    @property
    def failed_runs(self) -> list[Run]:
        return [r for r in self.runs if not r.ok]

    def numeric_columns(self) -> list[str]:
        """Columns with a number (NaN included) in every successful run that has the cell filled (at least one)."""
        out = []
        for column in self.columns:
            cells = [r.cells.get(column, "") for r in self.ok_runs]
            filled = [c for c in cells if c != ""]
            if filled and all(_parses(c) for c in filled):
                out.append(column)
        return out

    def values(self, column: str) -> list[str]:
        """The distinct cells of ``column``: in the grid's order when it is a grid key, numbers ascending,
        otherwise in order of first appearance."""
        seen = list(dict.fromkeys(r.cells.get(column, "") for r in self.runs))
        numbers = [number(v) for v in seen]
        if seen and all(n is not None for n in numbers):
            return [v for _, v in sorted(zip(numbers, seen, strict=True), key=lambda p: p[0] or 0.0)]
        order = [str(v) for v in self.grid.get(column, [])]
        return sorted(seen, key=lambda v: (order.index(v) if v in order else len(order), seen.index(v)))

    def frames(self, run_id: str) -> dict[str, np.ndarray[Any, np.dtype[np.float64]]] | None:
        """The run's ``frames.csv`` as one array per column; ``None`` when the run has none (or an unreadable one)."""
        if run_id not in self._frames:
            self._frames[run_id] = _read_frames(self.root / "runs" / run_id / "frames.csv")
        return self._frames[run_id]


def _read_frames(path: Path) -> dict[str, np.ndarray[Any, np.dtype[np.float64]]] | None:
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if not set(FRAME_COLUMNS) - LATER_FRAME_COLUMNS <= set(header):
            return None
        rows = [[number(row.get(c)) for c in FRAME_COLUMNS] for row in reader]
    data = np.array([[math.nan if v is None else v for v in row] for row in rows], dtype=float).reshape(
        len(rows), len(FRAME_COLUMNS)
    )
    return {c: data[:, i] for i, c in enumerate(FRAME_COLUMNS)}


def load_sweep(root: Path) -> Sweep:
    """Read a sweep directory; a missing directory, ``results.csv`` or a malformed file is bad input (exit 2)."""
    if not root.is_dir():
        raise ConfigurationError("SWEEP_DIR", str(root), "must be a directory written by `wddmsim sweep --out`")
    table = root / "results.csv"
    if not table.is_file():
        raise ConfigurationError("SWEEP_DIR", str(root), "holds no results.csv (was the sweep run with --out here?)")
    meta = _read_meta(root)
    with table.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns = list(reader.fieldnames or [])
        missing = [c for c in ("id", "status") if c not in columns]
        if missing:
            raise ConfigurationError("SWEEP_DIR", str(root), f"results.csv has no column {', '.join(missing)}")
        runs = [
            Run(row["id"], row.get("seed") or "", row["status"], row.get("error") or "", dict(row)) for row in reader
        ]
    grid = meta.get("grid")
    if not isinstance(grid, dict):  # no sweep.json: every column before `status` but id, scenario and seed
        grid = {c: [] for c in columns[: columns.index("status")] if c not in ("id", "scenario", "seed")}
    scenario = meta.get("scenario") or next((r.cells.get("scenario") for r in runs if r.cells.get("scenario")), "")
    return Sweep(
        root,
        str(scenario or "sweep"),
        {str(k): list(v) if isinstance(v, list) else [v] for k, v in grid.items()},
        list(meta.get("seeds") or []),
        dict(meta.get("settings") or {}),
        columns,
        runs,
    )


def _read_meta(root: Path) -> dict[str, Any]:
    path = root / "sweep.json"
    if not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ConfigurationError("SWEEP_DIR", str(root), f"sweep.json is not JSON ({error})") from None
    if not isinstance(meta, dict):
        raise ConfigurationError("SWEEP_DIR", str(root), "sweep.json must hold an object")
    return meta


__all__ = ["FRAME_COLUMNS", "POLICY_KEYS", "Interval", "Run", "Sweep", "interval", "load_sweep", "number", "t975"]
