"""Terminal views of a workload run and of a replay: rich tables built from a finished result (read only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from wddmsim.core.units import format_size
from wddmsim.scenarios.runner import RunResult
from wddmsim.scenarios.traffic import HEADLINE
from wddmsim.viz import console
from wddmsim.viz.terminal import plain

if TYPE_CHECKING:  # a plain run's tables need no replayer
    from wddmsim.scenarios.replay import ReplayResult


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
        table.add_row(plain(key), _bytes(key, traffic[key]))
    return table


def _metric(value: object, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes" and isinstance(value, int):
        return f"{value / 2**20:,.1f} MiB"
    if unit == "ns" and isinstance(value, int):
        return f"{value:,} ns"
    return f"{value:,}" if isinstance(value, int | float) else str(value)


def research_table(metrics: dict[str, object]) -> Table:
    """The research metrics of a run (decisions 0146, 0157) in a few rows: totals, faults, thrash, stutter."""
    table = Table(title="research metrics", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    m = metrics.get
    rows = (
        ("paged in / out", f"{_metric(m('paged_in_bytes'), 'bytes')} / {_metric(m('paged_out_bytes'), 'bytes')}"),
        ("paged in / compulsory", _metric(m("paged_in_over_compulsory"), "")),
        ("paged in / lower bound", _metric(m("paged_in_over_lower_bound"), "")),
        ("faults (+ compulsory)", f"{_metric(m('faults'), '')} (+{_metric(m('compulsory_faults'), '')})"),
        (f"thrash (within {m('thrash_window_frames')} frames)", _metric(m("thrash_bytes"), "bytes")),
        (
            f"frame stall p50 / p99 / max ({m('frames')} frames)",
            " / ".join(_metric(m(f"frame_stall_ns_{p}"), "ns") for p in ("p50", "p99", "max")),
        ),
        (
            "waiting for residency p50 / p99 / max",
            " / ".join(_metric(m(f"frame_residency_stall_ns_{p}"), "ns") for p in ("p50", "p99", "max")),
        ),
        (
            "frame paging bytes p50 / p99 / max",
            " / ".join(_metric(m(f"frame_paging_bytes_{p}"), "bytes") for p in ("p50", "p99", "max")),
        ),
    )
    for name, value in rows:
        table.add_row(name, value)
    return table


def replay_table(result: ReplayResult) -> Table:
    """Each counter that changed between the recorded run and the replay."""
    c = result.config.adapter
    table = Table(  # the policy may be a module:Class of the user's, the counters a recorded trace's
        title=plain(
            f"paging traffic: recorded run -> replay ({c.driver_model}, {format_size(c.vram)} local memory, "
            f"policy {c.policy}, {format_size(c.paging_buffer)} paging buffers)",
            "table.title",
        ),
        title_justify="left",
    )
    table.add_column("counter")
    table.add_column("recorded", justify="right")
    table.add_column("replay", justify="right")
    table.add_column("change", justify="right")
    for key, (before, after, change) in result.difference().items():
        pct = f" ({change / before:+.0%})" if before else ""
        table.add_row(plain(key), f"{before:,}", f"{after:,}", f"{change:+,}{pct}")
    return table
