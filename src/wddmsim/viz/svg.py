"""Small inline-SVG charts for the report: step lines, mirrored bars, horizontal bars.  No dependency, no script.

Each function returns one ``<svg>`` element as text, sized by ``viewBox`` so it scales with the page; labels are
escaped.  Series are reduced before drawing (:func:`envelope`) so a chart stays small whatever the run's length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    colour: str
    points: Sequence[tuple[int, int]]
    """(x, y), x ascending."""


def envelope(points: Sequence[tuple[int, int]], start: int, end: int, buckets: int) -> list[tuple[int, int]]:
    """A step series reduced to at most ``buckets`` points: the largest value each bucket held (peaks survive)."""
    if not points or end <= start:
        return list(points[-1:])
    out: dict[int, int] = {}
    value = 0
    cursor = 0
    for b in range(buckets):
        lo = start + (end - start) * b // buckets
        hi = start + (end - start) * (b + 1) // buckets
        peak = value
        while cursor < len(points) and points[cursor][0] < hi:
            value = points[cursor][1]
            peak = max(peak, value)
            cursor += 1
        out[lo] = peak
    return sorted(out.items())


def human(value: float) -> str:
    """Bytes in binary units with one decimal where it helps: ``35.6 MiB``, ``4 KiB``, ``512 B``."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            text = f"{value:.1f}".rstrip("0").rstrip(".") if unit != "B" else f"{value:.0f}"
            return f"{sign}{text} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def nice_bytes(value: float) -> str:
    return human(value)


def _legend_layout(series: Sequence[Series], *, left: int, width: int) -> list[tuple[int, int, Series]]:
    """(x, row, series) of each legend entry, wrapped into rows that fit ``width``."""
    out: list[tuple[int, int, Series]] = []
    x, row = left, 0
    for s in series:
        step = 14 + 7 * len(s.label) + 16
        if x + step > width and x > left:
            x, row = left, row + 1
        out.append((x, row, s))
        x += step
    return out


def _legend(layout: list[tuple[int, int, Series]], top: float) -> list[str]:
    body: list[str] = []
    for x, row, s in layout:
        y = top + 16 * row
        body.append(f'<rect x="{x}" y="{y:.1f}" width="10" height="10" fill="{s.colour}"/>')
        body.append(f'<text x="{x + 14}" y="{y + 9:.1f}">{escape(s.label)}</text>')
    return body


def _frame(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        + "".join(body)
        + "</svg>"
    )


