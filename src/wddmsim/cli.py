"""The command line: ``wddmsim run | replay | disasm | vm-decode | bench``.  Thin: parse, build, run, render."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from wddmsim import __version__
from wddmsim.core.errors import WddmsimError
from wddmsim.core.units import format_size, parse_size
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.system import Adapter, SystemConfig


def _size(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _config(driver_model: str, vram: int | None, paging_buffer: int | None) -> SystemConfig:
    gpu = GpuConfig() if vram is None else GpuConfig(local_size=vram)
    driver = DriverConfig(model=DriverModel(driver_model))
    if paging_buffer is not None:
        driver = DriverConfig(model=DriverModel(driver_model), paging_buffer_size=paging_buffer)
    return SystemConfig(gpu=gpu, driver=driver)


_common = [
    click.option(
        "--driver-model",
        type=click.Choice([m.value for m in DriverModel]),
        default="wddm2",
        show_default=True,
        help="Present the GPU as a WDDM 2.x GpuMmu driver or a WDDM 1.x segment-model driver.",
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wddmsim")
def main() -> None:
    """wddmsim: the WDDM video-memory paging path, executable.

    VidMm places and moves allocations and asks a kernel-mode driver to encode every move as a paging buffer
    (DxgkDdiBuildPagingBuffer); a simulated GPU executes those bytes.  Start with `wddmsim run`.
    """


def _summary_of_tour(driver_model: str, rig: Any, result: Any) -> dict[str, Any]:
    from wddmsim.viz.summary import counters

    return {
        "verified": result.verified,
        "scenario": "tour",
        "driver_model": driver_model,
        "simulated_time_ns": rig.adapter.clock.now,
        "checks": [{"operation": c.operation, "step": c.step, "ok": c.ok, "detail": c.detail} for c in result.checks],
        **counters(rig.adapter.events),
    }


def _write_outputs(out: Path, adapter: Adapter, summary: dict[str, Any], console: Console) -> None:
    """``summary.json`` and ``events.jsonl`` in ``out`` (the views add trace.json and report.html)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    with (out / "events.jsonl").open("w") as f:
        for event in adapter.events:
            f.write(json.dumps(event.to_record()) + "\n")
    console.print(f"wrote {out / 'summary.json'} and {out / 'events.jsonl'}")


def _run_tour(driver_model: str | None, vram: int | None, paging_buffer: int | None, out: Path | None) -> None:
    from wddmsim.scenarios.tour import run_tour

    console = Console()
    model = driver_model or "wddm2"
    try:
        rig, result = run_tour(_config(model, vram, paging_buffer))
    except WddmsimError as error:
        console.print(f"[bold red]error:[/] {error}")
        sys.exit(2)
    table = Table(title=f"wddmsim paging tour ({model}, {format_size(rig.gpu.config.local_size)} local memory)")
    table.add_column("", width=2)
    table.add_column("operation")
    table.add_column("what was checked")
    table.add_column("result")
    for check in result.checks:
        table.add_row("[green]✓[/]" if check.ok else "[red]✗[/]", check.operation, check.step, check.detail)
    console.print(table)
    summary = _summary_of_tour(model, rig, result)
    totals = Table(title="counters")
    totals.add_column("counter")
    totals.add_column("value", justify="right")
    for key, value in summary.items():
        if isinstance(value, int) and not isinstance(value, bool):
            totals.add_row(key, f"{value:,}")
    console.print(totals)
    if out is not None:
        _write_outputs(out, rig.adapter, summary, console)
    verdict = "[bold green]verified[/]" if result.verified else "[bold red]VERIFICATION FAILED[/]"
    console.print(f"{verdict}: {sum(c.ok for c in result.checks)}/{len(result.checks)} checks passed")
    sys.exit(0 if result.verified else 1)


