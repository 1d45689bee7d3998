"""Every command on hostile text (decisions 0247, 0248): names, paths, values and file contents holding rich
markup, emoji codes, a lone ``[``, a trailing backslash, terminal escapes, a bidirectional override and bytes that
are not UTF-8 print as written -- the characters a terminal acts on as visible escapes -- with the exit status
the command documents, never a traceback.

Each case runs one command and names the exact lines it must print; every case also holds that nothing a terminal
would act on reaches the output (the runner keeps ANSI sequences: ``color=True``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wddmsim.cli import TRACEBACK_VARIABLE, main

from .saved_run import save_run

HOSTILE = "tex[/b] [bold]x[/bold] [link=file:///etc]l[/link] :smile: [ \x1b[31mR\x07\u202e\x9b\\"
"""A name a hostile user chose: markup, an emoji code, a lone bracket, ESC, BEL, RLO, CSI and a trailing backslash."""
SHOWN = "tex[/b] [bold]x[/bold] [link=file:///etc]l[/link] :smile: [ \\x1b[31mR\\x07\\u202e\\x9b\\"
"""How it prints: brackets and the backslash as written, the controls as escapes."""
FILE = HOSTILE.replace("/", "_")
"""The same as a file name (no slash)."""
FILE_SHOWN = SHOWN.replace("/", "_")
ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
WIDE = {"COLUMNS": "1000"}
DAWN = (
    Path(__file__).resolve().parents[1] / "data" / "gpgmm" / "dawn_end2end_queuewritebuffertests_manywritebuffer.json"
)
POLICY = f"""\
from wddmsim.vidmm.policy import Lru


class Boom(Lru):
    def used(self, a):
        raise RuntimeError({HOSTILE!r})
"""


def shown(path: Path | str) -> str:
    """A path with :data:`HOSTILE`'s characters in it, as it prints."""
    return str(path).replace(FILE, FILE_SHOWN)


def cells(line: str) -> list[str]:
    """The cells of a table row (rich's box characters split them)."""
    return [c.strip() for c in re.split("[│┃]", line.strip().strip("│┃"))]


@dataclass
class Env:
    tmp: Path
    run: Path
    """A saved run (``run --out``) of one frame."""


@dataclass
class Case:
    args: Callable[[Env], list[str]]
    status: int
    lines: Callable[[Env], list[str | re.Pattern[str]]]
    """Each line printed exactly (a whole output line, stripped), or a pattern one line matches whole."""
    cells: list[str] = field(default_factory=list)
    """The first cells of one table row, exactly."""


