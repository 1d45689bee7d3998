"""Why VidMm could not make room (decision 0158): the failure of a placement, explained.

When no candidate segment can give an allocation a range -- neither free room nor room made by evicting -- the
request fails (``E_OUTOFMEMORY``, ``STATUS_GRAPHICS_NO_VIDEO_MEMORY``).  Before it does, :func:`no_room` takes a
snapshot of what stood in the way: for each candidate segment its free bytes, its largest hole and the longest
run of free or evictable ranges; for each range placed there, whose it is and why it was not a victim -- needed
by this same request, pinned, vetoed by the eviction policy (what blocks), and, for the record, CPU-locked or in
a device's residency list (victims of the last rung: they come back before their device runs).  A range with no
blocking reason is evictable: the allocation did not fit because the evictable ranges are not side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from wddmsim.core.units import format_size
from wddmsim.ddi.base import HANDLE
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.events import VidMmNoRoom
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.policy import EvictionPolicy, RoomRequest
from wddmsim.vidmm.segments import SegmentSpace

BLOCKING = ("needed by this request", "pinned", "vetoed by")
"""Reasons that keep a range from being a victim on every rung of the ladder."""


def _reasons(v: object, space: SegmentSpace, protected: set[HANDLE], policy: EvictionPolicy, size: int) -> str:
    if not isinstance(v, VidMmAllocation):
        return f"VidMm's own {type(v).__name__}"
    reasons = []
    if v.handle in protected:
        reasons.append("needed by this request")
    if v.pin_count:
        reasons.append(f"pinned ({v.pin_count})")
    request = RoomRequest(segment=space.id, size=size, alignment=0, from_end=False, owner=v, cause=MoveCause.PRESSURE)
    if not policy.may_evict(v, request):
        reasons.append(f"vetoed by {policy.name}")
    if v.lock is not None:
        reasons.append("CPU-locked")
    if v.residency_count and v.handle not in protected:
        reasons.append(f"in device {int(v.device.handle):#x}'s residency list")
    if not any(r.startswith(BLOCKING) for r in reasons):
        reasons.append("evictable")
    return "; ".join(reasons)


def longest_run(ranges: Iterable[tuple[int, int]]) -> int:
    """The size of the longest stretch that ``[start, end)`` ranges cover without a gap."""
    longest = start = end = 0
    for s, e in sorted(ranges):
        if s != end:
            start = s
        end = e
        longest = max(longest, end - start)
    return longest


def no_room(
    a: VidMmAllocation,
    candidates: list[SegmentSpace],
    protected: set[HANDLE],
    policy: EvictionPolicy,
    *,
    operation: str,
    time: int,
) -> VidMmNoRoom:
    """The diagnostic of a failed placement of ``a`` in ``candidates`` (``protected``: what the request needs)."""
    segments = []
    blockers = []
    for space in candidates:
        free = [(e.start, e.end) for e in space.ranges.free_extents()]
        open_ranges = list(free)
        for offset, owner in sorted(space.owners.items()):
            size = space.ranges.size_of(offset)
            why = _reasons(owner, space, protected, policy, a.size)
            handle = int(owner.handle) if isinstance(owner, VidMmAllocation) else 0
            blockers.append((handle, space.id, offset, size, why))
            if why.endswith("evictable"):
                open_ranges.append((offset, offset + size))
        holes = max((e - s for s, e in free), default=0)
        segments.append((space.id, space.size, space.ranges.free_bytes, holes, longest_run(open_ranges)))
    event = VidMmNoRoom(
        time=time,
        allocation=int(a.handle),
        size=a.size,
        device=int(a.device.handle),
        operation=operation,
        segments=tuple(segments),
        blockers=tuple(blockers),
        diagnosis="",
    )
    return replace(event, diagnosis=describe(event))


def describe(event: VidMmNoRoom) -> str:
    """One paragraph: the request, each candidate segment, and what held each of its ranges."""
    head = (
        f"no room for allocation {event.allocation:#x} ({format_size(event.size)}) of device {event.device:#x} "
        f"({event.operation})"
    )
    if not event.segments:
        return f"{head}: no segment may hold it."
    parts = []
    for segment, size, free, hole, run in event.segments:
        held = [
            f"{handle:#x} ({format_size(bytes_)}: {why})" if handle else f"{format_size(bytes_)} ({why})"
            for handle, seg, _, bytes_, why in event.blockers
            if seg == segment
        ]
        parts.append(
            f"segment {segment} ({format_size(size)}): {format_size(free)} free, largest hole {format_size(hole)}, "
            f"longest run of free or evictable ranges {format_size(run)}"
            + (f"; holding it: {', '.join(held)}" if held else "")
        )
    return f"{head}: " + ". ".join(parts) + "."


__all__ = ["BLOCKING", "describe", "no_room"]
