"""report.html: one self-contained offline file, every section present, small even for long runs; its builders."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from wddmsim.core.units import MiB
from wddmsim.viz.eventlog import Record
from wddmsim.viz.pagetables import LeafRun, address_spaces
from wddmsim.viz.report import SNAPSHOTS, build_report
from wddmsim.viz.summary import statistics
from wddmsim.viz.svg import envelope

from .conftest import SavedRun

SECTIONS = (
    "checks",
    "statistics",
    "occupancy",
    "traffic",
    "evictions",
    "incidents",
    "segments",
    "pagetables",
    "disasm",
)


class _Outline(HTMLParser):
    """Tags, ids and every URL-bearing attribute of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tags: dict[str, int] = {}
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for key, value in attrs:
            if key == "id" and value:
                self.ids.add(value)
            if key in ("src", "href", "action", "data", "poster") and value and not value.startswith("#"):
                self.urls.append(value)


def _outline(html: str) -> _Outline:
    parser = _Outline()
    parser.feed(html)
    return parser


def test_the_report_is_one_offline_file_with_every_section(saved: SavedRun) -> None:
    html = saved.outputs.report.read_text()
    outline = _outline(html)
    assert outline.urls == [], "no external resource of any kind"
    assert not re.search(r"@import|url\(|<link\b|<iframe\b", html)
    assert "default-src 'none'" in html, "a Content-Security-Policy forbids any fetch"
    assert set(SECTIONS) <= outline.ids
    assert outline.tags["svg"] >= 3 and outline.tags["table"] >= 3 and outline.tags["script"] == 3


def test_the_report_stays_small(saved: SavedRun) -> None:
    assert saved.outputs.report.stat().st_size < 600_000


def test_the_segment_map_data_is_bounded_and_ends_at_the_last_event(residency: SavedRun) -> None:
    html = residency.outputs.report.read_text()
    payload = re.search(r'<script type="application/json" id="snapshots">(.*?)</script>', html, re.S)
    assert payload is not None
    data = json.loads(payload.group(1))
    assert [s["id"] for s in data["segments"]] == [1, 2, 3]
    snaps = data["snapshots"]
    assert 2 <= len(snaps) <= SNAPSHOTS + 1
    assert snaps[-1]["i"] == len(residency.rows) - 1
    assert [s["i"] for s in snaps] == sorted(s["i"] for s in snaps)
    merged = [b for s in snaps for blocks in s["m"].values() for b in blocks if b[2] == 1]
    assert any("page tables" in str(b[4]) for b in merged), "runs of page tables are merged into one block"


def test_the_report_shows_checks_counters_trees_and_multipass_disassembly(tour: SavedRun) -> None:
    html = tour.outputs.report.read_text()
    assert "verified" in html and "BytesTransferredFromMdlToMemory" in html
    assert "system paging process" in html and "level 3 table" in html
    assert "ends mid-operation: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER" in html
    assert "continues the operation split over the previous buffer" in html
    assert "; PagingOpTransfer (part 1)" in html and "; PagingOpTransfer (part 2)" in html
    assert "COPY" in html and "FILL" in html


def _long_log(ranges: int) -> list[Record]:
    rows: list[Record] = [
        {
            "time": 0,
            "event": "ReportSegment",
            "ulSegmentId": 1,
            "BaseAddress": 0,
            "Size": 64 * MiB,
            "Aperture": False,
            "CpuVisible": False,
        }
    ]
    for n in range(ranges):
        slot = n % 4000
        action = "allocate" if (n // 4000) % 2 == 0 else "free"
        rows.append(
            {
                "time": 10 * n,
                "event": "SegmentRange",
                "SegmentId": 1,
                "SegmentOffset": slot * 16384,
                "Size": 16384,
                "Action": action,
                "Owner": "allocation",
                "hAllocation": slot,
                "hProcess": 4 * (slot % 5),
                "Label": "",
            }
        )
        rows.append({"time": 10 * n, "event": "TotalBytesResidentInSegment", "SegmentId": 1, "TotalBytesResident": 0})
        rows.append({"time": 10 * n + 5, "event": "PagingOpVirtualFill", "Passes": 1, "Size": 16384, "FillSize": 16384})
    return rows


def test_a_long_run_gives_a_bounded_report() -> None:
    rows = _long_log(40_000)  # 120 000 events, up to 4 000 blocks held at once
    html = build_report(rows, summary={"verified": True, **statistics(rows)})
    assert len(html) < 1_000_000
    assert html.count("<polyline") == 1 and html.count("<rect") < 1_000


@pytest.mark.parametrize(
    ("points", "buckets", "expected"),
    [
        ([], 4, []),
        ([(0, 5)], 4, [(0, 5), (25, 5), (50, 5), (75, 5)]),
        ([(0, 1), (10, 9), (11, 2), (60, 3)], 4, [(0, 9), (25, 2), (50, 3), (75, 3)]),  # the peak survives
        ([(0, 1), (99, 7)], 2, [(0, 1), (50, 7)]),
    ],
)
def test_envelope_keeps_each_bucket_s_peak(
    points: list[tuple[int, int]], buckets: int, expected: list[tuple[int, int]]
) -> None:
    assert envelope(points, 0, 100, buckets) == expected


def test_page_table_snapshot_agrees_with_the_mmu_walk(tour: SavedRun) -> None:
    adapter = tour.run.adapter
    trees = address_spaces(adapter)
    assert [t.name for t in trees] == ["system paging process"]
    engine = adapter.gpu.engines[0]
    assert engine.root is not None and trees[0].root is not None
    stack = [trees[0].root]
    runs: list[LeafRun] = []
    while stack:
        node = stack.pop()
        stack += node.children
        runs += node.runs
    assert runs
    for run in runs:
        for va in (run.va, run.va + (run.pages - 1) * run.page_size):
            walk = adapter.gpu.mmu.walk(engine.root, va, root_entries=engine.root_entries)
            assert walk.target is not None and walk.target.name == run.target
            assert walk.address == run.address + (va - run.va)


def test_every_process_has_its_tree(residency: SavedRun) -> None:
    trees = address_spaces(residency.run.adapter)
    assert trees[0].name == "system paging process"
    assert len(trees) == 1 + 4
    present = [t for t in trees if t.root is not None]
    away = [t for t in trees if t.root is None]
    assert all(t.valid_leaf_entries > 0 for t in present)
    # the demo oversubscribes: idle processes' trees have left their segment (decision 0021), and say so
    spaces = residency.run.adapter.vidmm.va
    assert spaces is not None
    assert len(away) == sum(s.evicted for s in spaces.spaces.values() if s.owner is None)
    assert all(t.tables == 0 and "evicted" in t.name for t in away)
    assert all(t.name in residency.outputs.report.read_text() for t in away)


def test_the_statistics_show_the_research_metrics_of_a_run_that_has_frames(tour: SavedRun) -> None:
    summary = {**tour.outputs.values, "frames": 2, "paged_out_bytes": 3 * MiB, "faults": 7, "frame_stall_ns_p99": None}
    page = build_report(tour.rows, summary=summary)
    assert "Research metrics (per run, per frame)" in page
    assert "<td>paged_out_bytes</td><td class=n>3,145,728 (3 MiB)</td>" in page
    assert "<td>faults</td><td class=n>7</td>" in page
    assert "<td>frame_stall_ns_p99</td><td class=n>-</td>" in page, "None: no frame to take it from"
    assert "Research metrics" not in build_report(tour.rows, summary=tour.outputs.values), (
        "a demonstration has no frames"
    )
