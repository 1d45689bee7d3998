"""``report.html``: one self-contained, offline page about a run (decision 0029).

Sections: the verdict and the checks; the statistics; segment occupancy over time (a step chart per segment);
usage against budget per process and segment group, pressure events marked (decision 0175);
bytes paged in each direction per time slice (mirrored bars: to memory above, to system memory below); evictions
by cause; GPU faults and adapter resets; the segment map at a chosen moment, after GPUView's segment viewer (a slider steps through up to
``SNAPSHOTS`` moments; blocks coloured by process, VidMm's page tables grey); the page-table tree of each
address space (from an end-of-run snapshot); the paging-buffer disassembly with its multipass splits.

Everything is inline: CSS, SVG drawn here, the snapshots as JSON, and a small script (the slider).  A
Content-Security-Policy forbids every network fetch, so a stray reference fails loudly instead of leaking.
Charts are down-sampled and snapshots bounded so the file stays small for runs of many thousands of events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from wddmsim.scenarios.result import Check
from wddmsim.viz.buffers import Chunk
from wddmsim.viz.capture import CapturedBuffer
from wddmsim.viz.disasm import disassemble
from wddmsim.viz.eventlog import Record
from wddmsim.viz.page import document, table
from wddmsim.viz.pagetables import AddressSpaceTree, TableNode
from wddmsim.viz.processes import GROUP_NAMES
from wddmsim.viz.report_data import MAX_INCIDENTS, MAX_MARKS, SNAPSHOTS, ReportData
from wddmsim.viz.segmap import SegmentMap
from wddmsim.viz.summary import BYTE_COUNTERS, EVICTION_COUNTERS
from wddmsim.viz.svg import COLOURS, Series, envelope, horizontal_bars, human, mirrored_bars, step_chart

MAX_SNAPSHOT_BLOCKS = 12_000
"""Fewer moments when the maps would hold more blocks than this in all."""
TIME_BUCKETS = 48
CHART_POINTS = 600
MAX_DISASM_LINES = 64
MAX_TABLE_ROWS = 200

_PROCESS_COLOURS = ("#1f77b4", "#e377c2", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#bcbd22", "#d62728")

_SCRIPT = r"""
(function(){
'use strict';
var data=JSON.parse(document.getElementById('snapshots').textContent);
var colours=data.colours, segs=data.segments, snaps=data.snapshots;
var scrub=document.getElementById('scrub'), label=document.getElementById('scrub-label');
function hex(n){return '0x'+n.toString(16);}
function size(n){var u=['B','KiB','MiB','GiB','TiB'],i=0;while(n>=1024&&i<4){n/=1024;i++;}
  return (i?Math.round(n*10)/10:n)+' '+u[i];}
function colour(b){return b[2]===0?colours[(b[3]>>2)%colours.length]:'#90a4ae';}
function name(b){return b[2]===0?'allocation '+hex(b[4]):b[4];}
function el(tag,attrs,text){var e=document.createElementNS(tag==='svg'||tag==='rect'||tag==='title'||tag==='text'?
  'http://www.w3.org/2000/svg':'http://www.w3.org/1999/xhtml',tag);for(var k in attrs){e.setAttribute(k,attrs[k]);}
  if(text!==undefined){e.textContent=text;}return e;}
function render(k){
  var snap=snaps[k];label.textContent='event '+snap.i+' ('+snap.e+') at '+snap.t.toLocaleString()+' ns';
  var host=document.getElementById('segmap');host.textContent='';
  segs.forEach(function(seg){
    var blocks=snap.m[seg.id]||[], used=0;blocks.forEach(function(b){used+=b[1];});
    var box=el('div',{'class':'segmap','data-segment':seg.id});
    box.appendChild(el('h3',{},'segment '+seg.id+' ('+seg.kind+', '+size(seg.size)+'): '+size(used)+' held in '+
      blocks.length+' block(s), '+size(seg.size-used)+' free'));
    var svg=el('svg',{viewBox:'0 0 1000 34',id:'segmap-svg-'+seg.id});
    svg.appendChild(el('rect',{x:0,y:2,width:1000,height:30,fill:'#eceff1'}));
    blocks.forEach(function(b){var r=el('rect',{x:(b[0]/seg.size*1000).toFixed(2),y:2,
      width:Math.max(b[1]/seg.size*1000,0.5).toFixed(2),height:30,fill:colour(b),'class':'block'});
      r.appendChild(el('title',{},name(b)+' @ '+hex(b[0])+', '+size(b[1])));svg.appendChild(r);});
    box.appendChild(svg);
    var det=el('details',{}),sum=el('summary',{},'blocks');det.appendChild(sum);
    var t=el('table',{'class':'blocks'}),head=el('tr',{});
    ['offset','size','held by','process'].forEach(function(h){head.appendChild(el('th',{},h));});t.appendChild(head);
    blocks.slice(0,data.maxRows).forEach(function(b){var tr=el('tr',{});tr.appendChild(el('td',{'class':'n mono'},hex(b[0])));
      tr.appendChild(el('td',{'class':'n'},size(b[1])));tr.appendChild(el('td',{},name(b)));
      tr.appendChild(el('td',{'class':'n mono'},b[3]?hex(b[3]):'VidMm'));t.appendChild(tr);});
    det.appendChild(t);box.appendChild(det);host.appendChild(box);
  });
}
scrub.max=String(snaps.length-1);scrub.value=String(snaps.length-1);
scrub.addEventListener('input',function(){render(+scrub.value);});
document.getElementById('prev').addEventListener('click',function(){scrub.value=String(Math.max(+scrub.value-1,0));
  render(+scrub.value);});
document.getElementById('next').addEventListener('click',function(){
  scrub.value=String(Math.min(+scrub.value+1,snaps.length-1));render(+scrub.value);});
if(snaps.length){render(snaps.length-1);}
document.documentElement.dataset.rendered='1';
})();
"""


# --- sections -------------------------------------------------------------------------------------------------


def _checks(checks: Sequence[Check]) -> str:
    rows = [("✓" if c.ok else "✗", c.operation, c.step, c.detail) for c in checks]
    return table(("", "operation", "what was checked", "result"), rows)


RESEARCH_KEYS = (
    "paged_in_bytes",
    "paged_out_bytes",
    "paged_in_over_lower_bound",
    "faults",
    "compulsory_faults",
    "thrash_bytes",
    "frames",
    "frame_paging_bytes_p50",
    "frame_paging_bytes_p99",
    "frame_paging_bytes_max",
    "frame_stall_ns_p50",
    "frame_stall_ns_p99",
    "frame_stall_ns_max",
    "frame_residency_stall_ns_p50",
    "frame_residency_stall_ns_p99",
    "frame_residency_stall_ns_max",
)


def _bytes(key: str) -> bool:
    return key.startswith(("Bytes", "Total", "Paging")) or "bytes" in key


def _statistics(summary: dict[str, Any]) -> str:
    def pick(keys: Sequence[str]) -> list[tuple[str, int | float | None]]:
        return [(k, int(summary.get(k, 0))) for k in keys]

    groups = [
        ("Paging transfer (D3DKMT_QUERYSTATISTICS_PAGING_TRANSFER)", pick(BYTE_COUNTERS)),
        (
            "Evictions and faults",
            pick(
                (
                    "Evictions",
                    *EVICTION_COUNTERS.values(),
                    "EvictionsDemotedToAperture",
                    "TotalBytesEvicted",
                    "Faults",
                    "FaultsFirstTimeAccess",
                    "GpuPageFaults",
                )
            ),
        ),
        (
            "Paging buffers",
            pick(
                (
                    "PagingBuffersSubmitted",
                    "PagingBufferBytes",
                    "BuildPagingBufferCalls",
                    "PagingOperations",
                    "MultipassOperations",
                    "ExtraPasses",
                    "PacketsExecuted",
                    "MakeResidentCalls",
                    "MakeResidentRefused",
                    "AllocationsCreated",
                )
            ),
        ),
    ]
    if "frames" in summary:  # the research metrics of decision 0157 (``run`` and ``replay`` with ``--out``)
        groups.append(("Research metrics (per run, per frame)", [(k, summary.get(k)) for k in RESEARCH_KEYS]))
    parts = ['<div class="cols">']
    for title, rows in groups:
        shown = [
            (k, "-" if v is None else f"{v:,}" + (f" ({human(v)})" if _bytes(k) and isinstance(v, int) and v else ""))
            for k, v in rows
        ]
        parts.append(f"<div><h3>{escape(title)}</h3>{table(('counter', 'value'), shown, (False, True))}</div>")
    operations: dict[str, int] = summary.get("Operations", {})
    ranked = sorted(operations.items(), key=lambda kv: -kv[1])
    parts.append(
        "<div><h3>Paging operations</h3>" + table(("operation", "count"), ranked, (False, True)) + "</div></div>"
    )
    return "".join(parts)


def _occupancy(data: ReportData) -> str:
    start, end = data.span()
    series = [
        Series(
            f"segment {s} ({info.kind}, {human(info.size)})",
            COLOURS[i % len(COLOURS)],
            envelope(data.occupancy[s].points(), start, end, CHART_POINTS),
        )
        for i, (s, info) in enumerate(sorted(data.segments.items()))
    ]
    top = max((info.size for info in data.segments.values()), default=1)
    return step_chart(series, start=start, end=end, y_max=top, title="bytes resident per segment over time")


def _traffic(data: ReportData) -> tuple[str, str]:
    start, end = data.span()
    per = {k: data.traffic[k].slices(start, end, TIME_BUCKETS) for k in BYTE_COUNTERS}
    up_keys = (
        ("BytesTransferredFromMdlToMemory", "paged in (system → memory)"),
        ("BytesTransferredFromApertureToMemory", "aperture → memory"),
        ("BytesFilled", "filled"),
        ("BytesMappedIntoAperture", "mapped into the aperture"),
    )
    down_keys = (
        ("BytesTransferredFromMemoryToMdl", "paged out (memory → system)"),
        ("BytesTransferredFromMemoryToAperture", "memory → aperture"),
        ("BytesDiscarded", "discarded"),
        ("BytesUnmappedFromAperture", "unmapped from the aperture"),
    )
    colours = iter(COLOURS)
    up = [Series(label, next(colours), per[k]) for k, label in up_keys if per[k]]
    down = [Series(label, next(colours), per[k]) for k, label in down_keys if per[k]]
    chart = mirrored_bars(up, down, start=start, end=end, buckets=TIME_BUCKETS, title="bytes paged per time slice")
    totals = table(
        ("direction", "bytes"),
        [(label, human(sum(v for _, v in per[k]))) for k, label in (*up_keys, *down_keys)],
        (False, True),
    )
    return chart, totals


def _evictions(data: ReportData) -> str:
    bars = [
        (
            f"{cause} ({EVICTION_COUNTERS.get(cause, 'other')})",
            n,
            f"· {human(data.evicted_bytes[cause])} · "
            + ", ".join(f"{d} {k}" for d, k in sorted(data.evicted_to[cause].items())),
        )
        for cause, n in data.evictions.most_common()
    ]
    return horizontal_bars(bars, title="evictions by cause")


def _incidents(data: ReportData) -> str:
    """GPU faults, adapter resets and power transitions, in order (the first 50)."""
    if not data.incidents:
        return "<p class=muted>No GPU fault, no adapter reset and no power transition.</p>"
    hidden = data.incident_count - len(data.incidents)
    more = f"<p class=muted>… {hidden} more</p>" if hidden else ""
    return (
        table(("event", "time (ns)", "what", "detail"), data.incidents[:MAX_INCIDENTS], (True, True, False, False))
        + more
    )


def _snapshot_blocks(segment_map: SegmentMap) -> list[list[object]]:
    """A segment's blocks for the slider: [offset, size, kind, process, handle or label]; adjacent blocks of
    VidMm's own objects merged (a run of page tables is one block)."""
    merged: list[tuple[int, int, int, int, object, int]] = []  # ..., how many were merged
    for b in segment_map.blocks:
        kind = {"allocation": 0, "page-table": 1}.get(b.owner, 2)
        if kind and merged and merged[-1][2] == kind and merged[-1][0] + merged[-1][1] == b.offset:
            offset, size, _, process, _, count = merged[-1]
            label = f"{count + 1} page tables" if kind == 1 else f"{count + 1} VidMm objects"
            merged[-1] = (offset, size + b.size, kind, process, label, count + 1)
            continue
        merged.append((b.offset, b.size, kind, b.process, b.allocation if kind == 0 else b.label, 1))
    return [list(m[:5]) for m in merged]


