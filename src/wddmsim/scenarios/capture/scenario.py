"""The scenario form of a capture: its heaps as ``[[capture.resources]]``, their lifetimes as frames (decision 0180).

What it models: a capture gives sizes, segment groups, CPU visibility, residency at creation and lifetimes in
microseconds; a scenario runs frames.  The span from the first heap's creation to the last heap event is divided
into ``frames`` equal frames; a heap lives from the frame its creation falls in to the frame its destruction
falls in (the last frame if the capture never destroys it).  Sizes are rounded up to whole pages.  The adapter is
sized so the largest heap fits a segment it may use (decision 0181).  Everything else -- which live heaps each
frame uses, uploads, GPU work -- is the workload's model, as for a generated scenario.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from wddmsim.core.units import PAGE_SIZE, MiB, align_up, format_size
from wddmsim.scenarios.capture.gpgmm import Capture, CapturedHeap

DEFAULT_FRAMES = 12


def frame_of(ts: float, start: float, end: float, frames: int) -> int:
    """The frame capture time ``ts`` falls in: ``[start, end]`` cut into ``frames`` equal frames."""
    if end <= start:
        return 0
    return min(frames - 1, max(0, int((ts - start) * frames // (end - start))))


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def adapter_for(capture: Capture) -> dict[str, Any]:
    """An adapter where every heap fits with room beside it (decision 0181): the CPU-visible part of local memory
    twice the largest local heap the CPU sees, local memory twice the largest local heap and twice that part, the
    aperture twice the largest non-local heap; never below the defaults (local memory is sparse: only what is
    written costs RAM)."""
    sizes = [(h, align_up(h.size, PAGE_SIZE)) for h in capture.heaps]
    local = max((s for h, s in sizes if h.local), default=0)
    visible = max((s for h, s in sizes if h.local and h.cpu_visible), default=0)
    shared = max((s for h, s in sizes if not h.local), default=0)
    cpu_visible = max(16 * MiB, _pow2(2 * visible))
    vram = max(64 * MiB, _pow2(2 * local), 2 * cpu_visible)
    aperture = max(32 * MiB, _pow2(2 * shared))
    return {"vram": _size(vram), "cpu_visible": _size(cpu_visible), "aperture": _size(aperture)}


def _size(n: int) -> str:
    return format_size(n).replace(" ", "")


def _resource(capture: Capture, heap: CapturedHeap, name: str, frames: int) -> dict[str, Any]:
    start, end = capture.start, capture.end
    last = frames - 1 if heap.destroyed is None else frame_of(heap.destroyed, start, end, frames)
    return {
        "name": name,
        "size": align_up(heap.size, PAGE_SIZE),
        "group": "local" if heap.local else "non-local",
        "kind": "cpu-visible" if heap.cpu_visible else "gpu-only",
        "resident": heap.resident,
        "process": capture.processes.index(heap.pid),
        "first_frame": frame_of(heap.created, start, end, frames),
        "last_frame": last,
    }


def describe(capture: Capture, frames: int) -> str:
    heaps = capture.heaps
    total = sum(h.size for h in heaps)
    return (
        f"GPGMM capture {PurePath(capture.source).name}: {len(heaps)} heaps ({format_size(total)}) of "
        f"{len(capture.processes)} process(es), {len(capture.resources)} placed resources. Captured: heap sizes, "
        "segment groups, CPU visibility, residency at creation and lifetimes "
        f"({(capture.end - capture.start) / 1000:.1f} ms cut into {frames} frames). Modelled: which live heaps "
        "each frame uses (workload.access), uploads and GPU work, and the adapter."
    )


def document(capture: Capture, *, frames: int = DEFAULT_FRAMES, name: str | None = None) -> dict[str, Any]:
    """The scenario document of ``capture`` (what ``wddmsim run`` reads back)."""
    counts: dict[int, int] = {}
    resources = []
    for heap in capture.heaps:
        p = capture.processes.index(heap.pid)
        resources.append(_resource(capture, heap, f"p{p}.heap{counts.get(p, 0)}", frames))
        counts[p] = counts.get(p, 0) + 1
    return {
        "name": name or f"gpgmm-{PurePath(capture.source).stem}",
        "description": describe(capture, frames),
        "seed": 1,
        "adapter": adapter_for(capture),
        "workload": {"processes": len(capture.processes), "frames": frames},
        "capture": {
            "source": PurePath(capture.source).name,
            "start_us": capture.start,
            "end_us": capture.end,
            "resources": resources,
        },
    }


def _tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a JSON string is a TOML basic string


def to_toml(doc: dict[str, Any]) -> str:
    """``doc`` as TOML: each table's values, then its tables and arrays of tables (a scenario document: strings,
    numbers, booleans, lists of them, tables; no None)."""
    lines: list[str] = []

    def table(prefix: str, body: dict[str, Any], header: str) -> None:
        if header:
            lines.extend(["", header])
        for key, value in body.items():
            if not isinstance(value, dict) and not _tables(value):
                lines.append(f"{key} = {_value(value)}")
        for key, value in body.items():
            if isinstance(value, dict):
                table(f"{prefix}{key}.", value, f"[{prefix}{key}]")
            elif _tables(value):
                for item in value:
                    table(f"{prefix}{key}.", item, f"[[{prefix}{key}]]")

    table("", doc, "")
    return "\n".join(lines) + "\n"
