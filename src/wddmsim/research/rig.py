"""A loop rig: one process, one device and one paging queue on a fresh adapter, its eviction policy observed by a
:class:`~wddmsim.research.reference.ReferenceRecorder`.

What it models: an application that drives residency itself, as a game's frame loop does -- ``pfnMakeResidentCb``
of what a frame needs (waiting on the paging fence), then ``pfnEvictCb`` with ``EvictOnlyIfNecessary``, so that
between uses an allocation stays placed until pressure takes it and the policy alone decides.  The benchmarks'
frame loop and the research tests share it, so both measure the same path.
"""

from __future__ import annotations

from collections.abc import Sequence

from wddmsim.ddi.residency import D3DDDI_CREATEPAGINGQUEUE, D3DDDI_EVICT_FLAGS, D3DDDI_MAKERESIDENT, D3DDDICB_EVICT
from wddmsim.ddi.status import HRESULT
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.research.reference import ReferenceRecorder, ReferenceString
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.vidmm.config import VidMmConfig
from wddmsim.vidmm.events import VidMmPageIn
from wddmsim.vidmm.policy.interface import EvictionPolicy, VidMmAllocation


class LoopRig:
    """An adapter on ``gpu`` whose eviction policy is ``policy`` wrapped in :attr:`recorder`; event log on."""

    def __init__(self, gpu: GpuConfig, policy: EvictionPolicy) -> None:
        self.recorder = ReferenceRecorder(policy)
        self.adapter: Adapter = build_adapter(SystemConfig(gpu=gpu, vidmm=VidMmConfig(eviction_policy=self.recorder)))
        self.adapter.events.enabled = True
        self.rm = self.adapter.vidmm.residency
        self.device = self.rm.create_device(self.rm.create_process())
        args = D3DDDI_CREATEPAGINGQUEUE(hDevice=self.device.handle)
        self.rm.create_paging_queue(args)
        self.queue = self.rm.objects.queue(args.hPagingQueue)

    def buffer(self, size: int) -> VidMmAllocation:
        """A new buffer of ``size`` bytes (not yet placed)."""
        desc = self.adapter.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=size))
        return self.rm.lifetimes.create_allocation(self.device, desc)

    def make_resident(self, chosen: Sequence[VidMmAllocation]) -> HRESULT:
        """``pfnMakeResidentCb`` of ``chosen``, waiting on the paging fence when VidMm answers ``E_PENDING``."""
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=self.queue.handle, NumAllocations=len(chosen), AllocationList=tuple(a.handle for a in chosen)
        )
        result = self.rm.make_resident(args)
        if result == HRESULT.E_PENDING:
            self.rm.wait(self.queue, args.PagingFenceValue)
        return result

    def evict_lazily(self, chosen: Sequence[VidMmAllocation]) -> None:
        """``pfnEvictCb`` of ``chosen`` with ``EvictOnlyIfNecessary``: placed until room is needed."""
        flags = D3DDDI_EVICT_FLAGS(EvictOnlyIfNecessary=True)
        handles = tuple(a.handle for a in chosen)
        self.rm.evict(
            D3DDDICB_EVICT(hDevice=self.device.handle, NumAllocations=len(chosen), AllocationList=handles, Flags=flags)
        )

    def finish(self) -> None:
        """Wait for every paging operation queued."""
        paging = self.adapter.vidmm.paging
        paging.wait(paging.flush())

    def paged_in(self) -> int:
        """Bytes of every ``VidMmPageIn`` so far (transfers, fills and aperture maps)."""
        return sum(e.size for e in self.adapter.events.of_type(VidMmPageIn))

    def reference_string(self) -> ReferenceString:
        """The string the recorder saw, over the adapter's segments."""
        return self.recorder.reference_string(self.adapter.vidmm.spaces.spaces)


__all__ = ["LoopRig"]
