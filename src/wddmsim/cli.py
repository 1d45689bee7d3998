"""The command line: ``wddmsim run | replay | inspect | disasm | vm-decode | bench | check-driver | include-dir |
reproduce | sweep | plot | import``.  Thin: parse, render.

Scenarios live in :mod:`wddmsim.scenarios`, views and the files of ``--out`` in :mod:`wddmsim.viz`.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from wddmsim import __version__
from wddmsim.core.blame import user_code
from wddmsim.core.errors import ConfigurationError, WddmsimError
from wddmsim.core.units import format_size, parse_size
from wddmsim.drivers.package import DriverModel, DriverPackage
from wddmsim.drivers.registry import driver_package
from wddmsim.scenarios.demos import SCENARIOS as DEMOS
from wddmsim.scenarios.demos import demo_config
from wddmsim.system import Adapter, SystemConfig
from wddmsim.vidmm.policy import registry as policies
from wddmsim.viz.terminal import plain, shown, terminal

if TYPE_CHECKING:  # loaded only by the commands that use them (the CLI starts fast)
    from wddmsim.scenarios.config import ScenarioConfig
    from wddmsim.scenarios.runner import RunResult

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}

EXIT_FAILED = 1
"""A run failed, diverged from its recording or did not verify."""
TRACEBACK_VARIABLE = "WDDMSIM_TRACEBACK"
"""Set (to anything) in the environment, a fault in a user's own policy, client or driver shows its whole traceback
instead of one line (decision 0231)."""
EXIT_BAD_INPUT = 2
"""Bad input or configuration: nothing ran (decision 0047)."""

DEMO_OPTIONS = {
    "vram": "--vram",
    "local_size": "--vram",
    "paging_buffer": "--paging-buffer",
    "driver_model": "--driver-model",
    "driver": "--driver",
}
"""Settings of a demonstration (:func:`~wddmsim.scenarios.demos.demo_config`) -> the option that sets them."""


class _Path(click.Path):
    """``click.Path`` that refuses a NUL character as bad input (the OS would raise ``ValueError`` on it)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if "\x00" in str(value):
            self.fail(f"{value!r} contains a NUL character", param, ctx)
        return super().convert(value, param, ctx)


class _Cli(click.Group):
    """Every error is one line on stderr, ``error: ...``, and exit status 2 (usage) or 1 (decision 0047)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(EXIT_FAILED)
        except click.ClickException as error:
            click.echo(f"error: {_one_line(error.format_message())}", err=True)
            sys.exit(error.exit_code)
        except Exception as error:
            culprit = user_code(error)
            if culprit is None or os.environ.get(TRACEBACK_VARIABLE):
                raise  # wddmsim's own fault (or asked for): the whole traceback is the report
            click.echo(
                f"error: {shown(culprit)} raised {type(error).__name__}: {_one_line(str(error))} -- a fault in code "
                f"wddmsim loaded by name (a policy, client or driver), not in wddmsim; {TRACEBACK_VARIABLE}=1 "
                "shows the whole traceback",
                err=True,
            )
            sys.exit(EXIT_FAILED)


def _one_line(text: str) -> str:
    """``text`` shown (decision 0247) on one line: the controls escaped first, so that the ones Python counts as
    white space (``\\x0b``, ``\\x1c``-``\\x1f``, ``\\x85``) print as escapes, not as spaces; line breaks join."""
    return " ".join(shown(text).split())


def _size(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _config(
    driver_model: str | None, vram: int | None, paging_buffer: int | None, demo: str = "tour", driver: str | None = None
) -> SystemConfig:
    """The demonstration's adapter; a bad size is refused naming its option (exit 2)."""
    try:
        return demo_config(demo, driver_model, vram, paging_buffer, **({} if driver is None else {"driver": driver}))
    except ConfigurationError as error:
        _fail(_demo_error(error))


def _demo_error(error: ConfigurationError) -> ConfigurationError:
    """The error of a demonstration, naming the command-line option for its setting."""
    option = DEMO_OPTIONS.get(error.setting)
    if option is None:
        return error
    return ConfigurationError(option, error.value, error.rule)


_common = [
    click.option(
        "--driver-model",
        type=click.Choice([m.value for m in DriverModel]),
        help="Present the GPU as a WDDM 2.x GpuMmu driver or a WDDM 1.x segment-model driver (default: the driver "
        "package's own, wddm2 on the reference driver).",
    ),
    click.option("--vram", callback=_size, metavar="SIZE", help="Local video memory, e.g. 256MiB or 80GiB (sparse)."),
    click.option(
        "--paging-buffer", callback=_size, metavar="SIZE", help="PagingBufferSize the driver reports (default 64KiB)."
    ),
]


def _with_common(fn: Any) -> Any:
    for option in reversed(_common):
        fn = option(fn)
    return fn


_driver_option = click.option(
    "--driver", metavar="NAME", help="Driver package: reference (default), simple, or module:attribute; see run --list."
)


def _driver_package(name: str) -> DriverPackage:
    """The package ``--driver`` names; an unknown one is bad input (exit 2) naming ``--driver``, as on ``run``."""
    try:
        return driver_package(name, setting="--driver")
    except ConfigurationError as error:
        _fail(error)


_demo_option = click.option(
    "--scenario",
    type=click.Choice(sorted(DEMOS)),
    default="tour",
    show_default=True,
    help="The demonstration to run first.",
)


@click.group(cls=_Cli, context_settings=CONTEXT)
@click.version_option(__version__, prog_name="wddmsim")
def main() -> None:
    """wddmsim: the WDDM video-memory paging path, executable.

    Exit status: 0 ok, 1 a run failed, diverged from its recording or did not verify, 2 bad input or
    configuration (the error, one line on stderr, names the option or key, its value and the rule).

    VidMm places and moves allocations and asks a kernel-mode driver to encode every move as a paging buffer
    (DxgkDdiBuildPagingBuffer); a simulated GPU executes those bytes.

    \b
    Start here:
      wddmsim run                          processes over more than local memory, every byte verified
      wddmsim run --out out/               the same; summary, event log, trace and an HTML report in out/
      wddmsim run --list                   the built-in scenarios and every setting
      wddmsim run tour                     every paging operation driven directly, each result checked
      wddmsim inspect out/ --at 2000       the segment maps after event 2000 of that run
      wddmsim replay trace.jsonl --policy lru    a recorded run under another policy
      wddmsim disasm                       the paging buffers of the tour, packet by packet
      wddmsim vm-decode 0x1001000          a GPU VA walked level by level
      wddmsim bench --list                 the benchmarks and their goals
      wddmsim include-dir                  the C headers for building your own driver (-I)
      wddmsim check-driver LIB.so          the conformance run of your driver's paging buffers
      wddmsim sweep --grid policy=lru,arc --seeds 5 --out sweep/    a grid of runs in parallel, one table
      wddmsim plot sweep/                  a sweep's figures (PNG, SVG) and its report.html
      wddmsim import gpgmm CAPTURE.json -o app.toml    a real application's allocations as a scenario

    Each command has its own --help with examples.
    """


def _run_demo(
    name: str,
    seed: int,
    driver_model: str | None,
    vram: int | None,
    paging_buffer: int | None,
    out: Path | None,
    driver: str | None = None,
) -> NoReturn:
    """``wddmsim run tour`` / ``run residency``: the demonstrations that are not workloads."""
    from wddmsim.scenarios.demos import run_scenario as run_demo
    from wddmsim.viz.capture import PagingCapture
    from wddmsim.viz.console import checks_table, statistics_table
    from wddmsim.viz.eventlog import records
    from wddmsim.viz.outputs import recorder, run_summary, write_outputs
    from wddmsim.viz.summary import statistics

    console = terminal()
    captures: list[PagingCapture] = []
    try:
        result = run_demo(
            name,
            _config(driver_model, vram, paging_buffer, demo=name, driver=driver),
            seed=seed,
            on_adapter=(lambda adapter: captures.append(recorder(adapter))) if out is not None else None,
        )
    except ConfigurationError as error:
        _fail(_demo_error(error))
    except WddmsimError as error:
        _fail(error, EXIT_FAILED)
    adapter = result.adapter
    model = adapter.config.driver.model.value
    console.print(
        checks_table(
            f"wddmsim {name} ({model}, {format_size(adapter.gpu.config.local_size)} local memory)", result.result.checks
        )
    )
    if out is not None:
        try:
            written = write_outputs(out, adapter, run_summary(result), capture=captures[0] if captures else None)
        except OSError as error:
            _fail(ConfigurationError("--out", str(out), f"cannot be written: {error.strerror}"))
        console.print(statistics_table(written.values))
        _print_wrote(console, written)
    else:
        console.print(statistics_table(statistics(records(adapter.events))))
    checks = result.result.checks
    verdict = "[bold green]verified[/]" if result.verified else "[bold red]VERIFICATION FAILED[/]"
    console.print(f"{verdict}: {sum(c.ok for c in checks)}/{len(checks)} checks passed")
    sys.exit(0 if result.verified else 1)


