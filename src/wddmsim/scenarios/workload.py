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

A scenario with ``[capture]`` replaces the generated resources with a real application's allocations
(:func:`captured`), each alive over its own frames; working sets are then drawn from those alive in each frame
(decision 0180).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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


@dataclass(frozen=True, slots=True)
class CapturedSpec:
    """A captured allocation of a process: what it is, and the frames it lives in."""

    spec: ResourceSpec
    first: int
    last: int
    resident: bool
    """Made resident when it is created (a D3D12 heap is, unless created not resident)."""


def captured(config: ScenarioConfig, process: int) -> list[CapturedSpec]:
    """The allocations of ``[capture]`` process ``process`` owns, in capture order: each a buffer of its captured
    size, CPU-visible or not, local or in the aperture (a non-local heap lives in system memory)."""
    assert config.capture is not None
    out: list[CapturedSpec] = []
    for r in config.capture.resources:
        if r.process != process:
            continue
        if r.group == "non-local":
            placement = Placement.APERTURE
        else:
            placement = Placement.CPU_VISIBLE if r.kind == "cpu-visible" else Placement.LOCAL
        usage = 0
        if placement != Placement.LOCAL:
            usage |= ResourceUsage.CPU_VISIBLE
        if placement == Placement.APERTURE:
            usage |= ResourceUsage.APERTURE_ONLY
        desc = ResourceDesc(ResourceKind.BUFFER, size=r.size, usage=usage)
        spec = ResourceSpec(r.name, ResourceKind.BUFFER, placement, desc, r.size)
        out.append(CapturedSpec(spec, r.first_frame, r.last_frame, r.resident))
    return out


def live_counts(config: ScenarioConfig, process: int) -> Callable[[int], int]:
    """How many of process ``process``'s captured allocations live in a frame (those created by then and not yet
    destroyed: the process's resources during that frame, in creation order)."""
    lives = [(c.first, c.last) for c in captured(config, process)]
    return lambda frame: sum(1 for first, last in lives if first <= frame <= last)


def frames(config: ScenarioConfig, count: int | Callable[[int], int], rng: np.random.Generator) -> Iterator[list[int]]:
    """Per frame, the indices (into the process's resources) its working set uses, in use order; ``count``: how
    many resources the process has (per frame, when they come and go: a capture)."""
    w = config.workload
    for frame in range(w.frames):
        live = count if isinstance(count, int) else count(frame)
        yield _working_set(config, frame, live, rng) if live else []


def _working_set(config: ScenarioConfig, frame: int, count: int, rng: np.random.Generator) -> list[int]:
    w = config.workload
    k = max(1, min(count, round(w.working_set * count)))
    hot = max(1, count // 5)
    match w.access:
        case "sequential":  # a window sliding by half its width
            start = (frame * max(1, k // 2)) % count
            return [(start + i) % count for i in range(k)]
        case "streaming":  # disjoint windows, each resource once per pass
            start = (frame * k) % count
            return [(start + i) % count for i in range(k)]
        case "random":
            return [int(i) for i in rng.choice(count, size=k, replace=False)]
        case _:  # hot-cold: the hot fifth every frame, the rest drawn from the cold ones
            cold = list(range(hot, count))
            extra = max(0, k - hot)
            picked = [int(i) for i in rng.choice(cold, size=min(extra, len(cold)), replace=False)] if cold else []
            return list(range(min(hot, count))) + picked
