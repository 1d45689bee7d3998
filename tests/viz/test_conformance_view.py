"""The ``check-driver`` table names the driver as the user gave it: a path or name with square brackets prints
verbatim, never read as rich markup (which would drop it or stop the command with a markup error)."""

from __future__ import annotations

import pytest
from rich.console import Console

from wddmsim.conformance.run import Report
from wddmsim.viz.conformance import print_report


@pytest.mark.parametrize("driver", ["drivers/gpu[/b].so", "[bold]mine[/bold]:driver", "a[b"])
def test_the_driver_name_prints_as_written(driver: str) -> None:
    console = Console(record=True, width=200, emoji=False)
    print_report(console, Report(driver=driver, model="wddm2"))
    assert f"check-driver: {driver} (wddm2)" in console.export_text()
