"""A small residency workload: a few processes run a frame loop over buffers whose total exceeds local memory.

Each process has a device, a paging queue, a compute context and a GPU VA space, and buffers mapped into it.
Two of its buffers stay resident for the whole run (its persistent set).  Each frame, every process makes
three others resident (``MakeResident``, waiting on the paging fence); then each runs GPU work on them through
their VAs (fills with a pattern, a copy from a persistent buffer); then each evicts them again -- on odd
frames with ``EvictOnlyIfNecessary``.  The buffers of all processes add up to about 1.5 times local memory, so VidMm
evicts under pressure, demotes victims still needed to the aperture, and pages them back before their device
runs -- under the placement ladder of D7 and ``priority-lru``, which the demo pins: the default placement,
``free-first`` (decision 0165), fills the aperture before evicting anyone and leaves nothing to demote.
At the end every byte of every buffer is compared with a model computed on the side with numpy.

It is small on purpose: it exists so that the event log, the trace and the report have a residency story to
show.  The full workload scenarios (locks, textures, TOML files) are built elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import KiB, format_size
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDICB_EVICT,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.scenarios.demos import DEMO_GPU, DEMO_VIDMM
from wddmsim.scenarios.result import Checks
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue
from wddmsim.vidmm.events import VidMmEvict

PERSISTENT = 2
PER_FRAME = 3


@dataclass(slots=True)
class _Buffer:
    """One buffer of the demonstration: its allocation, GPU VA and the bytes it must hold."""

    allocation: VidMmAllocation
    va: int
    expected: ByteArray


@dataclass(slots=True)
class _Process:
    """One process of the demonstration: its device, paging queue, context and buffers."""

    device: Device
    queue: PagingQueue
    context: HANDLE
    buffers: list[_Buffer] = field(default_factory=list)


def _va(address: int) -> int:
    return hw_address(Space.GPU_VA, address)


class _Demo:
    def __init__(self, adapter: Adapter, seed: int, processes: int) -> None:
        vidmm = adapter.vidmm
        if vidmm.va is None:
            raise ConfigurationError(
                "driver_model", adapter.config.driver.model.value, "the residency demo runs work through GPU VAs: wddm2"
            )
        self.adapter = adapter
        self.vidmm = vidmm
        self.va = vidmm.va
        self.rm = vidmm.residency
        self.rng = np.random.default_rng(seed)
        local = sum(s.size for s in vidmm.spaces if not s.aperture)
        self.unit = max(64 * KiB, local // 64 // (64 * KiB) * (64 * KiB))
        self.local = local
        most = processes * (PERSISTENT + 2 * PER_FRAME) * 6 * self.unit
        system = adapter.gpu.config.system_size
        if 2 * most > system:
            vram = adapter.gpu.config.local_size
            unit_most = system // (2 * most // self.unit) // (64 * KiB) * (64 * KiB)
            largest = (unit_most + 64 * KiB) * 64 - 64 * KiB + (vram - local)
            raise ConfigurationError(
                "local_size",
                format_size(vram).replace(" ", ""),
                f"the residency demo needs at most {format_size(largest)}: it backs up to {format_size(most)} of "
                f"buffers with system pages, and system memory ({format_size(system)}) must hold twice that",
            )
        self.processes = [self._process(i) for i in range(processes)]

    def _process(self, index: int) -> _Process:
        device = self.rm.create_device(self.rm.create_process())
        args = D3DDDI_CREATEPAGINGQUEUE(hDevice=device.handle)
        self.rm.create_paging_queue(args)
        p = _Process(device, self.rm.objects.queue(args.hPagingQueue), self.vidmm.create_context(device))
        space = self.va.create_space(device.process)
        for _ in range(PERSISTENT + 2 * PER_FRAME):
            size = self.unit * int(self.rng.integers(2, 7))
            a = self.rm.lifetimes.create_allocation(
                device, self.adapter.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=size))
            )
            self._make_resident(p, [a])
            mapped = self.va.mappings.map(space, a).va
            self.vidmm.paging.wait(self.vidmm.paging.flush())  # the mapping is written before work uses it
            p.buffers.append(_Buffer(a, mapped, np.zeros(size, np.uint8)))
            if len(p.buffers) > PERSISTENT:
                self._evict(p, [a], only_if_necessary=False)
        return p

    def _make_resident(self, p: _Process, allocations: list[VidMmAllocation]) -> HRESULT:
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=p.queue.handle,
            NumAllocations=len(allocations),
            AllocationList=tuple(a.handle for a in allocations),
        )
        result = self.rm.make_resident(args)
        if result == HRESULT.E_PENDING:
            self.rm.wait(p.queue, args.PagingFenceValue)
        return result

    def _evict(self, p: _Process, allocations: list[VidMmAllocation], *, only_if_necessary: bool) -> None:
        self.rm.evict(
            D3DDDICB_EVICT(
                hDevice=p.device.handle,
                NumAllocations=len(allocations),
                AllocationList=tuple(a.handle for a in allocations),
                Flags=D3DDDI_EVICT_FLAGS(EvictOnlyIfNecessary=only_if_necessary),
            )
        )

    def _region(self, size: int) -> tuple[int, int]:
        """A page-aligned piece of a buffer of ``size`` bytes: (offset, length)."""
        pages = size // (4 * KiB)
        first = int(self.rng.integers(0, pages - 1))
        count = int(self.rng.integers(1, min(64, pages - first) + 1))
        return first * 4 * KiB, count * 4 * KiB

    def frame(self, number: int, out: Checks) -> None:
        """Every process makes its frame's buffers resident, then each runs its work, then each evicts them."""
        chosen: list[list[_Buffer]] = []
        for p in self.processes:
            movable = p.buffers[PERSISTENT:]
            these = [movable[(number * PER_FRAME + j) % len(movable)] for j in range(PER_FRAME)]
            result = self._make_resident(p, [b.allocation for b in these])
            if result not in (HRESULT.S_OK, HRESULT.E_PENDING):
                out.check(f"frame {number}: MakeResident", "MakeResident", False, f"returned {result.name}")
                these = []
            chosen.append(these)
        for p, these in zip(self.processes, chosen, strict=True):
            if these:
                fence = self.vidmm.work.submit(p.context, self._work(p, these))
                self.vidmm.work.wait(p.context, fence)
        for p, these in zip(self.processes, chosen, strict=True):
            if these:
                self._evict(p, [b.allocation for b in these], only_if_necessary=number % 2 == 1)

    def _fill(self, b: _Buffer) -> cmd.Packet:
        offset, length = self._region(b.allocation.size)
        pattern = int(self.rng.integers(1, 1 << 32))
        b.expected[offset : offset + length].view("<u4")[:] = pattern  # whole pages: whole 32-bit words
        return cmd.Fill(_va(b.va + offset), length, pattern)

    def _work(self, p: _Process, these: list[_Buffer]) -> bytes:
        """The frame's GPU work (reference GPU packets by VA), applied to the model as it is built."""
        packets: list[cmd.Packet] = []
        source = p.buffers[0]
        for b in these:
            packets.append(self._fill(b))
            offset, length = self._region(min(source.allocation.size, b.allocation.size))
            packets.append(cmd.Copy(_va(source.va + offset), _va(b.va + offset), length))
            b.expected[offset : offset + length] = source.expected[offset : offset + length]
        packets += [self._fill(b) for b in p.buffers[:PERSISTENT]]
        return b"".join(cmd.encode(x) for x in packets)

    def bytes_of(self, a: VidMmAllocation) -> ByteArray:
        """The allocation's bytes where VidMm says they are (verification reads memory directly)."""
        self.vidmm.paging.wait(self.vidmm.paging.flush())
        where = self.rm.where(a.handle)
        if where.kind == "memory":
            assert where.segment_address is not None
            out: ByteArray = self.adapter.gpu.local.data[where.segment_address : where.segment_address + a.size].copy()
            return out
        assert a.backing is not None
        return np.frombuffer(self.adapter.mm.read(a.backing, 0, a.size), dtype=np.uint8)

    def verify(self, out: Checks) -> None:
        for index, p in enumerate(self.processes):
            bad = [b for b in p.buffers if not np.array_equal(self.bytes_of(b.allocation), b.expected)]
            total = sum(b.allocation.size for b in p.buffers)
            places = sorted({self.rm.where(b.allocation.handle).kind for b in p.buffers})
            out.check(
                f"process {index + 1}: every byte its work wrote, wherever VidMm left it ({', '.join(places)})",
                "MakeResident/Evict + GPU work",
                not bad,
                f"{len(p.buffers)} buffers, {format_size(total)}" + (f"; {len(bad)} differ" if bad else ": identical"),
            )


