"""``wddmsim reproduce``'s table: the published numbers beside ours, one row per case and policy (decision 0148)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from wddmsim.scenarios.reproduce import REPRODUCTIONS, Reproduction, Row
from wddmsim.viz.terminal import plain

WIDTH = 140
"""The table keeps its columns whole even on a narrow terminal (or in a captured run)."""


def number(rep: Reproduction, value: float | None) -> str:
    """A fault count as an integer, a miss rate as a percentage with two decimals."""
    if value is None:
        return "-"
    if rep.measure == "faults":
        return f"{value:g}"
    return f"{100 * value:.2f} %"


def verdict(row: Row) -> str:
    match row.matched:
        case None:
            return "[dim]printed only[/]"
        case True:
            return "[green]matched[/]"
        case _:
            return "[bold red]MISMATCH[/]"


def tolerance(rep: Reproduction, row: Row) -> str:
    if row.published is None:
        return ""
    if not row.below and not row.above:
        return "exact"
    if not row.above:
        return f"-{number(rep, row.below)}"
    return f"-{number(rep, row.below)} / +{number(rep, row.above)}"


def table(rep: Reproduction) -> Table:
    out = Table(title=f"{rep.title}\n[dim]{rep.source}[/]", title_justify="left")
    for column in ("case", "policy", f"published ({rep.measure})", f"ours ({rep.measure})", "allowed", "verdict"):
        out.add_column(column, justify="right" if rep.measure in column else "left")
    out.add_column("faults/refs/evicted", justify="right", no_wrap=True)
    previous = ""
    for row in rep.rows:
        c = row.counts
        out.add_row(
            row.label if row.label != previous else "",
            plain(row.policy),  # a module:Class of the user's is text, never markup (decision 0247)
            number(rep, row.published),
            number(rep, row.ours),
            tolerance(rep, row),
            verdict(row),
            f"{c.faults} / {c.references} / {c.evictions}",
        )
        previous = row.label
    return out


def print_reproduction(console: Console, rep: Reproduction) -> None:
    narrow = console.width
    console.width = max(narrow, WIDTH)
    try:
        console.print(table(rep))
    finally:
        console.width = narrow
    for note in rep.notes:
        console.print(f"[dim]{note}[/]", soft_wrap=True)
    compared = len(rep.compared)
    if rep.matched:
        console.print(f"[green]{rep.name}: all {compared} published numbers matched[/]", soft_wrap=True)
        return
    for row in rep.mismatches:  # one line each, whole: scripts and CI logs grep them
        detail = (
            f" {rep.name} {row.policy}@{row.case}: published {number(rep, row.published)}, ours {number(rep, row.ours)}"
        )
        console.print(Text.assemble(("mismatch", "bold red"), plain(detail)), soft_wrap=True)
    console.print(f"[bold red]{rep.name}: {len(rep.mismatches)} of {compared} published numbers differ[/]")


def print_list(console: Console) -> None:
    out = Table(title="classic results (wddmsim reproduce NAME)", title_justify="left")
    out.add_column("name")
    out.add_column("what it reproduces")
    for spec in REPRODUCTIONS.values():
        out.add_row(spec.name, spec.summary)
    console.print(out)


__all__ = ["print_list", "print_reproduction", "table"]