class _RecordFile(io.TextIOWrapper):
    """The ``--record`` file.  It remembers the ``OSError`` its own writes raised: that failure, and only that one,
    is reported as ``--record``'s; an ``OSError`` from anywhere else in the run is a fault like any other."""

    failure: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as error:
            self.failure = error
            raise

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as error:
            self.failure = error
            raise


def _open_record(path: Path) -> _RecordFile:
    """The ``--record`` file, opened before the run starts (a path that cannot be written is bad input)."""
    try:
        return _RecordFile(path.open("wb"), encoding="utf-8")
    except OSError as error:
        _fail(ConfigurationError("--record", str(path), f"cannot be written: {error.strerror}"))


def _close_record(trace: Any, path: Path | None) -> None:
    try:
        trace.close()
    except OSError as error:  # the last lines are flushed here
        _fail(ConfigurationError("--record", str(path), f"cannot be written: {error.strerror}"))


def _write(
    out: Path, adapter: Adapter, summary: dict[str, Any], console: Console, capture: Any = None, frames: Any = None
) -> None:
    from wddmsim.viz.outputs import write_outputs

    try:
        written = write_outputs(out, adapter, summary, capture=capture, frames=frames)
    except OSError as error:
        _fail(ConfigurationError("--out", str(out), f"cannot be written: {error.strerror}"))
    _print_wrote(console, written)


def _print_wrote(console: Console, written: Any, note: str = "") -> None:
    """Where ``--out`` wrote: paths under the user's directory, brackets, escapes and all, printed as text."""
    paths = f"{written.summary}, {written.events}, {written.trace} and {written.report}"
    console.print(plain(f"wrote {paths}{note}"), soft_wrap=True)  # a path cut in two at the width is not one to copy


def _print_header(console: Console, config: ScenarioConfig, overrides: dict[str, object]) -> None:
    """The scenario's name and description -- which speaks of its own settings, so the ones the command line
    changed follow it: a run of ``default --frames 60`` does not read as 12 frames."""
    name = plain(config.name, "bold")  # a name or description is text as written, never markup
    console.print(Text.assemble(name, ": ", plain(config.description)) if config.description else name)
    if overrides:
        changed = ", ".join(f"{key}={_setting_text(key, value)}" for key, value in overrides.items())
        console.print(plain(f"  changed here: {changed}", "dim"))


_SIZE_KEYS = frozenset({"adapter.vram", "adapter.cpu_visible", "adapter.aperture", "adapter.paging_buffer"})


def _setting_text(key: str, value: object) -> str:
    """A setting as the user would write it: sizes with their unit."""
    if key in _SIZE_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return format_size(value).replace(" ", "")
    return str(value)


def _overrides(options: dict[str, object], settings: tuple[str, ...]) -> dict[str, object]:
    """Dotted-key overrides from the options given (None: not given) and ``--set KEY=VALUE``."""
    from wddmsim.scenarios.config import parse_override

    keys = {
        "seed": "seed",
        "driver_model": "adapter.driver_model",
        "driver": "adapter.driver",
        "vram": "adapter.vram",
        "cpu_visible": "adapter.cpu_visible",
        "aperture": "adapter.aperture",
        "paging_buffer": "adapter.paging_buffer",
        "page_table_levels": "adapter.page_table_levels",
        "policy": "adapter.policy",
        "placement": "adapter.placement",
        "processes": "workload.processes",
        "frames": "workload.frames",
        "oversubscription": "workload.oversubscription",
        "access": "workload.access",
    }
    out: dict[str, object] = {keys[k]: v for k, v in options.items() if v is not None}
    for text in settings:
        key, value = parse_override(text)
        out[key] = value
    return out


OPTION_KEYS = {"adapter.vram": "vram", "adapter.driver": "driver", "adapter.driver_model": "driver_model"}
"""Settings whose errors name the command-line option when it was given (decision 0048: ``--vram``)."""


def _option_error(error: ConfigurationError, options: dict[str, object]) -> ConfigurationError:
    """``error`` naming the option the user typed (``--vram``) rather than the setting it overrides."""
    option = OPTION_KEYS.get(error.setting)
    if option is None or options.get(option) is None:
        return error
    return ConfigurationError(f"--{option.replace('_', '-')}", error.value, error.rule)