def _overrides(options: dict[str, object], settings: tuple[str, ...]) -> dict[str, object]:
    """Dotted-key overrides from the options given (None: not given) and ``--set KEY=VALUE``."""
    from wddmsim.scenarios.config import parse_override

    keys = {
        "seed": "seed",
        "driver_model": "adapter.driver_model",
        "vram": "adapter.vram",
        "cpu_visible": "adapter.cpu_visible",
        "aperture": "adapter.aperture",
        "paging_buffer": "adapter.paging_buffer",
        "page_table_levels": "adapter.page_table_levels",
        "policy": "adapter.policy",
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
    click.option("--policy", metavar="NAME", help="Eviction policy: priority-lru, lru, fifo or random."),
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


def _fail(console: Console, error: Exception) -> NoReturn:
    console.print(f"[bold red]error:[/] {error}")
    sys.exit(2)


def _list_scenarios(console: Console) -> None:
    from wddmsim.scenarios import catalog
    from wddmsim.scenarios.config import describe_settings

    table = Table(title="built-in scenarios (wddmsim run NAME)", title_justify="left")
    table.add_column("name")
    table.add_column("what it shows")
    for name, description in catalog.describe():
        table.add_row(name, description)
    table.add_row(catalog.TOUR, "every DxgkDdiBuildPagingBuffer operation driven directly, each result checked")
    console.print(table)
    settings = Table(title="settings (TOML keys; --set KEY=VALUE)", title_justify="left")
    settings.add_column("key")
    settings.add_column("default")
    settings.add_column("meaning")
    for key, default, doc in describe_settings():
        settings.add_row(key, default, doc)
    console.print(settings)


@main.command(context_settings={"max_content_width": 120})
@click.argument("scenario", required=False)
@click.option("--seed", type=int, help="Seed of the workload (same seed, same event log).")
@click.option(
    "--driver-model",
    type=click.Choice([m.value for m in DriverModel]),
    help="Present the GPU as a WDDM 2.x GpuMmu driver or a WDDM 1.x segment-model driver.",
)
@_with(_adapter_options)
@click.option("--processes", type=int, help="Processes sharing the GPU.")
@click.option("--frames", type=int, help="Frames each process runs.")
@click.option("--oversubscription", type=float, help="Bytes of all resources / local memory, e.g. 2.5.")
@click.option("--access", help="Access pattern: hot-cold, sequential, random or streaming.")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="Write summary.json and events.jsonl here."
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
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

    SCENARIO is a built-in name (default, stress, uploads, tiles -- see --list), a TOML file, or `tour` (every
    paging operation driven directly).  Without it, the built-in default: several processes run a frame loop over
    textures and buffers whose total exceeds local memory -- residency, locks, GPU work through VAs, eviction,
    the aperture -- then every byte is read back and compared with a reference model.  Options override the
    scenario's settings.

    Exit status 0 when everything verified, 1 when a check failed, 2 when the run could not start or complete.
    """
    console = Console()
    if list_only:
        _list_scenarios(console)
        return
    if scenario == "tour":
        extra = [k for k, v in options.items() if v is not None and k not in ("driver_model", "vram", "paging_buffer")]
        if extra or settings or record is not None:
            given = (
                [f"--{k.replace('_', '-')}" for k in extra] + ["--set"] * bool(settings) + ["--record"] * bool(record)
            )
            _fail(
                console,
                click.UsageError(f"{', '.join(given)}: the tour takes --driver-model, --vram and --paging-buffer only"),
            )
        _run_tour(options["driver_model"], options["vram"], options["paging_buffer"], out)
        return
    from wddmsim.scenarios import catalog
    from wddmsim.scenarios.runner import run_scenario
    from wddmsim.viz.runs import checks_table, traffic_table
    from wddmsim.viz.summary import counters

    try:
        config = catalog.load(scenario, _overrides(options, settings))
    except WddmsimError as error:
        _fail(console, error)
    console.print(f"[bold]{config.name}[/]: {config.description}" if config.description else f"[bold]{config.name}[/]")
    trace = None if record is None else record.open("w", encoding="utf-8")
    try:
        if console.is_terminal:
            with Progress(transient=True, console=console) as bar:
                task = bar.add_task("running", total=1)

                def progress(done: int, total: int, what: str) -> None:
                    bar.update(task, completed=done, total=total, description=what)

                result = run_scenario(config, progress=progress, record=trace)
        else:
            result = run_scenario(config, record=trace)
    except WddmsimError as error:
        _fail(console, error)
    finally:
        if trace is not None:
            trace.close()
    console.print(checks_table(result))
    console.print(traffic_table(result.traffic))
    if record is not None:
        console.print(f"recorded the user-mode calls to {record} (wddmsim replay {record} --policy lru ...)")
    if out is not None:
        _write_outputs(out, result.adapter, {**result.summary(), **counters(result.adapter.events)}, console)
    failed = sum(not c.ok for c in result.checks)
    if result.verified:
        console.print(f"[bold green]verified[/]: {len(result.checks)} checks passed")
    else:
        console.print(f"[bold red]VERIFICATION FAILED[/]: {failed} of {len(result.checks)} checks failed")
    sys.exit(0 if result.verified else 1)


@main.command(context_settings={"max_content_width": 120})
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_with(_adapter_options)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the replay's summary.json and events.jsonl here.",
)
def replay(trace: Path, out: Path | None, settings: tuple[str, ...], **options: Any) -> None:
    """Re-run a recorded call trace under another policy or configuration; print what changed.

    TRACE is a file `wddmsim run --record` wrote.  The replay issues the same user-mode calls, in the same order,
    on an adapter configured as recorded except for the options given, and prints the difference in paging
    traffic (bytes paged in and out, evictions by cause, paging buffers ...) between the recorded run and the
    replay.  Every CPU read is compared with the recording: content must survive any policy.

    Exit status 0 when every read matched, 1 when one did not, 2 when the trace could not be replayed.
    """
    from wddmsim.scenarios.callfmt import TraceFormatError
    from wddmsim.scenarios.replay import read_trace
    from wddmsim.scenarios.replay import replay as run_replay
    from wddmsim.viz.runs import replay_table
    from wddmsim.viz.summary import counters

    console = Console()
    try:
        recorded = read_trace(trace)
        result = run_replay(recorded, _overrides(options, settings))
    except (WddmsimError, TraceFormatError) as error:
        _fail(console, error)
    console.print(f"replayed {result.calls} calls of {trace} ({recorded.config.name}, seed {recorded.config.seed})")
    if result.difference():
        console.print(replay_table(result))
    else:
        console.print("[bold]no difference[/] in paging traffic from the recorded run")
    if result.identical_events:
        console.print("the event log is identical to the recorded run's")
    if result.differing:
        console.print(f"{result.differing} call(s) returned otherwise than recorded, e.g.:")
        for line in result.examples[:5]:
            console.print(f"  {line}")
    verdict = "[bold green]content preserved[/]" if result.content_preserved else "[bold red]CONTENT DIFFERS[/]"
    console.print(f"{verdict}: {result.reads - result.reads_differing}/{result.reads} CPU reads match the recording")
    if out is not None:
        summary = {
            "verified": result.content_preserved,
            "scenario": recorded.config.name,
            "replay_of": str(trace),
            "config": result.config.to_dict(),
            "traffic": result.traffic,
            "recorded_traffic": result.recorded,
            "difference": {k: list(v) for k, v in result.difference().items()},
            **counters(result.adapter.events),
        }
        _write_outputs(out, result.adapter, summary, console)
    sys.exit(0 if result.content_preserved else 1)


@main.command()
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_with_common
@click.option("--base", default="0", help="Offset shown for the first byte of FILE.")
def disasm(file: Path | None, driver_model: str, vram: int | None, paging_buffer: int | None, base: str) -> None:
    """Print paging buffers packet by packet (offset, length, opcode, fields).

    With FILE, disassemble its bytes.  Without, run the built-in scenario and print every paging buffer VidMm
    submitted, in order, with its fence -- each partial buffer of a multipass operation on its own.
    """
    from wddmsim.viz.disasm import disassemble, render

    if file is not None:
        click.echo(render(disassemble(file.read_bytes(), int(base, 0))))
        return
    from wddmsim.scenarios.rig import PagingRig
    from wddmsim.scenarios.tour import run_tour

    captured: list[tuple[int, int, int, int, bytes]] = []

    def capture(rig: PagingRig) -> None:
        rig.vidmm.paging.capture = lambda e, data: captured.append((e.fence, e.start, e.end, e.operations, data))

    run_tour(_config(driver_model, vram, paging_buffer), on_rig=capture)
    for fence, start, end, operations, data in captured:
        click.echo(f"paging buffer fence {fence}: bytes [{start:#x}, {end:#x}), {operations} complete operation(s)")
        click.echo(render(disassemble(data, start)))


def _address(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    try:
        return int(value, 0)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a number (e.g. 0x1001000)") from None


@main.command("vm-decode")
@click.argument("va", callback=_address)
@_with_common
def vm_decode(va: int, driver_model: str, vram: int | None, paging_buffer: int | None) -> None:
    """Walk a GPU virtual address level by level, as the GPU's MMU does.

    Runs the built-in scenario (WDDM 2.x), then decodes VA in the paging process's address space: every
    table, index and raw entry on the way, each entry's fields, and the physical address reached -- or the
    fault the GPU would raise.  Try 0x1001000, 0x2000000 or 0x3000000.
    """
    from wddmsim.scenarios.tour import run_tour
    from wddmsim.viz.vm_decode import render

    if driver_model != "wddm2":
        raise click.BadParameter("GPU virtual addresses exist in the WDDM 2.x model only", param_hint="--driver-model")
    rig, _ = run_tour(_config(driver_model, vram, paging_buffer))
    engine = rig.gpu.engines[0]
    if engine.root is None:
        raise click.ClickException("the paging engine has no address space")
    walk = rig.gpu.mmu.walk(engine.root, va, root_entries=engine.root_entries)
    click.echo(
        render(walk, root=engine.root, root_entries=engine.root_entries, space="the paging process's address space")
    )


@main.command()
@click.argument("names", nargs=-1)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per line (name, value, unit, baseline, ratio, ...)."
)
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and their goals.")
def bench(names: tuple[str, ...], as_json: bool, list_only: bool) -> None:
    """Run benchmarks (all, or NAMES); ratios compare with a baseline timed in the same run."""
    from wddmsim.bench.catalog import REGISTRY

    unknown = [n for n in names if n not in REGISTRY.benchmarks]
    if unknown:
        raise click.BadParameter(
            f"unknown benchmark(s) {unknown}; known: {sorted(REGISTRY.benchmarks)}", param_hint="NAMES"
        )
    chosen = [REGISTRY.benchmarks[n] for n in (names or tuple(REGISTRY.benchmarks))]
    console = Console()
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
