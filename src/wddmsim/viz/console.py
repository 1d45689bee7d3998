"""What ``wddmsim run`` prints on the terminal: the checks, then the statistics (rich tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from wddmsim.core.units import format_size
from wddmsim.scenarios.result import Check
from wddmsim.viz.summary import BYTE_COUNTERS
from wddmsim.viz.terminal import plain

SHOWN = (
    *BYTE_COUNTERS,
    "Evictions",
    "EvictionsDueToPreparation",
    "EvictionsDemotedToAperture",
    "Faults",
    "PagingBuffersSubmitted",
    "BuildPagingBufferCalls",
    "MultipassOperations",
    "ExtraPasses",
    "SimulatedTimeNs",
)


def checks_table(title: str, checks: Sequence[Check]) -> Table:
    table = Table(title=plain(title, "table.title"))  # names and details are text as written, never markup
    table.add_column("", width=2)
    table.add_column("operation")
    table.add_column("what was checked")
    table.add_column("result")
    for check in checks:
        table.add_row(
            "[green]✓[/]" if check.ok else "[red]✗[/]", plain(check.operation), plain(check.step), plain(check.detail)
        )
    return table


def statistics_table(stats: dict[str, Any]) -> Table:
    """The counters worth a glance (``summary.json`` has them all); zero byte counters are left out."""
    table = Table(title="statistics (D3DKMT_QUERYSTATISTICS names)")
    table.add_column("counter")
    table.add_column("value", justify="right")
    for key in SHOWN:
        value = int(stats.get(key, 0))
        if key.startswith("Bytes") and not value:
            continue
        shown = f"{value:,}" + (f" ({format_size(value)})" if key.startswith("Bytes") else "")
        table.add_row(key, shown)
    return table


__all__ = ["checks_table", "statistics_table"]
