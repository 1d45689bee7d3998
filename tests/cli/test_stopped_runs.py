"""A run that stopped before it completed leaves ``--out`` readable (decision 0238): every file closed and valid as
far as the run went, ``summary.json`` saying ``completed: false`` and how it stopped -- after a fault in the user's
own policy, an interrupt, and an adapter reset -- while the command's report and exit status stay as they were."""

from __future__ import annotations

import io
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.kmd.driver import ReferenceDriver
from wddmsim.viz.outputs import OutputStream

POLICY = """\
from wddmsim.vidmm.policy import Lru


class Boom(Lru):
    calls = 0
    error = ZeroDivisionError

    def used(self, a):
        Boom.calls += 1
        if Boom.calls > 20:
            raise self.error("the policy's own bug")
        return super().used(a)


class Interrupted(Boom):
    calls = 0
    error = KeyboardInterrupt


class Exits(Boom):
    calls = 0

    def error(self, text):
        import sys

        sys.exit(3)
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "stopping_policies.py").write_text(POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("stopping_policies", None)


def _run(out: Path, *extra: str) -> Any:
    args = ["run", "default", "--seed", "1", "--set", "workload.frames=3", "--out", str(out), *extra]
    return CliRunner().invoke(main, args)


def _read(out: Path) -> dict[str, Any]:
    """Every file parses: the summary and the trace as JSON, every line of the event log as JSON."""
    assert {p.name for p in out.iterdir()} == {"summary.json", "events.jsonl", "trace.json", "report.html"}
    lines = (out / "events.jsonl").read_text().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    trace = json.loads((out / "trace.json").read_text())
    assert trace["traceEvents"] and trace["otherData"]["completed"] is False
    assert (out / "report.html").read_text().rstrip().endswith("</html>")
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    assert summary["completed"] is False and summary["verified"] is False
    assert summary["scenario"] == "default" and summary["seed"] == 1
    return summary


def test_a_fault_in_a_users_policy_leaves_closed_files_and_says_the_run_stopped(
    user_module: Path, tmp_path: Path
) -> None:
    result = _run(tmp_path / "out", "--policy", "stopping_policies:Boom")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith("error: stopping_policies.used (")
    assert "Traceback" not in result.output
    summary = _read(tmp_path / "out")
    assert summary["stopped"] == "user code"
    assert summary["error"] == "ZeroDivisionError: the policy's own bug"


def test_an_interrupted_run_leaves_closed_files_and_says_so(user_module: Path, tmp_path: Path) -> None:
    result = _run(tmp_path / "out", "--policy", "stopping_policies:Interrupted")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "error: aborted"
    summary = _read(tmp_path / "out")
    assert summary["stopped"] == "interrupted" and summary["error"].startswith("KeyboardInterrupt")


def test_a_policy_that_exits_keeps_its_status_and_the_files_say_the_run_exited(
    user_module: Path, tmp_path: Path
) -> None:
    result = _run(tmp_path / "out", "--policy", "stopping_policies:Exits")
    assert result.exit_code == 3
    summary = _read(tmp_path / "out")
    assert summary["stopped"] == "exited" and summary["error"] == "SystemExit: 3"


def test_an_adapter_reset_that_ends_the_run_says_the_run_did_not_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = ReferenceDriver.build_paging_buffer
    calls = [0]

    def fails_once(self: ReferenceDriver, args: Any) -> Any:
        calls[0] += 1
        if calls[0] == 41:
            raise RuntimeError("injected")
        return build(self, args)

    monkeypatch.setattr(ReferenceDriver, "build_paging_buffer", fails_once)
    result = _run(tmp_path / "out")
    assert result.exit_code == 1
    assert "error: adapter reset:" in result.output and "the driver raised RuntimeError: injected" in result.output
    summary = _read(tmp_path / "out")
    assert summary["stopped"] == "failed" and "the driver raised RuntimeError: injected" in summary["error"]


def test_an_abandoned_stream_leaves_a_trace_that_parses(tmp_path: Path) -> None:
    stream = OutputStream(tmp_path)
    stream.close()
    stream.close()  # twice: nothing more is written
    assert json.loads((tmp_path / "trace.json").read_text()) == {
        "traceEvents": [],
        "displayTimeUnit": "ns",
        "otherData": {"generator": "wddmsim", "clock": "simulated", "completed": False},
    }
    assert (tmp_path / "events.jsonl").read_text() == ""


def test_a_completed_run_says_nothing_of_stopping(tmp_path: Path) -> None:
    result = _run(tmp_path / "out")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "completed" not in summary and "stopped" not in summary and summary["verified"] is True
    assert "completed" not in json.loads((tmp_path / "out" / "trace.json").read_text())["otherData"]


def test_a_stopped_run_leaves_no_file_of_an_earlier_run_in_the_same_directory(
    user_module: Path, tmp_path: Path
) -> None:
    """A completed run wrote ``frames.csv`` and a verified summary; a later run into the same directory that stops
    leaves only its own files: no ``frames.csv`` speaking for it, its own summary."""
    out = tmp_path / "out"
    assert _run(out).exit_code == 0
    assert (out / "frames.csv").is_file()
    assert _run(out, "--policy", "stopping_policies:Boom").exit_code == 1
    assert _read(out)["stopped"] == "user code"  # the four files, no frames.csv


def test_a_stream_opened_over_an_earlier_run_removes_the_files_it_writes_at_the_end(tmp_path: Path) -> None:
    """A run killed outright (no exception to catch) must not leave an earlier run's summary beside its own log."""
    for name in ("summary.json", "report.html", "frames.csv", "notes.txt"):
        (tmp_path / name).write_text("earlier\n")
    OutputStream(tmp_path).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "notes.txt", "trace.json"]
    assert (tmp_path / "notes.txt").read_text() == "earlier\n"


