"""The views a command prints of things it did not write (decision 0247): a check-driver report of a driver whose
path, findings and evidence hold hostile text, and a reproduction row of a policy a user named.  Markup prints as
written, the characters a terminal acts on as escapes, the project's own styling stays."""

from __future__ import annotations

import dataclasses
import html
import io
import re
from pathlib import Path
from typing import cast
from xml.dom import minidom

from wddmsim.conformance.cases import Case
from wddmsim.conformance.checks import Finding, Outcome
from wddmsim.conformance.run import Report
from wddmsim.scenarios.reproduce import Counts, Reproduction, Row
from wddmsim.viz.conformance import print_report, write
from wddmsim.viz.reproduce import print_reproduction
from wddmsim.viz.terminal import terminal

HOSTILE = "tex[/b] [bold]x[/bold] [link=file:///etc]l[/link] :smile: [ \x1b[31mR\x07\u202e\x9b\\"
SHOWN = "tex[/b] [bold]x[/bold] [link=file:///etc]l[/link] :smile: [ \\x1b[31mR\\x07\\u202e\\x9b\\"
ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printed(draw: object) -> tuple[list[str], list[list[str]]]:
    """The lines a view printed (stripped) and each line's table cells; nothing a terminal acts on among them."""
    out = io.StringIO()
    console = terminal(file=out, width=300, color_system=None)
    draw(console)  # type: ignore[operator]
    text = out.getvalue()
    assert ACTED_ON.search(text) is None
    lines = [line.strip() for line in text.splitlines()]
    return lines, [[c.strip() for c in re.split("[│┃]", line.strip("│┃"))] for line in lines]


def test_a_check_driver_report_prints_the_drivers_words_as_written() -> None:
    finding = Finding(check="bytes", operation="Transfer", case=HOSTILE, message=HOSTILE, detail=f"evidence {HOSTILE}")
    outcome = Outcome(case=cast(Case, None), findings=(finding,), ran=frozenset({"status", "bytes"}))
    report = Report(driver=f"./lib{HOSTILE}.so", model="wddm1", outcomes={"Transfer": [outcome]}, unchecked=[HOSTILE])
    lines, cells = printed(lambda console: print_report(console, report))
    assert f"check-driver: ./lib{SHOWN}.so (wddm1)" in lines
    assert f"bytes Transfer ({SHOWN}): {SHOWN}" in lines
    assert f"evidence {SHOWN}" in lines
    assert f"claimed but not checked (no case yet): {SHOWN}" in lines
    header = next(row for row in cells if row[0] == "operation")
    transfer = next(row for row in cells if row[0] == "Transfer")
    assert transfer[header.index("status")] == "pass" and transfer[header.index("bytes")] == "FAIL"
    assert [SHOWN, "no case yet"] in [row[:2] for row in cells]


def test_a_reproduction_row_prints_a_users_policy_name_as_written() -> None:
    row = Row(case="3", label="3 frames", policy=HOSTILE, ours=9, published=7, counts=Counts(12, 9, 5, 4))
    rep = Reproduction(name="belady-anomaly", title="t", source="s", measure="faults", rows=(row,))
    lines, cells = printed(lambda console: print_reproduction(console, rep))
    assert ["3 frames", SHOWN, "7", "9", "exact", "MISMATCH"] in [r[:6] for r in cells]
    assert f"mismatch belady-anomaly {SHOWN}@3: published 7, ours 9" in lines


def test_a_check_driver_report_file_shows_the_drivers_words_and_can_be_written(tmp_path: Path) -> None:
    """``--junit`` and ``--out``: a control in the driver's path or words is no XML character (a CI's parser refused
    the file) and a path byte that was not UTF-8 could not be written (a traceback after the whole run)."""
    hostile = f"{HOSTILE}\udcff"
    finding = Finding(check="bytes", operation="Transfer", case=hostile, message=hostile, detail=hostile)
    outcome = Outcome(case=cast(Case, _Named(hostile)), findings=(finding,), ran=frozenset({"status", "bytes"}))
    report = Report(driver=f"./lib{hostile}.so", model="wddm1", outcomes={"Transfer": [outcome]}, unchecked=[])
    write(report, junit_path=tmp_path / "junit.xml", out=tmp_path / "out")
    for path in (tmp_path / "junit.xml", tmp_path / "out" / "check-driver.xml"):
        suite = minidom.parse(str(path)).documentElement  # well-formed XML
        assert suite is not None
        assert suite.getAttribute("name") == f"check-driver ./lib{SHOWN}\\xff.so"
        failure = suite.getElementsByTagName("failure")[0]
        assert failure.getAttribute("message") == f"{SHOWN}\\xff"
    page = (tmp_path / "out" / "check-driver.html").read_text(encoding="utf-8")
    assert ACTED_ON.search(page) is None
    assert f"<p>{html.escape(SHOWN)}\\xff</p>" in page


@dataclasses.dataclass(frozen=True)
class _Named:
    name: str