def run_residency_demo(
    config: SystemConfig | None = None,
    *,
    seed: int = 0,
    processes: int = 4,
    frames: int = 6,
    on_adapter: Callable[[Adapter], None] | None = None,
) -> tuple[Adapter, Checks]:
    """Run the demo on a fresh adapter (``DEMO_GPU`` unless ``config`` says otherwise)."""
    adapter = build_adapter(config or SystemConfig(gpu=DEMO_GPU, vidmm=DEMO_VIDMM))
    if on_adapter is not None:
        on_adapter(adapter)
    out = Checks()
    demo = _Demo(adapter, seed, processes)
    for number in range(frames):
        demo.frame(number, out)
    demo.verify(out)
    evictions = adapter.events.of_type(VidMmEvict)
    pressure = [e for e in evictions if e.cause == "pressure"]
    demoted = [e for e in pressure if e.destination == "aperture"]
    total = sum(b.allocation.size for p in demo.processes for b in p.buffers)
    out.check(
        f"oversubscription: {format_size(total)} of buffers over {format_size(demo.local)} of local memory",
        "eviction under pressure",
        bool(pressure),
        f"{len(pressure)} evictions under pressure, {len(demoted)} demoted to the aperture",
    )
    return adapter, out


__all__ = ["DEMO_GPU", "run_residency_demo"]
