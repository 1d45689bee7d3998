"""Drive a reference string through the real VidMm path (the shared loop rig, :mod:`wddmsim.research.rig`): one
``MakeResident`` per use, then ``Evict`` with ``EvictOnlyIfNecessary``, as a frame loop does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wddmsim.core.units import GiB, MiB
from wddmsim.ddi.status import HRESULT
from wddmsim.hw.gpu import GpuConfig
from wddmsim.research.reference import ReferenceString
from wddmsim.research.rig import LoopRig
from wddmsim.vidmm.policy.interface import EvictionPolicy

LOCAL = 16 * MiB
"""Local memory of the loop's adapter (the aperture is 8 MiB)."""


@dataclass(frozen=True, slots=True)
class LoopRun:
    paged_in: int
    """Bytes of every ``VidMmPageIn``."""
    recorded: ReferenceString
    """The string VidMm's uses made, as the recorder saw it (capacity: the segments the allocations may use)."""
    handles: tuple[int, ...]
    """The allocation handle of each use, in order (a future for Belady's MIN)."""


def run_loop(objects: Sequence[int], sizes: Sequence[int], policy: EvictionPolicy) -> LoopRun:
    """Run the uses ``objects`` (indices into ``sizes``, bytes) under ``policy``; every use is admitted."""
    gpu = GpuConfig(local_size=LOCAL, bar_size=8 * MiB, aperture_size=8 * MiB, system_size=1 * GiB)
    rig = LoopRig(gpu, policy)
    allocations = [rig.buffer(size) for size in sizes]
    handles: list[int] = []
    for o in objects:
        a = allocations[o]
        result = rig.make_resident([a])
        assert result in (HRESULT.S_OK, HRESULT.E_PENDING), result
        rig.recorder.close()
        handles.append(int(a.handle))
        rig.evict_lazily([a])
    rig.finish()
    return LoopRun(rig.paged_in(), rig.reference_string(), tuple(handles))
