"""A sweep's report.html in a real headless browser (Debian's chromium), as the run report is tested: it loads with
no console message and no error, its three figures decode and draw (each ``<img>`` complete with a width), and its
tables are there.  The page's script counts the drawn figures on ``<html data-figures>`` once the page has loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.viz.sweep_report import write_sweep_report

from .sweep_fixture import SweepSpec, make_sweep
from .test_report_browser import CHROMIUM, _load

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
]


@pytest.mark.parametrize("frames", [6, None], ids=["with-frames", "without-frames"])
def test_the_sweep_report_loads_without_errors_and_its_figures_render(frames: int | None, tmp_path: Path) -> None:
    root = tmp_path / "sweep"
    make_sweep(root, SweepSpec(frames=frames, failed={("lru", 2.0, 2)}))
    report = write_sweep_report(root)[-1]
    dom, console = _load(report, tmp_path)
    assert console == [], "the page logged to the console"
    assert "data-errors" not in dom.root, "an uncaught error"
    assert dom.root.get("data-rendered") == "1", "the script ran to its end"
    assert dom.root.get("data-figures") == "3", "every figure decoded and drawn"
    assert dom.counts.get("img", 0) == 3 and dom.counts.get("figure", 0) == 3
    assert dom.counts.get("table", 0) == 3, "summary, grid, failed runs"
