"""One process of a workload: an application and its user-mode driver, speaking only the runtime callbacks.

What it models:

- **Setup** -- a device and a paging queue; the resources of :func:`~wddmsim.scenarios.workload.resources`
  created with ``pfnAllocateCb`` and the reference user-mode driver's private data; on WDDM 2.x a context, a GPU VA
  mapping of every resource, a CPU-visible staging buffer (uploads to resources the CPU cannot see) and a
  readback buffer (verification), and optionally a tiled resource: a reserved VA range whose 64 KiB tiles
  ``UpdateGpuVirtualAddress`` maps onto a tile pool.  Some CPU-visible resources may stay locked for the whole
  run (persistently mapped buffers).
- **A capture** (``[capture]``, decision 0180) -- no generated resources: each captured allocation is created at
  the start of its first frame (and made resident if the application's heap was) and, read back first, destroyed
  after its last (decision 0182).
- **A frame** -- ``MakeResident`` of the working set's newcomers, then a wait for the paging fence; CPU uploads
  through locks (``pfnLock2Cb`` on WDDM 2.x, ``pfnLockCb`` on WDDM 1.x) -- in place for CPU-visible resources,
  through the staging buffer and a GPU copy for the others; on WDDM 2.x a tile remap and GPU copies and fills,
  submitted in one DMA buffer and waited for; then ``QueryVideoMemoryInfo`` and ``Evict`` of the least recently
  used resources until the process is back under its share of the budget (with ``EvictOnlyIfNecessary`` for some,
  ``NotWrittenTo`` for those nothing wrote since they were made resident).
- **The model** -- every write updates :class:`~wddmsim.scenarios.model.Model` with numpy, from the write's own
  description; :mod:`~wddmsim.scenarios.verify` compares at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from wddmsim.core.addresses import FenceValue
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE, D3DDDICB_DEALLOCATE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCK2, D3DDDICB_LOCKFLAGS, D3DDDICB_UNLOCK, D3DDDICB_UNLOCK2
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDI_MAKERESIDENT_FLAGS,
    D3DDDICB_EVICT,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_QUERYVIDEOMEMORYINFO,
)
from wddmsim.ddi.status import HRESULT, DdiError
from wddmsim.ddi.va import (
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.drivers.package import DriverCapabilities, DriverModel, UserModeDriver
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage
from wddmsim.scenarios.clients import Client, bring, make_client
from wddmsim.scenarios.config import TILE, ScenarioConfig
from wddmsim.scenarios.gpu import ListGpu, VaGpu
from wddmsim.scenarios.held import Resource
from wddmsim.scenarios.model import GpuCopy, GpuFill, GpuOp, Model, Ref, Tile, TileState
from wddmsim.scenarios.record import TracedDevice, TracedProcess, TracedRuntime
from wddmsim.scenarios.result import Check
from wddmsim.scenarios.workload import CapturedSpec, Placement, ResourceSpec, captured, resources

LOCK_FAILURES: Final = frozenset(
    {
        HRESULT.E_OUTOFMEMORY,
        HRESULT.D3DERR_NOTAVAILABLE,
        HRESULT.D3DDDIERR_CANTEVICTPINNEDALLOCATION,
    }
)
"""What ``pfnLockCb`` / ``pfnLock2Cb`` return when the lock cannot be granted though the call is well formed (no
memory segment can take a swizzled surface to unswizzle it, an allocation that cannot be evicted to be reached):
an application gets the HRESULT, reports it and goes on without that write (decision 0230)."""

GRANULE: Final = 256
"""Offsets and sizes of uploads and GPU operations are multiples of this (smaller than a page, on purpose)."""
MAX_UPLOAD: Final = 128 * KiB
MAX_GPU_OP: Final = 128 * KiB
READBACK: Final = 1 * MiB
UpdateType = D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE


@dataclass(slots=True)
class Retired:
    """What the read-backs before mid-run destructions found, for the process's summary check (decision 0182)."""

    count: int = 0
    good: int = 0
    """Bytes that matched."""
    failed: list[Check] = field(default_factory=list)