def _edited(env: Env, edit: Callable[[dict[str, object]], None], extra: tuple[dict[str, object], ...] = ()) -> Path:
    """A copy of the saved run, named hostile, with every record passed through ``edit``."""
    copy = env.tmp / f"run{FILE}"
    shutil.copytree(env.run, copy)
    rows = [json.loads(line) for line in (env.run / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        edit(row)
    rows += list(extra)
    (copy / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return copy


def _label(row: dict[str, object]) -> None:
    if row["event"] == "SegmentRange":
        row["Label"] = HOSTILE
    if row["event"] == "ProcessLifetime":
        row["event"] = HOSTILE  # the last record: the one the map is shown after


def _evict(row: dict[str, object]) -> None:
    if row["event"] == "VidMmEvict":
        row.update(Cause=HOSTILE, Destination=HOSTILE, Policy=HOSTILE, Reason=HOSTILE)


def _surrogate(row: dict[str, object]) -> None:
    if row["event"] == "SegmentRange":
        row["Label"] = "a\ud800b\udcffc"


def _segment_id(row: dict[str, object]) -> None:
    if row["event"] == "ReportSegment":
        row["ulSegmentId"] = "[/]"


def _evicted(env: Env) -> str:
    lines = (env.run / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return hex(next(json.loads(line)["pVidMmAlloc"] for line in lines if '"VidMmEvict"' in line))


def _scenario(env: Env) -> Path:
    path = env.tmp / "hostile.toml"
    text = f"name = {json.dumps(HOSTILE)}\ndescription = {json.dumps(HOSTILE)}\n[workload]\nframes = 1\n"
    path.write_text(text, encoding="utf-8")
    return path


def _record(env: Env) -> list[str]:
    trace = env.tmp / f"{FILE}.jsonl"
    recorded = CliRunner().invoke(main, ["run", str(_scenario(env)), "--record", str(trace)])
    assert recorded.exit_code == 0, recorded.output
    return ["replay", str(trace)]


def _summary_driver(env: Env) -> list[str]:
    copy = env.tmp / f"run{FILE}"
    shutil.copytree(env.run, copy)
    summary = json.loads((copy / "summary.json").read_text(encoding="utf-8"))
    summary["config"]["adapter"]["driver"] = HOSTILE
    (copy / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return ["inspect", str(copy), "--driver", "reference"]


def _write(env: Env, content: bytes) -> Path:
    path = env.tmp / FILE
    path.write_bytes(content)
    return path


def _not_utf8(env: Env) -> Path:
    return _write(env, b'name = "\xff"\n')


DEEP = "[" * 2000 + "]" * 2000
"""An array nested past the TOML reader's recursion depth."""


def _deep(env: Env) -> Path:
    path = env.tmp / FILE
    path.write_text(f'name = "x"\nv = {DEEP}\n', encoding="utf-8")
    return path


def _adapter(env: Env, text: bytes) -> list[str]:
    path = env.tmp / FILE
    path.write_bytes(text)
    library = env.tmp / "lib.so"
    library.write_bytes(b"")
    return ["check-driver", str(library), "--adapter", str(path)]


def _log_directory(env: Env) -> Path:
    run = env.tmp / FILE
    (run / "events.jsonl").mkdir(parents=True)
    return run


def _bad_buffer(env: Env) -> list[str]:
    path = env.tmp / FILE
    path.write_bytes(b"\xff" * 16)
    return ["disasm", str(path)]


def _capture(env: Env) -> list[str]:
    path = env.tmp / f"{FILE}.json"
    shutil.copy(DAWN, path)
    return ["import", "gpgmm", str(path), "-o", str(env.tmp / f"{FILE}.toml")]


def _adapter_file(env: Env) -> list[str]:
    path = env.tmp / "adapter.toml"
    path.write_text(f"{json.dumps(HOSTILE)} = 1\n", encoding="utf-8")
    library = env.tmp / "lib.so"
    library.write_bytes(b"")
    return ["check-driver", str(library), "--adapter", str(path)]


def _no_room(env: Env) -> list[str]:
    extra = ({"time": 10**9, "event": "VidMmNoRoom", "Diagnosis": HOSTILE},)
    return ["inspect", str(_edited(env, lambda row: None, extra))]


CASES: dict[str, Case] = {
    "run a scenario, --out and --record": Case(
        lambda env: [
            "run",
            str(_scenario(env)),
            "--out",
            str(env.tmp / FILE),
            "--record",
            str(env.tmp / f"{FILE}.jsonl"),
        ],
        0,
        lambda env: [
            f"{SHOWN}: {SHOWN}",
            re.compile(re.escape(f"wddmsim run {SHOWN}: ") + r"3 processes, .*"),
            f"recorded the user-mode calls to {shown(env.tmp / FILE)}.jsonl (wddmsim replay "
            f"{shown(env.tmp / FILE)}.jsonl --policy lru ...)",
            f"wrote {shown(env.tmp / FILE)}/summary.json, {shown(env.tmp / FILE)}/events.jsonl, "
            f"{shown(env.tmp / FILE)}/trace.json and {shown(env.tmp / FILE)}/report.html",
        ],
    ),
    "run --set echoed back": Case(
        lambda env: ["run", "--set", f"name={HOSTILE}", "--set", "workload.frames=1"],
        0,
        lambda env: [
            re.compile(re.escape(f"{SHOWN}: 3 processes, 12 frames") + ".*"),
            f"changed here: name={SHOWN}, workload.frames=1",
        ],
    ),
    "run, a scenario that is not one": Case(
        lambda env: ["run", str(env.tmp / FILE)],
        2,
        lambda env: [
            f"error: SCENARIO={str(env.tmp / FILE)!r}: is neither a built-in scenario (default, stress, uploads, "
            "tiles, focus-loss, newcomer, careless, tour) nor a TOML file"
        ],
    ),
    "run, a scenario file that is not UTF-8": Case(
        lambda env: ["run", str(_not_utf8(env))],
        2,
        lambda env: [f"error: SCENARIO={str(env.tmp / FILE)!r}: is not UTF-8 text (byte 8): TOML is UTF-8"],
    ),
    "run --set, a number too long for Python": Case(
        lambda env: ["run", "--set", "workload.frames=" + "9" * 5000],
        2,
        lambda env: [f"error: workload.frames='{'9' * 5000}': must be an integer"],
    ),
    "run, a scenario file nested past the reader's depth": Case(
        lambda env: ["run", str(_deep(env))],
        2,
        lambda env: [f"error: SCENARIO={str(env.tmp / FILE)!r}: is not valid TOML: nested too deeply to read"],
    ),
    "run --set, a value nested past the reader's depth": Case(
        lambda env: ["run", "--set", f"workload.frames={DEEP}"],
        2,
        lambda env: [f"error: workload.frames={DEEP!r}: must be an integer"],
    ),
    "check-driver --adapter, a description that is not UTF-8": Case(
        lambda env: _adapter(env, b'model = "\xff"\n'),
        2,
        lambda env: [f"error: --adapter={str(env.tmp / FILE)!r}: is not UTF-8 text (byte 9): TOML is UTF-8"],
    ),
    "check-driver --adapter, a description nested past the reader's depth": Case(
        lambda env: _adapter(env, f"v = {DEEP}\n".encode()),
        2,
        lambda env: [f"error: --adapter={str(env.tmp / FILE)!r}: is not valid TOML: nested too deeply to read"],
    ),
    "check-driver --adapter, a number too long for Python": Case(
        lambda env: _adapter(env, f"v = {'9' * 5000}\n".encode()),
        2,
        lambda env: [
            f"error: --adapter={str(env.tmp / FILE)!r}: is not valid TOML: an integer of more than "
            f"{sys.get_int_max_str_digits()} digits"
        ],
    ),
    "run, a scenario file with a number too long for Python": Case(
        lambda env: ["run", str(_write(env, f"name = 'n'\nseed = {'9' * 5000}\n".encode()))],
        2,
        lambda env: [
            f"error: SCENARIO={str(env.tmp / FILE)!r}: is not valid TOML: an integer of more than "
            f"{sys.get_int_max_str_digits()} digits"
        ],
    ),
    "replay: the trace's path and its scenario's name": Case(
        _record,
        0,
        lambda env: [
            re.compile(
                "replayed [0-9]+ calls of " + re.escape(f"{shown(env.tmp / FILE)}.jsonl ({SHOWN}, seed 1)"),
            )
        ],
    ),
    "inspect: labels and event names of an edited log": Case(
        lambda env: ["inspect", str(_edited(env, _label)), "--rows", "1", "--segment", "1"],
        0,
        lambda env: [re.compile(r"event [0-9]+: " + re.escape(SHOWN) + r" at [0-9,]+ ns")],
        cells=["", "0xfed000", "4 KiB", SHOWN, "VidMm"],
    ),
    "inspect: a diagnosis": Case(
        _no_room,
        0,
        lambda env: [re.compile(r"no room \(event [0-9]+\): " + re.escape(SHOWN))],
    ),
    "inspect --why-evicted: cause, destination, policy, reason": Case(
        lambda env: ["inspect", str(_edited(env, _evict)), "--why-evicted", _evicted(env)],
        0,
        lambda env: [
            re.compile(
                r"event [0-9]+ at [0-9,]+ ns: left segment [0-9]+ \([0-9]+ [KMG]iB\), "
                + re.escape(f"cause {SHOWN}, to {SHOWN}")
            ),
            f"chosen by {SHOWN}: {SHOWN}",
        ],
    ),
    "inspect: lone surrogates in a label": Case(
        lambda env: ["inspect", str(_edited(env, _surrogate)), "--rows", "1", "--segment", "1"],
        0,
        lambda env: [],
        cells=["", "0xfed000", "4 KiB", "a\\ud800b\\xffc", "VidMm"],
    ),
    "inspect: a field of another type": Case(
        lambda env: ["inspect", str(_edited(env, _segment_id))],
        2,
        lambda env: [
            f"error: Invalid value for RUN_DIR: {shown(env.tmp)}/run{FILE_SHOWN}/events.jsonl, line 1: ReportSegment "
            "field ulSegmentId='[/]' must be an integer"
        ],
    ),
    "inspect: a no-room event without its diagnosis": Case(
        lambda env: ["inspect", str(_edited(env, lambda row: None, ({"time": 10**9, "event": "VidMmNoRoom"},)))],
        2,
        lambda env: [
            re.compile(
                re.escape(f"error: Invalid value for RUN_DIR: {shown(env.tmp)}/run{FILE_SHOWN}/events.jsonl, line ")
                + r"[0-9]+: VidMmNoRoom has no field Diagnosis"
            )
        ],
    ),
    "inspect: an events.jsonl that is a directory": Case(
        lambda env: ["inspect", str(_log_directory(env))],
        2,
        lambda env: [
            f"error: Invalid value for RUN_DIR: {shown(env.tmp)}/{FILE_SHOWN}/events.jsonl cannot be read: Is a directory"
        ],
    ),
    "inspect: a directory without a log": Case(
        lambda env: ["inspect", str(env.tmp)],
        2,
        lambda env: [
            f"error: Invalid value for RUN_DIR: {shown(env.tmp)}/events.jsonl does not exist: write one with "
            "`wddmsim run --out DIR`"
        ],
    ),
    "inspect --driver: the driver summary.json names": Case(
        _summary_driver,
        2,
        lambda env: [
            f"error: --driver='reference': the run in {shown(env.tmp)}/run{FILE_SHOWN} was made on driver package "
            f"{SHOWN}"
        ],
    ),
    "disasm: a file that is no paging buffer": Case(
        _bad_buffer,
        2,
        lambda env: [
            f"error: FILE={str(env.tmp / FILE)!r}: is not a paging buffer: at offset 0x0: length 0xffffffff is not "
            "a positive multiple of 16"
        ],
    ),
    "import gpgmm: the capture's and the scenario's paths": Case(
        _capture,
        0,
        lambda env: [
            re.compile(
                re.escape(f"wrote {shown(env.tmp / FILE)}.toml: GPGMM capture {FILE_SHOWN}.json: 4 heaps (16 MiB)")
                + ".*"
            )
        ],
    ),
    "check-driver: a key of the adapter file": Case(
        _adapter_file,
        2,
        lambda env: [re.compile(re.escape(f"error: {SHOWN}=1: is not a key of an adapter description") + ".*")],
    ),
    "bench: an unknown name": Case(
        lambda env: ["bench", HOSTILE],
        2,
        lambda env: [
            re.compile(
                re.escape(f"error: Invalid value for NAMES: unknown benchmark(s) [{HOSTILE!r}]; known: [") + ".*"
            )
        ],
    ),
    "reproduce: an unknown name": Case(
        lambda env: ["reproduce", HOSTILE],
        2,
        lambda env: [f"error: NAME={HOSTILE!r}: known reproductions: belady-anomaly, lru-cliff"],
    ),
    "plot: a directory that is no sweep": Case(
        lambda env: ["plot", str(env.tmp / FILE)],
        2,
        lambda env: [f"error: SWEEP_DIR={str(env.tmp / FILE)!r}: must be a directory written by `wddmsim sweep --out`"],
    ),
    "vm-decode: a driver that is not one": Case(
        lambda env: ["vm-decode", "0x1000", "--driver", HOSTILE],
        2,
        lambda env: [
            f"error: --driver={HOSTILE!r}: module 'tex[_b] [bold]x[_bold] [link=file' must be a dotted Python name "
            "(no relative import)".replace("_", "/")
        ],
    ),
    "a fault in a user's policy quoting the user's text": Case(
        lambda env: ["run", "--set", "workload.frames=1", "--policy", "hostile_policy:Boom"],
        1,
        lambda env: [
            re.compile(
                re.escape("error: hostile_policy.used (")
                + ".*"
                + re.escape(f") raised RuntimeError: {SHOWN} -- a fault in code wddmsim loaded by name")
                + ".*"
            )
        ],
    ),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_run(tmp_path_factory, frames=1)


@pytest.fixture
def env(saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    (tmp_path / "hostile_policy.py").write_text(POLICY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    yield Env(tmp_path, saved)
    sys.modules.pop("hostile_policy", None)


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, env=WIDE, color=True)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_hostile_text_prints_as_written_and_controls_escaped(env: Env, case: Case) -> None:
    result = invoke(case.args(env))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == case.status, result.output
    assert "Traceback" not in result.output
    assert ACTED_ON.search(result.output) is None, "a character a terminal acts on reached it"
    printed = [line.strip() for line in result.output.splitlines()]
    for expected in case.lines(env):
        if isinstance(expected, str):
            assert expected in printed, (expected, result.output)
        else:
            assert any(expected.fullmatch(line) for line in printed), (expected.pattern, result.output)
    if case.cells:
        assert case.cells in [cells(line)[: len(case.cells)] for line in printed], result.output


def test_run_list_prints_an_installed_packages_words_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run --list`` shows what an installed driver package says of itself: markup and escapes are text."""
    import wddmsim.drivers.registry as registry

    monkeypatch.setattr(registry, "described", lambda: [(HOSTILE, f"fast {HOSTILE} driver")])
    result = invoke(["run", "--list"])
    assert result.exit_code == 0, result.output
    assert ACTED_ON.search(result.output) is None
    assert [SHOWN, f"fast {SHOWN} driver"] in [cells(line) for line in result.output.splitlines()]


@pytest.mark.slow
def test_a_sweep_into_a_hostile_directory_names_its_tables_as_written(tmp_path: Path) -> None:
    out = tmp_path / FILE
    result = invoke(["sweep", "--set", "workload.frames=1", "--jobs", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert ACTED_ON.search(result.output) is None
    tables = ", ".join(shown(p) for p in (out / "results.csv", out / "results.parquet") if p.exists())
    assert f"done: ran 1 (0 failed), skipped 0; wrote {tables}" in result.output.splitlines()


def test_an_error_on_one_line_shows_the_controls_python_counts_as_white_space(env: Env) -> None:
    """``\\x0b``, ``\\x1c``-``\\x1f`` and ``\\x85`` are white space to ``str.split``: escaped before the error is
    joined on one line, they print as escapes, not as spaces; a line break joins."""
    (env.tmp / "spaced_policy.py").write_text(
        POLICY.replace(f"{HOSTILE!r}", repr("a\x1cb\x85c\x0bd\x1fe\nf")), encoding="utf-8"
    )
    try:
        result = invoke(["run", "--set", "workload.frames=1", "--policy", "spaced_policy:Boom"])
    finally:
        sys.modules.pop("spaced_policy", None)
    assert result.exit_code == 1, result.output
    assert ACTED_ON.search(result.output) is None
    assert "raised RuntimeError: a\\x1cb\\x85c\\x0bd\\x1fe f -- a fault in code" in result.output, result.output