OS_POLICY = """\
from wddmsim.vidmm.policy import Lru


class Missing(Lru):
    calls = 0

    def used(self, a):
        Missing.calls += 1
        if Missing.calls > 20:
            raise FileNotFoundError(2, "No such file or directory", "weights.toml")
        return super().used(a)
"""


def test_an_os_error_in_a_users_policy_is_the_users_fault_not_the_record_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the ``--record`` file's own failure is reported as ``--record``: an ``OSError`` the user's policy raises
    (no ``--record`` given, or one given) is a fault in user code like any other, and ``--out`` says so."""
    (tmp_path / "os_error_policies.py").write_text(OS_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        for extra in ((), ("--record", str(tmp_path / "calls.jsonl"))):
            out = tmp_path / f"out{len(extra)}"
            sys.modules.pop("os_error_policies", None)
            result = _run(out, "--policy", "os_error_policies:Missing", *extra)
            assert result.exit_code == 1, result.output
            assert "--record" not in result.output
            assert result.output.splitlines()[-1].startswith("error: os_error_policies.used (")
            summary = _read(out)
            assert summary["stopped"] == "user code"
            assert summary["error"] == "FileNotFoundError: [Errno 2] No such file or directory: 'weights.toml'"
    finally:
        sys.modules.pop("os_error_policies", None)


def _fail_inside_wddmsim(monkeypatch: pytest.MonkeyPatch) -> None:
    """Frame 2 of the run raises an ``OSError`` from a function that is wddmsim's own (it runs in the globals of
    ``wddmsim.scenarios.app``, as ``App.frame`` does): what a fault of wddmsim itself looks like to the blame."""
    import wddmsim.scenarios.app as app_module

    frame = app_module.App.frame

    def failing(self: app_module.App, index: int, chosen: list[int]) -> None:
        if index == 2:
            raise OSError(5, "Input/output error")
        frame(self, index, chosen)

    own = types.FunctionType(failing.__code__, vars(app_module), "frame", None, failing.__closure__)
    monkeypatch.setattr(app_module.App, "frame", own)


def test_an_os_error_of_wddmsims_own_is_not_blamed_on_the_record_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ``OSError`` raised inside wddmsim itself while ``--record`` is given is wddmsim's fault: ``--out`` says
    ``internal error``, nothing names ``--record``, and the record file holds the calls made until then."""
    _fail_inside_wddmsim(monkeypatch)
    record = tmp_path / "calls.jsonl"
    result = _run(tmp_path / "out", "--record", str(record))
    assert "--record" not in result.output
    assert isinstance(result.exception, OSError) and result.exception.errno == 5
    summary = _read(tmp_path / "out")
    assert summary["stopped"] == "internal error"
    assert summary["error"] == "OSError: [Errno 5] Input/output error"
    lines = record.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["trace"] and len(lines) > 1


def test_an_interrupt_while_the_files_are_written_leaves_no_summary_and_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``summary.json`` is written last and each file whole or not at all: a Ctrl-C while a completed run's report
    is rendered leaves no summary claiming a complete run beside a missing report, and no half-written file."""
    import wddmsim.viz.outputs as outputs

    def interrupted(*args: Any, **kwargs: Any) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(outputs, "render_report", interrupted)
    out = tmp_path / "out"
    result = _run(out)
    assert result.exit_code == 1
    assert {p.name for p in out.iterdir()} == {"events.jsonl", "trace.json", "frames.csv"}  # frames.csv: before
    lines = (out / "events.jsonl").read_text().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    assert json.loads((out / "trace.json").read_text())["traceEvents"]


def test_a_stop_message_that_is_not_valid_unicode_still_leaves_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message carrying a byte that was not UTF-8 (a file name decoded with ``surrogateescape``): every file is
    still written, and the summary keeps the message (JSON escapes it)."""
    from wddmsim.scenarios.app import App

    frame = App.frame
    message = "cannot read " + b"w\xffeights".decode("utf-8", "surrogateescape")

    def failing(self: App, index: int, chosen: list[int]) -> None:
        if index == 2:
            raise ValueError(message)
        frame(self, index, chosen)

    monkeypatch.setattr(App, "frame", failing)
    result = _run(tmp_path / "out")
    assert result.exit_code == 1
    summary = _read(tmp_path / "out")
    assert summary["stopped"] == "user code" and summary["error"] == f"ValueError: {message}"


def test_an_output_file_is_written_whole_with_stray_surrogates_escaped(tmp_path: Path) -> None:
    from wddmsim.viz.outputs import _write_whole

    path = tmp_path / "report.html"
    path.write_text("an earlier run's", encoding="utf-8")
    _write_whole(path, "name w" + b"\xff".decode("utf-8", "surrogateescape"))
    assert path.read_bytes() == b"name w\\udcff"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_record_file_that_also_fails_to_close_does_not_hide_the_runs_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that stops on an error of its own while the ``--record`` file cannot be closed either reports the
    run's error: the record file's second failure is not the one the command shows."""
    import wddmsim.cli as cli

    _fail_inside_wddmsim(monkeypatch)

    def close(self: Any) -> None:
        io.TextIOWrapper.close(self)  # closed, yet the last flush reported a failure
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli._RecordFile, "close", close)
    result = _run(tmp_path / "out", "--record", str(tmp_path / "calls.jsonl"))
    assert "--record" not in result.output
    assert isinstance(result.exception, OSError) and result.exception.errno == 5
    assert _read(tmp_path / "out")["stopped"] == "internal error"
