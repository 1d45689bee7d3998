"""Drive a reference string through the real VidMm path: one ``MakeResident`` per use, then ``Evict`` with
``EvictOnlyIfNecessary`` (the allocation stays placed until pressure takes it), as a frame loop does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wddmsim.core.units import GiB, MiB
from wddmsim.ddi.residency import D3DDDI_CREATEPAGINGQUEUE, D3DDDI_EVICT_FLAGS, D3DDDI_MAKERESIDENT, D3DDDICB_EVICT
from wddmsim.ddi.status import HRESULT
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.research.reference import ReferenceRecorder, ReferenceString
from wddmsim.research.runs import paged_in_bytes
from wddmsim.system import SystemConfig, build_adapter
from wddmsim.vidmm.config import VidMmConfig
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
    recorder = ReferenceRecorder(policy)
    adapter = build_adapter(SystemConfig(gpu=gpu, vidmm=VidMmConfig(eviction_policy=recorder)))
    adapter.events.enabled = True
    rm = adapter.vidmm.residency
    device = rm.create_device(rm.create_process())
    queue_args = D3DDDI_CREATEPAGINGQUEUE(hDevice=device.handle)
    rm.create_paging_queue(queue_args)
    queue = rm.objects.queue(queue_args.hPagingQueue)
    allocations = [
        rm.lifetimes.create_allocation(device, adapter.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=size)))
        for size in sizes
    ]
    handles: list[int] = []
    for o in objects:
        a = allocations[o]
        args = D3DDDI_MAKERESIDENT(hPagingQueue=queue.handle, NumAllocations=1, AllocationList=(a.handle,))
        result = rm.make_resident(args)
        assert result in (HRESULT.S_OK, HRESULT.E_PENDING), result
        if result == HRESULT.E_PENDING:
            rm.wait(queue, args.PagingFenceValue)
        recorder.close()
        handles.append(int(a.handle))
        flags = D3DDDI_EVICT_FLAGS(EvictOnlyIfNecessary=True)
        rm.evict(D3DDDICB_EVICT(hDevice=device.handle, NumAllocations=1, AllocationList=(a.handle,), Flags=flags))
    adapter.vidmm.paging.wait(adapter.vidmm.paging.flush())
    recorded = recorder.reference_string(adapter.vidmm.spaces.spaces)
    return LoopRun(paged_in_bytes(adapter.events), recorded, tuple(handles))
