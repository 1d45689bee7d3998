"""``UpdateGpuVirtualAddress`` (tiled resources): MAP, UNMAP, COPY and MAP_PROTECT, with their fence protocol.

What it models (wddm-spec.md section 3.4, DOC:tile-resources.md, DOC:system-paging-process.md; decisions 0016,
0024): the call is checked whole before anything changes; its operations are applied in order once the monitored
fence ``hFenceObject`` reaches ``FenceValue`` (at once with ``DoNotWait``), then ``FenceValue + 1`` is signalled.

- When the GPU updates page tables (``GPU_VIRTUAL``, ``GPU_PHYSICAL``) the operations run on the context's
  *paging companion*: a system context VidMm creates on the first update for a context, on the node the driver
  names in ``DXGK_CONTEXTINFO.PagingCompanionNodeId``, running in the process's privileged VA space (where the
  process's page tables, its tile pools and the fence pages are mapped).  Its buffer is submitted once the fence
  value is reached (the GPU scheduler's wait) and holds the updates -- a MAP copies the tile pool's entries from the
  privileged space (``CopyPageTableEntries``: whatever they are when the buffer runs), the other operations are
  ``UpdatePageTable`` -- the TLB flush and the ``SignalMonitoredFence``, all naming tables and the fence by their
  privileged VAs.
- ``CPU_VIRTUAL`` GPUs have no companion: VidMm applies the operations by CPU when the fence value is reached.
- More than 128 queued operations (waiting for their fence, or in a companion buffer not yet done) block the
  caller until earlier ones are done; when only a signal the caller itself would give could release them, the
  call is refused with ``STATUS_POSSIBLE_DEADLOCK`` instead of blocking forever (one thread here).
- A step whose reserved range was freed before it ran is dropped (``FreeGpuVirtualAddress``).
- While an update is queued, the tile pools it maps stay resident.

Why over 400 lines: the call, its queue and its paging companions are one protocol (a fence reached releases
queued operations onto a companion whose completion releases the caller); its argument checks are already apart
(:mod:`.update_checks`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol, final

from wddmsim.core.addresses import FenceValue, GpuVa
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
)
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.ddi.va import (
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
)
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Waiter
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.buffers import PagingBufferPool
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.ports import VaResidency
from wddmsim.vidmm.vaspace.checks import bad
from wddmsim.vidmm.vaspace.mappings import Mappings
from wddmsim.vidmm.vaspace.privileged import PrivilegedSpaces
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, ProcessTable, Region, UpdateStep, VaMapping
from wddmsim.vidmm.vaspace.tables import Mode
from wddmsim.vidmm.vaspace.tree import PageTables
from wddmsim.vidmm.vaspace.update_checks import check_header, check_one_region, check_operation

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device, Process, SyncObject


class VaHost(Protocol):
    """What tiled updates ask of the VA spaces that build them (:class:`~wddmsim.vidmm.vaspace.spaces.GpuVaSpaces`),
    named here so that this module never imports the one that imports it."""

    objects: ObjectTable
    tables: PageTables
    paging: PagingStream
    residency: VaResidency
    spaces: dict[int, GpuVaSpace]
    create_companion: Callable[[HANDLE, Device], tuple[HANDLE, int]]
    new_pool: Callable[[int], PagingBufferPool] | None

    mappings: Mappings
    privileged_spaces: PrivilegedSpaces

    def create_space(self, process: Process) -> GpuVaSpace: ...


MAX_QUEUED: Final = 128
"""Queued update operations beyond which the caller blocks (DDI:pfnd3dddi_updategpuvirtualaddresscb.md)."""


@dataclass(slots=True, eq=False)
class Companion:
    """The paging companion of one context: its system context, node and paging stream, and what it holds."""

    context: HANDLE
    node: int
    stream: PagingStream
    process: Process
    waiting: int = 0
    """Operations queued behind a fence value not reached yet."""
    in_flight: list[tuple[FenceValue, int]] = field(default_factory=list)
    """``(submission fence, operations)`` of buffers submitted and not yet done, oldest first."""

    @property
    def queued(self) -> int:
        return self.waiting + sum(n for _, n in self.in_flight)


@final
class TiledUpdates:
    """Checks, queues and applies ``UpdateGpuVirtualAddress`` calls."""

    def __init__(self, va: VaHost) -> None:
        self.va = va
        self.companions: dict[int, Companion] = {}
        """Rendering context -> its paging companion."""

    # --- the call ---------------------------------------------------------------------------------------------

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> None:
        """``pfnUpdateGpuVirtualAddressCb``: checked whole now; applied in order once ``hFenceObject`` reaches
        ``FenceValue`` (at once with ``DoNotWait``), by the context's paging companion (by the CPU on a
        ``CPU_VIRTUAL`` GPU); then ``FenceValue + 1`` is signalled."""
        device, sync, space = self._caller(args)
        check_header(args)

        def allocation_of(handle: HANDLE, argument: str) -> VidMmAllocation:
            return self.allocation_of(handle, device, argument)

        steps = [check_operation(space, i, op, allocation_of) for i, op in enumerate(args.Operations)]
        check_one_region(space, steps)
        immediate = bool(args.Flags.DoNotWait) or sync.reached >= args.FenceValue
        companion = self._companion_for(args, device, space, len(steps), immediate)
        pools = self._map_pools(space, steps, companion)

        def apply() -> None:
            if companion is None:
                self.run_by_cpu(space, steps, sync, args.FenceValue)
            else:
                self.run_on_companion(companion, space, steps, sync, args.FenceValue)

        if immediate:
            apply()
        else:
            self._queue_behind_fence(args, sync, companion, pools, len(steps), apply)
        if companion is not None:
            self._block_while_over_limit(companion)

    def _caller(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> tuple[Device, SyncObject, GpuVaSpace]:
        """The calling context's device, the fence object (of the same process) and the process's VA space."""
        objects = self.va.objects
        device = objects.context_device(args.hContext)
        sync = objects.sync_object(args.hFenceObject)
        if sync.device.process is not device.process:
            raise bad("hFenceObject", args.hFenceObject, "belongs to another process")
        return device, sync, self.va.create_space(device.process)

    def _companion_for(
        self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS, device: Device, space: GpuVaSpace, count: int, immediate: bool
    ) -> Companion | None:
        """The paging companion the operations run on (None on a ``CPU_VIRTUAL`` GPU), after the check that
        queueing ``count`` more would not block the calling thread on a signal only it could give."""
        if self.va.tables.mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            return None
        companion = self.companions.get(args.hContext)
        if companion is not None:
            self.retire(companion)
            if companion.waiting + (0 if immediate else count) > MAX_QUEUED:
                raise DdiError(
                    NTSTATUS.STATUS_POSSIBLE_DEADLOCK,
                    f"NumOperations={count}: hContext={int(args.hContext):#x} already has {companion.waiting} "
                    f"operation(s) waiting for their fence; more than {MAX_QUEUED} queued block the calling "
                    "thread until earlier ones ran, and only a signal this thread would give can release them",
                )
        elif not immediate and count > MAX_QUEUED:
            raise DdiError(
                NTSTATUS.STATUS_POSSIBLE_DEADLOCK,
                f"NumOperations={count}: more than {MAX_QUEUED} operations waiting for FenceValue="
                f"{args.FenceValue} would block the calling thread until a signal only it could give",
            )
        return self.companion(args.hContext, device, space)

    def _map_pools(
        self, space: GpuVaSpace, steps: list[UpdateStep], companion: Companion | None
    ) -> list[VidMmAllocation]:
        """The tile pools the steps map; on a companion each gets its VA in the privileged space (for good)."""
        pools = list({id(step.pool): step.pool for step in steps if step.pool is not None}.values())
        if companion is not None:
            for pool in pools:
                self.va.privileged_spaces.map_pool(space, pool)
            self.va.paging.flush()
        return pools

    def _queue_behind_fence(
        self,
        args: D3DDDICB_UPDATEGPUVIRTUALADDRESS,
        sync: SyncObject,
        companion: Companion | None,
        pools: list[VidMmAllocation],
        count: int,
        apply: Callable[[], None],
    ) -> None:
        """Queued until ``hFenceObject`` reaches ``FenceValue``: the tile pools it maps stay resident until it has
        run, whatever the application asks; cancelled (not applied) if the context goes first."""
        residency = self.va.residency
        for pool in pools:
            residency.hold(pool)
        if companion is not None:
            companion.waiting += count

        def done(ran: bool) -> None:  # run (the fence reached the value), or cancelled (the context went)
            if companion is not None:
                companion.waiting -= count
            if ran:
                apply()
            for pool in pools:
                residency.unhold(pool)

        sync.waiting.append(Waiter(args.FenceValue, lambda: done(True), lambda: done(False), args.hContext))

    def _block_while_over_limit(self, companion: Companion) -> None:
        """The calling thread blocks while more than 128 operations are queued on the companion."""
        while companion.queued > MAX_QUEUED and companion.in_flight:
            companion.stream.wait(companion.in_flight[0][0])
            self.retire(companion)

    # --- companions -------------------------------------------------------------------------------------------

    def companion(self, context: HANDLE, device: Device, space: GpuVaSpace) -> Companion:
        """The context's paging companion, created on first use: a system context on the node the driver named,
        its root the process's privileged VA space."""
        found = self.companions.get(context)
        if found is not None:
            return found
        va = self.va
        paging = va.paging
        if va.new_pool is not None:  # first: a pool that cannot be had leaves no companion context behind
            pool = va.new_pool(2)
        else:
            pool = PagingBufferPool(va.tables.mm, size=paging.pool.size, private_size=paging.pool.private_size, count=2)
        handle, node = va.create_companion(context, device)
        stream = PagingStream(
            paging.driver, paging.scheduler, pool, paging.reset, paging.events, context=handle, node=node
        )
        priv = va.privileged_spaces.privileged(space)
        priv.companions.append(handle)
        va.tables.ensure(space)
        va.tables.set_root(priv, handle)
        found = Companion(handle, node, stream, space.process)
        self.companions[context] = found
        return found

    def drop_companion(self, context: HANDLE) -> Companion | None:
        """The context is being destroyed: its paging companion, if it has one, finishes what it was given and
        leaves the privileged space; returned for the caller to destroy (its context and its pool)."""
        companion = self.companions.pop(context, None)
        if companion is None:
            return None
        fence = companion.stream.flush()
        if fence:
            companion.stream.wait(fence)
        companion.in_flight.clear()
        space = self.va.spaces.get(companion.process.handle)
        if space is not None and space.privileged is not None:
            space.privileged.companions.remove(companion.context)
        return companion

    def retire(self, companion: Companion) -> None:
        scheduler = companion.stream.scheduler
        while companion.in_flight and scheduler.is_complete(companion.node, companion.in_flight[0][0]):
            companion.in_flight.pop(0)

    def wait_companions(self, process: Process) -> None:
        """The process's companions finish what they were given (before its tables or allocations move)."""
        for companion in self.companions.values():
            if companion.process is process and companion.in_flight:
                companion.stream.wait(companion.in_flight[-1][0])
                self.retire(companion)

    # --- applying ---------------------------------------------------------------------------------------------

    def live(self, space: GpuVaSpace, steps: list[UpdateStep]) -> list[UpdateStep]:
        """The steps whose ranges were not freed meanwhile (FreeGpuVirtualAddress drops what is outstanding)."""
        return [
            s
            for s in steps
            if space.regions.get(s.region.base) is s.region
            and (s.source_region is None or space.regions.get(s.source_region.base) is s.source_region)
        ]

    def apply(self, space: GpuVaSpace, steps: list[UpdateStep], *, by_copy: bool) -> None:
        for step in steps:
            if step.source is not None:
                self.copy(space, step.source, step.address, step.size // PAGE_SIZE)
                continue
            for piece in step.pieces:
                if by_copy and step.plain_map and piece.driver_protection == 0:
                    self.map_by_copy(space, piece)
                else:
                    self.va.mappings.install(piece)

    def run_by_cpu(self, space: GpuVaSpace, steps: list[UpdateStep], sync: SyncObject, value: int) -> None:
        """``CPU_VIRTUAL``: the operations are applied when the fence allows (the CPU writes the tables), and
        the fence is signalled from the paging stream after them (DOC:tile-resources.md)."""
        va = self.va
        va.tables.ensure(space)
        self.apply(space, self.live(space, steps), by_copy=False)
        va.paging.build(
            DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
                MonitoredFenceGpuVa=sync.fence.gpu_va, MonitoredFenceValue=value + 1
            )
        )
        va.paging.flush()
        self._signalled(sync, value)

    def run_on_companion(
        self, companion: Companion, space: GpuVaSpace, steps: list[UpdateStep], sync: SyncObject, value: int
    ) -> None:
        """The operations, built into the companion's paging buffer: the tables they touch exist and are mapped
        in the privileged space first (by the system paging stream, submitted before: both run on the paging
        engine in order)."""
        va = self.va
        tables = va.tables
        live = self.live(space, steps)
        tables.ensure(space)
        priv = va.privileged_spaces.privileged(space)
        tables.ensure(priv)
        with tables.hold(space):
            for step in live:
                self._prepare(space, step.address, step.size)
                if step.source is not None:
                    self._prepare(space, step.source, step.size)
                if step.plain_map and step.pool is not None:
                    base = priv.pools[step.pool.handle]
                    for piece in step.pieces:
                        self._prepare(priv, base + piece.offset_pages * PAGE_SIZE, piece.pages * PAGE_SIZE)
            va.paging.flush()
            with tables.redirect(companion.stream, _privileged_va):
                self.apply(space, live, by_copy=True)
                companion.stream.build(
                    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
                        MonitoredFenceGpuVa=priv.fence_base + sync.fence.offset, MonitoredFenceValue=value + 1
                    )
                )
            va.paging.flush()  # anything the system stream had to add goes first
            companion.in_flight.append((companion.stream.flush(), len(steps)))
        self._signalled(sync, value)

    def _prepare(self, space: GpuVaSpace, va: int, size: int) -> None:
        """Every 4 KB-page leaf table of ``[va, va + size)`` exists (single PTE: converted) and is mapped in the
        privileged space."""
        tables = self.va.tables
        span = tables.span1
        at = va - va % span
        while at < va + size:
            tables.leaf(space, at)
            at += span

    def _signalled(self, sync: SyncObject, value: int) -> None:
        sync.promised = max(sync.promised, value + 1)
        self.va.residency.release(sync)

    def map_by_copy(self, space: GpuVaSpace, piece: VaMapping) -> None:
        """A MAP on the companion: the mapping is recorded, no 64 KB entry or large page covers the range, and
        its 4 KB entries are copied from the tile pool's entries in the privileged space when the buffer runs."""
        priv = space.privileged
        assert priv is not None
        assert piece.allocation is not None
        source = priv.pools[piece.allocation.handle] + piece.offset_pages * PAGE_SIZE
        self.va.mappings.install(piece, write_entries=False, flush=False)
        self.copy_ranges(priv, source, space, piece.va, piece.pages)
        self.va.tables.flush_range(space, piece.va, piece.pages * PAGE_SIZE)

    def copy_ranges(self, source_space: GpuVaSpace, source: int, dest_space: GpuVaSpace, dest: int, pages: int) -> None:
        """``CopyPageTableEntries``: one range per pair of leaf-table pieces, tables named the way the stream
        that runs it sees them (privileged VAs on a companion, paging-process VAs on the system stream)."""
        tables = self.va.tables
        span = tables.span1
        ranges = []
        done = 0
        while done < pages:
            s_va, d_va = source + done * PAGE_SIZE, dest + done * PAGE_SIZE
            count = min(pages - done, (span - s_va % span) // PAGE_SIZE, (span - d_va % span) // PAGE_SIZE)
            src_leaf, dst_leaf = tables.leaf(source_space, s_va), tables.leaf(dest_space, d_va)
            ranges.append(
                DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                    NumPageTableEntries=count,
                    SrcPageTableAddress=tables.copy_address(src_leaf),
                    DstPageTableAddress=tables.copy_address(dst_leaf),
                    SrcStartPteIndex=tables.mmu.index(s_va, 0),
                    DstStartPteIndex=tables.mmu.index(d_va, 0),
                )
            )
            # The copy writes what the source holds when it runs, which VidMm does not follow: the entries may be
            # live (decision 0198 -- an invalidation of them is never skipped).
            dst_leaf.live |= ((1 << count) - 1) << tables.mmu.index(d_va, 0)
            done += count
        tables.stream.build(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=len(ranges), pRanges=tuple(ranges)))

    def allocation_of(self, handle: HANDLE, device: Device, argument: str) -> VidMmAllocation:
        a = self.va.objects.allocations.get(handle)
        if a is None or a.context or a.device.process is not device.process:
            raise bad(argument, handle, "is not an allocation of the process")
        return a

    def copy(self, space: GpuVaSpace, source: int, dest: int, pages: int) -> None:
        """COPY: the destination takes the source's mappings (and their entries: ``CopyPageTableEntries`` when
        the GPU updates tables, rewritten entries when the CPU does)."""
        src_region = space.region_at(source, pages * PAGE_SIZE)
        dst_region = space.region_at(dest, pages * PAGE_SIZE)
        assert src_region is not None
        assert dst_region is not None
        end = source + pages * PAGE_SIZE
        runs: list[VaMapping] = []
        covered = source
        for m in sorted(src_region.mappings, key=lambda m: m.va):
            lo, hi = max(m.va, source), min(m.end, end)
            if lo >= hi:
                continue
            if covered < lo:  # a gap shows the reservation's own state
                runs.append(
                    self.state_piece(
                        space, dst_region, src_region, dest + covered - source, (lo - covered) // PAGE_SIZE
                    )
                )
            runs.append(
                VaMapping(
                    space,
                    dst_region,
                    GpuVa(dest + lo - source),
                    (hi - lo) // PAGE_SIZE,
                    m.kind,
                    m.allocation,
                    m.offset_pages + (lo - m.va) // PAGE_SIZE,
                    m.write,
                    m.execute,
                    m.driver_protection,
                )
            )
            covered = hi
        if covered < end:
            runs.append(
                self.state_piece(space, dst_region, src_region, dest + covered - source, (end - covered) // PAGE_SIZE)
            )
        # CopyPageTableEntries copies 4 KB entries; a source with 64 KB entries or large pages is rewritten entry
        # by entry.
        tables = self.va.tables
        keys = range(tables.key(0, source), tables.key(0, end - 1) + 1)
        big = any(k in space.leaves64 or k in space.large for k in keys)
        use_gpu = tables.mode != Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL and not big
        for run in runs:
            self.va.mappings.install(run, write_entries=not use_gpu, flush=not use_gpu)
        if use_gpu:
            self.copy_ranges(space, source, space, dest, pages)
            tables.flush_range(space, GpuVa(dest), pages * PAGE_SIZE)

    def state_piece(self, space: GpuVaSpace, region: Region, src_region: Region, va: int, pages: int) -> VaMapping:
        kind = Kind.ZERO if src_region.zero else Kind.NO_ACCESS
        return VaMapping(space, region, GpuVa(va), pages, kind, driver_protection=src_region.driver_protection)


def _privileged_va(table: ProcessTable) -> int:
    """How a companion names an application table: its VA in the privileged space."""
    assert table.privileged is not None, f"{table!r} is not mapped in the privileged VA space"
    return table.privileged.base