@dataclass(slots=True)
class Problem:
    """Something the application could not do as planned (a refused MakeResident ...): a failed check."""

    step: str
    operation: str
    detail: str


def _infra(name: str, size: int, placement: Placement) -> ResourceSpec:
    """A buffer of the process's own plumbing (staging, readback, tile pool)."""
    usage = 0 if placement == Placement.LOCAL else ResourceUsage.CPU_VISIBLE
    return ResourceSpec(
        name, ResourceKind.BUFFER, placement, ResourceDesc(ResourceKind.BUFFER, size=size, usage=usage), size
    )


class App:
    """One process of the workload, with the model of everything it wrote."""

    def __init__(
        self,
        runtime: TracedRuntime,
        config: ScenarioConfig,
        index: int,
        model: Model,
        *,
        umd: UserModeDriver,
        capabilities: DriverCapabilities,
        client: str = "",
    ) -> None:
        self.config = config
        self.umd = umd
        """The user-mode half of the adapter's driver: it encodes every allocation's private driver data."""
        self.index = index
        self.model = model
        self.rng = np.random.default_rng([config.seed, index])
        self.wddm2 = config.adapter.model == DriverModel.WDDM2
        self.problems: list[Problem] = []
        self.process: TracedProcess = runtime.open_process()
        self.device: TracedDevice = self.process.create_device()
        args = D3DDDI_CREATEPAGINGQUEUE()
        self.device.create_paging_queue(args)
        self.queue = args.hPagingQueue
        self.gpu: VaGpu | ListGpu = VaGpu(self.device, self.queue) if self.wddm2 else ListGpu(self.device)
        """The GPU path: by VA on WDDM 2.x, by allocation and patch-location lists on WDDM 1.x."""
        self.captured: list[CapturedSpec] = [] if config.capture is None else captured(config, index)
        """A capture's allocations: created at their first frame, destroyed after their last (decision 0180)."""
        own = config.capture is not None and index < config.workload.processes  # not a timeline's newcomer
        specs = [] if own else resources(config, index, self.rng, umd, capabilities)
        self.resources = [self._create(spec) for spec in specs]
        """The resources alive now, in creation order (the indices of a frame's working set)."""
        self.created: list[ResourceSpec] = list(specs)
        """Every resource of the workload the process created (a capture's come and go)."""
        self.retired = Retired()
        """What the read-backs before mid-run destructions found (decision 0182)."""
        self.pool: Resource | None = None
        self.tiled = ""
        self.sync = HANDLE(0)
        self.sync_value = 0
        self.frames_done = 0
        for r in self.resources:
            self.gpu.expose(r.name, r.handle, r.spec.size)
        uploads = max(config.workload.uploads, 1)
        self.staging = self._create(_infra(f"p{index}.staging", uploads * MAX_UPLOAD, Placement.CPU_VISIBLE))
        self.readback = self._create(_infra(f"p{index}.readback", READBACK, Placement.CPU_VISIBLE))
        self.gpu.expose(self.staging.name, self.staging.handle, self.staging.spec.size)
        self.gpu.expose(self.readback.name, self.readback.handle, self.readback.spec.size)
        persistent = [self.staging, self.readback]
        if config.workload.tiles:
            self.pool = self._create(_infra(f"p{index}.pool", config.workload.tile_pool * TILE, Placement.LOCAL))
            self.gpu.expose(self.pool.name, self.pool.handle, self.pool.spec.size)  # also reachable untiled
            persistent.append(self.pool)
        self.ready = self.make_resident(persistent) or self.make_resident(persistent, cant_trim=True)
        """Staging, readback (and tile pool) resident: False, no GPU work may name them (decision 0168)."""
        if not self.ready:
            self.problems.append(
                Problem(f"process {index}: setup", "MakeResident", "E_OUTOFMEMORY for the staging and readback buffers")
            )
        if config.workload.tiles:
            self._setup_tiles()
        self._hold_locks()
        self.paused = False
        """Without the foreground (a timeline's focus event): the application renders nothing."""
        self.alive = True
        """False once the process exited (a timeline's exit event, or the end of the run)."""
        self.client: Client = make_client(client or config.workload.client, self)
        """How the application manages residency (``workload.client``; decision 0170)."""
        self.client.setup()

    # --- allocations ---------------------------------------------------------------------------------------

    def _create(self, spec: ResourceSpec) -> Resource:
        data = self.umd.encode(spec.desc)
        info = D3DDDI_ALLOCATIONINFO(pPrivateDriverData=data, PrivateDriverDataSize=len(data))
        self.device.allocate(D3DDDICB_ALLOCATE(NumAllocations=1, pAllocationInfo=[info]))
        self.model.create(spec.name, spec.size)
        return Resource(spec, info.hAllocation)

    @property
    def lock_call(self) -> str:
        """The lock callback this application's runtime calls, as its problems and checks name it."""
        return "pfnLock2Cb" if self.wddm2 else "pfnLockCb"

    def destroy(self) -> None:
        """Unlock what is held and ``pfnDeallocateCb`` every allocation (their VAs go with them)."""
        for r in self._all():
            if r.held:
                self._unlock(r)
                r.held = False
        handles = tuple(r.handle for r in self._all())
        self.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=len(handles), HandleList=handles))

    def arrive(self, frame: int) -> None:
        """A capture's allocations whose life starts at ``frame``: ``pfnAllocateCb``, a GPU VA, and ``MakeResident``
        for those the application's heap creation made resident."""
        for c in self.captured:
            if c.first != frame:
                continue
            r = self._create(c.spec)
            self.gpu.expose(r.name, r.handle, r.spec.size)
            self.resources.append(r)
            self.created.append(c.spec)
            if c.resident and self.make_resident([r]):
                r.last_use = frame

    def leaving(self, frame: int) -> list[Resource]:
        """A capture's allocations whose life ends with ``frame`` (those alive to the last frame stay to the end of
        the run, verified with the rest)."""
        if frame >= self.config.workload.frames - 1:
            return []
        ending = {c.spec.name for c in self.captured if c.last == frame}
        return [r for r in self.resources if r.name in ending]

    def retire(self, r: Resource) -> None:
        """``pfnDeallocateCb`` of one resource mid-run (its VA goes with it); the model forgets it.  The caller has
        read it back first (verification)."""
        if r.held:
            self._unlock(r)
            r.held = False
        self.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(r.handle,)))
        self.resources.remove(r)
        self.gpu.forget(r.name)
        self.model.forget(r.name)

    def _all(self) -> list[Resource]:
        return self.resources + [self.staging, self.readback] + ([self.pool] if self.pool is not None else [])

    # --- residency -------------------------------------------------------------------------------------------

    def pinned(self) -> list[Resource]:
        """The application's plumbing: staging, readback (and tile pool), resident from setup to exit."""
        return [self.staging, self.readback] + ([self.pool] if self.pool is not None else [])

    def make_resident(self, listed: list[Resource], *, cant_trim: bool = False) -> bool:
        """``MakeResident`` of ``listed``, then a wait for its paging fence; False: ``E_OUTOFMEMORY``."""
        handles = tuple(r.handle for r in listed)
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=self.queue,
            NumAllocations=len(handles),
            AllocationList=handles,
            Flags=D3DDDI_MAKERESIDENT_FLAGS(CantTrimFurther=cant_trim),
        )
        result = self.device.make_resident(args)
        if result == HRESULT.E_PENDING:
            self.device.wait_for_paging_fence(self.queue, args.PagingFenceValue)
        if result == HRESULT.E_OUTOFMEMORY:
            return False
        for r in listed:
            r.written = False
        return True

    def evict(self, listed: list[Resource]) -> None:
        """``Evict``: those nothing wrote since they were made resident say ``NotWrittenTo``; some calls say
        ``EvictOnlyIfNecessary``."""
        lazy = bool(self.rng.random() < self.config.workload.lazy_evictions)
        for written in (True, False):
            group = [r for r in listed if r.written == written]
            if not group:
                continue
            handles = tuple(r.handle for r in group)
            self.device.evict(
                D3DDDICB_EVICT(
                    NumAllocations=len(handles),
                    AllocationList=handles,
                    Flags=D3DDDI_EVICT_FLAGS(EvictOnlyIfNecessary=lazy, NotWrittenTo=not written),
                )
            )
            for r in group:
                r.last_use = -1

    def budget(self, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> tuple[int, int]:
        """``QueryVideoMemoryInfo`` of ``group``: (Budget, CurrentUsage)."""
        info = D3DKMT_QUERYVIDEOMEMORYINFO(MemorySegmentGroup=group)
        self.process.query_video_memory_info(info)
        return info.Budget, info.CurrentUsage

    def register_trim_notification(self, callback: object) -> None:
        """``D3DKMTRegisterTrimNotification`` for this application's device."""
        self.process.register_trim_notification(self.device, callback)

    def problem(self, step: str, operation: str, detail: str) -> None:
        self.problems.append(Problem(step, operation, detail))

    def bring_for_readback(self, r: Resource) -> bool:
        """Make ``r`` resident so GPU work can copy it out (verification); False if VidMm refused even with
        ``CantTrimFurther`` (the caller must then not copy it: the GPU would fault on its VA)."""
        return not bring(self, [r], self.frames_done)

    def release_after_readback(self, r: Resource) -> None:
        self.evict([r])

    # --- CPU access ----------------------------------------------------------------------------------------

    def _lock(self, r: Resource, pages: tuple[int, ...] | None = None, level: int = 0) -> int:
        """Lock ``r`` (``pfnLock2Cb``; ``pfnLockCb`` on WDDM 1.x, of the pages listed or all of it, through the
        swizzling range of MIP ``level`` for a swizzled surface); returns ``pData``."""
        if r.held:
            return r.view
        if self.wddm2:
            args2 = D3DDDICB_LOCK2(hAllocation=r.handle)
            self.device.lock2(args2)
            r.view = args2.pData
            return r.view
        if pages is None:
            args = D3DDDICB_LOCK(
                hAllocation=r.handle, PrivateDriverData=level, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True)
            )
        else:
            args = D3DDDICB_LOCK(hAllocation=r.handle, PrivateDriverData=level, NumPages=len(pages), pPages=pages)
        self.device.lock(args)
        r.view = args.pData
        return r.view

    def _lock_or_report(
        self, r: Resource, step: str, pages: tuple[int, ...] | None = None, level: int = 0
    ) -> int | None:
        """:meth:`_lock`, or None when the runtime refuses it with one of :data:`LOCK_FAILURES`: the refusal is
        one of the application's problems (``step`` says where), and the caller writes nothing."""
        try:
            return self._lock(r, pages, level)
        except DdiError as refused:
            if refused.status not in LOCK_FAILURES:
                raise
            self.problem(step, self.lock_call, str(refused))
            return None

    def _unlock(self, r: Resource) -> None:
        if self.wddm2:
            self.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=r.handle))
        else:
            self.device.unlock(D3DDDICB_UNLOCK(NumAllocations=1, phAllocations=(r.handle,)))

    def _hold_locks(self) -> None:
        """Persistently mapped buffers: locked once, written between frames (never swizzled surfaces, whose
        locks show one level at a time)."""
        visible = [r for r in self.resources if r.spec.cpu_visible and not r.spec.swizzled]
        for r in visible[: self.config.workload.persistent_locks]:
            if self._lock_or_report(r, f"process {self.index}: setup, hold {r.name} locked") is not None:
                r.held = True

    def read(self, r: Resource, offset: int, size: int, level: int = 0) -> bytes:
        """Read through a lock (the held one, or a lock taken for the read)."""
        held = r.held
        address = self._lock(r, level=level) + offset
        data = self.process.cpu_read(address, size)
        if not held:
            self._unlock(r)
        return data

    @contextmanager
    def seeing(self, r: Resource, offset: int, size: int, level: int = 0) -> Iterator[list[ByteArray | int]]:
        """``size`` bytes at ``pData + offset`` of a lock of ``r`` (the held one, or one taken for this), where they
        lie, for as long as the lock is held: an application that only compares them does so through its pointer
        (``memcmp``), never copying them into its own memory first."""
        held = r.held
        address = self._lock(r, level=level) + offset
        try:
            yield self.process.cpu_read_spans(address, size)
        finally:
            if not held:
                self._unlock(r)

    def _upload_in_place(self, frame: int, r: Resource, offset: int, size: int, seed: int, level: int) -> None:
        pages = None
        if not self.wddm2 and not r.held and not r.spec.swizzled and self.rng.random() < 0.3:
            pages = tuple(range(offset // PAGE_SIZE, -(-(offset + size) // PAGE_SIZE)))  # lock only those pages
        base = self._lock_or_report(r, f"process {self.index}, frame {frame}: upload into {r.name}", pages, level)
        if base is None:
            return
        written = self.process.cpu_write_pattern(base + offset, seed, size)
        if not r.held:
            self._unlock(r)
        self.model.write(r.name, offset, written)
        r.written = True

    # --- a frame ---------------------------------------------------------------------------------------------

    def _extent(self, limit: int, room: int) -> int:
        top = max(1, min(limit, room) // GRANULE)
        return GRANULE * int(self.rng.integers(1, top + 1))

    def _offset(self, size: int, extent: int) -> int:
        return GRANULE * int(self.rng.integers(0, (size - extent) // GRANULE + 1))

    def frame(self, frame: int, chosen: list[int]) -> None:
        working = [self.resources[i] for i in chosen]
        refused = self.client.prepare(working, frame)
        if refused:
            self.problems.append(
                Problem(
                    f"process {self.index}, frame {frame}: make the working set resident",
                    "MakeResident",
                    f"E_OUTOFMEMORY for {len(refused)} allocation(s) even with CantTrimFurther",
                )
            )
        ops: list[GpuOp] = []
        staged: list[tuple[int, int, int]] = []  # (staging offset, size, seed)
        for _ in range(self.config.workload.uploads if working else 0):
            r = working[int(self.rng.integers(len(working)))]
            regions = r.spec.regions()
            level = int(self.rng.integers(len(regions)))
            start, length = regions[level]
            size = self._extent(MAX_UPLOAD, length)
            offset = start + self._offset(length, size)
            seed = int(self.rng.integers(1 << 62))
            if r.spec.cpu_visible:
                self._upload_in_place(frame, r, offset, size, seed, level)
            else:
                at = sum(n for _, n, _ in staged)
                staged.append((at, size, seed))
                ops.append(GpuCopy(Ref(self.staging.name, at), Ref(r.name, offset), size))
                r.written = True
        if staged:
            base = self._lock_or_report(self.staging, f"process {self.index}, frame {frame}: stage the uploads")
            if base is None:
                ops = []  # nothing staged: the copies from the staging buffer are not submitted
            else:
                for at, size, seed in staged:
                    written = self.process.cpu_write_pattern(base + at, seed, size)
                    self.model.write(self.staging.name, at, written)
                self._unlock(self.staging)
        if self.tiled and frame % 2 == 1:
            self._remap_tiles()
        ops += self._gpu_ops(working)
        for op in ops:
            self.model.apply(op)
        self.gpu.run(ops)
        self.client.finish(working, frame)
        broken = self.client.check(frame)
        if broken:
            self.problem(
                f"process {self.index}, frame {frame}: the {self.client.name} client's promise", "budget", broken
            )
        self.frames_done += 1

    def _gpu_ops(self, working: list[Resource]) -> list[GpuOp]:
        """Copies and fills among the working set (and the tiled range): never on swizzled surfaces (the GPU sees
        their tiled layout), nor on WDDM 1.x on what the process holds locked (``CANTRENDERLOCKEDALLOCATION``)."""
        usable = [r for r in working if not r.spec.swizzled and (self.wddm2 or not r.held)]
        views = [r.name for r in usable] + ([self.tiled] if self.tiled else [])
        if not views:
            return []
        by_name = {r.name: r for r in usable}
        ops: list[GpuOp] = []
        for _ in range(self.config.workload.gpu_ops):
            dst = views[int(self.rng.integers(len(views)))]
            src = views[int(self.rng.integers(len(views)))]
            dst_size, src_size = self.model.size(dst), self.model.size(src)
            size = self._extent(MAX_GPU_OP, min(dst_size, src_size))
            target = Ref(dst, self._offset(dst_size, size))
            source = Ref(src, self._offset(src_size, size))
            op: GpuOp
            if self.rng.random() < 0.35 or self.model.overlap(source, target, size):
                op = GpuFill(target, size, int(self.rng.integers(1 << 32)))
            else:
                op = GpuCopy(source, target, size)
            ops.append(op)
            if dst in by_name:
                by_name[dst].written = True
            elif self.pool is not None:
                self.pool.written = True
        return ops

    # --- tiled resources ---------------------------------------------------------------------------------------

    def _setup_tiles(self) -> None:
        assert isinstance(self.gpu, VaGpu)
        assert self.pool is not None
        tiles = self.config.workload.tiles
        self.tiled = f"p{self.index}.tiled"
        self.gpu.reserve(self.tiled, tiles * TILE)
        self.model.create_tiled(self.tiled, tiles)
        self.sync = self.device.create_sync_object()
        pool_tiles = self.config.workload.tile_pool
        self._update([(i, i % pool_tiles) for i in range(tiles)])

    def _remap_tiles(self) -> None:
        """Some tiles onto other pool tiles, some to the Zero state (reads zero, writes dropped)."""
        tiles, pool_tiles = self.config.workload.tiles, self.config.workload.tile_pool
        count = max(1, tiles // 4)
        chosen = sorted(int(i) for i in self.rng.choice(tiles, size=count, replace=False))
        plan: list[tuple[int, int | None]] = []
        for i in chosen:
            plan.append((i, None if self.rng.random() < 0.25 else int(self.rng.integers(pool_tiles))))
        self._update(plan)

    def _update(self, plan: list[tuple[int, int | None]]) -> None:
        """One ``UpdateGpuVirtualAddress`` (MAP a tile onto a pool tile; UNMAP to Zero for None), applied once the
        sync object reaches the current value; then a CPU wait for the value it signals."""
        assert isinstance(self.gpu, VaGpu)
        assert self.pool is not None
        base = self.gpu.bases[self.tiled]
        ops: list[D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION] = []
        for tile, pool_tile in plan:
            if pool_tile is None:
                ops.append(
                    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(
                        OperationType=UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
                        payload=D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP(
                            BaseAddress=base + tile * TILE,
                            SizeInBytes=TILE,
                            Protection=D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE(Zero=True),
                        ),
                    )
                )
                self.model.set_tile(self.tiled, tile, Tile(TileState.ZERO))
            else:
                ops.append(
                    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(
                        OperationType=UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
                        payload=D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(
                            BaseAddress=base + tile * TILE,
                            SizeInBytes=TILE,
                            hAllocation=self.pool.handle,
                            AllocationOffsetInBytes=pool_tile * TILE,
                            AllocationSizeInBytes=TILE,
                        ),
                    )
                )
                self.model.set_tile(self.tiled, tile, Tile(TileState.MAPPED, self.pool.name, pool_tile * TILE))
        self.device.update_gpu_va(
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=self.gpu.context,
                hFenceObject=self.sync,
                NumOperations=len(ops),
                Operations=tuple(ops),
                FenceValue=self.sync_value,
            )
        )
        self.sync_value += 1
        self.device.wait_for_sync_object(self.sync, FenceValue(self.sync_value))
