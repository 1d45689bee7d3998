"""The sweep's tidy table: one row per run, a column per grid key and per metric (``results.csv``, and
``results.parquet`` when pyarrow is installed), rebuilt from every ``result.json`` in grid order.

Columns: ``id, scenario, seed``, the grid keys as the user wrote them, ``status, error, seconds``, then every
metric any run reported, sorted by name (a metric a run lacks is empty).  A metric named like an earlier column
(``policy`` when ``policy`` is a grid key) is that column already and is not repeated.  The CSV is what
``pandas.read_csv`` loads as is: a header, commas, empty for none.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wddmsim.research.sweep.grid import RunSpec
from wddmsim.research.sweep.store import Store, write_atomic

CSV = "results.csv"
PARQUET = "results.parquet"
TEXT = frozenset({"id", "scenario", "status", "error"})
"""Columns of text even when every value is empty (``error`` of a sweep with no failure)."""


def rows(store: Store, specs: Sequence[RunSpec], grid: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and one row per run that has a result, in the order of ``specs``."""
    out: list[dict[str, Any]] = []
    for spec in specs:
        found = store.result(spec.id)
        if found is None:
            continue
        row: dict[str, Any] = {"id": spec.id, "scenario": spec.scenario, "seed": spec.seed}
        row.update({k: spec.settings[k] for k in grid})
        row.update({k: found.get(k) for k in ("status", "error", "seconds")})
        metrics: Mapping[str, Any] = found.get("metrics") or {}
        row.update({k: v for k, v in metrics.items() if k not in row})
        out.append(row)
    leading = ["id", "scenario", "seed", *grid, "status", "error", "seconds"]
    metrics_seen = sorted({k for r in out for k in r} - set(leading))
    return leading + metrics_seen, out


def write(store: Store, specs: Sequence[RunSpec], grid: Sequence[str]) -> list[Path]:
    """Rebuild ``results.csv`` (and ``results.parquet`` when pyarrow imports); returns the files written."""
    header, table = rows(store, specs, grid)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=header, lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    for row in table:
        writer.writerow({k: _cell(row.get(k)) for k in header})
    written = [store.root / CSV]
    write_atomic(written[0], text.getvalue())
    parquet = _write_parquet(store.root / PARQUET, header, table)
    if parquet is not None:
        written.append(parquet)
    return written


def _cell(value: object) -> object:
    """A CSV cell: None is empty; other values as Python prints them (``True``, ``1.25``)."""
    return "" if value is None else value


def _write_parquet(path: Path, header: Sequence[str], table: Sequence[Mapping[str, Any]]) -> Path | None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # the optional extra 'parquet' is not installed: the CSV is the table
        return None
    columns = {name: _arrow_column(pa, [r.get(name) for r in table], name in TEXT) for name in header}
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(pa.table(columns), tmp)
    tmp.replace(path)
    return path


def _arrow_column(pa: Any, values: list[object], text: bool) -> Any:
    """A typed column (integers and floats together are floats); a column mixing other kinds is text, as the
    CSV would give it."""
    try:
        return pa.array(values, type=pa.string() if text else None)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


__all__ = ["CSV", "PARQUET", "rows", "write"]
