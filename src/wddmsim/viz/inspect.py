"""``wddmsim inspect``: a segment map at one event of a saved run, printed as a bar and a table (rich).

After GPUView's segment viewer: for each segment a bar of its address range (each cell coloured by what holds
most of it; ``▒`` partly held, ``·`` free), then one row per block -- offset, size, what holds it (an allocation and its process,
or one of VidMm's page tables), when it was placed, and a change marker on the block the last memory event
placed -- and the allocated / free totals, the largest free block and the memory events before and after.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from wddmsim.core.units import format_size
from wddmsim.viz.segmap import Block, SegmentMap, SegmentReplay
from wddmsim.viz.terminal import plain

PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan", "bright_magenta")


def colour_of(block: Block) -> str:
    """The colour of a block: by process for allocations, grey for VidMm's own objects."""
    if block.owner != "allocation":
        return "grey50"
    return PALETTE[(block.process >> 2) % len(PALETTE)]


def bar(segment_map: SegmentMap, width: int = 64) -> Text:
    """The segment as ``width`` cells, each in the colour of what holds most of its bytes: ``█`` when at least
    half the cell is held, ``▒`` when less, ``·`` when all of it is free."""
    size = segment_map.segment.size
    text = Text()
    if size <= 0 or width <= 0:
        return text
    cells: list[dict[int, int]] = [{} for _ in range(width)]
    for n, block in enumerate(segment_map.blocks):
        first = max(block.offset, 0) * width // size  # an edited log may place a block before the segment
        last = min((block.end - 1) * width // size, width - 1)
        for cell in range(first, last + 1):
            lo, hi = cell * size // width, (cell + 1) * size // width
            overlap = min(hi, block.end) - max(lo, block.offset)
            if overlap > 0:
                cells[cell][n] = cells[cell].get(n, 0) + overlap
    for cell, holders in enumerate(cells):
        span = (cell + 1) * size // width - cell * size // width
        if not holders:
            text.append("·", style="dim")
            continue
        block = segment_map.blocks[max(holders, key=lambda k: holders[k])]
        text.append("█" if sum(holders.values()) * 2 >= span else "▒", style=colour_of(block))
    return text


def table(segment_map: SegmentMap, *, limit: int = 40) -> Table:
    """The blocks of one segment (the first ``limit``), GPUView's columns where the model has them."""
    seg = segment_map.segment
    out = Table(  # an event log is the user's file: what it says prints as text (decision 0247)
        title=plain(
            f"segment {seg.id} ({seg.kind}, {format_size(seg.size)}) after event {segment_map.index}", "table.title"
        ),
        title_justify="left",
    )
    for column, justify in (
        ("change", "center"),
        ("offset", "right"),
        ("size", "right"),
        ("held by", "left"),
        ("process", "right"),
        ("placed at event", "right"),
    ):
        out.add_column(column, justify=justify)  # type: ignore[arg-type]
    for block in segment_map.blocks[:limit]:
        marker = "placed" if segment_map.last_change == block.since else ""
        out.add_row(
            marker,
            f"{block.offset:#x}",
            format_size(block.size),
            plain(block.name, colour_of(block)),
            f"{block.process:#x}" if block.process else "VidMm",
            str(block.since),
        )
    if len(segment_map.blocks) > limit:
        out.add_row("", "", "", f"... {len(segment_map.blocks) - limit} more", "", "")
    return out


def totals(segment_map: SegmentMap) -> Text:
    return Text(
        f"allocated {format_size(segment_map.allocated)} in {len(segment_map.blocks)} block(s), "
        f"free {format_size(segment_map.free)}, largest free block {format_size(segment_map.largest_free)}, "
        f"fragmentation {segment_map.fragmentation:.0%}"
    )


def render(
    replay: SegmentReplay, index: int, *, segments: tuple[int, ...] = (), rows: int = 40, width: int = 64
) -> RenderableType:
    """Everything ``wddmsim inspect`` prints for event ``index``."""
    index = min(max(index, 0), len(replay.rows) - 1) if replay.rows else 0
    maps = replay.at(index)
    row = replay.rows[index] if replay.rows else {"event": "(empty log)", "time": 0}
    before, after = replay.previous_event(index), replay.next_event(index)
    parts: list[RenderableType] = [
        plain(f"event {index}: {row['event']} at {row['time']:,} ns", "bold"),
        Text(
            f"memory events: previous {before if before is not None else '-'}, "
            f"next {after if after is not None else '-'}  "
            f"({len(replay.memory_events)} in the log; --at N moves)",
            style="dim",
        ),
    ]
    for seg_id, segment_map in sorted(maps.items()):
        if segments and seg_id not in segments:
            continue
        parts += [
            Text(""),
            table(segment_map, limit=rows),
            Text.assemble("  [", bar(segment_map, width), "]"),
            totals(segment_map),
        ]
        if segment_map.last_change is not None:
            change = replay.rows[segment_map.last_change]
            held = change["Label"] or f"allocation {change['hAllocation']:#x}"
            parts.append(
                plain(
                    f"last change: event {segment_map.last_change} {change['Action']}d "
                    f"[{change['SegmentOffset']:#x}, +{format_size(change['Size'])}) ({held})",
                    "dim",
                )
            )
    return Group(*parts)


__all__ = ["bar", "colour_of", "render", "table", "totals"]
