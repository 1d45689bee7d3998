"""report.html in a real headless browser (Debian's chromium): it loads with no console message and no error,
and its script draws the segment maps; the charts and tables are there.

Chromium runs with a fresh profile and every background service off (this machine's network is closed); its
console goes to stderr (``--enable-logging=stderr``), where every message is a line with ``:CONSOLE``; the page
records uncaught errors on ``<html data-errors>`` and its script sets ``data-rendered`` when done; ``--dump-dom``
prints the DOM after the scripts ran.
"""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .conftest import SavedRun, WorkloadRun

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
]


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root: dict[str, str | None] = {}
        self.stack: list[str] = []
        self.counts: dict[str, int] = {}
        self.charts: list[str] = []
        """``data-process`` of each usage-against-budget chart, in page order."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.root = found
        key = tag
        if tag == "rect" and found.get("class") == "block":
            key = "rect.block"
        elif tag == "svg" and (found.get("id") or "").startswith("segmap-svg-"):
            key = "svg.segmap"
        elif tag == "svg" and found.get("class") == "chart":
            key = "svg.chart"
        elif tag == "table" and found.get("class") == "blocks":
            key = "table.blocks"
        elif tag == "div" and found.get("class") == "process-chart":
            key = "div.process-chart"
            self.charts.append(found.get("data-process") or "")
        elif tag == "line" and found.get("class") == "mark":
            key = "line.mark"
        self.counts[key] = self.counts.get(key, 0) + 1


def _load(report: Path, tmp_path: Path) -> tuple[_Dom, list[str]]:
    profile = tmp_path / "profile"
    profile.mkdir()
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", report.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    dom = _Dom()
    dom.feed(done.stdout)
    return dom, console


@pytest.mark.parametrize("run", ["tour", "residency"])
def test_the_report_loads_without_errors_and_its_charts_and_tables_render(
    run: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    saved: SavedRun = request.getfixturevalue(run)
    dom, console = _load(saved.outputs.report, tmp_path)
    assert console == [], "the page logged to the console"
    assert "data-errors" not in dom.root, "an uncaught error"
    assert dom.root.get("data-rendered") == "1", "the script ran to its end"
    assert dom.counts.get("svg.chart", 0) >= 3, "occupancy, traffic and eviction charts"
    assert dom.counts.get("svg.segmap", 0) == 3, "one drawn map per segment"
    assert dom.counts.get("table.blocks", 0) == 3
    assert dom.counts.get("table", 0) >= 5, "checks, statistics, traffic totals"
    if run == "residency":
        assert dom.counts.get("rect.block", 0) > 10, "blocks drawn along the segments"


def test_the_report_shows_usage_against_budget_per_process(newcomer: WorkloadRun, tmp_path: Path) -> None:
    """Issue 23: a chart per process and group survives a real browser, pressure events marked (decision 0175)."""
    dom, console = _load(newcomer.outputs.report, tmp_path)
    assert console == [] and "data-errors" not in dom.root and dom.root.get("data-rendered") == "1"
    processes = json.loads(newcomer.outputs.summary.read_text())["processes"]["by_process"]
    assert dom.charts == [p for p, groups in processes.items() for _ in groups], "one per process and group"
    assert dom.counts.get("svg.chart", 0) >= 3 + len(dom.charts)
    budget_changes = sum(r["event"] == "VidMmProcessBudgetChange" for r in newcomer.rows)
    assert dom.counts.get("line.mark", 0) >= budget_changes > 0, "every budget change marked"


def test_a_broken_page_is_caught(tmp_path: Path) -> None:
    """The checks above can fail: a page that logs, throws and fetches is seen as such."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'\"><script>window.addEventListener('error',function(){"
        "document.documentElement.dataset.errors='1';});</script></head><body>"
        "<img src=\"https://example.invalid/x.png\"><script>console.log('hello'); missing();</script></body></html>"
    )
    dom, console = _load(page, tmp_path)
    assert dom.root.get("data-errors") == "1"
    assert any(re.search(r"hello", line) for line in console)
    assert any("Content Security Policy" in line for line in console)
