"""Terminal views of a workload run and of a replay: rich tables built from a finished result (read only)."""

from __future__ import annotations

from rich.table import Table

from wddmsim.core.units import format_size
from wddmsim.scenarios.replay import ReplayResult
from wddmsim.scenarios.runner import RunResult
from wddmsim.scenarios.traffic import HEADLINE
from wddmsim.viz import console


def _bytes(name: str, value: int) -> str:
    if name.startswith("Bytes") and value:
        return f"{value / 2**20:,.1f} MiB"
    return f"{value:,}"


def checks_table(result: RunResult) -> Table:
    """One row per check: the per-process verdicts, and every failure with where the bytes first differ."""
    return console.checks_table(f"wddmsim run {result.describe()}", result.checks)


def traffic_table(traffic: dict[str, int], title: str = "paging traffic") -> Table:
    """The headline counters first, then evictions by cause and the paging operations by name."""
    table = Table(title=title, title_justify="left")
    table.add_column("counter")
    table.add_column("value", justify="right")
    shown = [k for k in HEADLINE if k in traffic]
    shown += sorted(k for k in traffic if k.startswith(("Evictions.", "EvictedTo.")))
    shown += sorted(k for k in traffic if k.startswith("PagingOp."))
    for key in shown:
        table.add_row(key, _bytes(key, traffic[key]))
    return table


def replay_table(result: ReplayResult) -> Table:
    """Each counter that changed between the recorded run and the replay."""
    c = result.config.adapter
    table = Table(
        title=f"paging traffic: recorded run -> replay ({c.driver_model}, {format_size(c.vram)} local memory, "
        f"policy {c.policy}, {format_size(c.paging_buffer)} paging buffers)",
        title_justify="left",
    )
    table.add_column("counter")
    table.add_column("recorded", justify="right")
    table.add_column("replay", justify="right")
    table.add_column("change", justify="right")
    for key, (before, after, change) in result.difference().items():
        pct = f" ({change / before:+.0%})" if before else ""
        table.add_row(key, f"{before:,}", f"{after:,}", f"{change:+,}{pct}")
    return table
