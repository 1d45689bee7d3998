"""The command line: ``wddmsim run | inspect | disasm | vm-decode | bench``.  Thin: parse, build, run, render.

Scenarios live in :mod:`wddmsim.scenarios`, views and the files of ``--out`` in :mod:`wddmsim.viz`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from wddmsim import __version__
from wddmsim.core.errors import WddmsimError
from wddmsim.core.units import format_size, parse_size
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.scenarios.builtin import SCENARIOS
from wddmsim.system import SystemConfig

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


def _size(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _config(scenario: str, driver_model: str, vram: int | None, paging_buffer: int | None) -> SystemConfig:
    gpu = SCENARIOS[scenario].gpu if vram is None else GpuConfig(local_size=vram)
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
_scenario_option = click.option(
    "--scenario",
    type=click.Choice(sorted(SCENARIOS)),
    default="tour",
    show_default=True,
    help="The built-in scenario to run first.",
)


def _with_common(fn: Any) -> Any:
    for option in reversed(_common):
        fn = option(fn)
    return fn


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="wddmsim")
def main() -> None:
    """wddmsim: the WDDM video-memory paging path, executable.

    VidMm places and moves allocations and asks a kernel-mode driver to encode every move as a paging buffer
    (DxgkDdiBuildPagingBuffer); a simulated GPU executes those bytes.

    \b
    Start here:
      wddmsim run                          every paging operation, end to end, every byte verified
      wddmsim run residency --out out/     a residency workload; summary, event log, trace, HTML report
      wddmsim inspect out/ --at 2000       the segment maps after event 2000 of that run
      wddmsim disasm                       the paging buffers of a run, packet by packet
      wddmsim vm-decode 0x1001000          a GPU VA walked level by level
      wddmsim bench --list                 the benchmarks and their goals

    Each command has its own --help with examples.
    """


_RUN_HELP = """Run a built-in SCENARIO (default: tour) and verify every byte it moved.

\b
Scenarios:
{scenarios}

\b
With --out DIR:
  summary.json   verified, and counters named as in D3DKMT_QUERYSTATISTICS (BytesFilled,
                 BytesTransferredFromMdlToMemory, EvictionsDueToPreparation, ...), paging buffers, passes
  events.jsonl   one event per line, DxgKrnl ETW names (ReportSegment, PagingOpTransfer, VidMmEvict, ...)
  trace.json     Chrome trace format: open it in https://ui.perfetto.dev or chrome://tracing
  report.html    one offline page: occupancy, traffic, evictions, segment maps, page tables, disassembly

\b
Examples:
  wddmsim run
  wddmsim run residency --seed 3 --out out/
  wddmsim run --driver-model wddm1 --vram 80GiB

