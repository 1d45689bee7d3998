"""A scenario scaled to another local-memory size (``wddmsim run SCENARIO --vram SIZE``, decision 0048).

What it models: the same machine, only larger or smaller.  A scenario file describes its GPU in proportions --
the CPU-visible part of local memory (the BAR segment), the aperture (GART) segment, and a workload of
``oversubscription x vram`` bytes.  Changing only ``adapter.vram`` used to grow the workload while the BAR and
the aperture kept their sizes, so the CPU-visible and aperture-only resources, which can live nowhere else, no
longer fit (``MakeResident`` failed with ``E_OUTOFMEMORY``, a device's residency list overflowed its segments).
Here the sizes the user did not set scale with ``adapter.vram``; a size the scenario cannot serve even scaled
is refused, naming ``adapter.vram`` and the range the scenario accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import GiB, KiB, MiB, align_up, format_size
from wddmsim.scenarios.config import (
    MODEL_LIMIT,
    VRAM_LIMIT,
    VRAM_MINIMUM,
    ScenarioConfig,
    apply_overrides,
    from_dict,
    read_adapter,
)

UNIT: Final = 64 * KiB
"""Segment sizes are whole 64 KiB units."""

SCALED: Final = ("adapter.cpu_visible", "adapter.aperture")
"""The parts of the GPU that keep their share of local memory when ``adapter.vram`` changes."""


def scaled_to_vram(doc: Mapping[str, object], given: Mapping[str, object], name: str) -> dict[str, Any]:
    """``given`` (dotted-key overrides that set ``adapter.vram``) with the scenario's CPU-visible part and
    aperture scaled to the new size, and system memory grown to hold the larger workload's backing stores --
    each only where the user did not set it.  Refuses (naming ``adapter.vram``) a size outside the range
    :func:`vram_range` gives; leaves any other bad value to :func:`~wddmsim.scenarios.config.from_dict`, which
    names it."""
    rest = {k: v for k, v in given.items() if k != "adapter.vram"}
    try:
        base = from_dict(apply_overrides(doc, rest), name=name)
        vram = read_adapter({"vram": given["adapter.vram"]}).vram
    except ConfigurationError:
        return dict(given)  # a value is bad in itself: the full read names it
    scaled = {k: v for k, v in _scaled(base, vram).items() if k not in given}
    low, high = vram_range(base)
    if not low <= vram <= high:
        raise ConfigurationError("adapter.vram", format_size(vram).replace(" ", ""), _rule(base, vram, low, high))
    return scaled | dict(given)


def _share(size: int, vram: int, base_vram: int) -> int:
    return max(UNIT, size * vram // base_vram // UNIT * UNIT)


def _scaled(base: ScenarioConfig, vram: int) -> dict[str, Any]:
    """The settings of ``base`` scaled to ``vram`` bytes of local memory."""
    a = base.adapter
    workload = base.workload_bytes if base.capture is not None else int(_oversubscription(base) * vram)
    return {
        "adapter.cpu_visible": _share(a.cpu_visible, vram, a.vram),
        "adapter.aperture": _share(a.aperture, vram, a.vram),
        "adapter.system_memory": max(a.system_memory, align_up(2 * workload + 64 * MiB, GiB)),
    }


def _oversubscription(base: ScenarioConfig) -> float:
    """Bytes of every process's resources over local memory: the workload's and those of the processes its
    timeline starts (a ``share`` scales with local memory; ``bytes`` do not, and count at the scenario's size)."""
    started = sum(
        e.share if e.share is not None else e.bytes / base.adapter.vram for e in base.timeline if e.event == "start"
    )
    return base.workload.oversubscription + started


def vram_range(base: ScenarioConfig) -> tuple[int, int]:
    """The smallest and the largest local memory ``base`` runs and verifies on, scaled (decision 0048); a capture's
    bytes do not grow with local memory (decision 0180)."""
    if base.capture is not None:
        return _floor(base), VRAM_LIMIT
    high = MODEL_LIMIT * 1000 // round(_oversubscription(base) * 1000) // UNIT * UNIT
    while int(_oversubscription(base) * high) > MODEL_LIMIT:
        high -= UNIT
    return min(_floor(base), high), high


FLOORS: Final = {
    "default": 8 * MiB,
    "stress": 8 * MiB,
    "tiles": 8 * MiB,
    "uploads": 16 * MiB,
    "focus-loss": 8 * MiB,
    "newcomer": 8 * MiB,
    "careless": 8 * MiB,
}
"""The smallest local memory each built-in scenario runs and verifies on, scaled: below it the per-process
buffers every frame needs resident at once (staging, readback, tile pool, a working set of CPU-visible and
aperture-only resources) outgrow the scaled BAR and aperture.  Measured with the scenario's own frame count by
``tests/cli/test_vram.py``, which runs every built-in at its floor and refuses it one step below."""


def _floor(base: ScenarioConfig) -> int:
    """A scenario file of the user's claims no floor beyond ``adapter.vram``'s own rule (4 MiB)."""
    return FLOORS.get(base.name, VRAM_MINIMUM)


def _rule(base: ScenarioConfig, vram: int, low: int, high: int) -> str:
    if vram < low:
        return (
            f"the {base.name} scenario needs at least {format_size(low)} (its per-process buffers must fit the "
            "CPU-visible part and the aperture, which scale with local memory)"
        )
    return (
        f"the {base.name} scenario needs at most {format_size(high)} ({base.workload.oversubscription} x local "
        f"memory of resources must stay within {format_size(MODEL_LIMIT)}, the most the reference model holds in RAM)"
    )
