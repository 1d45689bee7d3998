"""Segment maps rebuilt from the log, and ``wddmsim inspect`` printing them."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from wddmsim.cli import main
from wddmsim.viz.eventlog import Record
from wddmsim.viz.inspect import bar, render, table
from wddmsim.viz.segmap import Block, SegmentInfo, SegmentMap, SegmentReplay, index_at_time

from .conftest import SavedRun

KiB = 1024


def _segment(size: int = 64 * KiB) -> Record:
    return {
        "time": 0,
        "event": "ReportSegment",
        "ulSegmentId": 1,
        "BaseAddress": 0,
        "Size": size,
        "Aperture": False,
        "CpuVisible": False,
    }


def _range(time: int, action: str, offset: int, size: int, **more: Any) -> Record:
    fields = {"Owner": "allocation", "hAllocation": 0x40, "hProcess": 0x10, "Label": ""} | more
    return {
        "time": time,
        "event": "SegmentRange",
        "SegmentId": 1,
        "SegmentOffset": offset,
        "Size": size,
        "Action": action,
        **fields,
    }


ROWS = [
    _segment(),
    _range(10, "allocate", 0, 16 * KiB),
    _range(20, "allocate", 32 * KiB, 8 * KiB, hAllocation=0x44),
    _range(
        25,
        "allocate",
        60 * KiB,
        4 * KiB,
        Owner="page-table",
        hAllocation=0,
        hProcess=0,
        Label="process level-0 table #0x0",
    ),
    {"time": 30, "event": "PagingOpTransfer"},
    _range(40, "free", 0, 16 * KiB),
]


@pytest.mark.parametrize(
    ("index", "blocks", "free", "largest", "previous", "next_"),
    [
        (0, [], 64 * KiB, 64 * KiB, None, 1),
        (1, [(0, 16 * KiB)], 48 * KiB, 48 * KiB, None, 2),
        (3, [(0, 16 * KiB), (32 * KiB, 8 * KiB), (60 * KiB, 4 * KiB)], 36 * KiB, 20 * KiB, 2, 5),
        (4, [(0, 16 * KiB), (32 * KiB, 8 * KiB), (60 * KiB, 4 * KiB)], 36 * KiB, 20 * KiB, 3, 5),
        (5, [(32 * KiB, 8 * KiB), (60 * KiB, 4 * KiB)], 52 * KiB, 32 * KiB, 3, None),
    ],
)
def test_the_map_after_each_event(
    index: int, blocks: list[tuple[int, int]], free: int, largest: int, previous: int | None, next_: int | None
) -> None:
    replay = SegmentReplay(ROWS)
    m = replay.at(index)[1]
    assert [(b.offset, b.size) for b in m.blocks] == blocks
    assert (m.free, m.largest_free) == (free, largest)
    assert (replay.previous_event(index), replay.next_event(index)) == (previous, next_)
    assert m.allocated + m.free == 64 * KiB


def test_snapshots_in_one_pass_equal_single_lookups() -> None:
    replay = SegmentReplay(ROWS)
    assert replay.snapshots([5, 1, 3]) == [replay.at(5), replay.at(1), replay.at(3)]
    assert replay.at(99) == replay.at(5), "past the end: the last event"


def test_blocks_know_their_owner_and_when_they_came() -> None:
    m = SegmentReplay(ROWS).at(3)[1]
    assert [b.name for b in m.blocks] == ["allocation 0x40", "allocation 0x44", "process level-0 table #0x0"]
    assert [b.since for b in m.blocks] == [1, 2, 3]
    assert m.last_change == 3
    assert m.fragmentation == pytest.approx(1 - 20 / 36)


def test_index_at_time() -> None:
    assert [index_at_time(ROWS, t) for t in (0, 9, 10, 24, 30, 1000)] == [0, 0, 1, 2, 4, 5]


def _map(blocks: list[tuple[int, int, int]], size: int = 64) -> SegmentMap:
    info = SegmentInfo(1, 0, size, False, False)
    return SegmentMap(info, 0, 0, tuple(Block(o, s, "allocation", 1, p, "", 0) for o, s, p in blocks), None)


@pytest.mark.parametrize(
    ("blocks", "width", "cells"),
    [
        ([], 8, "········"),
        ([(0, 64, 4)], 8, "████████"),
        ([(0, 32, 4)], 8, "████····"),
        ([(0, 4, 4)], 8, "█·······"),  # half a cell is enough
        ([(0, 3, 4)], 8, "▒·······"),  # less than half: partly held
        ([(0, 8, 4), (56, 8, 4)], 8, "█······█"),
        ([(6, 4, 4)], 8, "▒▒······"),
        ([(-8, 16, 4)], 8, "█·······"),  # an edited log: a block that starts before the segment
        ([(-6400, 8, 4)], 8, "········"),  # or lies wholly before it
        ([(60, 100, 4)], 8, "·······█"),  # or ends past it
    ],
)
def test_the_bar_shows_what_holds_each_cell(blocks: list[tuple[int, int, int]], width: int, cells: str) -> None:
    assert bar(_map(blocks), width).plain == cells


def _printed(replay: SegmentReplay, index: int, **kw: Any) -> str:
    console = Console(width=160, record=True, color_system=None)
    console.print(render(replay, index, **kw))
    return console.export_text()


def test_render_shows_the_table_the_totals_and_the_change() -> None:
    text = _printed(SegmentReplay(ROWS), 3)
    assert "event 3: SegmentRange at 25 ns" in text
    assert "memory events: previous 2, next 5" in text
    assert "segment 1 (local, 64 KiB) after event 3" in text
    assert "allocation 0x44" in text and "process level-0 table #0x0" in text and "VidMm" in text
    assert "placed" in text
    assert "allocated 28 KiB in 3 block(s), free 36 KiB, largest free block 20 KiB" in text
    assert "last change: event 3 allocated [0xf000, +4 KiB) (process level-0 table #0x0)" in text
    assert "last change: event 5 freed [0x0, +16 KiB) (allocation 0x40)" in _printed(SegmentReplay(ROWS), 5)


def test_inspect_a_saved_run_at_an_event_and_at_a_time(residency: SavedRun) -> None:
    run_dir = str(residency.outputs.events.parent)
    runner = CliRunner()
    result = runner.invoke(main, ["inspect", run_dir, "--at", "2000", "--segment", "2", "--rows", "5"])
    assert result.exit_code == 0, result.output
    assert "event 2000:" in result.output and "segment 2 (local" in result.output
    assert "segment 1 " not in result.output
    assert "more" in result.output
    by_time = runner.invoke(main, ["inspect", run_dir, "--time", "200000"])
    assert by_time.exit_code == 0 and "segment 3 (aperture" in by_time.output
    last = runner.invoke(main, ["inspect", run_dir])
    assert f"event {len(residency.rows) - 1}:" in last.output


def test_inspect_refuses_what_it_cannot_show(tmp_path: Path, tour: SavedRun) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["inspect", str(tmp_path)]).exit_code == 2, "no events.jsonl"
    run_dir = str(tour.outputs.events.parent)
    out_of_range = runner.invoke(main, ["inspect", run_dir, "--at", "999999"])
    assert out_of_range.exit_code == 2 and "is not an event of the log" in out_of_range.output
    both = runner.invoke(main, ["inspect", run_dir, "--at", "1", "--time", "1"])
    assert both.exit_code == 2


def test_a_segment_table_keeps_the_title_style_of_every_table() -> None:
    """The title is text, not markup (decision 0247), and still in rich's table-title style (italic), as before."""
    out = io.StringIO()
    Console(file=out, width=80, force_terminal=True, color_system="standard").print(table(_map([(0, 8, 4)])))
    assert out.getvalue().startswith("\x1b[3msegment 1 (local, 64 B) after event 0"), repr(out.getvalue()[:60])