def _snapshot_data(data: ReportData) -> dict[str, Any]:
    """The slider's moments (decision 0190's rule), fewer when their maps hold more than ``MAX_SNAPSHOT_BLOCKS``
    blocks in all: evenly spaced among them, the first and the last kept."""
    moments = data.moments
    count = len(moments)
    while count > 2 and sum(m.blocks for m in moments) > MAX_SNAPSHOT_BLOCKS:
        count = max(2, count * MAX_SNAPSHOT_BLOCKS // sum(m.blocks for m in moments))
        moments = [moments[(len(moments) - 1) * k // (count - 1)] for k in range(count)]
    snaps = [
        {
            "i": m.index,
            "t": m.time,
            "e": m.event,
            "m": {str(s): _snapshot_blocks(segment_map) for s, segment_map in m.maps.items()},
        }
        for m in moments
    ]
    return {
        "colours": list(_PROCESS_COLOURS),
        "maxRows": MAX_TABLE_ROWS,
        "segments": [{"id": s, "kind": info.kind, "size": info.size} for s, info in sorted(data.segments.items())],
        "snapshots": snaps,
    }


_ACCOUNT_LINES = (
    ("budget", "budget", "#d62728"),
    ("usage", "usage (residency lists)", "#1f77b4"),
    ("resident", "resident in memory", "#2ca02c"),
    ("aperture", "in the aperture", "#9467bd"),
    ("committed", "committed", "#8c564b"),
)


def _mark_label(r: Record) -> str:
    name = r["event"]
    if name == "VidMmProcessBudgetChange":
        return f"budget {human(r['Budget'])} ({r.get('Cause', '')})"
    if name == "VidMmTrimNotification":
        return f"trim {human(r['NumBytesToTrim'])}"
    if name == "VidMmProcessPriorityChange":
        return "foreground" if r.get("Foreground") else "background"
    if name == "ProcessLifetime":
        return f"process {r['hProcess']:#x} {r['Action']}"
    if name == "AdapterPowerState":
        return f"{r['DevicePowerState']} ({r['Transition']})"
    return str(name)


def _processes(data: ReportData) -> str:
    """Per process and segment group: usage against budget over time, pressure events marked (decision 0175)."""
    start, end = data.span()
    parts: list[str] = []
    for process, groups in sorted(data.accounts.items()):
        for group, account in sorted(groups.items()):
            final = account.final
            if not account.moved or final is None:
                continue
            lines = [
                Series(label, colour, envelope(account.lines[key].points(), start, end, CHART_POINTS))
                for key, label, colour in _ACCOUNT_LINES
                if key in ("budget", "usage") or key in account.nonzero
            ]
            name = GROUP_NAMES[group].replace("_", "-")
            chart = step_chart(
                lines,
                start=start,
                end=end,
                y_max=account.top,
                title=f"process {process:#x} {name}: usage against budget",
                marks=[(r["time"], _mark_label(r)) for r in data.marks(process, group)],
            )
            parts.append(
                f'<div class="process-chart" data-process="{process:#x}" data-group="{name}">'
                f"<h3>process {process:#x}, {name} memory</h3>{chart}"
                f'<p class="muted">at the end: usage {human(final.usage)} of a {human(final.budget)} budget; '
                f"committed {human(final.committed)}, resident {human(final.resident)}, in the aperture "
                f"{human(final.aperture)} (demoted {human(final.demoted)}), in system memory "
                f"{human(final.evicted)}; {human(final.evicted_total)} evicted in all</p></div>"
            )
    if not parts:
        return '<p class="muted">no process allocated video memory</p>'
    return "".join(parts)


def _process_legend(data: ReportData) -> str:
    processes = sorted(data.processes)
    items = [
        f'<span class="swatch" style="background:{_PROCESS_COLOURS[(p >> 2) % len(_PROCESS_COLOURS)]}"></span>'
        f"process {p:#x}"
        for p in processes
    ]
    items.append('<span class="swatch" style="background:#90a4ae"></span>VidMm (page tables)')
    return " ".join(items)


def _segment_maps(data: ReportData) -> str:
    snapshots = _snapshot_data(data)
    payload = json.dumps(snapshots, separators=(",", ":")).replace("</", "<\\/")
    moments = len(snapshots["snapshots"])
    return (
        '<p><button id="prev" type="button">◀ previous</button> '
        f'<input id="scrub" type="range" min="0" max="{max(moments - 1, 0)}" value="{max(moments - 1, 0)}" '
        'aria-label="moment"> <button id="next" type="button">next ▶</button> '
        f'<span id="scrub-label" class="muted">(the map needs the page\'s script)</span></p>'
        f'<p class="muted">{moments} moments, spread over the run\'s {data.memory_events:,} memory events; '
        "colours are processes, grey is VidMm's page tables. <code>wddmsim inspect RUN_DIR --at N</code> shows any "
        "event.</p>"
        f"<p>{_process_legend(data)}</p>"
        '<div id="segmap"></div>'
        f'<script type="application/json" id="snapshots">{payload}</script>'
    )


def _tree_node(node: TableNode, depth: int) -> str:
    span = node.coverage * node.entries
    head = (
        f"level {node.level} {node.kind} at {node.target} {node.address:#x} · VA {node.va:#x}–{node.va + span - 1:#x} "
        f"· {node.valid} / {node.entries} valid"
    )
    body: list[str] = []
    for run in node.large:
        what = "Zero" if run.zero else f"large page → {run.target} {run.address:#x}"
        body.append(f"<li class=mono>VA {run.va:#x} ({human(run.page_size)}): {escape(what)}</li>")
    for run in node.runs:
        what = "Zero" if run.zero else f"{run.target} {run.address:#x}"
        body.append(
            f"<li class=mono>VA {run.va:#x}–{run.va + run.pages * run.page_size - 1:#x}: {run.pages} × "
            f"{human(run.page_size)} → {escape(what)}</li>"
        )
    children = "".join(_tree_node(c, depth + 1) for c in node.children)
    more = "<li class=muted>… more not shown</li>" if node.truncated else ""
    inner = (f"<ul>{''.join(body)}{more}</ul>" if body or more else "") + children
    opened = " open" if depth < 2 else ""
    return f"<details{opened}><summary>{escape(head)}</summary>{inner}</details>"


def _page_tables(trees: Sequence[AddressSpaceTree]) -> str:
    if not trees:
        return "<p class=muted>No GPU virtual address spaces (a WDDM 1.x run).</p>"
    return "".join(_page_table_tree(t) for t in trees)


def _page_table_tree(t: AddressSpaceTree) -> str:
    if t.root is None:
        return (
            f"<h3>{escape(t.name)}</h3><p class=muted>The process was idle under memory pressure: its page tables "
            "left their segment. VidMm keeps its regions and mappings and rebuilds the tree before the process "
            "runs again.</p>"
        )
    head = f"<h3>{escape(t.name)}: {t.tables} tables, {t.valid_leaf_entries:,} valid leaf entries</h3>"
    return head + _tree_node(t.root, 0)


def _disassembly(data: ReportData, buffers: Sequence[CapturedBuffer]) -> str:
    if not buffers:
        return "<p class=muted>No paging buffer was captured.</p>"
    parts = [
        f"<p class=muted>{len(buffers)} paging buffer(s) kept: the first ones and those a multipass operation was "
        "split over (STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER, then a fresh buffer and the same call with "
        "MultipassOffset).</p>"
    ]
    for captured in buffers:
        chunks = data.chunks.get((0, captured.fence))
        notes = []
        if captured.continued:
            notes.append("continues the operation split over the previous buffer")
        if captured.split:
            notes.append("ends mid-operation: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER")
        head = (
            f"paging buffer, fence {captured.fence}: bytes [{captured.start:#x}, {captured.end:#x}), "
            f"{captured.operations} complete operation(s)" + (f" — {'; '.join(notes)}" if notes else "")
        )
        lines = disassemble(captured.data, captured.start)
        half = MAX_DISASM_LINES // 2
        shown = lines if len(lines) <= MAX_DISASM_LINES else [*lines[:half], None, *lines[-half:]]
        text: list[str] = []
        current = None
        for line in shown:
            if line is None:  # the middle of a long buffer: its start and its end (where a split shows) are kept
                text.append(f'<span class="muted">  … {len(lines) - 2 * half} more packets</span>')
                current = None
                continue
            chunk = _chunk_at(chunks, line.offset)
            if chunk is not None and chunk is not current:
                current = chunk
                text.append(f'<span class="op">; {escape(chunk.name)}</span>')
            text.append(escape(f"  {line.offset:#07x}  {line.length:#06x}  {line.text}"))
        cls = ' class="split"' if captured.split or captured.continued else ""
        opened = " open" if captured.split else ""
        parts.append(
            f"<details{opened}><summary{cls}>{escape(head)}</summary><pre>{chr(10).join(text)}</pre></details>"
        )
    return "".join(parts)


# --- the page --------------------------------------------------------------------------------------------------


def _chunk_at(chunks: Sequence[Chunk] | None, offset: int) -> Chunk | None:
    """The chunk holding buffer byte ``offset`` (None: padding, or not known)."""
    for chunk in chunks or ():
        if chunk.start <= offset < chunk.end:
            return chunk
    return None


def build_report(
    rows: Iterable[Record],
    *,
    summary: dict[str, Any],
    checks: Sequence[Check] = (),
    trees: Sequence[AddressSpaceTree] = (),
    buffers: Sequence[CapturedBuffer] = (),
) -> str:
    """The whole page for one run's records and end-of-run snapshots."""
    fences = {b.fence for b in buffers}
    data = ReportData(keep_chunks=fences.__contains__)
    for index, r in enumerate(rows):
        data.see(r, index)
    data.finish()
    return render_report(data, summary=summary, checks=checks, trees=trees, buffers=buffers)


def render_report(
    data: ReportData,
    *,
    summary: dict[str, Any],
    checks: Sequence[Check] = (),
    trees: Sequence[AddressSpaceTree] = (),
    buffers: Sequence[CapturedBuffer] = (),
) -> str:
    """The whole page from a run's :class:`ReportData` (fed as the run went) and end-of-run snapshots."""
    verified = bool(summary.get("verified"))
    scenario = str(summary.get("scenario", "run"))
    traffic_chart, traffic_totals = _traffic(data)
    facts = (
        f"{'verified' if verified else 'VERIFICATION FAILED'} · scenario {scenario} · seed {summary.get('seed', 0)} · "
        f"{summary.get('driver_model', '')} · {data.count:,} events · {summary.get('SimulatedTimeNs', 0):,} ns simulated"
    )
    sections = [
        ("checks", "Checks", _checks(checks)),
        ("statistics", "Statistics", _statistics(summary)),
        ("occupancy", "Segment occupancy over time", _occupancy(data)),
        ("processes", "Usage against budget per process", _processes(data)),
        ("traffic", "Bytes paged in each direction", traffic_chart + traffic_totals),
        ("evictions", "Evictions by cause", _evictions(data)),
        ("incidents", "GPU faults and adapter resets", _incidents(data)),
        ("segments", "Segment map at a chosen moment", _segment_maps(data)),
        ("pagetables", "Page tables (end of run)", _page_tables(trees)),
        ("disasm", "Paging-buffer disassembly", _disassembly(data, buffers)),
    ]
    return document(
        title=f"wddmsim report: {scenario}",
        heading=f"wddmsim: {scenario}",
        facts=facts,
        ok=verified,
        sections=sections,
        script=_SCRIPT,
    )


__all__ = ["MAX_MARKS", "SNAPSHOTS", "build_report", "render_report"]
