"""``wddmsim inspect RUN --why-evicted HANDLE``: every time one allocation left a segment, who chose it and why.

Read from a saved run's ``events.jsonl``: each ``VidMmEvict`` of the allocation with its event index, time,
segment, size, cause and destination, the eviction policy that chose it (none when the cause decided: an
``Evict``, a trim, a destroy ...) and the reason the policy gave -- its score or its rule (decision 0140) -- and
the event at which it was paged in again, if it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from wddmsim.core.units import format_size
from wddmsim.viz.eventlog import Record
from wddmsim.viz.terminal import plain

PAGE_IN = "PageInAllocation"


def known(log: Sequence[Record], handle: int) -> bool:
    """Whether ``handle`` names an allocation of this run (created, placed or evicted in the log)."""
    fields = ("hVidMmGlobalAlloc", "hAllocationHandle", "pVidMmAlloc")
    return any(any(row.get(f) == handle for f in fields) for row in log)


def evictions(log: Sequence[Record], handle: int) -> list[tuple[int, Record, int | None]]:
    """``(index, VidMmEvict record, index of the next page-in or None)`` for each eviction of ``handle``."""
    out: list[tuple[int, Record, int | None]] = []
    for i, row in enumerate(log):
        if row["event"] == "VidMmEvict" and row.get("pVidMmAlloc") == handle:
            back = next(
                (
                    j
                    for j in range(i + 1, len(log))
                    if log[j]["event"] == PAGE_IN and log[j]["hAllocationHandle"] == handle
                ),
                None,
            )
            out.append((i, row, back))
    return out


def render_why(log: Sequence[Record], handle: int) -> RenderableType:
    """What ``inspect --why-evicted`` prints: one paragraph per eviction (reasons are long: no table columns)."""
    found = evictions(log, handle)
    if not found:
        return Text(f"allocation {handle:#x} was never evicted in this run")
    parts: list[RenderableType] = [Text(f"allocation {handle:#x} was evicted {len(found)} time(s)", style="bold")]
    for i, row, back in found:
        policy = row.get("Policy")
        chosen = f"chosen by {policy}" if policy else "no policy chose it (the cause decided)"
        reason = row.get("Reason") or "(not recorded: a run from before decision 0140)"
        again = "not paged in again" if back is None else f"paged in again at event {back}"
        parts += [
            Text(""),
            plain(  # the log is the user's file: its words print as text (decision 0247)
                f"event {i} at {row['time']:,} ns: left segment {row['SegmentId']} ({format_size(row['Size'])}), "
                f"cause {row['Cause']}, to {row['Destination']}"
            ),
            plain(f"  {chosen}: {reason}"),
            Text(f"  {again}", style="dim"),
        ]
    return Group(*parts)


__all__ = ["evictions", "known", "render_why"]
