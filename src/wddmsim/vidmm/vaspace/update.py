"""``UpdateGpuVirtualAddress`` (tiled resources): MAP, UNMAP, COPY and MAP_PROTECT, with their fence protocol.

What it models (wddm-spec.md section 3.4; decision 0016): the call is checked whole before anything changes;
its operations are applied in order once the monitored fence ``hFenceObject`` reaches ``FenceValue`` (at once
with ``DoNotWait``), then ``FenceValue + 1`` is signalled.  ``COPY`` copies mappings, with
``CopyPageTableEntries`` when the GPU updates tables and rewritten entries when the CPU does.  While an update
is queued, the tile pools it maps stay resident.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
)
from wddmsim.ddi.va import (
    D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
)
from wddmsim.ddi.va import D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE as UpdateType
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.vaspace.checks import bad, u64
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, Region, UpdateStep, VaMapping
from wddmsim.vidmm.vaspace.tables import Mode

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device
    from wddmsim.vidmm.vaspace.manager import VaManager


@final
class TiledUpdates:
    """Checks, queues and applies ``UpdateGpuVirtualAddress`` calls."""

    def __init__(self, va: VaManager) -> None:
        self.va = va

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> None:
        """``pfnUpdateGpuVirtualAddressCb``: checked whole now; applied in order once ``hFenceObject`` reaches
        ``FenceValue`` (at once with ``DoNotWait``), on the paging engine; then ``FenceValue + 1`` is signalled."""
        va = self.va
        residency = va.residency
        assert residency is not None
        device = residency.context_device(args.hContext)
        sync = residency.sync_object(args.hFenceObject)
        if sync.device.process is not device.process:
            raise bad("hFenceObject", args.hFenceObject, "belongs to another process")
        space = va.create_space(device.process)
        if args.Reserved0 or args.Reserved1 or args.Flags.Reserved:
            raise bad("Reserved0", args.Reserved0 or args.Reserved1 or args.Flags.Value, "reserved fields must be zero")
        u64("FenceValue", args.FenceValue)
        if args.FenceValue + 1 >= 1 << 64:
            raise bad("FenceValue", args.FenceValue, "FenceValue + 1 must still be a UINT64")
        if args.NumOperations != len(args.Operations) or not args.Operations:
            raise bad(
                "NumOperations", args.NumOperations, f"must be positive and match Operations ({len(args.Operations)})"
            )
        steps = [self.check(space, device, i, op) for i, op in enumerate(args.Operations)]
        self.check_one_region(space, steps)
        paging = va.paging

        def apply() -> None:
            va.tables.ensure(space)
            for step in steps:
                step()
            paging.build(
                DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
                    MonitoredFenceGpuVa=sync.fence.gpu_va, MonitoredFenceValue=args.FenceValue + 1
                )
            )
            paging.flush()
            sync.promised = max(sync.promised, args.FenceValue + 1)
            assert va.residency is not None
            va.residency.release(sync)

        if args.Flags.DoNotWait or sync.reached >= args.FenceValue:
            apply()
            return
        # Queued: the tile pools it maps stay resident until it has run, whatever the application asks.
        pools = list({id(step.pool): step.pool for step in steps if step.pool is not None}.values())
        for pool in pools:
            residency.hold(pool)

        def apply_and_release() -> None:
            apply()
            assert va.residency is not None
            for pool in pools:
                va.residency.unhold(pool)

        sync.waiting.append((args.FenceValue, apply_and_release))

    def check(
        self, space: GpuVaSpace, device: Device, i: int, op: D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION
    ) -> UpdateStep:
        """Every rule of one operation, before anything changes; returns the work that applies it."""
        name = f"Operations[{i}]"
        kind, p = op.OperationType, op.payload
        expected = {
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP: D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
            UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY: D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
        }.get(kind)  # type: ignore[call-overload]
        if expected is None or not isinstance(p, expected):
            raise bad(
                f"{name}.OperationType",
                kind,
                "must be MAP (0), UNMAP (1), COPY (2) or MAP_PROTECT (3), with its union member",
            )
        for field_name in (
            "BaseAddress",
            "SizeInBytes",
            "SourceAddress",
            "DestAddress",
            "AllocationOffsetInBytes",
            "AllocationSizeInBytes",
        ):
            if hasattr(p, field_name):
                value = getattr(p, field_name)
                u64(f"{name}.{field_name}", value)
                if value % PAGE_SIZE:
                    raise bad(f"{name}.{field_name}", value, "must be 4 KB aligned")
        if p.SizeInBytes == 0:
            raise bad(f"{name}.SizeInBytes", 0, "must not be zero")
        pages = p.SizeInBytes // PAGE_SIZE
        if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY):
            for field_name in ("SourceAddress", "DestAddress"):
                at = getattr(p, field_name)
                region = space.region_at(at, p.SizeInBytes)
                if region is None or region.from_map:
                    raise bad(f"{name}.{field_name}", at, "the range must lie in one range obtained from Reserve")
            return UpdateStep(
                p.DestAddress,
                lambda: self.copy(space, p.SourceAddress, p.DestAddress, pages),
                p.SourceAddress,
            )
        region = space.region_at(p.BaseAddress, p.SizeInBytes)
        if region is None or region.from_map:
            raise bad(f"{name}.BaseAddress", p.BaseAddress, "the range must lie in one range obtained from Reserve")
        if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP):
            if p.Protection.Zero == p.Protection.NoAccess or p.Protection.Write or p.Protection.Execute:
                raise bad(f"{name}.Protection", p.Protection.Value, "UNMAP takes exactly one of Zero and NoAccess")
            state = Kind.ZERO if p.Protection.Zero else Kind.NO_ACCESS
            piece = VaMapping(space, region, p.BaseAddress, pages, state, driver_protection=region.driver_protection)
            return UpdateStep(p.BaseAddress, lambda: self.va.install(piece))
        a = self.allocation_of(p.hAllocation, device, f"{name}.hAllocation")
        unit = p.AllocationSizeInBytes or p.SizeInBytes
        if p.AllocationSizeInBytes and p.SizeInBytes % p.AllocationSizeInBytes:
            raise bad(
                f"{name}.SizeInBytes",
                p.SizeInBytes,
                f"must be a multiple of AllocationSizeInBytes={p.AllocationSizeInBytes:#x}",
            )
        if p.AllocationOffsetInBytes + unit > a.size:
            raise bad(
                f"{name}.AllocationOffsetInBytes",
                p.AllocationOffsetInBytes,
                f"{unit:#x} bytes from it leave the {a.size:#x}-byte allocation",
            )
        if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT):
            prot = p.Protection
            if prot.Reserved or prot.SystemUseOnly or prot.Zero or prot.NoAccess:
                raise bad(f"{name}.Protection", prot.Value, "MAP_PROTECT takes Write and Execute only")
            write, execute, driver = bool(prot.Write), bool(prot.Execute), p.DriverProtection
            u64(f"{name}.DriverProtection", driver)
        else:
            # Decision 0016: a plain MAP is read-write and inherits the reservation's driver protection.
            write, execute, driver = True, False, region.driver_protection
        pieces = [
            VaMapping(
                space,
                region,
                p.BaseAddress + k * unit,
                unit // PAGE_SIZE,
                Kind.ALLOCATION,
                a,
                p.AllocationOffsetInBytes // PAGE_SIZE,
                write,
                execute,
                driver,
            )
            for k in range(p.SizeInBytes // unit)
        ]

        def install() -> None:
            for piece in pieces:
                self.va.install(piece)

        return UpdateStep(p.BaseAddress, install, pool=a)

    def check_one_region(self, space: GpuVaSpace, steps: list[UpdateStep]) -> None:
        """Per call: every mapped range and copy destination in one reserved range; copy sources in one."""
        for label, addresses in (
            ("BaseAddress", [s.address for s in steps]),
            ("SourceAddress", [s.source for s in steps if s.source is not None]),
        ):
            regions = {id(space.region_at(a, PAGE_SIZE)) for a in addresses}
            if len(regions) > 1:
                raise bad(
                    f"Operations[*].{label}", addresses[0], "all ranges of one call must lie in one reserved range"
                )

    def allocation_of(self, handle: HANDLE, device: Device, argument: str) -> VidMmAllocation:
        residency = self.va.residency
        assert residency is not None
        a = residency.allocations.get(handle)
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
                    dest + lo - source,
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
        # CopyPageTableEntries copies 4 KB entries; a source with 64 KB entries is rewritten entry by entry.
        tables = self.va.tables
        big = any(k in space.leaves64 for k in range(tables.key(0, source), tables.key(0, end - 1) + 1))
        use_gpu = tables.mode != Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL and not big
        if use_gpu:
            self.copy_entries(space, source, dest, pages)
        for run in runs:
            self.va.install(run, write_entries=not use_gpu)

    def state_piece(self, space: GpuVaSpace, region: Region, src_region: Region, va: int, pages: int) -> VaMapping:
        kind = Kind.ZERO if src_region.zero else Kind.NO_ACCESS
        return VaMapping(space, region, va, pages, kind, driver_protection=src_region.driver_protection)

    def copy_entries(self, space: GpuVaSpace, source: int, dest: int, pages: int) -> None:
        """``CopyPageTableEntries``: one range per pair of leaf-table pieces, by the tables' paging-process VAs."""
        tables = self.va.tables
        span = 1 << tables.mmu.shift(1)
        ranges = []
        done = 0
        while done < pages:
            s_va, d_va = source + done * PAGE_SIZE, dest + done * PAGE_SIZE
            count = min(pages - done, (span - s_va % span) // PAGE_SIZE, (span - d_va % span) // PAGE_SIZE)
            src_leaf, dst_leaf = tables.leaf(space, s_va), tables.leaf(space, d_va)
            if tables.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
                # The operation names tables by paging-process VA: give physical-mode tables a window too.
                for leaf in (src_leaf, dst_leaf):
                    if not leaf.window:
                        tables.window(leaf)
            ranges.append(
                DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                    NumPageTableEntries=count,
                    SrcPageTableAddress=src_leaf.window,
                    DstPageTableAddress=dst_leaf.window,
                    SrcStartPteIndex=tables.mmu.index(s_va, 0),
                    DstStartPteIndex=tables.mmu.index(d_va, 0),
                )
            )
            done += count
        self.va.paging.build(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=len(ranges), pRanges=tuple(ranges)))
