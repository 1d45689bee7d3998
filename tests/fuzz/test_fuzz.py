"""Issue 19's fuzzing campaign: random and mutated input on every surface a user or a file reaches.

- ``decoder``: random bytes and single-bit flips / byte mutations of the tour's real paging buffers, fed to the
  disassembler and executed by the simulated GPU -- it runs them or halts with a clean fault, never a Python
  exception, never a hang;
- ``scenario``: random TOML documents, keys and values (wrong types, huge numbers) as scenario files and ``--set``;
- ``cli``: random argument vectors through click's runner;
- ``replay``: call traces cut, mutated, retyped and given unknown handles.

Success everywhere is exit status 0, 1 or 2 and no traceback.  A small budget runs by default; ``-m slow`` runs a
larger one.  Every case is counted in the campaign tally under its surface.
"""

from __future__ import annotations

import contextlib
import json
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.cli import main
from wddmsim.core.errors import WddmsimError
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import EngineState, Submission
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import loads, parse_override
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.tour import run_tour
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.viz.capture import PagingCapture
from wddmsim.viz.disasm import disassemble

HANG_SECONDS = 60
"""A case still running after this long has hung (far beyond any case's cost)."""
BUFFER = 0x100000

FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


class Hung(Exception):
    pass


@contextmanager
def deadline(seconds: int = HANG_SECONDS) -> Iterator[None]:
    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def cli_outcome(args: list[str]) -> Outcome:
    """Run the command line; ACCEPTED (0), REFUSED (1 or 2, one clean error), CRASHED or HUNG."""
    try:
        # In a fresh directory: a random vector may name --out or --record with a relative path.
        with deadline(), tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
            result = CliRunner().invoke(main, args)
    except Hung:
        return Outcome.HUNG
    if "Traceback" in result.output or (result.exception is not None and not isinstance(result.exception, SystemExit)):
        return Outcome.CRASHED
    if result.exit_code == 0:
        return Outcome.ACCEPTED
    return Outcome.REFUSED if result.exit_code in (1, 2) else Outcome.CRASHED


def assert_clean(surface: str) -> None:
    tally = campaign.tally(surface)
    assert tally.bad == 0, tally.line()


# --- decoder ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tour_buffers() -> list[bytes]:
    """The tour's paging buffers, as VidMm submitted them."""
    capture = PagingCapture()
    run_tour(on_rig=lambda rig: capture.attach(rig.adapter))
    return [b.data for b in capture.buffers if b.data][:24]


def small_gpu() -> Gpu:
    return Gpu(
        GpuConfig(
            local_size=64 * 1024 * 1024,
            bar_size=16 * 1024 * 1024,
            system_size=64 * 1024 * 1024,
            aperture_size=16 * 1024 * 1024,
        )
    )


def decoder_case(data: bytes) -> None:
    """Disassemble and execute ``data``: a clean listing, and the engine idle or halted on a fault."""
    with campaign.case("decoder") as box:
        try:
            with deadline():
                disassemble(data, 0)
                gpu = small_gpu()
                gpu.system.write(BUFFER, data)
                gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 1))
                gpu.clock.run_all()
        except Hung:
            box.append(Outcome.HUNG)
            return
        except Exception:
            box.append(Outcome.CRASHED)
            raise
        engine = gpu.engines[0]
        if engine.state == EngineState.IDLE and engine.fault is None:
            box.append(Outcome.ACCEPTED)
        elif engine.state == EngineState.HALTED and engine.fault is not None:
            box.append(Outcome.REFUSED)
        else:
            box.append(Outcome.MISMATCHED)


def mutate(buffers: list[bytes], which: int, position: int, bit: int, byte: int | None) -> bytes:
    data = bytearray(buffers[which % len(buffers)])
    if not data:
        return bytes([bit])
    index = position % len(data)
    if byte is None:
        data[index] ^= 1 << (bit % 8)
    else:
        data[index] = byte
    return bytes(data)


_mutation = (st.integers(0, 1 << 20), st.integers(0, 1 << 24), st.integers(0, 7), st.none() | st.integers(0, 255))


def _decoder_random(noise: bytes) -> None:
    decoder_case(noise)


def _decoder_mutated(buffers: list[bytes], which: int, position: int, bit: int, byte: int | None) -> None:
    decoder_case(mutate(buffers, which, position, bit, byte))


