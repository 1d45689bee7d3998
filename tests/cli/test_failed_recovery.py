"""``wddmsim run --driver module:attribute`` on a driver whose every paging-buffer call fails (decision 0239): the
adapter reset's own paging fails too, recovery ends, and the command reports it as any adapter reset -- one line
naming both of the driver's failures, exit status 1, no traceback -- with ``--out`` left as decision 0238 says."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

DRIVERS = """\
import dataclasses

from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.reference import REFERENCE
from wddmsim.kmd.driver import ReferenceDriver


class Broken(ReferenceDriver):
    after = 0
    calls = 0

    def build_paging_buffer(self, args):
        if args.pDmaBuffer is None:  # the paging process's own tables, written by the CPU
            return super().build_paging_buffer(args)
        Broken.calls += 1
        if Broken.calls <= self.after:
            return super().build_paging_buffer(args)
        return self.fail()

    def fail(self):
        raise RuntimeError("always broken")


class Refuses(Broken):
    def fail(self):
        return NTSTATUS.STATUS_INVALID_PARAMETER


class Later(Broken):
    after = 40


RAISES = dataclasses.replace(REFERENCE, name="raises", create=Broken)
REFUSES = dataclasses.replace(REFERENCE, name="refuses", create=Refuses)
LATER = dataclasses.replace(REFERENCE, name="later", create=Later)
"""

SEPARATOR = "; recovery failed, the adapter is removed: "


@pytest.fixture
def drivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "broken_drivers.py").write_text(DRIVERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("broken_drivers", None)


@pytest.mark.parametrize(
    ("attribute", "said"),
    [
        ("RAISES", "the driver raised RuntimeError: always broken"),
        ("REFUSES", "returned STATUS_INVALID_PARAMETER; only STATUS_SUCCESS"),
        ("LATER", "the driver raised RuntimeError: always broken"),
    ],
)
def test_a_driver_that_fails_every_call_ends_the_run_in_one_line(
    drivers: Path, tmp_path: Path, attribute: str, said: str
) -> None:
    out = tmp_path / "out"
    args = ["run", "default", "--seed", "1", "--set", "workload.frames=3", "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "--driver", f"broken_drivers:{attribute}"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0] == result.output.splitlines()[-1], result.output
    assert errors[0].startswith("error: adapter reset: DXGK_OPERATION_"), "a reset, not a refused argument"
    first, _, second = errors[0].removeprefix("error: adapter reset: ").partition(SEPARATOR)
    assert said in first and said in second, errors[0]
    assert errors[0].endswith("[STATUS_DEVICE_REMOVED 0xc00002b6]")
    summary, events = _read(out)
    assert [e["Reason"] for e in events if e["event"] == "AdapterReset"] == [first], "one reset, the first failure's"
    assert summary["stopped"] == "failed" and SEPARATOR in summary["error"] and said in summary["error"]


def _read(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The files of a stopped run (decision 0238): each parses, the trace and the summary say it did not complete."""
    assert {p.name for p in out.iterdir()} == {"summary.json", "events.jsonl", "trace.json", "report.html"}
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    trace = json.loads((out / "trace.json").read_text())
    assert trace["otherData"]["completed"] is False
    assert (out / "report.html").read_text().rstrip().endswith("</html>")
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    assert summary["completed"] is False and summary["verified"] is False
    return summary, events