def _ns_label(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def step_chart(
    series: Sequence[Series],
    *,
    start: int,
    end: int,
    y_max: int,
    title: str,
    width: int = 900,
    height: int = 260,
    y_format: Callable[[float], str] = nice_bytes,
    marks: Sequence[tuple[int, str]] = (),
) -> str:
    """Step lines of ``series`` over ``[start, end]`` (simulated ns), y from 0 to ``y_max``, with a legend;
    ``marks`` are ``(time, label)`` moments drawn as vertical lines (events on the timeline), each labelled where
    the label finds room in one of four rows and titled (a tooltip) always."""
    layout = _legend_layout(series, left=70, width=width)
    legend_h = 16 * (1 + max((row for _, row, _ in layout), default=0))
    left, right, top, bottom = 70, 40, 10, 26 + legend_h
    height += legend_h
    w, h = width - left - right, height - top - bottom
    span = max(end - start, 1)
    y_max = max(y_max, 1)

    def x(t: int) -> float:
        return left + (t - start) * w / span

    def y(v: int) -> float:
        return top + h - v * h / y_max

    body = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" class="plot"/>']
    for k in range(5):
        value = y_max * k / 4
        yy = y(int(value))
        body.append(f'<line x1="{left}" x2="{left + w}" y1="{yy:.1f}" y2="{yy:.1f}" class="grid"/>')
        body.append(f'<text x="{left - 4}" y="{yy + 4:.1f}" text-anchor="end">{escape(y_format(value))}</text>')
    for k in range(5):
        t = start + span * k / 4
        body.append(f'<text x="{x(int(t)):.1f}" y="{top + h + 16}" text-anchor="middle">{_ns_label(t)}</text>')
    for s in series:
        if not s.points:
            continue
        coords: list[str] = []
        previous: int | None = None
        for t, v in s.points:
            if previous is not None:
                coords.append(f"{x(t):.1f},{y(previous):.1f}")
            coords.append(f"{x(t):.1f},{y(v):.1f}")
            previous = v
        if previous is not None:
            coords.append(f"{x(end):.1f},{y(previous):.1f}")
        body.append(f'<polyline points="{" ".join(coords)}" fill="none" stroke="{s.colour}" stroke-width="1.5"/>')
    free = [float(left)] * 4  # per label row: where the room to the right starts
    for t, label in marks:
        xx = x(min(max(t, start), end))
        body.append(
            f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{top}" y2="{top + h}" class="mark">'
            f"<title>{escape(label)} at {_ns_label(t)}</title></line>"
        )
        row = next((r for r, at in enumerate(free) if at <= xx), None)
        if row is not None:  # else too crowded to write: the line's title still says it
            body.append(f'<text x="{xx + 3:.1f}" y="{top + 10 + 11 * row}" class="mark-label">{escape(label)}</text>')
            free[row] = xx + 3 + 6 * len(label) + 6
    body += _legend(layout, top + h + 24)
    return _frame(width, height, title, body)


def mirrored_bars(
    up: Sequence[Series],
    down: Sequence[Series],
    *,
    start: int,
    end: int,
    buckets: int,
    title: str,
    width: int = 900,
    height: int = 280,
) -> str:
    """Stacked bars per time bucket: ``up`` series above the axis, ``down`` below.  Each series' points are
    ``(bucket index, value)``."""
    layout = _legend_layout([*up, *down], left=70, width=width)
    legend_h = 16 * (1 + max((row for _, row, _ in layout), default=0))
    left, right, top, bottom = 70, 40, 10, 26 + legend_h
    height += legend_h
    w, h = width - left - right, height - top - bottom
    mid = top + h / 2
    totals_up = [sum(dict(s.points).get(b, 0) for s in up) for b in range(buckets)]
    totals_down = [sum(dict(s.points).get(b, 0) for s in down) for b in range(buckets)]
    peak = max([*totals_up, *totals_down, 1])
    scale = (h / 2) / peak
    bar = w / buckets
    body = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" class="plot"/>']
    body.append(f'<line x1="{left}" x2="{left + w}" y1="{mid}" y2="{mid}" class="axis"/>')
    body.append(f'<text x="{left - 4}" y="{top + 10}" text-anchor="end">{escape(nice_bytes(peak))}</text>')
    body.append(f'<text x="{left - 4}" y="{mid + 4}" text-anchor="end">0</text>')
    body.append(f'<text x="{left - 4}" y="{top + h}" text-anchor="end">{escape(nice_bytes(peak))}</text>')
    for k in range(5):
        t = start + (end - start) * k / 4
        body.append(f'<text x="{left + w * k / 4:.1f}" y="{top + h + 16}" text-anchor="middle">{_ns_label(t)}</text>')
    for direction, group in ((-1, up), (1, down)):
        base = [0.0] * buckets
        for s in group:
            values = dict(s.points)
            for b in range(buckets):
                v = values.get(b, 0)
                if not v:
                    continue
                length = v * scale
                yy = mid - base[b] - length if direction < 0 else mid + base[b]
                body.append(
                    f'<rect x="{left + b * bar + 1:.1f}" y="{yy:.1f}" width="{max(bar - 2, 1):.1f}" '
                    f'height="{length:.1f}" fill="{s.colour}"><title>{escape(s.label)}: {escape(nice_bytes(v))}'
                    f"</title></rect>"
                )
                base[b] += length
    body += _legend(layout, top + h + 24)
    return _frame(width, height, title, body)


def horizontal_bars(rows: Sequence[tuple[str, int, str]], *, title: str, width: int = 900, unit: str = "") -> str:
    """One bar per ``(label, value, note)``, longest first as given."""
    left, right, row_h = 300, 320, 24
    height = max(len(rows), 1) * row_h + 10
    peak = max([v for _, v, _ in rows] + [1])
    w = width - left - right
    body: list[str] = []
    for i, (label, value, note) in enumerate(rows):
        y = 5 + i * row_h
        length = value * w / peak
        body.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        body.append(
            f'<rect x="{left}" y="{y + 3}" width="{max(length, 1):.1f}" height="{row_h - 8}" '
            f'fill="{COLOURS[i % len(COLOURS)]}"/>'
        )
        body.append(f'<text x="{left + length + 6:.1f}" y="{y + 15}">{value:,}{unit} {escape(note)}</text>')
    if not rows:
        body.append(f'<text x="{left}" y="20">none</text>')
    return _frame(width, height, title, body)


__all__ = ["COLOURS", "Series", "envelope", "horizontal_bars", "human", "mirrored_bars", "nice_bytes", "step_chart"]
