"""What the commands print is printed as written (decision 0241): no ``:name:`` becomes an emoji."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.table import Table

from wddmsim.cli import main
from wddmsim.viz.terminal import plain, shown, terminal

WIDE = {"COLUMNS": "200"}


def test_a_scenario_named_with_colons_prints_its_name_and_description_verbatim(tmp_path: Path) -> None:
    scenario = tmp_path / "colons.toml"
    scenario.write_text('name = ":x:"\ndescription = "heap :thumbs_up: p0:heap0 :smile:"\n[workload]\nframes = 1\n')
    result = CliRunner().invoke(main, ["run", str(scenario)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == ":x:: heap :thumbs_up: p0:heap0 :smile:"
    assert "wddmsim run :x:: " in result.output, "the table title too"
    assert "\u274c" not in result.output and "\U0001f44d" not in result.output


def test_the_terminal_prints_an_allocation_name_with_colons_in_a_table_as_written() -> None:
    out = io.StringIO()
    table = Table(title="allocations :warning:")
    table.add_column("name", min_width=30)
    table.add_row(":x:")
    table.add_row("tex:rocket:7")
    terminal(file=out, width=60, color_system=None).print(table)
    lines = [line.strip(" │┃") for line in out.getvalue().splitlines()]
    assert lines[0] == "allocations :warning:"
    assert ":x:" in lines and "tex:rocket:7" in lines


def test_a_scenario_named_with_square_brackets_prints_them_verbatim(tmp_path: Path) -> None:
    """Brackets a user wrote are text, not rich markup: a stray ``[/]`` is no traceback, ``[bold]`` no style."""
    scenario = tmp_path / "brackets.toml"
    scenario.write_text(
        'name = "tex[/b]"\ndescription = "buf[i] [bold]x[/bold] and [/]"\n[workload]\nframes = 1\n', encoding="utf-8"
    )
    out, record = tmp_path / "o[/x]", tmp_path / "r[bold]y.jsonl"
    result = CliRunner().invoke(main, ["run", str(scenario), "--out", str(out), "--record", str(record)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "tex[/b]: buf[i] [bold]x[/bold] and [/]"
    assert "wddmsim run tex[/b]: " in result.output, "the table title too"
    assert f"wrote {out / 'summary.json'}, " in result.output and f"calls to {record} (" in result.output, "and paths"
    assert (out / "summary.json").is_file()


def test_an_installed_driver_package_lists_its_own_words_verbatim(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run --list`` prints what an installed package says of itself: its brackets are text, not markup."""
    import wddmsim.drivers.registry as registry

    monkeypatch.setattr(registry, "described", lambda: [("acme[/]", "fast [bold]GPU[/bold] driver [x]")])
    result = CliRunner().invoke(main, ["run", "--list"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "acme[/]" in result.output and "fast [bold]GPU[/bold] driver [x]" in result.output


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        (
            "tex[/b] [bold]x[/] :smile: [ a\\",
            "tex[/b] [bold]x[/] :smile: [ a\\",
        ),  # markup, codes, backslash: as written
        ("tab\tand\nnewline", "tab\tand\nnewline"),  # layout, not commands
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x1b]8;;file:///etc\x1b\\link", "\\x1b]8;;file:///etc\\x1b\\link"),
        ("bell\x07 cr\r bs\x08 nul\x00 del\x7f", "bell\\x07 cr\\x0d bs\\x08 nul\\x00 del\\x7f"),
        ("csi\x9b c1\x85", "csi\\x9b c1\\x85"),
        ("abc\u202edef \u2066x\u2069 \u200f \u061c", "abc\\u202edef \\u2066x\\u2069 \\u200f \\u061c"),
        ("name\udcff\udc80", "name\\xff\\x80"),  # bytes that were not UTF-8: shown as those bytes
        ("lone\ud800", "lone\\ud800"),
        ("é 日本 ✓ \u00a0", "é 日本 ✓ \u00a0"),  # printable Unicode as written
    ],
)
def test_shown_escapes_what_a_terminal_acts_on_and_nothing_else(text: str, printed: str) -> None:
    assert shown(text) == printed


def test_plain_is_text_never_markup() -> None:
    out = io.StringIO()
    terminal(file=out, width=80, color_system=None).print(plain("[/] [bold]x\x1b[0m", "bold"))
    assert out.getvalue() == "[/] [bold]x\\x1b[0m\n"


def test_the_terminal_colours_nothing_it_was_not_told_to() -> None:
    """Rich's highlighter would colour numbers, paths, quoted strings and ``True`` by its own guess (in a name or
    an error too): the terminal prints them in the style asked for, here none."""
    out = io.StringIO()
    terminal(file=out, width=200, color_system="standard", force_terminal=True).print(
        "ran 12 runs in /tmp/x 'a' 0x1f True None"
    )
    assert out.getvalue() == "ran 12 runs in /tmp/x 'a' 0x1f True None\n"


def test_where_out_wrote_is_one_line_whatever_the_width(tmp_path: Path) -> None:
    """The paths ``--out`` wrote are printed whole on one line (a path cut at the terminal's width is not one to
    copy): 80 columns here, paths far longer."""
    out = tmp_path / ("deep" * 20) / "out"
    result = CliRunner().invoke(main, ["run", "--set", "workload.frames=1", "--out", str(out)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    names = ("summary.json", "events.jsonl", "trace.json")
    line = f"wrote {', '.join(str(out / n) for n in names)} and {out / 'report.html'}"
    assert line in result.output.splitlines()
