"""The figures of a sweep, drawn with matplotlib (the ``plot`` extra), as a paper would use them.

1. The metric (default: bytes paged in ÷ the lower bound) against x (default: oversubscription), one line per
   policy, the mean over seeds with its 95 % t-interval as a band (a single seed: no band, said in the legend).
2. The distribution of the per-frame paging stall of each policy at the largest x: an ECDF over every frame of
   every seed, p50 and p99 marked.
3. Occupancy over time of chosen runs: bytes resident in local memory and in the aperture at the end of each frame.

matplotlib is imported only here and only when a figure is drawn, on its Agg canvas (no pyplot, no global
backend); output is deterministic: a fixed ``svg.hashsalt``, text kept as text, no date in the metadata.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from wddmsim.core.errors import WddmsimError
from wddmsim.viz import terminal
from wddmsim.viz.sweep_plan import Plan

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

INSTALL = "pip install 'wddmsim[plot]'"
MIB = 1024 * 1024
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_RC: Any = {  # matplotlib types the keys as literals; these are checked when drawn
    "svg.hashsalt": "wddmsim",
    "svg.fonttype": "none",
    "font.size": 10,
    "axes.grid": True,
    "grid.color": "#e0e0e0",
    "savefig.dpi": 150,
    "text.parse_math": False,  # a scenario's name or a grid value is text: its $...$ is no formula to typeset
}
NO_FRAMES = "no frames.csv in these runs: per-frame figures need runs/<id>/frames.csv (the per-frame metrics)"


class PlotUnavailable(WddmsimError):
    """matplotlib is not installed."""

    def __init__(self) -> None:
        super().__init__(f"figures need matplotlib: {INSTALL}")


@dataclass(frozen=True, slots=True)
class Drawn:
    """One figure, rendered: its file stem, title, one-line caption, and the bytes of each format."""

    stem: str
    title: str
    caption: str
    files: dict[str, bytes]


_LABELS = {
    "workload.oversubscription": ("oversubscription (bytes of all resources ÷ local memory, ×)", 1.0),
    "paged_in_over_lower_bound": ("bytes paged in ÷ lower bound (×)", 1.0),
    "paged_in_over_compulsory": ("bytes paged in ÷ compulsory bytes (×)", 1.0),
    "seconds": ("wall-clock seconds of the run (s)", 1.0),
    "policy": ("eviction policy", 1.0),
    "adapter.policy": ("eviction policy", 1.0),
}


def axis_label(column: str) -> tuple[str, float]:
    """A column's axis label with its unit, and the factor its values are divided by (bytes shown in MiB, ns in
    µs)."""
    if column in _LABELS:
        return _LABELS[column]
    if column.endswith(("bytes", "Bytes", ".vram")):
        return f"{column} (MiB)", float(MIB)
    if column.endswith("_ns"):
        return f"{column} (µs)", 1000.0
    if "_over_" in column:
        return f"{column} (×)", 1.0
    return column, 1.0


def available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def _figure(rows: int = 1, height: float = 4.2) -> Iterator[tuple[Figure, list[Axes]]]:
    try:
        import matplotlib as mpl
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailable() from None
    with mpl.rc_context(_RC):
        figure = Figure(figsize=(7.5, height), layout="constrained")
        FigureCanvasAgg(figure)
        axes = [figure.add_subplot(rows, 1, i + 1) for i in range(rows)]
        yield figure, axes


def _render(figure: Figure, formats: tuple[str, ...]) -> dict[str, bytes]:
    from matplotlib.text import Text

    for text in figure.findobj(Text):  # titles, labels, legends: the words of the sweep's user (decision 0247)
        text.set_text(terminal.shown(text.get_text()))  # a control has no glyph and is no XML: shown escaped
    out = {}
    for fmt in (*formats, "svg") if "svg" not in formats else formats:
        buffer = io.BytesIO()
        metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, metadata=metadata)
        out[fmt] = buffer.getvalue()
    return out


def _colour(plan: Plan, series: str) -> str:
    return COLOURS[plan.series.index(series) % len(COLOURS)]


def _note(axes: Axes, text: str) -> None:
    axes.text(0.5, 0.5, text, transform=axes.transAxes, ha="center", va="center", fontsize=8, color="#546e7a")
    axes.set_xticks([])
    axes.set_yticks([])


def metric_figure(plan: Plan) -> Drawn:
    """Figure 1: the metric against x, a line per policy with its 95 % band over seeds."""
    x_label, x_scale = axis_label(plan.x)
    y_label, y_scale = axis_label(plan.y)
    what = y_label.split(" (")[0]
    title = f"{what[:1].upper()}{what[1:]} against {x_label.split(' (')[0]} — {plan.sweep.scenario}"
    positions = [float(v) / x_scale for v in plan.x_values] if plan.x_numeric else list(range(len(plan.x_values)))
    with _figure() as (figure, (axes,)):
        for series in plan.series:
            xs, means, lows, highs, seeds = [], [], [], [], set()
            for position, value in zip(positions, plan.x_values, strict=True):
                stats = plan.points[(series, value)].stats()
                if stats is None:
                    continue
                xs.append(position)
                means.append(stats.mean / y_scale)
                lows.append(stats.low / y_scale)
                highs.append(stats.high / y_scale)
                seeds.add(stats.n)
            if not xs:
                continue
            single = seeds == {1}
            label = f"{series} (1 seed: no band)" if single else series
            colour = _colour(plan, series)
            axes.plot(xs, means, marker="o", color=colour, label=label)
            if not single:
                axes.fill_between(xs, lows, highs, color=colour, alpha=0.2, linewidth=0)
        if plan.y == "paged_in_over_lower_bound":
            axes.axhline(1.0, color="#455a64", linestyle="--", linewidth=1, label="lower bound")
        if not plan.x_numeric:
            axes.set_xticks(positions, [terminal.shown(v) for v in plan.x_values])  # labels set again when drawn
        axes.set_xlabel(x_label)
        axes.set_ylabel(y_label)
        axes.set_title(title)
        if axes.get_legend_handles_labels()[0]:
            axes.legend(title="mean over seeds, band: 95 % t-interval", fontsize=8, title_fontsize=8)
        else:
            _note(axes, f"no successful run has a value of {plan.y}")
        files = _render(figure, plan.formats)
    stem = f"{_slug(plan.y)}-by-{_slug(plan.x)}"
    caption = (
        f"{y_label} against {x_label}; each point the mean over seeds of the successful runs, "
        "the band its 95 % Student t-interval."
    )
    return Drawn(stem, title, caption, files)


def _unit(largest: float) -> tuple[str, float]:
    return ("ms", 1e6) if largest >= 1e6 else ("µs", 1e3)


def stall_figure(plan: Plan) -> Drawn:
    """Figure 2: the ECDF of the per-frame paging stall of each line at the largest x, p50 and p99 marked."""
    at = plan.x_values[-1] if plan.x_values else ""
    stalls: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}
    for series, runs in plan.at_x(at).items():
        frames = [f["paging_stall_ns"] for r in runs if (f := plan.sweep.frames(r.id)) is not None]
        if frames:
            values = np.concatenate(frames)
            stalls[series] = np.sort(values[~np.isnan(values)])
    title = f"Per-frame paging stall at {plan.x} = {at} — {plan.sweep.scenario}"
    with _figure() as (figure, (axes,)):
        if not any(len(v) for v in stalls.values()):
            _note(axes, NO_FRAMES)
        else:
            unit, scale = _unit(max(float(v[-1]) for v in stalls.values() if len(v)))
            for series, values in stalls.items():
                if not len(values):
                    continue
                shown = values / scale
                p50, p99 = (float(np.percentile(shown, q)) for q in (50, 99))
                colour = _colour(plan, series)
                ecdf = np.arange(1, len(shown) + 1) / len(shown)
                label = f"{series}: p50 {p50:.3g} {unit}, p99 {p99:.3g} {unit} ({len(shown)} frames)"
                axes.step(shown, ecdf, where="post", color=colour, label=label)
                axes.plot([p50, p99], [0.5, 0.99], linestyle="none", marker="D", color=colour)
            axes.set_xlabel(f"simulated paging stall per frame ({unit})")
            axes.set_ylabel("fraction of frames at or below (ECDF)")
            axes.set_ylim(0, 1.02)
            axes.legend(title="◆ marks p50 and p99", fontsize=8, title_fontsize=8, loc="lower right")
        axes.set_title(title)
        files = _render(figure, plan.formats)
    caption = (
        f"Empirical distribution of the simulated time each frame waited on paging, every frame of every seed at "
        f"{plan.x} = {at}; diamonds mark the 50th and 99th percentiles."
    )
    return Drawn("frame-stalls", title, caption, files)


def occupancy_figure(plan: Plan) -> Drawn:
    """Figure 3: bytes resident in local memory and in the aperture at the end of each frame, for chosen runs."""
    title = f"Occupancy over time — {plan.sweep.scenario}"
    shown = [(run, frames) for run in plan.occupancy_runs if (frames := plan.sweep.frames(run.id)) is not None]
    if not shown:
        with _figure() as (figure, (axes,)):
            axes.set_title(title)
            _note(axes, NO_FRAMES)
            files = _render(figure, plan.formats)
    else:
        with _figure(rows=2, height=5.6) as (figure, (local, aperture)):
            for run, frames in shown:
                series = plan.label(run)
                colour = _colour(plan, series) if series in plan.series else COLOURS[0]
                label = f"{series}, {plan.x} = {run.cells.get(plan.x, '')}, seed {run.seed} ({run.id[:8]})"
                x = frames["frame"]
                local.step(x, frames["resident_local_bytes"] / MIB, where="post", color=colour, label=label)
                aperture.step(x, frames["resident_aperture_bytes"] / MIB, where="post", color=colour)
            local.set_ylabel("local memory (MiB)")
            aperture.set_ylabel("aperture (MiB)")
            aperture.set_xlabel("frame")
            local.legend(fontsize=8)
            local.set_title(title)
            aperture.set_title("bytes resident at the end of each frame", fontsize=9)
            files = _render(figure, plan.formats)
    caption = (
        "Bytes of allocations resident in local-memory segments (top) and in aperture segments (bottom) at the end "
        "of each frame, one line per chosen run (wddmsim plot --runs)."
    )
    return Drawn("occupancy", title, caption, files)


def draw_all(plan: Plan) -> list[Drawn]:
    """The three figures, in the report's order."""
    return [metric_figure(plan), stall_figure(plan), occupancy_figure(plan)]


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_") or "column"


__all__ = [
    "INSTALL",
    "Drawn",
    "PlotUnavailable",
    "available",
    "axis_label",
    "draw_all",
    "metric_figure",
    "occupancy_figure",
    "stall_figure",
]
