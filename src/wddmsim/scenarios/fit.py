"""A workload's buffers must be able to be resident before its first frame (decisions 0166, 0168).

What it models: the checks an application cannot make but a configuration can.  The driver says which segments
each allocation may use (``SupportedReadSegmentSet`` and ``SupportedWriteSegmentSet``); an allocation larger than
all of them can never be resident, so ``MakeResident`` of it always fails and GPU work naming its VA faults.  A
workload that draws one (a 13.5 MiB surface on a 16 MiB card whose largest segment is 11.9 MiB) is refused
before its first frame, naming the setting that produced it.  So is a process whose own staging and readback
buffers each fit but could not be made resident together at setup: every frame copies from its staging buffer.
Never a refused ``MakeResident`` followed by GPU work, nor a device removal.
"""

from __future__ import annotations

from collections.abc import Sequence

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import format_size
from wddmsim.scenarios.app import App
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.held import LOCAL, NON_LOCAL, Resource
from wddmsim.system import Adapter


def check_fits(adapter: Adapter, apps: Sequence[App]) -> None:
    """Raise :class:`ConfigurationError` for the first resource larger than every segment it may use."""
    for app in apps:
        for r in app.resources + [app.staging, app.readback] + ([app.pool] if app.pool is not None else []):
            allocation = adapter.vidmm.residency.allocations[r.handle]
            room = _room(adapter, allocation.usable_set)
            if allocation.size > max(room.values()):
                raise _too_large(app, r, allocation.size, room)


def check_capture(adapter: Adapter, config: ScenarioConfig) -> None:
    """Raise :class:`ConfigurationError` for a captured allocation larger than every segment of the adapter: it
    could never be made resident (decision 0181).  Checked before the first frame, before any is created."""
    if config.capture is None:
        return
    room = _room(adapter, ~0)
    largest = max(room.values())
    for i, r in enumerate(config.capture.resources):
        if r.size > largest:
            segments = ", ".join(f"segment {s}: {format_size(n)}" for s, n in sorted(room.items(), key=lambda i: -i[1]))
            raise ConfigurationError(
                f"capture.resources[{i}].size",
                format_size(r.size).replace(" ", ""),
                f"{r.name} is larger than every segment of the adapter ({segments}), so it could never be made "
                "resident: raise adapter.vram or adapter.aperture",
            )


def check_timeline(adapter: Adapter, config: ScenarioConfig) -> None:
    """Raise :class:`ConfigurationError` for a timeline ``budget`` larger than its segment group: the OS cannot
    grant more than the group holds (decision 0185).  Checked before the first frame, once the adapter is built
    (the group's capacity is what its segments hold, not ``adapter.vram``)."""
    budgets = adapter.vidmm.residency.budgets
    for e in config.timeline:
        for key, group, value in (("local", LOCAL, e.local), ("non_local", NON_LOCAL, e.non_local)):
            capacity = budgets.capacity(group)
            if value is not None and value > capacity:
                raise ConfigurationError(
                    f"timeline[{e.index}].{key}",
                    format_size(value).replace(" ", ""),
                    f"exceeds the capacity of the {key.replace('_', '-')} segment group ({format_size(capacity)}): "
                    'lower it, give "released", or raise adapter.vram or adapter.aperture',
                )


def check_setup(adapter: Adapter, apps: Sequence[App]) -> None:
    """Raise :class:`ConfigurationError` if a process's own buffers (staging, readback, tile pool) could not be made
    resident together at setup, even with ``CantTrimFurther``: each fits a segment, but not all at once (decision
    0168).  Its frames' GPU copies from the staging buffer would fault."""
    for app in apps:
        if app.ready:
            continue
        own = [app.staging, app.readback] + ([app.pool] if app.pool is not None else [])
        sizes = ", ".join(f"{r.name} {format_size(r.spec.size)}" for r in own)
        usable = 0
        for r in own:
            usable |= adapter.vidmm.residency.allocations[r.handle].usable_set
        room = ", ".join(f"segment {s}: {format_size(n)}" for s, n in _room(adapter, usable).items())
        raise ConfigurationError(
            "workload.uploads",
            app.config.workload.uploads,
            f"process {app.index}'s own buffers ({sizes}) cannot be resident together in the segments they may use "
            f"({room}), even with CantTrimFurther: lower workload.uploads (128 KiB of staging each) or raise "
            "adapter.cpu_visible or adapter.aperture",
        )


def _room(adapter: Adapter, segment_set: int) -> dict[int, int]:
    """Segment id -> size, for each segment of a segment-set mask, as VidMm learnt them from the driver."""
    spaces = adapter.vidmm.spaces
    return {s: spaces.get(s).size for s in spaces.ids_in(segment_set)}


def _too_large(app: App, r: Resource, size: int, room: dict[int, int]) -> ConfigurationError:
    """The error naming the setting that made ``r`` (its size distribution, or the buffer's own setting)."""
    segments = ", ".join(f"segment {s}: {format_size(n)}" for s, n in sorted(room.items(), key=lambda i: -i[1]))
    what = f"{r.name}, a {format_size(size)} {r.spec.placement.value} {r.spec.kind.name.lower()}"
    tail = f"is larger than every segment it may live in ({segments}), so it could never be made resident"
    w = app.config.workload
    if r is app.staging:
        return ConfigurationError(
            "workload.uploads", w.uploads, f"the staging buffer {what} {tail}: lower workload.uploads (128 KiB each)"
        )
    if r is app.readback:
        return ConfigurationError("adapter.cpu_visible", format_size(app.config.adapter.cpu_visible), f"{what} {tail}")
    if r is app.pool:
        return ConfigurationError("workload.tile_pool", w.tile_pool, f"the tile pool {what} {tail}")
    levels = " with its MIP levels" if r.spec.levels and len(r.spec.levels) > 1 else ""
    return ConfigurationError(
        "workload.sizes.max",
        format_size(w.sizes.max).replace(" ", ""),
        f"drew {what}{levels}, which {tail}: lower workload.sizes.max or raise adapter.vram",
    )
