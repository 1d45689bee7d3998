"""Views of a ``check-driver`` report: the terminal table, JUnit XML for CI systems, and an offline HTML page.

The table is operation x check (pass, FAIL, or - where an earlier check of every case failed first), then the
first failing case of each failed check with its arguments and the evidence (a disassembly of the buffer, or its
bytes).  JUnit has one test case per (operation, case, check); the page holds the same as the table, inline.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from wddmsim.conformance.checks import CHECKS, Finding
from wddmsim.conformance.run import Report
from wddmsim.viz.terminal import plain, shown

_STYLE = {"pass": "green", "FAIL": "bold red", "-": "dim"}


def table(report: Report) -> Table:
    # The driver's name is the user's (a path, a module:attribute): text as written, never markup.
    out = Table(title=plain(f"check-driver: {report.driver} ({report.model})", "table.title"))
    out.add_column("operation", no_wrap=True)
    for check in CHECKS:
        out.add_column(check, justify="center", no_wrap=True)
    for operation in report.outcomes:
        cells = [report.status(operation, check) for check in CHECKS]
        out.add_row(plain(operation), *(f"[{_STYLE[c]}]{c}[/]" for c in cells))
    for operation in report.unchecked:
        out.add_row(plain(operation), *(["[yellow]no case yet[/]"] + [""] * (len(CHECKS) - 1)))
    return out


def first_failures(report: Report) -> list[Finding]:
    """The first finding of each (operation, check): what a reader fixes first."""
    seen: set[tuple[str, str]] = set()
    out = []
    for finding in report.findings:
        key = (finding.operation, finding.check)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


WIDTH = 132
"""The table's width: every check a column (wider than a narrow terminal: it wraps rather than truncates)."""


def print_report(console: Console, report: Report) -> None:
    narrow = console.width
    console.width = max(narrow, WIDTH)
    try:
        console.print(table(report))
    finally:
        console.width = narrow
    for finding in first_failures(report):
        # Soft-wrapped: one finding is one line, whatever the terminal (grep-able, and CI logs keep it whole).
        headline = plain(f" {finding.operation} ({finding.case}): {finding.message}")  # the driver's words are text
        console.print(Text.assemble("\n", (finding.check, "bold red"), headline), soft_wrap=True)
        if finding.detail:
            console.print(plain(finding.detail), soft_wrap=True)
    cases = sum(len(o) for o in report.outcomes.values())
    verdict = "[green]conformant[/]" if report.conformant else f"[bold red]{len(report.findings)} finding(s)[/]"
    console.print(f"\n{verdict}: {len(report.outcomes)} operation(s), {cases} case(s), {report.seconds:.1f} s")
    if report.unchecked:
        console.print(plain(f"claimed but not checked (no case yet): {', '.join(report.unchecked)}", "yellow"))


def junit(report: Report) -> str:
    suite = ET.Element(
        "testsuite",
        name=f"check-driver {report.driver}",
        tests="0",
        failures=str(len(report.findings)),
        time=f"{report.seconds:.3f}",
    )
    count = 0
    for operation, outcomes in report.outcomes.items():
        for outcome in outcomes:
            for check in CHECKS:
                count += 1
                case = ET.SubElement(suite, "testcase", classname=f"{operation}.{outcome.case.name}", name=check)
                finding = outcome.failed(check)
                if finding is not None:
                    failure = ET.SubElement(case, "failure", message=finding.message)
                    failure.text = finding.detail
    for operation in report.unchecked:
        count += 1
        case = ET.SubElement(suite, "testcase", classname=operation, name="cases")
        ET.SubElement(case, "skipped", message="claimed, but check-driver has no case for it yet")
    suite.set("tests", str(count))
    # The driver's path and words, shown (decision 0247): a control is no XML character (a CI's parser refuses the
    # file) and a byte of a path that was not UTF-8 cannot be written as UTF-8 (it stopped the command).
    return shown(ET.tostring(suite, encoding="unicode", xml_declaration=True)) + "\n"


def html(report: Report) -> str:
    rows = []
    for operation in report.outcomes:
        cells = "".join(
            f'<td class="{report.status(operation, c).lower().strip("-") or "skip"}">{report.status(operation, c)}</td>'
            for c in CHECKS
        )
        rows.append(f"<tr><th>{escape(operation)}</th>{cells}</tr>")
    findings = "".join(
        f"<section><h3>{escape(f.check)}: {escape(f.operation)} ({escape(f.case)})</h3><p>{escape(f.message)}</p>"
        f"<pre>{escape(f.detail)}</pre></section>"
        for f in first_failures(report)
    )
    verdict = "conformant" if report.conformant else f"{len(report.findings)} finding(s)"
    head = "".join(f"<th>{escape(c)}</th>" for c in CHECKS)
    return shown(  # as junit(): the driver's path and words shown, never unwritable
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>check-driver {escape(report.driver)}</title><style>"
        "body{font-family:sans-serif;margin:2em}td,th{padding:.2em .6em;border:1px solid #ccc}"
        "td.pass{background:#dfd}td.fail{background:#fbb}td.skip{color:#999}pre{background:#f6f6f6;padding:.5em}"
        "</style></head><body>"
        f"<h1>check-driver: {escape(report.driver)} ({escape(report.model)})</h1><p>{escape(verdict)}, "
        f"{report.seconds:.1f} s</p><table><tr><th>operation</th>{head}</tr>{''.join(rows)}</table>"
        f"{findings}</body></html>\n"
    )


def write(report: Report, *, junit_path: Path | None, out: Path | None) -> None:
    if junit_path is not None:
        junit_path.write_text(junit(report), encoding="utf-8")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "check-driver.html").write_text(html(report), encoding="utf-8")
        (out / "check-driver.xml").write_text(junit(report), encoding="utf-8")


__all__ = ["first_failures", "html", "junit", "print_report", "table", "write"]
