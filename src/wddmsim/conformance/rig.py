"""The bench ``check-driver`` works on: one adapter around the driver under test, and the means to call its
``DxgkDdiBuildPagingBuffer`` exactly, execute what it built, and see every byte that changed.

The adapter is composed as for a run (VidMm discovers the segments and owns the paging context), but the rig
drives the DDI itself, as dxgkrnl would: it hands the driver guarded buffers of any ``DmaSize`` (a canary before
and after the buffer and its private data, the free space poisoned), loops over the multipass protocol, submits
the buffers on the paging node and waits for them.  Test regions are reserved in VidMm's own range allocators, so
nothing else ever lies there; everything else is covered by snapshots.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import ByteArray, CpuMapping
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, MiB
from wddmsim.ddi.flags import DXGK_DISCARDCONTENTFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGKARG_BUILDPAGINGBUFFER,
    PagingPayload,
)
from wddmsim.ddi.status import BUILD_PAGING_BUFFER_STATUSES, NTSTATUS, status_name
from wddmsim.drivers.package import DriverConfiguration, DriverPackage
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.vidmm.gpu.scheduler import GpuHung
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.segments import SegmentSpace

GPU: Final = GpuConfig(local_size=32 * MiB, bar_size=8 * MiB, aperture_size=16 * MiB, system_size=256 * MiB)
"""A small GPU: every snapshot of local memory is cheap."""
GUARD: Final = 256
"""Canary bytes before and after each DMA buffer and each private-data area."""
CANARY: Final = 0xC5
POISON: Final = 0xEE
"""A fresh DMA buffer's free space: a byte the driver wrote differs (a driver writing exactly 0xEE bytes past its
pointer is not caught: the tail check is a best effort, the guard check is exact)."""
MAX_CALLS: Final = 4096
"""A multipass loop that takes more calls than this never terminates."""
PRIVATE_SIZE: Final = 64
FIRST_VA: Final = 16 * MiB
"""The paging process's VAs the GpuMmu cases use start here (VidMm keeps the top of the space; 0 stays unmapped)."""
TABLE_CANARY: Final = 0x3C
"""A test table's bytes before a case writes it (a written invalid entry, all zero, differs)."""


@dataclass(slots=True)
class Call:
    """One ``DxgkDdiBuildPagingBuffer`` call as the rig saw it."""

    status: int
    dma_size: int
    written: int
    multipass_before: int
    multipass_after: int
    breach: str = ""
    """The first contract breach of this call ('' if none)."""


@dataclass(slots=True)
class Buffer:
    mapping: CpuMapping
    mdl: MDL
    private: CpuMapping
    private_mdl: MDL
    size: int
    used: int = 0

    @property
    def physical_address(self) -> int:
        return int(self.mdl.pfns[0]) * PAGE_SIZE + GUARD


@dataclass(slots=True)
class Build:
    """An operation built to completion (or not): the calls, the buffers, and what went wrong."""

    calls: list[Call] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)
    breach: str = ""
    status: int = 0

    @property
    def ok(self) -> bool:
        return not self.breach

    def bytes(self) -> bytes:
        """Every byte written, buffers end to end."""
        return b"".join(bytes(b.mapping.view[GUARD : GUARD + b.used]) for b in self.buffers)


