"""Workload generation: which resources each process creates, and which of them each frame uses.

What it models: a frame loop over textures and buffers, as a game or a compute job issues it.  Each process gets
an equal share of ``oversubscription x vram`` bytes, cut into resources whose sizes follow the configured
distribution; a resource is a 2D surface (a texture) or a buffer, created CPU-visible (written in place through
locks), aperture-only (an upload heap in system memory the GPU reaches through the aperture), or neither (it
lives in local memory and is written by GPU copies from a staging buffer).  In the WDDM 1.x model CPU-visible
textures are swizzled surfaces: the CPU writes them level by level through swizzling ranges, and GPU work leaves
them alone (it would see their tiled layout).

The access pattern says which resources a frame uses (its working set).  Everything is drawn from one seeded
generator, in a fixed order, so a seed names a workload.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

import numpy as np

from wddmsim.core.units import PAGE_SIZE, KiB, align_up
from wddmsim.drivers.package import DriverCapabilities, DriverModel, UserModeDriver
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage
from wddmsim.scenarios.config import ScenarioConfig

TEXTURE_PITCH = 4 * KiB
"""Row pitch of the workload's textures (1024 RGBA8 texels): a tile row is a whole number of pages."""


class Placement(Enum):
    LOCAL = "local"
    """Not CPU-visible: prefers local memory the CPU cannot see; written by GPU copies."""
    CPU_VISIBLE = "cpu-visible"
    """CPU-visible: the BAR segment or the aperture; written in place through locks."""
    APERTURE = "aperture"
    """Aperture only: system pages the GPU reaches through the GART; written in place through locks."""


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """One resource of a process, as its user-mode driver describes it."""

    name: str
    kind: ResourceKind
    placement: Placement
    desc: ResourceDesc
    size: int
    """The allocation's size: what the driver will describe (whole pages; levels padded to tiles)."""
    levels: tuple[tuple[int, int], ...] = ()
    """``(offset, size)`` of each MIP level of a surface (the user-mode driver's own layout)."""

    @property
    def cpu_visible(self) -> bool:
        return self.placement != Placement.LOCAL

    @property
    def swizzled(self) -> bool:
        return bool(self.desc.usage & ResourceUsage.SWIZZLED)

    def regions(self) -> tuple[tuple[int, int], ...]:
        """What one lock shows linearly: each level of a swizzled surface (a swizzling range linearises one
        level), else the whole allocation."""
        return self.levels if self.swizzled else ((0, self.size),)


def _size(config: ScenarioConfig, rng: np.random.Generator) -> int:
    s = config.workload.sizes
    if s.distribution == "fixed" or s.min == s.max:
        raw = s.max
    elif s.distribution == "uniform":
        raw = int(rng.integers(s.min, s.max + 1))
    else:  # log-uniform
        raw = int(np.exp(rng.uniform(np.log(s.min), np.log(s.max))))
    return align_up(max(raw, PAGE_SIZE), PAGE_SIZE)


def resources(
    config: ScenarioConfig, process: int, rng: np.random.Generator, umd: UserModeDriver, caps: DriverCapabilities
) -> list[ResourceSpec]:
    """The resources process ``process`` creates: sizes until its share of the workload's bytes is reached (a
    surface laid out by the user-mode driver ``umd``; swizzled only if the driver ``caps`` says it swizzles)."""
    w = config.workload
    wddm1 = config.adapter.model == DriverModel.WDDM1
    share = config.workload_bytes // w.processes
    out: list[ResourceSpec] = []
    total = 0
    while total < share or not out:
        size = (
            min(_size(config, rng), align_up(max(share - total, PAGE_SIZE), PAGE_SIZE)) if out else _size(config, rng)
        )
        texture = rng.random() < w.textures
        roll = rng.random()
        if roll < w.aperture:
            placement = Placement.APERTURE
        elif roll < w.aperture + w.cpu_visible:
            placement = Placement.CPU_VISIBLE
        else:
            placement = Placement.LOCAL
        usage = 0
        if placement != Placement.LOCAL:
            usage |= ResourceUsage.CPU_VISIBLE
        if placement == Placement.APERTURE:
            usage |= ResourceUsage.APERTURE_ONLY
        name = f"p{process}.r{len(out)}"
        if texture:
            rows = max(size // TEXTURE_PITCH, 1)
            mips = 2 if rows >= 64 and rng.random() < 0.5 else 1
            if wddm1 and placement == Placement.CPU_VISIBLE and caps.swizzling:
                usage |= ResourceUsage.SWIZZLED  # locked linear through a swizzling range
            desc = ResourceDesc(
                ResourceKind.SURFACE, usage=usage, width_bytes=TEXTURE_PITCH, height=rows, mip_levels=mips
            )
            levels = umd.surface_levels(desc)
            actual = align_up(levels[-1].offset + levels[-1].size, PAGE_SIZE)
            spans = tuple((level.offset, level.size) for level in levels)
            out.append(ResourceSpec(name, ResourceKind.SURFACE, placement, desc, actual, spans))
        else:
            desc = ResourceDesc(ResourceKind.BUFFER, size=size, usage=usage)
            out.append(ResourceSpec(name, ResourceKind.BUFFER, placement, desc, size))
        total += out[-1].size
    return out


def frames(config: ScenarioConfig, count: int, rng: np.random.Generator) -> Iterator[list[int]]:
    """Per frame, the indices (into the process's resources) its working set uses, in use order."""
    w = config.workload
    k = max(1, min(count, round(w.working_set * count)))
    hot = max(1, count // 5)
    for frame in range(w.frames):
        match w.access:
            case "sequential":  # a window sliding by half its width
                start = (frame * max(1, k // 2)) % count
                chosen = [(start + i) % count for i in range(k)]
            case "streaming":  # disjoint windows, each resource once per pass
                start = (frame * k) % count
                chosen = [(start + i) % count for i in range(k)]
            case "random":
                chosen = [int(i) for i in rng.choice(count, size=k, replace=False)]
            case _:  # hot-cold: the hot fifth every frame, the rest drawn from the cold ones
                cold = list(range(hot, count))
                extra = max(0, k - hot)
                picked = [int(i) for i in rng.choice(cold, size=min(extra, len(cold)), replace=False)] if cold else []
                chosen = list(range(min(hot, count))) + picked
        yield chosen