Exit status 0 when every check passed, 1 when one failed, 2 when the run could not complete.
""".format(scenarios="\n".join(f"  {name:10} {s.summary}" for name, s in SCENARIOS.items()))


@main.command(context_settings=CONTEXT, help=_RUN_HELP)
@click.argument("scenario", required=False, default="tour", type=click.Choice(sorted(SCENARIOS)))
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the scenario's random choices.")
@_with_common
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write summary.json, events.jsonl, trace.json and report.html into this directory.",
)
def run(
    scenario: str, seed: int, driver_model: str, vram: int | None, paging_buffer: int | None, out: Path | None
) -> None:
    from wddmsim.scenarios.builtin import run_scenario
    from wddmsim.system import Adapter
    from wddmsim.viz.capture import PagingCapture
    from wddmsim.viz.console import checks_table, statistics_table
    from wddmsim.viz.eventlog import records
    from wddmsim.viz.outputs import recorder, run_summary, write_outputs
    from wddmsim.viz.summary import statistics

    console = Console()
    captures: list[PagingCapture] = []

    def attach(adapter: Adapter) -> None:
        captures.append(recorder(adapter))

    try:
        result = run_scenario(
            scenario,
            _config(scenario, driver_model, vram, paging_buffer),
            seed=seed,
            on_adapter=attach if out is not None else None,
        )
    except WddmsimError as error:
        console.print(f"[bold red]error:[/] {error}")
        sys.exit(2)
    adapter = result.adapter
    title = f"wddmsim {scenario} ({driver_model}, {format_size(adapter.gpu.config.local_size)} local memory)"
    console.print(checks_table(title, result.result.checks))
    if out is not None:
        written = write_outputs(out, adapter, run_summary(result), capture=captures[0] if captures else None)
        console.print(statistics_table(written.values))
        console.print(f"wrote {written.summary}, {written.events}, {written.trace} and {written.report}")
    else:
        console.print(statistics_table(statistics(records(adapter.events))))
    checks = result.result.checks
    verdict = "[bold green]verified[/]" if result.verified else "[bold red]VERIFICATION FAILED[/]"
    console.print(f"{verdict}: {sum(c.ok for c in checks)}/{len(checks)} checks passed")
    sys.exit(0 if result.verified else 1)


@main.command(context_settings=CONTEXT)
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--at", "at", type=int, help="Event index (0-based line of events.jsonl).  Default: the last event.")
@click.option("--time", "time_ns", type=int, help="Simulated time in ns: the last event at or before it.")
@click.option("--segment", "segments", type=int, multiple=True, help="Only this segment (repeatable).")
@click.option("--rows", type=int, default=40, show_default=True, help="Blocks listed per segment.")
@click.option("--width", type=int, default=64, show_default=True, help="Cells of the segment bar.")
def inspect(
    run_dir: Path, at: int | None, time_ns: int | None, segments: tuple[int, ...], rows: int, width: int
) -> None:
    """Show the segment maps of a saved run at any event (after GPUView's segment viewer).

    RUN_DIR is a directory written by `wddmsim run --out`.  The maps are rebuilt from its events.jsonl:
    every range of every segment, who holds it (an allocation and its process, or a VidMm page table), the
    allocated and free totals, the largest free block, and the memory events before and after -- step with
    --at.

    \b
    Examples:
      wddmsim run residency --out out/ && wddmsim inspect out/
      wddmsim inspect out/ --at 2000 --segment 2
      wddmsim inspect out/ --time 500000
    """
    from wddmsim.viz.eventlog import read_jsonl
    from wddmsim.viz.inspect import render
    from wddmsim.viz.segmap import SegmentReplay, index_at_time

    path = run_dir / "events.jsonl"
    if not path.exists():
        raise click.BadParameter(f"{path} does not exist: write one with `wddmsim run --out DIR`", param_hint="RUN_DIR")
    log = read_jsonl(path)
    if not log:
        raise click.ClickException(f"{path} holds no events")
    if at is not None and time_ns is not None:
        raise click.BadParameter("give --at or --time, not both")
    index = len(log) - 1 if at is None else at
    if time_ns is not None:
        index = index_at_time(log, time_ns)
    if not 0 <= index < len(log):
        raise click.BadParameter(f"{index} is not an event of the log (0..{len(log) - 1})", param_hint="--at")
    Console().print(render(SegmentReplay(log), index, segments=segments, rows=rows, width=width))


@main.command(context_settings=CONTEXT)
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_scenario_option
@_with_common
@click.option("--base", default="0", help="Offset shown for the first byte of FILE.")
def disasm(
    file: Path | None, scenario: str, driver_model: str, vram: int | None, paging_buffer: int | None, base: str
) -> None:
    """Print paging buffers packet by packet (offset, length, opcode, fields).

    With FILE, disassemble its bytes.  Without, run a built-in scenario and print every paging buffer VidMm
    submitted, in order, with its fence -- each partial buffer of a multipass operation on its own.

    \b
    Examples:
      wddmsim disasm                       the tour's buffers (a multipass split at fence 12)
      wddmsim disasm --scenario residency
      wddmsim disasm --paging-buffer 4KiB  smaller buffers: more multipass splits
      wddmsim disasm buffer.bin --base 0x1000
    """
    from wddmsim.scenarios.builtin import run_scenario
    from wddmsim.viz.capture import PagingCapture
    from wddmsim.viz.disasm import disassemble, render

    if file is not None:
        click.echo(render(disassemble(file.read_bytes(), int(base, 0))))
        return
    capture = PagingCapture()
    try:
        run_scenario(scenario, _config(scenario, driver_model, vram, paging_buffer), on_adapter=capture.attach)
    except WddmsimError as error:
        raise click.ClickException(str(error)) from None
    for b in capture.buffers:
        note = "  (ends mid-operation: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)" if b.split else ""
        click.echo(
            f"paging buffer fence {b.fence}: bytes [{b.start:#x}, {b.end:#x}), {b.operations} complete operation(s){note}"
        )
        click.echo(render(disassemble(b.data, b.start)))


def _address(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    try:
        return int(value, 0)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a number (e.g. 0x1001000)") from None


@main.command("vm-decode", context_settings=CONTEXT)
@click.argument("va", callback=_address)
@_with_common
def vm_decode(va: int, driver_model: str, vram: int | None, paging_buffer: int | None) -> None:
    """Walk a GPU virtual address level by level, as the GPU's MMU does.

    Runs the built-in tour (WDDM 2.x), then decodes VA in the paging process's address space: every table,
    index and raw entry on the way, each entry's fields, and the physical address reached -- or the fault the
    GPU would raise.

    \b
    Examples:
      wddmsim vm-decode 0x1001000          a 4 KB page of local memory
      wddmsim vm-decode 0x2000000          scattered system pages
      wddmsim vm-decode 0x7000000000       no table there: the fault
    """
    from wddmsim.scenarios.tour import run_tour
    from wddmsim.viz.vm_decode import render

    if driver_model != "wddm2":
        raise click.BadParameter("GPU virtual addresses exist in the WDDM 2.x model only", param_hint="--driver-model")
    rig, _ = run_tour(_config("tour", driver_model, vram, paging_buffer))
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
