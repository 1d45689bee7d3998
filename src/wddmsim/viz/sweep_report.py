"""A sweep's ``report.html`` and ``figures/``: what ``wddmsim plot`` writes and ``wddmsim sweep`` calls at its end.

The page has the run report's look and rules (:mod:`wddmsim.viz.page`: offline, self-contained): the figures as SVG
``data:`` URIs (each in its own document, so matplotlib's element ids never collide), the sweep's grid, a summary
table (per line and x value: the metric's mean ± its 95 % t-interval, the runs, the failed ones), and every failed
run with its error.  The same figures go to ``figures/`` as PNG and SVG files for a paper.
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from wddmsim.viz.page import document, table
from wddmsim.viz.sweep_data import Sweep, load_sweep
from wddmsim.viz.sweep_figures import Drawn, PlotUnavailable, available, axis_label, draw_all
from wddmsim.viz.sweep_plan import Plan, PlotOptions, plan

_SCRIPT = r"""
window.addEventListener('load',function(){
  var shown=0;document.querySelectorAll('img.figure').forEach(function(img){
    if(img.complete&&img.naturalWidth>0){shown++;}});
  var d=document.documentElement.dataset;d.figures=String(shown);d.rendered='1';
});
"""


def _figures(drawn: list[Drawn], formats: tuple[str, ...]) -> str:
    parts = []
    for d in drawn:
        uri = "data:image/svg+xml;base64," + base64.b64encode(d.files["svg"]).decode("ascii")
        files = ", ".join(f"figures/{d.stem}.{fmt}" for fmt in formats)
        parts.append(
            f'<figure id="figure-{escape(d.stem)}"><img class="figure" alt="{escape(d.title)}" src="{uri}">'
            f"<figcaption>{escape(d.caption)} <span class=mono>{escape(files)}</span></figcaption></figure>"
        )
    return "".join(parts)


def _grid(sweep: Sweep) -> str:
    rows: list[tuple[str, str]] = [(key, ", ".join(str(v) for v in values)) for key, values in sweep.grid.items()]
    rows.append(("seeds", ", ".join(str(s) for s in sweep.seeds) or "—"))
    rows += [(f"{key} (fixed)", str(value)) for key, value in sweep.settings.items()]
    return f"<p>scenario <b>{escape(sweep.scenario)}</b></p>" + table(("key", "values"), rows)


def _summary(p: Plan) -> str:
    line = "policy" if p.series_keys in (["policy"], ["adapter.policy"]) else ", ".join(p.series_keys) or "scenario"
    y_label, scale = axis_label(p.y)
    rows = []
    for series in p.series:
        for value in p.x_values:
            point = p.points[(series, value)]
            if not point.ok and not point.failed:
                continue
            stats = point.stats()
            mean = f"{stats.mean / scale:.4g}" if stats else "—"
            half = f"± {stats.half / scale:.3g}" if stats and stats.half is not None else "—"
            rows.append((series, value, mean, half, len(point.values), point.ok, point.failed))
    head = (line, p.x, f"mean {y_label}", "95 % t-interval", "values", "runs ok", "failed")
    note = (
        "<p class=muted>Mean over seeds of the successful runs; the interval is t(0.975, n−1) · s / √n, "
        "none for a single value. Failed runs are left out of every figure.</p>"
    )
    return table(head, rows, (False, True, True, True, True, True, True)) + note


def _failed(sweep: Sweep) -> str:
    failed = sweep.failed_runs
    if not failed:
        return "<p class=ok>No run failed.</p>"
    keys = list(sweep.grid)
    rows = [
        (r.id, r.seed, ", ".join(f"{k}={r.cells.get(k, '')}" for k in keys), r.error or "(no error recorded)")
        for r in failed
    ]
    return table(("run", "seed", "grid point", "error"), rows)


def build_sweep_report(p: Plan, drawn: list[Drawn]) -> str:
    """The whole page for a planned sweep and its drawn figures."""
    sweep = p.sweep
    failed = len(sweep.failed_runs)
    facts = (
        f"scenario {sweep.scenario} · {len(sweep.runs)} runs · {len(sweep.ok_runs)} ok · {failed} failed · "
        f"y = {p.y} · x = {p.x}"
    )
    sections = [
        ("figures", "Figures", _figures(drawn, p.formats)),
        ("summary", "Summary", _summary(p)),
        ("grid", "Grid", _grid(sweep)),
        ("failed", f"Failed runs ({failed})", _failed(sweep)),
    ]
    return document(
        title=f"wddmsim sweep: {sweep.scenario}",
        heading=f"wddmsim sweep: {sweep.scenario}",
        facts=facts,
        ok=failed == 0,
        sections=sections,
        script=_SCRIPT,
    )


def plot_sweep(sweep_dir: Path, options: PlotOptions | None = None) -> list[Path]:
    """Draw the figures of ``sweep_dir`` into ``figures/`` and write ``report.html``; the paths written.

    Raises :class:`~wddmsim.core.errors.ConfigurationError` (a bad directory or option, named) and
    :class:`~wddmsim.viz.sweep_figures.PlotUnavailable` (no matplotlib) before writing anything.
    """
    if not available():
        raise PlotUnavailable()
    planned = plan(load_sweep(sweep_dir), options or PlotOptions())
    drawn = draw_all(planned)
    figures = sweep_dir / "figures"
    figures.mkdir(exist_ok=True)
    written = []
    for d in drawn:
        for fmt in planned.formats:
            path = figures / f"{d.stem}.{fmt}"
            path.write_bytes(d.files[fmt])
            written.append(path)
    report = sweep_dir / "report.html"
    report.write_text(build_sweep_report(planned, drawn), encoding="utf-8")
    written.append(report)
    return written


def write_sweep_report(sweep_dir: Path) -> list[Path]:
    """The default figures and report of a sweep directory (what ``wddmsim sweep`` calls when it ends)."""
    return plot_sweep(sweep_dir)


__all__ = ["build_sweep_report", "plot_sweep", "write_sweep_report"]
