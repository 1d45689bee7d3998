"""The command line: ``wddmsim run | disasm | bench``.  Thin: parse, build, run, render."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from wddmsim import __version__
from wddmsim.core.errors import WddmsimError
from wddmsim.core.units import format_size, parse_size
from wddmsim.hw.gpu import GpuConfig
from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.system import SystemConfig


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


@main.command()
@_with_common
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), help="Write summary.json and events.jsonl here."
)
def run(driver_model: str, vram: int | None, paging_buffer: int | None, out: Path | None) -> None:
    """Run the built-in scenario: every paging operation end to end, every byte verified.

    Exit status 0 when every check passed, 1 when one failed, 2 when the run could not complete.
    """
    from wddmsim.scenarios.tour import run_tour
    from wddmsim.viz.summary import counters

    console = Console()
    try:
        rig, result = run_tour(_config(driver_model, vram, paging_buffer))
    except WddmsimError as error:
        console.print(f"[bold red]error:[/] {error}")
        sys.exit(2)
    table = Table(title=f"wddmsim paging tour ({driver_model}, {format_size(rig.gpu.config.local_size)} local memory)")
    table.add_column("", width=2)
    table.add_column("operation")
    table.add_column("what was checked")
    table.add_column("result")
    for check in result.checks:
        table.add_row("[green]✓[/]" if check.ok else "[red]✗[/]", check.operation, check.step, check.detail)
    console.print(table)
    stats = counters(rig.adapter.events)
    totals = Table(title="counters")
    totals.add_column("counter")
    totals.add_column("value", justify="right")
    for key, value in stats.items():
        if not isinstance(value, dict):
            totals.add_row(key, f"{value:,}")
    totals.add_row("SimulatedTimeNs", f"{rig.adapter.clock.now:,}")
    console.print(totals)
    summary = {
        "verified": result.verified,
        "scenario": "paging-tour",
        "driver_model": driver_model,
        "simulated_time_ns": rig.adapter.clock.now,
        "checks": [{"operation": c.operation, "step": c.step, "ok": c.ok, "detail": c.detail} for c in result.checks],
        **stats,
    }
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        with (out / "events.jsonl").open("w") as f:
            for event in rig.adapter.events:
                f.write(json.dumps(event.to_record()) + "\n")
        console.print(f"wrote {out / 'summary.json'} and {out / 'events.jsonl'}")
    verdict = "[bold green]verified[/]" if result.verified else "[bold red]VERIFICATION FAILED[/]"
    console.print(f"{verdict}: {sum(c.ok for c in result.checks)}/{len(result.checks)} checks passed")
    sys.exit(0 if result.verified else 1)


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