@FAST
@given(st.binary(min_size=1, max_size=512))
def test_random_bytes_decode_or_fault(noise: bytes) -> None:
    _decoder_random(noise)
    assert_clean("decoder")


def test_mutated_tour_buffers_run_or_fault(tour_buffers: list[bytes]) -> None:
    @FAST
    @given(*_mutation)
    def case(which: int, position: int, bit: int, byte: int | None) -> None:
        _decoder_mutated(tour_buffers, which, position, bit, byte)

    case()
    assert_clean("decoder")


@pytest.mark.slow
def test_mutated_tour_buffers_run_or_fault_large_budget(tour_buffers: list[bytes]) -> None:
    @SLOW
    @given(*_mutation)
    def case(which: int, position: int, bit: int, byte: int | None) -> None:
        _decoder_mutated(tour_buffers, which, position, bit, byte)

    case()
    assert_clean("decoder")


# --- scenario -----------------------------------------------------------------------------------------------------

KEYS = [
    "seed",
    "name",
    "adapter.vram",
    "adapter.cpu_visible",
    "adapter.aperture",
    "adapter.system_memory",
    "adapter.page_table_levels",
    "adapter.paging_buffer",
    "adapter.paging_buffer_segment",
    "adapter.policy",
    "adapter.driver_model",
    "adapter.dual_pte",
    "adapter.vram_kept",
    "workload.processes",
    "workload.frames",
    "workload.oversubscription",
    "workload.access",
    "workload.tiles",
    "workload.tile_pool",
    "workload.power",
    "workload.sizes.min",
    "workload.sizes.max",
    "workload.sizes.distribution",
    "workload.working_set",
    "workload.persistent_locks",
    "workload",
    "adapter",
    "adapter.vram.x",
    "nope",
]
_toml_scalar = st.one_of(
    st.integers(-(1 << 70), 1 << 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(["64MiB", "1PiB", "0", "-1", "lru", "wddm1", "wddm2", "9,9", "", "aperture", "1e400"]),
    st.text(max_size=12),
)
_values = st.one_of(_toml_scalar, st.lists(st.integers(-3, 40), max_size=8))


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(value), repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def scenario_case(pairs: list[tuple[str, object]], raw: str) -> None:
    """A scenario file and ``--set`` values: checked into a configuration or refused by a ConfigurationError."""
    with campaign.case("scenario") as box:
        text = "\n".join(f"{k} = {_toml(v)}" for k, v in pairs) + "\n" + raw
        try:
            loads(text, name="fuzz")
            box.append(Outcome.ACCEPTED)
        except WddmsimError:
            box.append(Outcome.REFUSED)
        try:
            overrides = dict(parse_override(f"{k}={_toml(v)}") for k, v in pairs)
            catalog.load("default", overrides)
            box.append(Outcome.ACCEPTED)
        except WddmsimError:
            box.append(Outcome.REFUSED)


@FAST
@given(st.lists(st.tuples(st.sampled_from(KEYS), _values), max_size=5), st.text(max_size=30))
def test_random_scenario_documents_are_checked_or_refused(pairs: list[tuple[str, object]], raw: str) -> None:
    scenario_case(pairs, raw)
    assert_clean("scenario")


@pytest.mark.slow
@SLOW
@given(st.lists(st.tuples(st.sampled_from(KEYS), _values), max_size=8), st.text(max_size=60))
def test_random_scenario_documents_are_checked_or_refused_large_budget(
    pairs: list[tuple[str, object]], raw: str
) -> None:
    scenario_case(pairs, raw)
    assert_clean("scenario")


# --- cli ------------------------------------------------------------------------------------------------------------

_tokens = st.sampled_from(
    [
        "--vram",
        "--paging-buffer",
        "--page-table-levels",
        "--policy",
        "--set",
        "--seed",
        "--frames",
        "--processes",
        "--oversubscription",
        "--access",
        "--driver-model",
        "--base",
        "--scenario",
        "--at",
        "--record",
        "--out",
        "--cpu-visible",
        "--aperture",
        "-h",
        "--list",
        "0",
        "-1",
        "zz",
        "64MiB",
        "1PiB",
        "4KiB",
        "9,9",
        "wddm1",
        "lru",
        "tour",
        "residency",
        "stress",
        "0x1001000",
        "workload.frames=x",
        "adapter.vram=[1]",
        "/nonexistent/x",
        "99999999999999999999999",
        "1e999",
        "",
    ]
)
_commands = st.sampled_from([["run"], ["run", "tour"], ["replay"], ["disasm"], ["vm-decode"], ["inspect"], []])
# A run that starts is kept small: the campaign is about what the command line does with its input.
_SMALL_RUN = ["--frames", "1", "--processes", "1", "--vram", "16MiB", "--cpu-visible", "4MiB"]


def cli_case(command: list[str], tokens: list[str]) -> None:
    args = command + tokens
    if command == ["run"]:
        args = command + _SMALL_RUN + tokens
    campaign.record("cli", cli_outcome(args))


@FAST
@given(_commands, st.lists(_tokens | st.text(max_size=8), max_size=5))
def test_random_argument_vectors_exit_0_1_or_2_without_a_traceback(command: list[str], tokens: list[str]) -> None:
    cli_case(command, tokens)
    assert_clean("cli")


@pytest.mark.slow
@SLOW
@given(_commands, st.lists(_tokens | st.text(max_size=8), max_size=8))
def test_random_argument_vectors_large_budget(command: list[str], tokens: list[str]) -> None:
    cli_case(command, tokens)
    assert_clean("cli")


# --- replay ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trace_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    path = tmp_path_factory.mktemp("fuzz") / "calls.jsonl"
    overrides = {"workload.frames": 1, "workload.processes": 1, "adapter.vram": "16MiB", "adapter.cpu_visible": "4MiB"}
    with path.open("w") as f:
        run_scenario(catalog.load("default", overrides), record=f)
    return path.read_text().splitlines(keepends=True)


_junk = st.one_of(
    st.none(),
    st.integers(-(1 << 70), 1 << 70),
    st.text(max_size=6),
    st.booleans(),
    st.just([]),
    st.just({}),
    st.sampled_from(["A99", "D99", "Q99", "V99", "S99", "P99", {"fence": 10**9}, {"va": "V99", "offset": 0}]),
)


def mutate_trace(lines: list[str], how: int, where: int, key_pick: int, junk: object) -> str:
    lines = list(lines)
    index = where % len(lines)
    if how == 0:  # cut at a line boundary
        return "".join(lines[:index])
    if how == 1:  # cut mid-line
        text = "".join(lines)
        return text[: where % len(text)]
    record = json.loads(lines[index])
    target = record
    for _ in range(3):  # descend into a nested table now and then
        tables = [k for k, v in target.items() if isinstance(v, dict)]
        if not tables or key_pick % 3 == 0:
            break
        target = target[tables[key_pick % len(tables)]]
        key_pick //= 3
    keys = sorted(target)
    if how == 2 and keys:  # a field of another type, or an unknown handle
        target[keys[key_pick % len(keys)]] = junk
    elif how == 3 and keys:  # a field missing
        del target[keys[key_pick % len(keys)]]
    else:  # a line duplicated
        lines.insert(index, lines[index])
        return "".join(lines)
    lines[index] = json.dumps(record) + "\n"
    return "".join(lines)


def replay_case(tmp: Path, lines: list[str], how: int, where: int, key_pick: int, junk: object) -> None:
    path = tmp / "mutated.jsonl"
    path.write_text(mutate_trace(lines, how, where, key_pick, junk))
    campaign.record("replay", cli_outcome(["replay", str(path)]))


_replay_mutation = (st.integers(0, 4), st.integers(0, 1 << 20), st.integers(0, 1 << 20), _junk)


def test_mutated_traces_replay_or_are_refused(trace_lines: list[str], tmp_path: Path) -> None:
    @FAST
    @given(*_replay_mutation)
    def case(how: int, where: int, key_pick: int, junk: object) -> None:
        replay_case(tmp_path, trace_lines, how, where, key_pick, junk)

    case()
    assert_clean("replay")


@pytest.mark.slow
def test_mutated_traces_replay_or_are_refused_large_budget(trace_lines: list[str], tmp_path: Path) -> None:
    @SLOW
    @given(*_replay_mutation)
    def case(how: int, where: int, key_pick: int, junk: object) -> None:
        replay_case(tmp_path, trace_lines, how, where, key_pick, junk)

    case()
    assert_clean("replay")