def _levels(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        return [int(v) for v in value.split(",")]
    except ValueError:
        raise click.BadParameter(f"{value!r}: index bits per level, leaf first, e.g. 9,9,9,9") from None


_adapter_options = [
    click.option("--vram", callback=_size, metavar="SIZE", help="Local video memory, e.g. 64MiB (sparse)."),
    click.option("--cpu-visible", callback=_size, metavar="SIZE", help="The part of local memory behind the BAR."),
    click.option("--aperture", callback=_size, metavar="SIZE", help="The aperture (GART) segment."),
    click.option("--paging-buffer", callback=_size, metavar="SIZE", help="PagingBufferSize (DMA buffer size)."),
    click.option(
        "--page-table-levels",
        callback=_levels,
        metavar="BITS",
        help="GpuMmu index bits per level, leaf first: 9,9,9,9.",
    ),
    click.option(
        "--policy",
        metavar="NAME",
        help=f"Eviction policy: {policies.names(policies.EVICTION)}, or module:Class of your own (see --list); "
        "opt (clairvoyant) runs the scenario under the default policy first to learn its future.",
    ),
    click.option(
        "--placement",
        metavar="NAME",
        help=f"Placement policy: {policies.names(policies.PLACEMENT)}, or module:Class (see --list).",
    ),
    click.option(
        "--set",
        "settings",
        multiple=True,
        metavar="KEY=VALUE",
        help="Any setting by its dotted key, e.g. workload.tiles=16 (repeatable; see `wddmsim run --list`).",
    ),
]


def _with(options: list[Any]) -> Callable[[Any], Any]:
    def apply(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return apply


def _fail(error: Exception, status: int = EXIT_BAD_INPUT) -> NoReturn:
    """One line on stderr (never wrapped, never coloured: scripts read it), then exit.  The message quotes values a
    user chose: what a terminal would act on in them is shown escaped (decision 0247)."""
    click.echo(f"error: {_one_line(str(error))}", err=True)
    sys.exit(status)


def _list_scenarios(console: Console) -> None:
    from wddmsim.scenarios import catalog
    from wddmsim.scenarios.config import describe_settings

    table = Table(title="built-in scenarios (wddmsim run NAME)", title_justify="left")
    table.add_column("name")
    table.add_column("what it shows")
    for name, description in catalog.describe():
        table.add_row(plain(name), plain(description))
    for name, demo in DEMOS.items():
        table.add_row(plain(name), plain(demo.summary))
    console.print(table)
    settings = Table(title="settings (TOML keys; --set KEY=VALUE)", title_justify="left")
    settings.add_column("key")
    settings.add_column("default")
    settings.add_column("meaning")
    for key, default, doc in describe_settings():
        settings.add_row(plain(key), plain(default), plain(doc))
    console.print(settings)
    _list_policies(console)
    _list_drivers(console)


def _list_policies(console: Console) -> None:
    """The registered policies (the registry is the one list; ``module:Class`` names one of your own)."""
    table = Table(title="policies (--policy NAME, --placement NAME; or module:Class)", title_justify="left")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("what it does")
    for kind, entries in (("eviction", policies.EVICTION), ("placement", policies.PLACEMENT)):
        for name in sorted(entries):
            default = name in (policies.DEFAULT_EVICTION, policies.DEFAULT_PLACEMENT)
            table.add_row(kind, plain(name + " (default)" * default), plain(entries[name].summary))  # a plugin's words
    console.print(table)


def _list_drivers(console: Console) -> None:
    from wddmsim.drivers.registry import described

    table = Table(title="driver packages (--driver NAME, adapter.driver; or module:attribute)", title_justify="left")
    table.add_column("name")
    table.add_column("what it is")
    for name, description in described():
        table.add_row(plain(name), plain(description))  # an installed package's own words, as written
    console.print(table)


@main.command(context_settings=CONTEXT)
@click.argument("scenario", required=False)
@click.option("--seed", type=int, help="Seed of the workload (same seed, same event log).")
@click.option(
    "--driver", metavar="NAME", help="Driver package: reference (default), simple, or module:attribute; see --list."
)
@click.option(
    "--driver-model",
    type=click.Choice([m.value for m in DriverModel]),
    help="Present the GPU as a WDDM 2.x GpuMmu driver or a WDDM 1.x segment-model driver (default: the driver "
    "package's own, wddm2 on the reference driver; a model the package cannot present is refused).",
)
@_with(_adapter_options)
@click.option("--processes", type=int, help="Processes sharing the GPU.")
@click.option("--frames", type=int, help="Frames each process runs.")
@click.option("--oversubscription", type=float, help="Bytes of all resources / local memory, e.g. 2.5.")
@click.option("--access", help="Access pattern: hot-cold, sequential, random or streaming.")
@click.option(
    "--out",
    type=_Path(file_okay=False, path_type=Path),
    help="Write summary.json, events.jsonl, trace.json, report.html and frames.csv into this directory.",
)
@click.option(
    "--record",
    type=_Path(dir_okay=False, path_type=Path),
    help="Record every user-mode call to this JSON-lines trace (for `wddmsim replay`).",
)
@click.option("--list", "list_only", is_flag=True, help="List the built-in scenarios and every setting.")
def run(
    scenario: str | None,
    out: Path | None,
    record: Path | None,
    list_only: bool,
    settings: tuple[str, ...],
    **options: Any,
) -> None:
    """Run a workload scenario and verify every byte it wrote.

    SCENARIO is a built-in name (default, stress, uploads, tiles, focus-loss, newcomer, careless -- see --list),
    a TOML file, or one of the demonstrations `tour` (every paging operation driven directly) and `residency`.
    Without it, the built-in
    default: several processes run a frame loop over textures and buffers whose total exceeds local memory --
    residency, locks, GPU work through VAs, eviction, the aperture -- then every byte is read back and compared
    with a reference model.  Options override the scenario's settings.

    \b
    With --out DIR:
      summary.json   verified, and counters named as in D3DKMT_QUERYSTATISTICS (BytesFilled,
                     BytesTransferredFromMdlToMemory, evictions by cause, ...), paging buffers, passes
      events.jsonl   one event per line, DxgKrnl ETW names (ReportSegment, PagingOpTransfer, VidMmEvict, ...)
      trace.json     Chrome trace format: open it in https://ui.perfetto.dev or chrome://tracing
      report.html    one offline page: occupancy, traffic, evictions, segment maps, page tables, disassembly
      frames.csv     one row per frame: bytes paged in and out, paging stall, faults, evictions, residency

    \b
    Examples:
      wddmsim run
      wddmsim run stress --seed 3 --out out/
      wddmsim run --driver-model wddm1 --oversubscription 3 --policy lru
      wddmsim run --policy opt --out out/      the clairvoyant policy (the scenario runs twice)
      wddmsim run my-scenario.toml --set workload.frames=20 --record trace.jsonl
      wddmsim run tour --vram 80GiB

    Exit status 0 when everything verified, 1 when a check failed, 2 when the run could not start or complete.
    """
    console = terminal()
    if list_only:
        _list_scenarios(console)
        return
    if scenario in DEMOS:
        _run_demo_with(scenario, options, settings, record, out)
    config = _load_scenario(scenario, options, settings)
    trace = None if record is None else _open_record(record)
    _print_header(console, config, _overrides(options, settings))
    stream = None if out is None else _open_outputs(out)
    result, (metrics, frames) = _run_recorded(config, console, trace, record, stream)
    _print_results(console, result, record)
    _print_research(console, metrics)
    if stream is not None:
        _finish_outputs(stream, result.adapter, {**result.summary(), **metrics}, console, frames)
    _print_verdict(console, result)
    sys.exit(0 if result.verified else 1)


def _run_demo_with(
    scenario: str, options: dict[str, Any], settings: tuple[str, ...], record: Path | None, out: Path | None
) -> NoReturn:
    """``wddmsim run tour|residency``: a demonstration takes the adapter's options only."""
    allowed = ("driver_model", "driver", "vram", "paging_buffer", "seed")
    extra = [k for k, v in options.items() if v is not None and k not in allowed]
    if extra or settings or record is not None:
        given = [f"--{k.replace('_', '-')}" for k in extra] + ["--set"] * bool(settings) + ["--record"] * bool(record)
        _fail(
            click.UsageError(
                f"{', '.join(given)}: the {scenario} demonstration takes --driver-model, --vram, --paging-buffer "
                "and --seed only (and --driver, its driver package)"
            ),
        )
    _run_demo(
        scenario,
        options["seed"] or 0,
        options["driver_model"],
        options["vram"],
        options["paging_buffer"],
        out,
        options["driver"],
    )


def _load_scenario(scenario: str | None, options: dict[str, Any], settings: tuple[str, ...]) -> ScenarioConfig:
    """The scenario named (built-in or a TOML file) with the options and ``--set`` overrides applied; a bad one
    exits with status 2, naming the option or setting."""
    from wddmsim.scenarios import catalog

    try:
        return catalog.load(scenario, _overrides(options, settings))
    except ConfigurationError as error:
        _fail(_option_error(error, options))
    except WddmsimError as error:
        _fail(error)


def _open_outputs(out: Path) -> Any:
    """The ``--out`` files, opened before the run (a directory that cannot be written is bad input)."""
    from wddmsim.viz.outputs import OutputStream

    try:
        return OutputStream(out)
    except OSError as error:
        _fail(ConfigurationError("--out", str(out), f"cannot be written: {error.strerror}"))


def _finish_outputs(stream: Any, adapter: Adapter, summary: dict[str, Any], console: Console, frames: Any) -> None:
    try:
        written = stream.finish(adapter, summary, frames=frames)
    except OSError as error:
        _fail(ConfigurationError("--out", str(stream.out), f"cannot be written: {error.strerror}"))
    _print_wrote(console, written)


class _Rate:
    """The progress bar's text: what is being done, frames done, and simulated events per second of wall time."""

    def __init__(self) -> None:
        self.adapter: Adapter | None = None
        self.began = time.monotonic()

    def text(self, what: str) -> str:
        events = self.adapter.events.emitted if self.adapter is not None else 0
        rate = events / max(time.monotonic() - self.began, 1e-9)
        return f"{what} · {events:,} events · {rate:,.0f} events/s"


def _run_recorded(
    config: ScenarioConfig, console: Console, trace: _RecordFile | None, record: Path | None, stream: Any
) -> tuple[RunResult, tuple[dict[str, Any], Any]]:
    """Run the scenario (a progress bar on a terminal: frames done, events per second), recording its calls to
    ``trace`` (the ``--record`` file, closed at the end) and streaming what ``--out`` writes to ``stream`` as the
    run goes; returns the result and the research metrics against the run's reference string with its frames
    (decisions 0146, 0157).  The adapter keeps no event: every consumer is a fold (decision 0189).  A run that
    cannot complete exits with status 2 (bad input) or 1 (a check failed on the way)."""
    from wddmsim.research.runs import measured_run

    measured: list[tuple[dict[str, Any], Any]] = []

    def run_scenario(config: ScenarioConfig, **kwargs: Any) -> RunResult:
        run = measured_run(config, **kwargs)
        measured.append((run.metrics, run.frames))
        return run.result

    adapters: list[Adapter] = []
    rate = _Rate()

    def attach(adapter: Adapter) -> None:
        adapters.append(adapter)
        rate.adapter = adapter
        if stream is not None:
            from wddmsim.viz.outputs import recorder  # only with --out: a plain run need not import the writers

            stream.capture = recorder(adapter)
            stream.attach(adapter)
        adapter.events.stop_keeping()

    try:
        if console.is_terminal:
            from rich.progress import Progress  # only a terminal shows the bar

            with Progress(transient=True, console=console) as bar:
                task = bar.add_task("running", total=1)

                def progress(done: int, total: int, what: str) -> None:
                    bar.update(task, completed=done, total=total, description=rate.text(what))

                result = run_scenario(config, progress=progress, record=trace, on_adapter=attach)
        else:
            result = run_scenario(config, record=trace, on_adapter=attach)
    except ConfigurationError as error:
        _abandon(stream)
        _fail(error)
    except WddmsimError as error:
        if stream is not None and adapters:
            _write_failed(stream, adapters[0], config, error, console)
        _abandon(stream)
        _fail(error, EXIT_FAILED)
    except OSError as error:
        if trace is None or trace.failure is not error:  # not the --record file's: a fault like any other
            _write_stopped(stream, adapters, config, error, console)
            raise
        _abandon(stream)  # the --record file stopped taking the trace (a full disk, /dev/full)
        _fail(ConfigurationError("--record", str(record), f"cannot be written: {error.strerror}"))
    except BaseException as error:  # a fault in user code, an interrupt: --out still says the run stopped (0238)
        _write_stopped(stream, adapters, config, error, console)
        raise  # the command line reports it as before (one line, or the whole traceback), same exit status
    finally:
        if trace is not None:
            if sys.exc_info()[1] is None:
                _close_record(trace, record)
            else:  # the run's own failure is the one reported, not a second one of the record file's
                with contextlib.suppress(OSError):
                    trace.close()
    return result, measured[0]


def _abandon(stream: Any) -> None:
    """Close the ``--out`` files of a run that could not start or complete (what was written stays)."""
    if stream is not None:
        stream.close()


def _write_failed(stream: Any, adapter: Adapter, config: ScenarioConfig, error: Exception, console: Console) -> None:
    """A run that could not complete still leaves its event log in ``--out`` (a ``VidMmNoRoom`` event says why
    VidMm could not make room, decision 0158: ``wddmsim inspect`` shows it)."""
    _finish_outputs(stream, adapter, _stopped_summary(config, error, "failed"), console, None)


def _stopped_summary(config: ScenarioConfig, error: BaseException, stopped: str) -> dict[str, Any]:
    """``summary.json`` of a run that did not complete (decision 0238): ``completed`` false, ``stopped`` says how
    (``failed``: wddmsim refused to go on; ``user code``: a fault in a policy, client or driver loaded by name;
    ``interrupted``; ``exited``: code the run called raised ``SystemExit``; ``internal error``: wddmsim's own
    fault), ``error`` the exception's text."""
    return {
        "verified": False,
        "completed": False,
        "stopped": stopped,
        "scenario": config.name,
        "seed": config.seed,
        "driver_model": config.adapter.driver_model,
        "policy": config.adapter.policy,
        "error": str(error) if stopped == "failed" else f"{type(error).__name__}: {error}",
        "config": config.to_dict(),
    }


def _write_stopped(
    stream: Any, adapters: list[Adapter], config: ScenarioConfig, error: BaseException, console: Console
) -> None:
    """Finish the ``--out`` files of a run that stopped on an exception the command line reports itself: every file
    closed and valid as far as the run went, ``summary.json`` saying it did not complete.  Writing them never hides
    the exception: a second failure here only closes the files."""
    if stream is None:
        return
    if not adapters:
        stream.close()
        return
    if isinstance(error, KeyboardInterrupt):
        stopped = "interrupted"
    elif isinstance(error, SystemExit):  # code the run called asked the process to exit: its status stands
        stopped = "exited"
    elif isinstance(error, Exception) and user_code(error) is not None:
        stopped = "user code"
    else:
        stopped = "internal error"
    try:
        written = stream.finish(adapters[0], _stopped_summary(config, error, stopped))
    except Exception:  # the run's own exception is the one to report; close() leaves trace.json valid
        stream.close()
        return
    _print_wrote(console, written, " (the run stopped)")


def _print_results(console: Console, result: RunResult, record: Path | None) -> None:
    """The checks, the paging traffic, and where the calls were recorded."""
    from wddmsim.viz.runs import checks_table, traffic_table

    console.print(checks_table(result))
    console.print(traffic_table(result.traffic))
    if record is not None:
        console.print(plain(f"recorded the user-mode calls to {record} (wddmsim replay {record} --policy lru ...)"))


def _print_research(console: Console, metrics: dict[str, Any]) -> None:
    """The research metrics in one short table (decision 0157)."""
    from wddmsim.viz.runs import research_table

    console.print(research_table(metrics))


def _print_verdict(console: Console, result: RunResult) -> None:
    failed = sum(not c.ok for c in result.checks)
    if result.verified:
        console.print(f"[bold green]verified[/]: {len(result.checks)} checks passed")
    else:
        console.print(f"[bold red]VERIFICATION FAILED[/]: {failed} of {len(result.checks)} checks failed")


@main.command(context_settings=CONTEXT)
@click.argument("trace", type=_Path(exists=True, dir_okay=False, path_type=Path))
@_with(_adapter_options)
@click.option(
    "--out",
    type=_Path(file_okay=False, path_type=Path),
    help="Write the replay's summary.json, events.jsonl and frames.csv here.",
)
@click.option(
    "--driver",
    metavar="NAME",
    help="Driver package to replay on (default: the recorded one); it must share the recorded user-mode driver.",
)
def replay(trace: Path, out: Path | None, settings: tuple[str, ...], **options: Any) -> None:
    """Re-run a recorded call trace under another policy or configuration; print what changed.

    TRACE is a file `wddmsim run --record` wrote.  The replay issues the same user-mode calls, in the same order,
    on an adapter configured as recorded except for the options given, and prints the difference in paging
    traffic (bytes paged in and out, evictions by cause, paging buffers ...) between the recorded run and the
    replay.  Every CPU read is compared with the recording: content must survive any policy.

    \b
    Examples:
      wddmsim run stress --record trace.jsonl && wddmsim replay trace.jsonl --policy lru
      wddmsim replay trace.jsonl --vram 48MiB --out out/
      wddmsim replay trace.jsonl --policy opt --out out/
      wddmsim replay trace.jsonl --paging-buffer 8KiB
      wddmsim replay trace.jsonl --driver mypkg.drivers:WRAPPED

    Exit status 0 when every read matched and the calls returned as recorded, 1 when a read differed or the
    replay diverged (without options: any call that returned otherwise; with options, which may change results:
    a call that succeeded when recorded and is now refused), 2 when the trace could not be replayed.
    """
    from wddmsim.research.frames import FrameMarks
    from wddmsim.research.runs import observed_replay, run_research
    from wddmsim.scenarios.callfmt import TraceFormatError
    from wddmsim.scenarios.replay import read_trace
    from wddmsim.viz.runs import replay_table

    console = terminal()
    overrides = _overrides_or_fail(options, settings)
    try:
        recorded = read_trace(trace)
        marks = FrameMarks()
        result, refs, clairvoyance = observed_replay(recorded, overrides, marks=marks)
    except ConfigurationError as error:  # --driver named as on run; other settings keep their dotted keys
        _fail(_option_error(error, {"driver": options.get("driver")}))
    except TraceFormatError as error:
        _fail(error)
    except WddmsimError as error:
        _fail(error, EXIT_FAILED)
    console.print(
        plain(f"replayed {result.calls} calls of {trace} ({recorded.config.name}, seed {recorded.config.seed})")
    )
    if result.difference():
        console.print(replay_table(result))
    else:
        console.print("[bold]no difference[/] in paging traffic from the recorded run")
    if result.identical_events:
        console.print("the event log is identical to the recorded run's")
    if result.differing:
        console.print(f"{result.differing} call(s) returned otherwise than recorded, e.g.:")
        for line in result.examples[:5]:
            console.print(plain(f"  {line}"))
    verdict = "[bold green]content preserved[/]" if result.content_preserved else "[bold red]CONTENT DIFFERS[/]"
    console.print(f"{verdict}: {result.reads - result.reads_differing}/{result.reads} CPU reads match the recording")
    metrics, frames = run_research(
        result.adapter.events, refs, marks, window=result.config.research.thrash_window, clairvoyance=clairvoyance
    )
    _print_research(console, metrics)
    if out is not None:
        summary = {
            "verified": result.content_preserved,
            "scenario": recorded.config.name,
            "replay_of": str(trace),
            "config": result.config.to_dict(),
            "traffic": result.traffic,
            "recorded_traffic": result.recorded,
            "difference": {k: list(v) for k, v in result.difference().items()},
            **metrics,
        }
        _write(out, result.adapter, summary, console, frames=frames)
    failed = result.failures(overridden=bool(overrides))
    if failed:
        console.print(Text.assemble(("REPLAY DIVERGED", "bold red"), ": ", plain(failed)))
    sys.exit(0 if result.content_preserved and not failed else EXIT_FAILED)


def _overrides_or_fail(options: dict[str, object], settings: tuple[str, ...]) -> dict[str, object]:
    try:
        return _overrides(options, settings)
    except ConfigurationError as error:
        _fail(error)


@main.command(context_settings=CONTEXT)
@click.argument("run_dir", type=_Path(exists=True, file_okay=False, path_type=Path))
@click.option("--at", "at", type=int, help="Event index (0-based line of events.jsonl).  Default: the last event.")
@click.option(
    "--time", "time_ns", type=click.IntRange(min=0), help="Simulated time in ns: the last event at or before it."
)
@click.option("--segment", "segments", type=int, multiple=True, help="Only this segment (repeatable).")
@click.option("--rows", type=click.IntRange(min=1), default=40, show_default=True, help="Blocks listed per segment.")
@click.option("--width", type=click.IntRange(min=1), default=64, show_default=True, help="Cells of the segment bar.")
@click.option(
    "--driver",
    metavar="NAME",
    help="The driver package the run was made on: checked against RUN_DIR/summary.json (segment ids are the "
    "driver's own).",
)
@click.option(
    "--why-evicted",
    "why_evicted",
    metavar="HANDLE",
    help="Every eviction of this allocation (decimal or 0x...): who chose it and why (the policy and its reason).",
)
def inspect(
    run_dir: Path,
    at: int | None,
    time_ns: int | None,
    segments: tuple[int, ...],
    rows: int,
    width: int,
    driver: str | None,
    why_evicted: str | None,
) -> None:
    """Show the segment maps of a saved run at any event (after GPUView's segment viewer).

    RUN_DIR is a directory written by `wddmsim run --out`.  The maps are rebuilt from its events.jsonl:
    every range of every segment, who holds it (an allocation and its process, or a VidMm page table), the
    allocated and free totals, the largest free block, and the memory events before and after -- step with
    --at.

    \b
    Examples:
      wddmsim run --out out/ && wddmsim inspect out/
      wddmsim inspect out/ --at 2000 --segment 2
      wddmsim inspect out/ --time 500000
      wddmsim inspect out/ --driver simple --segment 1
      wddmsim inspect out/ --why-evicted 0x1130
    """
    from wddmsim.viz.eventlog import EventLogError, read_jsonl
    from wddmsim.viz.inspect import render
    from wddmsim.viz.segmap import SegmentReplay, index_at_time

    if driver is not None:
        _check_run_driver(run_dir, _driver_package(driver))
    path = run_dir / "events.jsonl"
    if not path.exists():
        raise click.BadParameter(f"{path} does not exist: write one with `wddmsim run --out DIR`", param_hint="RUN_DIR")
    try:
        log = read_jsonl(path)
    except EventLogError as error:
        raise click.BadParameter(str(error), param_hint="RUN_DIR") from None
    except OSError as error:  # a directory of that name, a file it may not read
        raise click.BadParameter(f"{path} cannot be read: {error.strerror}", param_hint="RUN_DIR") from None
    if not log:
        raise click.ClickException(f"{path} holds no events")
    if why_evicted is not None:
        _why_evicted(log, why_evicted)
        return
    if at is not None and time_ns is not None:
        raise click.BadParameter("give --at or --time, not both")
    index = len(log) - 1 if at is None else at
    if time_ns is not None:
        index = index_at_time(log, time_ns)
    if not 0 <= index < len(log):
        raise click.BadParameter(f"{index} is not an event of the log (0..{len(log) - 1})", param_hint="--at")
    replay = SegmentReplay(log)
    for segment in segments:
        if segment not in replay.segments:
            known = ", ".join(str(s) for s in sorted(replay.segments))
            raise click.BadParameter(f"{segment}: the run reported segments {known}", param_hint="--segment")
    console = terminal()
    console.print(render(replay, index, segments=segments, rows=rows, width=width))
    for number, record in enumerate(log[: index + 1]):
        if record["event"] == "VidMmNoRoom":  # why VidMm could not make room (decision 0158)
            console.print(Text.assemble(("no room", "bold red"), f" (event {number}): ", plain(record["Diagnosis"])))


def _why_evicted(log: list[dict[str, Any]], value: str) -> None:
    """``inspect --why-evicted HANDLE`` (decision 0140): a handle that is no allocation of the run is bad input."""
    from wddmsim.viz.why import known, render_why

    try:
        handle = int(value, 0)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a handle (decimal or 0x...)", param_hint="--why-evicted") from None
    if not known(log, handle):
        raise click.BadParameter(f"{value} is no allocation of this run", param_hint="--why-evicted")
    terminal().print(render_why(log, handle))


def _check_run_driver(run_dir: Path, package: DriverPackage) -> None:
    """``inspect --driver``: the run in ``run_dir`` was made on ``package`` (its summary.json says which; a run
    without one cannot be checked and is taken on trust).  Another package is bad input (exit 2)."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    config = summary.get("config") if isinstance(summary, dict) else None
    adapter = config.get("adapter") if isinstance(config, dict) else None
    recorded = adapter.get("driver") if isinstance(adapter, dict) else None
    if isinstance(recorded, str) and recorded != package.name:
        _fail(
            ConfigurationError("--driver", package.name, f"the run in {run_dir} was made on driver package {recorded}")
        )


@main.command(context_settings=CONTEXT)
@click.argument("file", required=False, type=_Path(exists=True, dir_okay=False, path_type=Path))
@_demo_option
@_with_common
@_driver_option
@click.option(
    "--base",
    default="0",
    callback=lambda c, p, v: _number(v, "--base"),
    help="Offset shown for the first byte of FILE.",
)
def disasm(
    file: Path | None,
    scenario: str,
    driver_model: str | None,
    vram: int | None,
    paging_buffer: int | None,
    driver: str | None,
    base: int,
) -> None:
    """Print paging buffers packet by packet (offset, length, opcode, fields).

    With FILE, disassemble its bytes.  Without, run a built-in scenario and print every paging buffer VidMm
    submitted, in order, with its fence -- each partial buffer of a multipass operation on its own.

    Exit status 2 when FILE is not a paging buffer (empty, or a packet that does not decode: what decoded is
    printed, then the error names the offset and the rule), or when the scenario cannot start.

    \b
    Examples:
      wddmsim disasm                       the tour's buffers (a multipass split at fence 12)
      wddmsim disasm --scenario residency
      wddmsim disasm --paging-buffer 4KiB  smaller buffers: more multipass splits
      wddmsim disasm buffer.bin --base 0x1000
    """
    from wddmsim.scenarios.demos import run_scenario
    from wddmsim.viz.capture import PagingCapture
    from wddmsim.viz.disasm import disassemble, render

    if file is not None:
        _disasm_file(file, base)
        return
    capture = PagingCapture()
    config = _config(driver_model, vram, paging_buffer, demo=scenario, driver=driver)
    try:
        run_scenario(scenario, config, on_adapter=capture.attach)
    except ConfigurationError as error:
        _fail(_demo_error(error))
    except WddmsimError as error:
        _fail(error, EXIT_FAILED)
    for b in capture.buffers:
        note = "  (ends mid-operation: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)" if b.split else ""
        click.echo(
            f"paging buffer fence {b.fence}: bytes [{b.start:#x}, {b.end:#x}), {b.operations} complete operation(s){note}"
        )
        click.echo(render(disassemble(b.data, b.start)))


def _disasm_file(file: Path, base: int) -> None:
    """Decision 0047: a file that is not a paging buffer is bad input (exit 2), after what did decode."""
    from wddmsim.viz.disasm import disassemble, render

    try:
        data = file.read_bytes()
    except OSError as error:
        _fail(ConfigurationError("FILE", str(file), f"cannot be read: {error.strerror}"))
    if not data:
        _fail(ConfigurationError("FILE", str(file), "is empty: a paging buffer holds at least one packet"))
    lines = disassemble(data, base)
    click.echo(render(lines))
    bad = [line for line in lines if line.text.startswith("!!")]
    if bad:
        reason = bad[0].text.removeprefix("!! invalid: ")
        _fail(ConfigurationError("FILE", str(file), f"is not a paging buffer: at offset {bad[0].offset:#x}: {reason}"))


def _number(value: str, option: str, *, bits: int = 64) -> int:
    """A non-negative integer of at most ``bits`` bits, decimal or 0x-prefixed."""
    try:
        number = int(value, 0)
    except ValueError:
        raise click.BadParameter(f"{value!r}: must be a number, e.g. 0x1001000", param_hint=option) from None
    if not 0 <= number < 1 << bits:
        raise click.BadParameter(f"{value!r}: must lie between 0 and 2**{bits} - 1", param_hint=option)
    return number


def _address(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    return _number(value, "VA")


@main.group("import", context_settings=CONTEXT)
def import_group() -> None:
    """Turn a captured allocation trace of a real application into a scenario (wddmsim run FILE replays it)."""


@import_group.command("gpgmm", context_settings=CONTEXT)
@click.argument("file", type=_Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--out", required=True, type=_Path(dir_okay=False, path_type=Path), help="The scenario file.")
@click.option(
    "--frames",
    type=click.IntRange(1, 100_000),
    default=12,
    show_default=True,
    help="Frames the capture's time span is cut into.",
)
@click.option("--name", help="The scenario's name (default: gpgmm-FILE).")
def import_gpgmm(file: Path, out: Path, frames: int, name: str | None) -> None:
    """A GPGMM capture (Chrome trace-event JSON) as a scenario: its heaps become the allocations, created and
    destroyed in the frames their lifetimes fall in.  Captured: sizes, segment groups, CPU visibility, residency
    at creation, lifetimes.  Modelled: which live heaps each frame uses, uploads, GPU work, the adapter (see
    docs/capture.md).  A malformed capture is refused naming its line, column and the rule (exit 2).

    \b
    Examples:
      wddmsim import gpgmm trace.json -o app.toml && wddmsim run app.toml
      wddmsim import gpgmm trace.json -o app.toml --frames 48
    """
    from wddmsim.scenarios.capture import gpgmm, scenario
    from wddmsim.scenarios.config import from_dict

    try:
        raw = file.read_bytes()
    except OSError as error:
        _fail(ConfigurationError("FILE", str(file), f"cannot be read: {error.strerror}"))
    wide = _wide_text(raw)
    if wide is not None:
        _fail(ConfigurationError("FILE", str(file), f"is {wide} text: save it as UTF-8"))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        _fail(ConfigurationError("FILE", str(file), f"cannot be read as UTF-8 text: {error}"))
    if name is not None and not _utf8(name):
        _fail(ConfigurationError("--name", name, "must be UTF-8 text: the scenario file is TOML, which holds no other"))
    try:
        capture = gpgmm.parse(text, _utf8_shown(file.name))
        doc = scenario.document(capture, frames=frames, name=name)
        from_dict(doc)  # what wddmsim run will read back, checked now
    except ConfigurationError as error:
        _fail(error)
    try:
        out.write_text(scenario.to_toml(doc), encoding="utf-8")
    except OSError as error:
        _fail(ConfigurationError("--out", str(out), f"cannot be written: {error.strerror}"))
    click.echo(shown(f"wrote {out}: {doc['description']}"))


def _utf8(text: str) -> bool:
    """Whether ``text`` is Unicode text UTF-8 can hold (a command-line argument or a file name with bytes that are
    not UTF-8 arrives with lone surrogates, which neither UTF-8 nor TOML can hold)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _utf8_shown(text: str) -> str:
    """``text`` with the bytes that are not UTF-8 shown as U+FFFD (a file name, for the scenario's name)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _wide_text(raw: bytes) -> str | None:
    """ "UTF-16" or "UTF-32" (and how it shows) when ``raw`` is JSON text in one of them, else None: by its
    byte-order mark, or without one by where the zero bytes of its first two characters lie -- JSON text begins
    with two ASCII characters (RFC 4627 section 3) -- so a JSON error never stands for an encoding (decision 0229)."""
    for mark, name in (
        (codecs.BOM_UTF32_LE, "UTF-32"),  # before UTF-16 LE: its mark begins with that one
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if raw.startswith(mark):
            return f"{name} (it starts with a {name} byte-order mark)"
    head = raw[:4]
    if len(head) == 4:
        zeros = tuple(b == 0 for b in head)
        if zeros in ((True, True, True, False), (False, True, True, True)):
            return "UTF-32 (its first character has three zero bytes)"
        if zeros in ((True, False, True, False), (False, True, False, True)):
            return "UTF-16 (its first characters have a zero byte each)"
    return None


@main.command("vm-decode", context_settings=CONTEXT)
@click.argument("va", callback=_address)
@_with_common
@_driver_option
def vm_decode(
    va: int, driver_model: str | None, vram: int | None, paging_buffer: int | None, driver: str | None
) -> None:
    """Walk a GPU virtual address level by level, as the GPU's MMU does.

    Runs the built-in tour (WDDM 2.x), then decodes VA in the paging process's address space: every table,
    index and raw entry on the way, each entry's fields, and the physical address reached -- or the fault the
    GPU would raise.

    \b
    Examples:
      wddmsim vm-decode 0x1001000          a 4 KB page of local memory
      wddmsim vm-decode 0x2000000          scattered system pages
      wddmsim vm-decode 0x7000000000       no table there: the fault
      wddmsim vm-decode 0x1001000 --driver mypkg.drivers:MINE
    """
    from wddmsim.scenarios.tour import run_tour
    from wddmsim.viz.vm_decode import render

    if driver_model not in (None, "wddm2"):
        raise click.BadParameter("GPU virtual addresses exist in the WDDM 2.x model only", param_hint="--driver-model")
    if driver is not None:
        package = _driver_package(driver)
        models = package.capabilities(package.default_config()).driver_models
        if DriverModel.WDDM2 not in models:
            shown = ", ".join(sorted(m.value for m in models))
            _fail(
                ConfigurationError(
                    "--driver",
                    driver,
                    f"GPU virtual addresses exist in the WDDM 2.x model only; driver package {package.name} "
                    f"presents only {shown}",
                )
            )
    try:
        rig, _ = run_tour(_config("wddm2", vram, paging_buffer, driver=driver))
    except ConfigurationError as error:
        _fail(_demo_error(error))
    except WddmsimError as error:
        _fail(error, EXIT_FAILED)
    engine = rig.gpu.engines[0]
    if engine.root is None:
        raise click.ClickException("the paging engine has no address space")
    walk = rig.gpu.mmu.walk(engine.root, va, root_entries=engine.root_entries)
    click.echo(
        render(walk, root=engine.root, root_entries=engine.root_entries, space="the paging process's address space")
    )


@main.command(context_settings=CONTEXT)
@click.argument("names", nargs=-1)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per line (name, value, unit, baseline, ratio, ...)."
)
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and their goals.")
def bench(names: tuple[str, ...], as_json: bool, list_only: bool) -> None:
    """Run benchmarks (all, or NAMES); each ratio compares with a baseline timed in the same run.

    \b
    Examples:
      wddmsim bench --list
      wddmsim bench transfer_1gib small_roundtrip
      wddmsim bench --json > bench.jsonl
    """
    from rich.table import Table

    from wddmsim.bench.catalog import REGISTRY

    unknown = [n for n in names if n not in REGISTRY.benchmarks]
    if unknown:
        raise click.BadParameter(
            f"unknown benchmark(s) {unknown}; known: {sorted(REGISTRY.benchmarks)}", param_hint="NAMES"
        )
    chosen = [REGISTRY.benchmarks[n] for n in (names or tuple(REGISTRY.benchmarks))]
    console = terminal()
    if list_only:
        for b in chosen:
            console.print(f"{b.name:18} {b.what}  [dim](goal: {b.goal})[/]")
        return
    rows = []
    for b in chosen:
        record = b.run()
        record["goal"] = b.goal
        if as_json:
            click.echo(json.dumps(record))
        else:
            rows.append(record)
    if not as_json:
        table = Table(title="wddmsim benchmarks")
        for column in ("name", "value", "unit", "baseline", "ratio", "goal"):
            table.add_column(column)
        for r in rows:
            table.add_row(*(str(r.get(c, "")) for c in ("name", "value", "unit", "baseline", "ratio", "goal")))
        console.print(table)


@main.command("check-driver", context_settings=CONTEXT)
@click.argument("library")
@click.option(
    "--adapter",
    "adapter_file",
    type=_Path(exists=True, dir_okay=False, path_type=Path),
    help="The adapter description (TOML): claimed operations, base package, model, executor.",
)
@click.option("--executor", help="Who executes the buffers: gpu (default), c:SYMBOL[@LIBRARY], python:module:Class.")
@click.option(
    "--model",
    type=click.Choice(["wddm1", "wddm2"]),
    help="A built-in package's driver model: wddm1 (segments, the default) or wddm2 (GpuMmu). A library's model "
    "is its adapter description's.",
)
@click.option("--junit", "junit_path", type=_Path(dir_okay=False, path_type=Path), help="Write JUnit XML here.")
@click.option("--out", type=_Path(file_okay=False, path_type=Path), help="Write check-driver.html and .xml here.")
def check_driver(
    library: str,
    adapter_file: Path | None,
    executor: str | None,
    model: str | None,
    junit_path: Path | None,
    out: Path | None,
) -> None:
    """The conformance run of a driver's DxgkDdiBuildPagingBuffer.

    LIBRARY is your driver built as a shared library (or a built-in package, e.g. reference).  Every operation
    it claims goes through every check: bytes, multipass at every DMA size, bounds, statuses, build-time
    effects, canaries, determinism.  Exit 0 when conformant, 1 with findings, 2 on bad usage.

    \b
      wddmsim check-driver ./librefgpu.so
      wddmsim check-driver ./librefgpu.so --adapter refgpu-wddm2.toml     (the GpuMmu model)
      wddmsim check-driver ./libmine.so --adapter mine.toml --junit results.xml --out report/
      wddmsim check-driver reference --model wddm2       (the checker on the known-correct driver)
    """
    from wddmsim.conformance import check_driver as run_checks
    from wddmsim.conformance.run import configuration
    from wddmsim.drivers.package import DriverModel
    from wddmsim.drivers.registry import BUILTIN, driver_package
    from wddmsim.viz import conformance as views

    console = terminal()
    try:
        if library in BUILTIN:
            if adapter_file is not None or executor is not None:
                raise ConfigurationError("LIBRARY", library, "--adapter and --executor describe a native library")
            package = driver_package(library, setting="LIBRARY")
        else:
            if model is not None:
                raise ConfigurationError(
                    "--model", model, "is for a built-in package; a library's model is `model =` in its --adapter file"
                )
            from wddmsim.drivers.native.description import executor_option
            from wddmsim.drivers.native.package import checked_package

            spec = executor_option(executor) if executor is not None else None
            package = checked_package(library, adapter_file, spec)
        _report_targets(junit_path, out)  # before the run: a report that cannot be written is bad usage
        report = run_checks(package, configuration(package, DriverModel(model) if model is not None else None))
    except ConfigurationError as error:
        _fail(error)
    views.print_report(console, report)
    try:
        views.write(report, junit_path=junit_path, out=out)
    except OSError as error:
        option = "--junit" if junit_path is not None and error.filename == str(junit_path) else "--out"
        _fail(ConfigurationError(option, str(error.filename), f"cannot be written: {error.strerror}"))
    sys.exit(0 if report.conformant else EXIT_FAILED)


def _report_targets(junit_path: Path | None, out: Path | None) -> None:
    """``check-driver``'s report paths, checked before the run: ``--out`` is made if missing (a directory), and
    ``--junit``'s directory must exist."""
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ConfigurationError("--out", str(out), f"cannot be made a directory: {error.strerror}") from None
    if junit_path is not None and not junit_path.parent.is_dir():
        raise ConfigurationError("--junit", str(junit_path), "its directory must exist")


@main.command("include-dir", context_settings=CONTEXT)
def include_dir() -> None:
    """Print the directory of the shipped C headers (wddmsim/ddk.h and the WDK-name shims), for -I.

    \b
    Examples:
      wddmsim include-dir
      cc -std=c11 -shared -fPIC -I"$(wddmsim include-dir)" -o mydriver.so mydriver.c
      c++ -std=c++17 -shared -fPIC -I"$(wddmsim include-dir)" -o mydriver.so mydriver.cpp
    """
    from wddmsim.drivers.native import include_dir as native_include_dir

    click.echo(str(native_include_dir()))


@main.command(context_settings=CONTEXT)
@click.argument("name", required=False)
@click.option("--list", "list_only", is_flag=True, help="List the classic results that can be reproduced.")
@click.option(
    "--loops",
    type=click.IntRange(min=2, max=1000),
    default=11,
    show_default=True,
    help="lru-cliff: passes over the cycle (2 to 1000).",
)
@click.option(
    "--policy",
    "others",
    multiple=True,
    metavar="NAME",
    help="Also run this policy (repeatable; default: every registered one).",
)
@click.option("--published-only", is_flag=True, help="Run only the policies with a published number (FIFO, LRU, MIN).")
@click.option(
    "--driver-model",
    type=click.Choice([m.value for m in DriverModel]),
    default="wddm1",
    show_default=True,
    help="The segment model (no page tables) or GpuMmu (the paging process's tables in segment 1).",
)
@click.option(
    "--expect",
    multiple=True,
    hidden=True,
    metavar="POLICY@CASE=VALUE",
    help="Replace a published number (checks that a mismatch exits 1).",
)
def reproduce(
    name: str | None,
    list_only: bool,
    loops: int,
    others: tuple[str, ...],
    published_only: bool,
    driver_model: str,
    expect: tuple[str, ...],
) -> None:
    """Reproduce a classic paging result through the whole VidMm path; exit 0 when ours match the published numbers,
    1 on a mismatch, 2 on bad usage.

    \b
    Examples:
      wddmsim reproduce --list
      wddmsim reproduce belady-anomaly
      wddmsim reproduce lru-cliff --loops 21 --policy random
    """
    from wddmsim.scenarios import reproduce as classic
    from wddmsim.viz.reproduce import print_list, print_reproduction

    console = terminal()
    if list_only:
        print_list(console)
        return
    if name is None:
        raise click.UsageError("NAME is missing (see `wddmsim reproduce --list`)")
    if published_only and others:
        _fail(ConfigurationError("--published-only", True, "runs no other policy: leave out --policy"))
    chosen: tuple[str, ...] | None = () if published_only else (others or None)
    with console.status("running") as status:
        options = classic.Options(
            chosen,
            loops,
            DriverModel(driver_model),
            _expectations(expect),
            lambda what: status.update(plain(f"{name} {what}")),  # a module:Class is text, not markup
        )
        try:
            result = classic.reproduce(name, options)
        except ConfigurationError as error:
            _fail(error)
        except classic.ReproductionError as error:
            _fail(error, EXIT_FAILED)
    print_reproduction(console, result)
    sys.exit(0 if result.matched else EXIT_FAILED)


def _csv_option(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[str, ...]:
    """``A,B,C`` -> ("A", "B", "C"); blanks dropped."""
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


@main.command(context_settings=CONTEXT)
@click.argument("sweep_dir", type=_Path(path_type=Path))
@click.option(
    "--x", "x", metavar="COLUMN", help="Column of results.csv on the x axis (default: the first numeric grid key)."
)
@click.option(
    "--y",
    "y",
    metavar="COLUMN",
    default="paged_in_over_lower_bound",
    show_default=True,
    help="Numeric metric column on the y axis: its mean over seeds with a 95 % t-interval.",
)
@click.option(
    "--runs",
    callback=_csv_option,
    metavar="ID,ID",
    help="Runs whose occupancy over time is drawn (default: one per policy at the largest x, first seed).",
)
@click.option(
    "--format",
    "formats",
    callback=_csv_option,
    default="png,svg",
    show_default=True,
    metavar="png,svg",
    help="Figure files written to SWEEP_DIR/figures/.",
)
def plot(sweep_dir: Path, x: str | None, y: str, runs: tuple[str, ...], formats: tuple[str, ...]) -> None:
    """Draw a sweep's figures into SWEEP_DIR/figures/ (PNG, SVG) and write SWEEP_DIR/report.html (offline).

    The figures: the metric against x, one line per policy with a 95 % confidence band over seeds; the per-frame
    paging stall distribution of each policy at the largest x; bytes resident in local memory and the aperture per
    frame for chosen runs.  Failed runs are left out and listed in the report.  Needs the plot extra:
    pip install 'wddmsim[plot]'.

    \b
    Examples:
      wddmsim plot sweep/
      wddmsim plot sweep/ --y paged_in_over_compulsory --format svg
      wddmsim plot sweep/ --x adapter.vram --runs 3f2a9c0d1e5b7a64,0b1c2d3e4f5a6b7c
    """
    from wddmsim.viz.sweep_figures import PlotUnavailable
    from wddmsim.viz.sweep_plan import PlotOptions
    from wddmsim.viz.sweep_report import plot_sweep

    try:
        written = plot_sweep(sweep_dir, PlotOptions(x=x, y=y, runs=runs, formats=formats))
    except (ConfigurationError, PlotUnavailable) as error:
        _fail(error)
    for path in written:
        click.echo(shown(path))


def _expectations(given: tuple[str, ...]) -> dict[tuple[str, str], float]:
    """``POLICY@CASE=VALUE`` overrides, e.g. ``fifo@4=9`` (a miss rate as a fraction: ``lru@2=0.5``)."""
    out: dict[tuple[str, str], float] = {}
    for text in given:
        key, _, value = text.partition("=")
        policy, _, case = key.partition("@")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not policy or not case or not math.isfinite(number):
            _fail(ConfigurationError("--expect", text, "must be POLICY@CASE=VALUE with a finite VALUE, e.g. fifo@4=9"))
        out[(policies.canonical(policy), case)] = number
    return out


@main.command(context_settings=CONTEXT)
@click.argument("scenario", required=False)
@click.option(
    "--grid",
    "grid",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="A grid axis: any setting (workload.oversubscription, adapter.vram ...), or policy / placement "
    "(repeatable; the runs are every combination).",
)
@click.option("--seeds", "seed_count", type=int, help="Seeds 1..N for every grid point (default: seed 1 only).")
@click.option("--seed-list", metavar="S1,S2,...", help="These seeds for every grid point, e.g. 1,2,5.")
@click.option(
    "--set", "settings", multiple=True, metavar="KEY=VALUE", help="A setting fixed for every run (repeatable)."
)
@click.option(
    "--out",
    type=_Path(file_okay=False, path_type=Path),
    required=True,
    help="The sweep directory (kept between reruns).",
)
@click.option("--jobs", type=int, help="Worker processes (local) or local-cluster workers (default: the CPU count).")
@click.option(
    "--backend", type=click.Choice(["local", "dask"]), default="local", show_default=True, help="Where runs execute."
)
@click.option("--scheduler", metavar="ADDR", help="The Dask scheduler, e.g. tcp://10.0.0.5:8786 (--backend dask).")
def sweep(
    scenario: str | None,
    grid: tuple[str, ...],
    seed_count: int | None,
    seed_list: str | None,
    settings: tuple[str, ...],
    out: Path,
    jobs: int | None,
    backend: str,
    scheduler: str | None,
) -> None:
    """Run a scenario over a grid of settings, policies and seeds, in parallel, into one table.

    Every combination of the --grid values, for each seed, is one run of SCENARIO (a built-in name or a TOML
    file; default: default), exactly as `wddmsim run` would run it.  Each run is saved under OUT/runs/<id>/
    (result.json, summary.json), <id> a hash of its scenario, seed and settings: a rerun skips the runs that
    finished ok and retries failed ones.  A failed run (an error, or a run that did not verify) is recorded
    with its error and the sweep goes on.  Ctrl-C stops cleanly: running runs finish and are kept.

    \b
    OUT/results.csv       one row per run: id, scenario, seed, a column per grid key, status, error,
                          seconds, then every metric of summary.json (pandas.read_csv loads it as is)
    OUT/results.parquet   the same table, when pyarrow is installed (pip install 'wddmsim[parquet]')
    OUT/sweep.json        the grid, seeds and fixed settings
    OUT/report.html       the figures (OUT/figures/) and a summary, as `wddmsim plot OUT` draws them, when
                          matplotlib is installed (pip install 'wddmsim[plot]')

    \b
    Examples:
      wddmsim sweep default --grid policy=lru,clock,arc --grid workload.oversubscription=1.1,1.5,2 --seeds 5 --out sweep/
      wddmsim sweep stress --grid adapter.vram=64MiB,128MiB --seed-list 1,2,5 --set workload.frames=8 --out vram/
      wddmsim sweep --grid policy=lru,fifo --backend dask --scheduler tcp://10.0.0.5:8786 --out sweep/

    Exit status 0 when every run of the grid finished ok, 1 when a run failed or the sweep was interrupted (the
    table holds what finished), 2 on bad input (nothing ran).
    """
    try:
        plan = _sweep_plan(scenario, grid, seed_count, seed_list, settings)
        plan.validate()
        workers = _sweep_workers(backend, scheduler, jobs)
        _make_out(out)
        runner = _sweep_backend(backend, scheduler, workers)
    except ConfigurationError as error:
        _fail(error)
    _sweep_run(plan, out, runner, runner.describe())


def _sweep_plan(
    scenario: str | None,
    grid: tuple[str, ...],
    seed_count: int | None,
    seed_list: str | None,
    settings: tuple[str, ...],
) -> Any:
    from wddmsim.research.sweep import Plan, parse_fixed, parse_grid, parse_seeds

    for option, texts in (("SCENARIO", (scenario,) if scenario else ()), ("--grid", grid)):
        for text in texts:  # the tables' columns: bytes that are not UTF-8 would stop their writing after the runs
            if not _utf8(text):
                raise ConfigurationError(option, text, "must be UTF-8 text: the sweep's tables are written as UTF-8")
    axes = parse_grid(grid)
    return Plan(scenario or "default", axes, parse_seeds(seed_count, seed_list), parse_fixed(settings, axes))


def _make_out(out: Path) -> None:
    """The sweep directory, made (or found) before any run starts."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError("--out", str(out), f"cannot be written: {error.strerror}") from None


def _sweep_workers(backend: str, scheduler: str | None, jobs: int | None) -> int:
    """The worker count; options that do not go together are refused before anything starts."""
    import os

    if jobs is not None and jobs < 1:
        raise ConfigurationError("--jobs", jobs, "must be at least 1")
    if backend == "local" and scheduler is not None:
        raise ConfigurationError("--scheduler", scheduler, "is for --backend dask only")
    if backend == "dask":
        from wddmsim.research.sweep.backends import require_dask

        require_dask()
    return jobs or os.cpu_count() or 1


def _sweep_backend(backend: str, scheduler: str | None, workers: int) -> Any:
    from wddmsim.research.sweep import DaskBackend, LocalBackend

    return LocalBackend(workers) if backend == "local" else DaskBackend(scheduler, workers)


def _sweep_figures(out: Path, console: Console) -> None:
    """The sweep's figures and report.html, as ``wddmsim plot OUT`` draws them, when matplotlib is installed; a
    sweep with nothing to draw says why (its exit status is the runs')."""
    from wddmsim.viz.sweep_figures import available
    from wddmsim.viz.sweep_report import write_sweep_report

    if not available():
        console.print(
            plain(f"no figures: matplotlib is not installed (pip install 'wddmsim[plot]', then wddmsim plot {out})")
        )
        return
    try:
        written = write_sweep_report(out)
    except (WddmsimError, OSError) as error:
        console.print(plain(f"no figures: {error}"), soft_wrap=True)
        return
    console.print(plain(f"wrote {len(written) - 1} figure files and {out / 'report.html'}"), soft_wrap=True)


def _sweep_run(plan: Any, out: Path, runner: Any, where: str) -> NoReturn:
    """Run the sweep with a progress bar on stderr; print what happened; exit 0, or 1 if anything is missing."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from wddmsim.research.sweep import run_sweep

    console = terminal(stderr=True)
    failed: list[dict[str, Any]] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("sweep", total=None, failed=0)

        def started(outcome: Any) -> None:
            # ``where`` may be a scheduler's address as the user wrote it (an IPv6 one has brackets): text, not markup
            console.print(plain(f"sweep of {outcome.total} runs on {where}: {outcome.skipped} already done, skipped"))
            bar.update(task, total=outcome.total - outcome.skipped)

        def finished(record: dict[str, Any]) -> None:
            if record["status"] != "ok":
                failed.append(record)
            bar.update(task, advance=1, failed=len(failed))

        try:
            outcome = run_sweep(plan, out, runner, on_start=started, on_result=finished)
        except OSError as error:
            _fail(ConfigurationError("--out", str(out), f"cannot be written: {error.strerror}"))
    for record in failed[:5]:
        point = " ".join(f"{k}={v}" for k, v in record["settings"].items())
        console.print(
            plain(f"failed {record['id']} (seed {record['seed']} {point}): {record['error']}"), soft_wrap=True
        )
    state = "interrupted" if outcome.interrupted else "done"
    console.print(
        plain(  # the paths are under the user's --out, brackets, escapes and all
            f"{state}: ran {outcome.ran} ({outcome.failed} failed), skipped {outcome.skipped}; "
            f"wrote {', '.join(str(p) for p in outcome.tables)}"
        ),
        soft_wrap=True,
    )
    _sweep_figures(out, console)
    if outcome.missing:
        console.print(
            f"{outcome.missing} of {outcome.total} runs have no ok result: rerun the same command to retry them"
        )
    sys.exit(EXIT_FAILED if outcome.missing else 0)
