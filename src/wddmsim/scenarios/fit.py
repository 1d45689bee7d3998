"""Every resource a workload drew must fit in one segment it may live in (decision 0166).

What it models: the check an application cannot make but a configuration can.  The driver says which segments
each allocation may use (``SupportedReadSegmentSet`` and ``SupportedWriteSegmentSet``); an allocation larger than
all of them can never be resident, so ``MakeResident`` of it always fails and GPU work naming its VA faults.  A
workload that draws one (a 13.5 MiB buffer on a 16 MiB card whose largest segment is 11.9 MiB) is refused before
its first frame, naming the setting that produced it -- never run into a refused ``MakeResident`` or a device
removal.
"""

from __future__ import annotations

from collections.abc import Sequence

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import format_size
from wddmsim.scenarios.app import App, Resource
from wddmsim.system import Adapter


def check_fits(adapter: Adapter, apps: Sequence[App]) -> None:
    """Raise :class:`ConfigurationError` for the first resource larger than every segment it may use."""
    vidmm = adapter.vidmm
    for app in apps:
        for r in app.resources + [app.staging, app.readback] + ([app.pool] if app.pool is not None else []):
            allocation = vidmm.residency.allocations[r.handle]
            room = {s: vidmm.spaces.get(s).size for s in vidmm.spaces.ids_in(allocation.usable_set)}
            if allocation.size > max(room.values()):
                raise _too_large(app, r, allocation.size, room)


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