@final
class Rig:
    """One adapter over the driver under test."""

    def __init__(self, package: DriverPackage, config: DriverConfiguration) -> None:
        self.package = package
        self.adapter: Adapter = build_adapter(SystemConfig(gpu=GPU, driver_package=package, driver=config))
        self.vidmm = self.adapter.vidmm
        self.driver = self.adapter.driver
        self.gpu = self.adapter.gpu
        self.mm = self.adapter.mm
        self.rng = np.random.default_rng(0x5EED)
        self._next_va = FIRST_VA
        self.canaries: list[MDL] = []
        """System pages no operation may touch (around every MDL a case uses)."""

    # --- memory -------------------------------------------------------------------------------------------

    def memory_segments(self) -> list[SegmentSpace]:
        return [s for s in self.vidmm.spaces if not s.aperture]

    def aperture_segment(self) -> SegmentSpace | None:
        return next((s for s in self.vidmm.spaces if s.aperture), None)

    def reserve(self, space: SegmentSpace, size: int) -> int:
        """A range of ``size`` bytes of ``space`` no one else will use; its segment address."""
        offset = space.ranges.allocate(size, alignment=PAGE_SIZE)
        if offset is None:
            raise RuntimeError(f"segment {space.id}: no {size:#x}-byte range free for the check")
        space.owners[offset] = "check-driver"
        return space.base + offset

    def reserve_aligned(self, space: SegmentSpace, size: int, alignment: int) -> int:
        """As :meth:`reserve`, the local address a multiple of ``alignment`` (a 64 KB page's, say)."""
        address = self.reserve(space, size + alignment)
        return -(-address // alignment) * alignment

    def pattern(self, size: int) -> ByteArray:
        out: ByteArray = self.rng.integers(0, 256, size, dtype=np.uint8)
        return out

    def scattered_mdl(self, pages: int, byte_count: int | None = None) -> MDL:
        """System pages in an order no two of which are consecutive (each is an extent of its own).  The pages
        between and around them are canaries: a write off the end of any page lands on one."""
        mdl = self.mm.allocate_pages_for_mdl((2 * pages + 1) * PAGE_SIZE)
        gaps = MDL(mdl.pfns[0::2].copy(), (pages + 1) * PAGE_SIZE)
        self.mm.write(gaps, 0, bytes([CANARY]) * gaps.ByteCount)
        self.canaries.append(gaps)
        pfns = mdl.pfns[1::2][:pages][::-1].copy()
        return MDL(pfns, byte_count if byte_count is not None else pages * PAGE_SIZE)

    def mdl_bytes(self, mdl: MDL, first_page: int = 0, size: int | None = None) -> bytes:
        size = mdl.ByteCount - first_page * PAGE_SIZE if size is None else size
        return self.mm.read(MDL(mdl.pfns[first_page:].copy(), size), 0, size)

    def write_mdl(self, mdl: MDL, payload: bytes) -> None:
        self.mm.write(mdl, 0, payload)

    def local(self) -> ByteArray:
        return self.gpu.local.data

    def snapshot(self, mdls: list[MDL]) -> Snapshot:
        """Local memory, the pages of ``mdls`` and every canary page, as they are now."""
        pages = [*mdls, *self.canaries]
        return Snapshot(self.local().copy(), [self.mdl_bytes(m, 0, m.page_count * PAGE_SIZE) for m in pages])

    # --- the paging process's address space (GpuMmu) ---------------------------------------------------

    @property
    def process(self) -> SystemPagingProcess:
        """VidMm's system paging process: every paging buffer runs in its GPU VA space (DOC:system-paging-process.md)."""
        process = self.vidmm.paging_process
        if process is None:
            raise RuntimeError("the driver presents no GpuMmu: there is no paging process")
        return process

    @property
    def gpummu(self) -> bool:
        return self.vidmm.paging_process is not None

    def gpu_va(self, size: int) -> int:
        """``size`` bytes of the paging process's VA space no one else uses, on leaf tables of their own (below the
        region VidMm keeps at the top of the space)."""
        process = self.process
        span = 1 << process.mmu.shift(1)
        va = self._next_va
        self._next_va += -(-size // span) * span + span
        if self._next_va > process.region_base:
            raise RuntimeError(f"no {size:#x} bytes of the paging process's VA space left for the check")
        return va

    def map_va(self, va: int, segment_id: int, page_numbers: npt.NDArray[np.uint64]) -> None:
        """Map pages from ``va`` as VidMm maps its scratch area (``DXGK_PTE.PageAddress`` numbering; 0: PFNs)."""
        self.process.map(va, segment_id=segment_id, page_numbers=page_numbers)

    def segment_pages(self, space: SegmentSpace, address: int, pages: int) -> npt.NDArray[np.uint64]:
        """The ``PageAddress`` numbers of ``pages`` pages of ``space`` from local ``address``."""
        return np.arange(pages, dtype=np.uint64) + np.uint64((address - space.base) >> PAGE_SHIFT)

    def root(self) -> TablePointer:
        """The paging process's root table as the GPU's MMU names it (for walks that verify a case)."""
        address = self.process.root_address
        return TablePointer(Target.LOCAL, self.vidmm.spaces.get(address.SegmentId).base + address.SegmentOffset)

    def table(self, size: int) -> tuple[int, int, CpuMapping]:
        """A table outside the paging process's tree, in its page-table segment, all canary bytes: its local
        address, segment offset and CPU mapping."""
        offset, mapping = self.process.new_table(size)
        mapping.data[:] = TABLE_CANARY
        return self.process.space.base + offset, offset, mapping

    # --- the DDI ------------------------------------------------------------------------------------------

    def call_unbuffered(self, payload: PagingPayload) -> str:
        """One call with ``pDmaBuffer`` NULL and ``DmaSize`` 0, as VidMm initialises its paging process's tables;
        '' or the breach."""
        args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=None, DmaSize=0, hSystemContext=self.vidmm.paging.context)
        try:
            raw: object = self.driver.build_paging_buffer(args)
        except Exception as error:  # the driver's failure, reported, never ours
            return f"raised {type(error).__name__}: {error}"
        if raw != NTSTATUS.STATUS_SUCCESS:
            shown = status_name(raw) if isinstance(raw, int) else repr(raw)
            return (
                f"returned {shown} with pDmaBuffer NULL: the forced CPU_VIRTUAL update is done at once, by the CPU, "
                "and succeeds"
            )
        if args.pDmaBuffer is not None or args.DmaSize != 0:
            return f"pDmaBuffer or DmaSize changed (DmaSize={args.DmaSize}) when there is no DMA buffer"
        return ""

    def buffer(self, size: int) -> Buffer:
        mdl, mapping = self.mm.allocate_contiguous(size + 2 * GUARD)
        mapping.view[:] = bytes([CANARY]) * mapping.size
        mapping.view[GUARD : GUARD + size] = bytes([POISON]) * size
        private_mdl, private = self.mm.allocate_contiguous(PRIVATE_SIZE + 2 * GUARD)
        private.view[:] = bytes([CANARY]) * private.size
        private.view[GUARD : GUARD + PRIVATE_SIZE] = bytes(PRIVATE_SIZE)
        return Buffer(mapping, mdl, private, private_mdl, size)

    def build(self, payload: PagingPayload, dma_size: int, *, first_size: int | None = None) -> Build:
        """Build ``payload`` to completion in buffers of ``dma_size`` bytes (the first ``first_size``), as VidMm's
        loop does: a fresh buffer after every STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER, ``AllocationIsIdle`` after
        STATUS_GRAPHICS_ALLOCATION_BUSY.  A first buffer smaller than one packet (a probe) may make no progress:
        the operation then goes on in a ``dma_size`` buffer, so the driver always sees it to its end."""
        result = Build()
        buffer = self.buffer(first_size if first_size is not None else dma_size)
        result.buffers.append(buffer)
        args = self._args(payload, buffer)
        idle = is_idle(payload)
        repeat: tuple[int, int, bytes] | None = None
        while len(result.calls) < MAX_CALLS:
            call = self._call(args, buffer)
            result.calls.append(call)
            if call.breach:
                result.breach = call.breach
                return result
            status = call.status
            if status == NTSTATUS.STATUS_SUCCESS:
                result.status = status
                return result
            if status == NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY:
                if not isinstance(args.payload, BUSY_CAPABLE):
                    result.breach = (
                        f"STATUS_GRAPHICS_ALLOCATION_BUSY from {args.Operation.name}: it is legal only for "
                        "Transfer, DiscardContent and SpecialLockTransfer"
                    )
                    return result
                if idle or call.written or call.multipass_after != call.multipass_before:
                    result.breach = "STATUS_GRAPHICS_ALLOCATION_BUSY " + (
                        "with Flags.AllocationIsIdle set: VidMm guarantees the allocation idle for the call"
                        if idle
                        else "after writing or making progress"
                    )
                    return result
                idle = True
                args.payload = with_idle_flag(args.payload)
                continue
            if call.multipass_after < call.multipass_before:
                result.breach = (
                    f"MultipassOffset went back from {call.multipass_before} to {call.multipass_after} with "
                    "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER: progress must be kept across calls"
                )
                return result
            written = bytes(buffer.mapping.view[GUARD : GUARD + buffer.used])
            if call.written and (call.multipass_before, call.multipass_after, written) == repeat:
                result.breach = (
                    f"STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER twice with MultipassOffset {call.multipass_before} -> "
                    f"{call.multipass_after} and the same {call.written} bytes: the progress is lost, the loop "
                    "repeats itself (MultipassOffset must record it)"
                )
                return result
            repeat = (call.multipass_before, call.multipass_after, written)
            progress = call.written or call.multipass_after != call.multipass_before
            probing = first_size is not None and len(result.buffers) == 1
            if not progress and buffer.used == 0 and not probing:
                result.breach = (
                    f"STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER with no progress on an empty {buffer.size}-byte buffer"
                )
                return result
            buffer = self.buffer(dma_size)
            result.buffers.append(buffer)
            args.pDmaBuffer = buffer.mapping.pointer(GUARD)
            args.DmaSize = buffer.size
            args.pDmaBufferPrivateData = buffer.private.pointer(GUARD)
            args.DmaBufferWriteOffset = 0
        result.breach = f"no STATUS_SUCCESS after {MAX_CALLS} calls: the multipass loop never ends"
        return result

    def _args(self, payload: PagingPayload, buffer: Buffer) -> DXGKARG_BUILDPAGINGBUFFER:
        return DXGKARG_BUILDPAGINGBUFFER(
            payload,
            pDmaBuffer=buffer.mapping.pointer(GUARD),
            DmaSize=buffer.size,
            pDmaBufferPrivateData=buffer.private.pointer(GUARD),
            DmaBufferPrivateDataSize=PRIVATE_SIZE,
            hSystemContext=self.vidmm.paging.context,
        )

    def _call(self, args: DXGKARG_BUILDPAGINGBUFFER, buffer: Buffer) -> Call:
        before = args.pDmaBuffer
        assert before is not None
        size_before, multipass = args.DmaSize, args.MultipassOffset
        try:
            raw: object = self.driver.build_paging_buffer(args)
        except Exception as error:  # the driver's failure, reported, never ours
            return Call(-1, size_before, 0, multipass, args.MultipassOffset, f"raised {type(error).__name__}: {error}")
        status = int(raw) & 0xFFFFFFFF if isinstance(raw, int) else -1
        call = Call(status, size_before, 0, multipass, args.MultipassOffset)
        if not isinstance(raw, int) or raw not in BUILD_PAGING_BUFFER_STATUSES:
            shown = status_name(raw) if isinstance(raw, int) else repr(raw)
            call.breach = (
                f"returned {shown}: only STATUS_SUCCESS, STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER and "
                "STATUS_GRAPHICS_ALLOCATION_BUSY are legal"
            )
            return call
        call.breach = _bounds(args, buffer, before.offset, size_before, call)
        return call

    # --- execution ----------------------------------------------------------------------------------------

    def execute(self, build: Build) -> str:
        """Submit every buffer of ``build`` on the paging node and wait; '' or what the GPU reported."""
        paging = self.vidmm.paging
        fence = 0
        for buffer in build.buffers:
            if buffer.used == 0:
                continue
            fence = self.vidmm.scheduler.submit(
                paging.context,
                paging.node,
                address=buffer.physical_address,
                size=buffer.size,
                start=0,
                end=buffer.used,
            )
        if not fence:
            return ""
        try:
            self.vidmm.scheduler.wait(paging.node, fence)
        except GpuHung as error:
            engine = self.gpu.engines[paging.node]
            fault = engine.fault
            detail = f": {fault.kind.name} at {fault.address:#x} ({fault.reason})" if fault is not None else ""
            engine.reset()
            self.vidmm.scheduler.faults.pop(paging.node, None)
            return f"the GPU faulted executing the buffer{detail} [{error}]"
        return ""


@dataclass(slots=True)
class Snapshot:
    local: ByteArray
    system: list[bytes]


def _bounds(args: DXGKARG_BUILDPAGINGBUFFER, buffer: Buffer, start: int, size_before: int, call: Call) -> str:
    """Where the driver left ``pDmaBuffer`` and ``DmaSize``, and whether it wrote only what it claims."""
    pointer = args.pDmaBuffer
    view = buffer.mapping.view
    if pointer is None or pointer.mapping is not buffer.mapping:
        return "pDmaBuffer no longer points into the DMA buffer"
    written = pointer.offset - start
    call.written = max(written, 0)
    if written < 0 or pointer.offset > GUARD + buffer.size:
        return f"pDmaBuffer moved by {written} byte(s), outside [{start - GUARD}, {buffer.size}] of the buffer"
    if args.DmaSize != size_before - written:
        return f"DmaSize={args.DmaSize} after advancing pDmaBuffer by {written} from DmaSize={size_before}"
    if not _canary(view[:GUARD]) or not _canary(view[GUARD + buffer.size :]):
        return f"wrote outside the DMA buffer (the guard bytes around its {buffer.size} bytes changed)"
    private = buffer.private.view
    if not _canary(private[:GUARD]) or not _canary(private[GUARD + PRIVATE_SIZE :]):
        return f"wrote outside pDmaBufferPrivateData (the guard bytes around its {PRIVATE_SIZE} bytes changed)"
    tail = bytes(view[pointer.offset : GUARD + buffer.size])
    if tail.strip(bytes([POISON])):
        first = pointer.offset + next(i for i, b in enumerate(tail) if b != POISON) - GUARD
        return (
            f"wrote past the returned pDmaBuffer (byte {first} of the buffer changed, pDmaBuffer left at "
            f"{pointer.offset - GUARD}): pDmaBuffer must point just past the last byte written"
        )
    buffer.used = pointer.offset - GUARD
    return ""


def _canary(view: memoryview) -> bool:
    return bytes(view) == bytes([CANARY]) * len(view)


BUSY_CAPABLE: Final = (
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
)
"""The operations that may answer STATUS_GRAPHICS_ALLOCATION_BUSY (``DxgkDdiBuildPagingBuffer``'s return values)."""


def is_idle(payload: PagingPayload) -> bool:
    """Whether ``payload`` already says ``Flags.AllocationIsIdle``: VidMm guarantees the allocation stays idle for
    the call, so a STATUS_GRAPHICS_ALLOCATION_BUSY answer is a breach, first call or retry alike."""
    flags = getattr(payload, "Flags", None) if isinstance(payload, BUSY_CAPABLE) else None
    return bool(getattr(flags, "AllocationIsIdle", False))


def with_idle_flag(payload: PagingPayload) -> PagingPayload:
    """The same operation with ``Flags.AllocationIsIdle`` set (the retry after ALLOCATION_BUSY)."""
    if isinstance(payload, DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT):
        return dataclasses.replace(payload, Flags=DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True))
    if isinstance(payload, DXGK_BUILDPAGINGBUFFER_TRANSFER | DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER):
        return dataclasses.replace(payload, Flags=dataclasses.replace(payload.Flags, AllocationIsIdle=True))
    return payload


Expectation = Callable[[Rig], None]

__all__ = ["GPU", "GUARD", "Buffer", "Build", "Call", "Rig", "Snapshot", "with_idle_flag"]
