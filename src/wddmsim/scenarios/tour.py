"""The paging tour: every ``DxgkDdiBuildPagingBuffer`` operation, end to end, each result checked.

It is what ``wddmsim run`` does by default until the full workload scenarios land: allocations are created
through ``DxgkDdiCreateAllocation``, their content is filled, evicted to system pages, paged back, moved,
(un)swizzled, mapped through the aperture and onto the dummy page, and -- in the WDDM 2.x model -- reached
through the paging process's GPU VA.  Every step compares the bytes the GPU produced with an expectation
computed independently (numpy on the original data), never with the simulator's own output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, KiB, MiB, format_size
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.flags import (
    DXGK_MAPAPERTUREFLAGS,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_TRANSFERFLAGS,
)
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY,
    DXGK_BUILDPAGINGBUFFER_READPHYSICAL,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL,
    DXGK_FILL_DESTINATION,
    DXGK_INITCONTEXTRESOURCE_DESTINATION,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGK_TRANSFER_LOCATION,
)
from wddmsim.ddi.pte import pte_array, pte_flags
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.drivers.resources import ResourceUsage
from wddmsim.hw.engine import EXECUTOR_OPCODE
from wddmsim.hw.events import PacketExecuted
from wddmsim.hw.faults import AccessKind
from wddmsim.scenarios.result import Check, Checks
from wddmsim.scenarios.rig import PagingRig, ScratchAddressSpace
from wddmsim.system import SystemConfig

BOTH_ENDS = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)


@dataclass(frozen=True, slots=True)
class TourSegments:
    """The segments the tour uses, by role, as the driver reported them (``DXGK_SEGMENTDESCRIPTOR4.Flags``): a
    driver numbers its segments as it likes (the reference driver 1 visible, 2 local, 3 aperture; the simple
    driver 3, 2, 1), so the tour asks rather than assumes."""

    cpu_visible: int
    """The first memory segment the CPU sees (``CpuVisible``, not ``Aperture``): behind the PCI BAR."""
    local: int
    """The first memory segment the CPU cannot see."""
    aperture: int
    """The first aperture segment (``Aperture``)."""


def tour_segments(descriptors: Sequence[DXGK_SEGMENTDESCRIPTOR4]) -> TourSegments:
    """The roles of ``descriptors`` (segment ``i + 1`` is ``descriptors[i]``, as ``DxgkDdiQueryAdapterInfo``
    returned them); a :class:`ConfigurationError` naming the driver's segments when one role is missing."""
    roles: dict[str, int] = {}
    for segment_id, descriptor in enumerate(descriptors, start=1):
        flags = descriptor.Flags
        role = "aperture" if flags.Aperture else "cpu_visible" if flags.CpuVisible else "local"
        roles.setdefault(role, segment_id)
    missing = [role for role in ("cpu_visible", "local", "aperture") if role not in roles]
    if missing:
        raise ConfigurationError(
            "segments", len(descriptors), f"the tour needs a {', a '.join(missing)} segment and the driver reports none"
        )
    return TourSegments(**roles)


TourResult = Checks
"""The tour's checks (the shared :class:`~wddmsim.scenarios.result.Checks`)."""

MULTIPASS_SIZE = 32 * MiB
"""8 192 scattered pages: a page list longer than a default (64 KiB) paging buffer holds."""


@dataclass(frozen=True, slots=True)
class TourLayout:
    """Where the tour places its bytes: offsets in the CPU-visible segment (``cpu_*``) and in the local segment.

    The tour makes VidMm's placement decisions itself (it drives ``DxgkDdiBuildPagingBuffer`` directly), so its
    offsets must fit the segments of the adapter it runs on.  :data:`SPACIOUS` is the layout of the default GPU
    (256 MiB; the canonical disassembly); :data:`COMPACT` packs the same steps into a 32 MiB local segment
    (decision 0049): the multipass source overlaps regions the first step has finished with.
    """

    cpu_move: int
    cpu_swizzle: int
    fill: int
    move: int
    aperture: int
    physical: int
    context: int
    context_allocation: int
    resident: int
    virtual_source: int
    virtual_destination: int
    multipass: int

    @property
    def cpu_needed(self) -> int:
        """Bytes of the CPU-visible segment the layout uses (the swizzled surface is ~342 KiB)."""
        return max(self.cpu_move + 4 * MiB, self.cpu_swizzle + 512 * KiB)

    @property
    def local_needed(self) -> int:
        """Bytes of the local segment the layout uses."""
        return max(self.multipass + MULTIPASS_SIZE, self.virtual_destination + 1 * MiB, self.resident + 64 * KiB)

    def fits(self, cpu_size: int, local_size: int) -> bool:
        # VidMm puts the paging process's page tables at the end of the CPU-visible segment: leave them 1 MiB.
        return self.cpu_needed + 1 * MiB <= cpu_size and self.local_needed <= local_size


SPACIOUS = TourLayout(
    cpu_move=4 * MiB,
    cpu_swizzle=16 * MiB,
    fill=8 * MiB,
    move=32 * MiB,
    aperture=48 * MiB,
    physical=40 * MiB,
    context=60 * MiB,
    context_allocation=62 * MiB,
    resident=70 * MiB,
    virtual_source=80 * MiB,
    virtual_destination=96 * MiB,
    multipass=100 * MiB,
)
COMPACT = TourLayout(
    cpu_move=0,
    cpu_swizzle=4 * MiB,
    fill=8 * MiB,
    move=12 * MiB,
    aperture=16 * MiB,
    physical=20 * MiB,
    context=21 * MiB,
    context_allocation=22 * MiB,
    resident=23 * MiB,
    virtual_source=24 * MiB,
    virtual_destination=25 * MiB,
    multipass=0,
)


TOUR_VRAM_MINIMUM = 44 * MiB
"""The least local memory ``demo_config`` gives a layout that fits (a quarter of it the BAR; decision 0049)."""


def tour_layout(cpu_size: int, local_size: int, vram: int) -> TourLayout:
    """The layout for segments of these sizes (``vram`` bytes of local memory in all); a
    :class:`ConfigurationError` naming ``vram`` if none fits."""
    for layout in (SPACIOUS, COMPACT):
        if layout.fits(cpu_size, local_size):
            return layout
    raise ConfigurationError(
        "vram",
        vram,
        f"the tour needs at least {format_size(TOUR_VRAM_MINIMUM)} (a CPU-visible segment of "
        f"{format_size(COMPACT.cpu_needed + 1 * MiB)} and a local segment of {format_size(COMPACT.local_needed)})",
    )


def _same(actual: ByteArray, expected: ByteArray) -> tuple[bool, str]:
    if actual.shape != expected.shape:
        return False, f"{actual.shape[0]} bytes, expected {expected.shape[0]}"
    diff = np.flatnonzero(actual != expected)
    if diff.shape[0]:
        return False, f"{diff.shape[0]} byte(s) differ, first at +{int(diff[0]):#x}"
    return True, f"{actual.shape[0]:,} bytes identical"


Step = Callable[[PagingRig, TourLayout, TourResult], None]


def _fill_and_transfers(rig: PagingRig, at: TourLayout, out: TourResult) -> None:
    seg = tour_segments(rig.vidmm.segments)
    size = 4 * MiB
    info = rig.buffer(size)
    h = info.hAllocation
    local_offset = at.fill
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILL(
            hAllocation=h,
            FillSize=size,
            FillPattern=0,
            Destination=DXGK_FILL_DESTINATION(
                SegmentId=seg.local, SegmentAddress=rig.segment_address(seg.local, local_offset)
            ),
        )
    )
    ok, detail = _same(rig.read_segment(seg.local, local_offset, size), np.zeros(size, np.uint8))
    out.check("first page-in, no content", "Fill(0)", ok, detail)

    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILL(
            hAllocation=h,
            FillSize=size,
            FillPattern=0xDEADBEEF,
            Destination=DXGK_FILL_DESTINATION(
                SegmentId=seg.local, SegmentAddress=rig.segment_address(seg.local, local_offset)
            ),
        )
    )
    expected = np.resize(np.frombuffer((0xDEADBEEF).to_bytes(4, "little"), np.uint8), size)
    ok, detail = _same(rig.read_segment(seg.local, local_offset, size), expected)
    out.check("fill with a pattern", "Fill(0xDEADBEEF)", ok, detail)

    data = rig.pattern(size, seed=1)
    upload = rig.backing(size, scatter_seed=2)
    rig.write_mdl(upload, data)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            hAllocation=h,
            TransferSize=size,
            Source=DXGK_TRANSFER_LOCATION.mdl(upload),
            Destination=DXGK_TRANSFER_LOCATION.segment(seg.local, rig.segment_address(seg.local, local_offset)),
            Flags=BOTH_ENDS,
        )
    )
    ok, detail = _same(rig.read_segment(seg.local, local_offset, size), data)
    out.check("upload from scattered system pages", "Transfer(MDL->segment)", ok, detail)

    backing = rig.backing(size)
    half = size // 2
    source = DXGK_TRANSFER_LOCATION.segment(seg.local, rig.segment_address(seg.local, local_offset))
    for index, flags in enumerate((DXGK_TRANSFERFLAGS(TransferStart=True), DXGK_TRANSFERFLAGS(TransferEnd=True))):
        rig.vidmm.paging.build(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                hAllocation=h,
                TransferOffset=index * half,
                TransferSize=half,
                Source=source,
                Destination=DXGK_TRANSFER_LOCATION.mdl(backing),
                Flags=flags,
                MdlOffset=(index * half) >> PAGE_SHIFT,
            )
        )
    rig.vidmm.paging.wait(rig.vidmm.paging.flush())
    ok, detail = _same(rig.read_mdl(backing), data)
    out.check("evict in two sub-transfers (TransferOffset, MdlOffset)", "Transfer(segment->MDL)", ok, detail)

    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            hAllocation=h,
            TransferSize=size,
            Source=DXGK_TRANSFER_LOCATION.mdl(backing),
            Destination=DXGK_TRANSFER_LOCATION.segment(
                seg.cpu_visible, rig.segment_address(seg.cpu_visible, at.cpu_move)
            ),
            Flags=BOTH_ENDS,
        )
    )
    ok, detail = _same(rig.read_segment(seg.cpu_visible, at.cpu_move, size), data)
    out.check("page back in, another segment", "Transfer(MDL->segment)", ok, detail)

    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            hAllocation=h,
            TransferSize=size,
            Source=DXGK_TRANSFER_LOCATION.segment(seg.cpu_visible, rig.segment_address(seg.cpu_visible, at.cpu_move)),
            Destination=DXGK_TRANSFER_LOCATION.segment(seg.local, rig.segment_address(seg.local, at.move)),
            Flags=BOTH_ENDS,
        )
    )
    ok, detail = _same(rig.read_segment(seg.local, at.move, size), data)
    out.check("move between memory segments", "Transfer(segment->segment)", ok, detail)

    dummy = rig.dummy_page(0xD0)
    first_page = 100
    pages = size >> PAGE_SHIFT
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
            hAllocation=h,
            SegmentId=seg.aperture,
            OffsetInPages=first_page,
            NumberOfPages=pages,
            pMdl=backing,
            Flags=DXGK_MAPAPERTUREFLAGS(CacheCoherent=True),
        )
    )
    aperture_address = rig.segment_address(seg.aperture, first_page * PAGE_SIZE)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            TransferSize=size,
            Source=DXGK_TRANSFER_LOCATION.segment(seg.aperture, aperture_address),
            Destination=DXGK_TRANSFER_LOCATION.segment(seg.local, rig.segment_address(seg.local, at.aperture)),
            Flags=BOTH_ENDS,
        )
    )
    ok, detail = _same(rig.read_segment(seg.local, at.aperture, size), data)
    out.check("GPU reads the backing pages through the aperture", "MapApertureSegment", ok, detail)

    rig.execute(
        DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
            hAllocation=h, SegmentId=seg.aperture, OffsetInPages=first_page, NumberOfPages=pages, DummyPage=dummy
        )
    )
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            TransferSize=2 * PAGE_SIZE,
            Source=DXGK_TRANSFER_LOCATION.segment(seg.aperture, aperture_address),
            Destination=DXGK_TRANSFER_LOCATION.segment(seg.local, rig.segment_address(seg.local, at.aperture)),
            Flags=BOTH_ENDS,
        )
    )
    ok, detail = _same(rig.read_segment(seg.local, at.aperture, 2 * PAGE_SIZE), np.full(2 * PAGE_SIZE, 0xD0, np.uint8))
    out.check("unmapped aperture pages read the dummy page", "UnmapApertureSegment", ok, detail)

    _discard(rig, seg, at, h, size, out)


def _discard(rig: PagingRig, seg: TourSegments, at: TourLayout, h: HANDLE, size: int, out: TourResult) -> None:
    """``DXGK_OPERATION_DISCARD_CONTENT`` of the moved allocation.  What a driver writes for it is its own: the
    reference driver leaves a note for the GPU (decision 0006), which only a driver with a ``DriverProbe`` is
    checked for; any other is checked for what the DDI promises -- the content stays where it is, nothing copied."""
    kept = rig.read_segment(seg.local, at.move, size).copy()
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
            hAllocation=h, SegmentId=seg.local, SegmentAddress=rig.segment_address(seg.local, at.move)
        )
    )
    if rig.probe is not None:
        notes = [e for e in rig.adapter.events if type(e).__name__ == "EngineNote"]
        out.check("discard reaches the GPU as a note, no copy", "DiscardContent", bool(notes), f"{len(notes)} note(s)")
        return
    ok, detail = _same(rig.read_segment(seg.local, at.move, size), kept)
    out.check("discard copies nothing: the content stays", "DiscardContent", ok, detail)


def _swizzle(rig: PagingRig, at: TourLayout, out: TourResult) -> None:
    seg = tour_segments(rig.vidmm.segments)
    info = rig.surface(1024, 256, mips=3, usage=ResourceUsage.SWIZZLED | ResourceUsage.CPU_VISIBLE)
    size = info.Size
    linear = rig.pattern(size, seed=3)
    upload = rig.backing(size, scatter_seed=4)
    rig.write_mdl(upload, linear)
    where = rig.segment_address(seg.cpu_visible, at.cpu_swizzle)
    in_memory = DXGK_TRANSFER_LOCATION.segment(seg.cpu_visible, where)
    rig.transfer(DXGK_TRANSFER_LOCATION.mdl(upload), in_memory, size, allocation=info.hAllocation, swizzle=True)
    ok, detail = _same(
        rig.read_segment(seg.cpu_visible, at.cpu_swizzle, size), rig.tiled_image(info.hAllocation, linear)
    )
    out.check("page in with Swizzle: every MIP level tiled", "Transfer(Swizzle)", ok, detail)

    evicted = rig.backing(size)
    rig.transfer(in_memory, DXGK_TRANSFER_LOCATION.mdl(evicted), size, allocation=info.hAllocation, unswizzle=True)
    ok, detail = _same(rig.read_mdl(evicted), linear)
    out.check("evict with Unswizzle: system pages linear again", "Transfer(Unswizzle)", ok, detail)

    if rig.adapter.capabilities.special_lock_transfer:
        relocked = rig.backing(size)
        rig.execute(
            DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER(
                hAllocation=info.hAllocation,
                TransferSize=size,
                Source=DXGK_TRANSFER_LOCATION.segment(seg.cpu_visible, where),
                Destination=DXGK_TRANSFER_LOCATION.mdl(relocked),
                Flags=DXGK_TRANSFERFLAGS(Unswizzle=True, TransferStart=True, TransferEnd=True),
            )
        )
        ok, detail = _same(rig.read_mdl(relocked), linear)
        out.check("evict an alternate-VA lock", "SpecialLockTransfer", ok, detail)


def _physical(rig: PagingRig, at: TourLayout, out: TourResult) -> None:
    seg = tour_segments(rig.vidmm.segments)
    offset = at.physical + 8
    data = rig.pattern(16, seed=5)
    rig.write_segment(seg.local, offset, data)
    address = rig.segment_address(seg.local, offset)
    executed = len(rig.adapter.events.of_type(PacketExecuted))
    rig.execute(DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=seg.local, PhysicalAddress=address))
    if _by_drivers_executor(rig.adapter.events.of_type(PacketExecuted)[executed:]):
        # The value lands in the reference GPU's READ_MEM register, which a driver's own executor does not have
        # (decision 0129): what stays observable is that the buffer ran and the bytes are as they were.
        ok, detail = _same(rig.read_segment(seg.local, offset, 16), data)
        out.check("the driver's executor reads at a segment address", "ReadPhysical", ok, detail)
    else:
        value = rig.gpu.engines[0].last_read
        ok = value == int.from_bytes(data[:8].tobytes(), "little")
        out.check("the GPU reads 8 bytes at a segment address", "ReadPhysical", ok, f"read {value:#018x}")
    rig.execute(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=seg.local, PhysicalAddress=address + 1))
    ok, detail = _same(rig.read_segment(seg.local, offset, 16), data)
    out.check("the GPU writes at a segment address; content unchanged", "WritePhysical", ok, detail)


def _by_drivers_executor(executed: list[PacketExecuted]) -> bool:
    """Whether the paging engine's buffers since then all went to the driver's own executor (decision 0111)."""
    paging = [e for e in executed if e.engine == 0]
    return bool(paging) and all(e.opcode == EXECUTOR_OPCODE for e in paging)


def _context(rig: PagingRig, at: TourLayout, out: TourResult) -> None:
    seg = tour_segments(rig.vidmm.segments)
    assert rig.probe is not None  # the step runs only then (_runs)
    info = rig.context(16 * KiB)
    where = rig.segment_address(seg.local, at.context)
    rig.write_segment(seg.local, at.context, rig.pattern(16 * KiB, seed=6))
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(
            hAllocation=info.hAllocation,
            Destination=DXGK_INITCONTEXTRESOURCE_DESTINATION(
                SegmentId=seg.local, SegmentAddress=where, GpuVirtualAddress=0x20_0000
            ),
        )
    )
    image = rig.read_segment(seg.local, at.context, 16 * KiB)
    header = np.frombuffer(image[:32].tobytes(), "<u8").tolist()
    expected = rig.probe.context_header(info.hAllocation, 0x20_0000, 16 * KiB)
    ok = image[: len(expected)].tobytes() == expected and not image[len(expected) :].any()
    out.check("a context image: header, then zeroes", "InitContextResource", ok, f"header {[hex(v) for v in header]}")


def _virtual(rig: PagingRig, at: TourLayout, out: TourResult) -> None:
    seg = tour_segments(rig.vidmm.segments)
    space = ScratchAddressSpace(rig)
    size = 1 * MiB
    pages = size >> PAGE_SHIFT
    src_offset, dst_offset = at.virtual_source, at.virtual_destination
    base_src = rig.segment_address(seg.local, src_offset) >> PAGE_SHIFT
    seg_base = rig.segment_address(seg.local, 0) >> PAGE_SHIFT
    src_va, dst_va = 0x100_0000, 0x200_0000
    space.map(src_va, segment_id=seg.local, page_numbers=np.arange(pages, dtype=np.uint64) + (base_src - seg_base))
    backing = rig.backing(size, scatter_seed=7)
    space.map(dst_va, segment_id=0, page_numbers=backing.pfns)
    root = space.hw_root
    runs = rig.gpu.mmu.translate(root, src_va + PAGE_SIZE, 8, AccessKind.READ)
    want = rig.segment_address(seg.local, src_offset + PAGE_SIZE)
    ok = len(runs) == 1 and runs[0][0] is rig.gpu.local and runs[0][1] == want
    rig.gpu.mmu.invalidate_all()
    out.check(
        "paging-process tables written by the forced CPU path walk to the page",
        "UpdatePageTable(CPU_VIRTUAL)",
        ok,
        f"{len(space.tables)} tables; VA {src_va + PAGE_SIZE:#x} -> local {want:#x}",
    )

    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
            FillSizeInBytes=size, FillPattern=0x0BADF00D, DestinationVirtualAddress=src_va
        )
    )
    expected = np.resize(np.frombuffer((0x0BADF00D).to_bytes(4, "little"), np.uint8), size)
    ok, detail = _same(rig.read_segment(seg.local, src_offset, size), expected)
    out.check("fill through the paging process's VA", "FillVirtual", ok, detail)

    data = rig.pattern(size, seed=8)
    rig.write_segment(seg.local, src_offset, data)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
            TransferSizeInBytes=size,
            SourceVirtualAddress=src_va,
            DestinationVirtualAddress=dst_va,
            TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_SYSTEM,
        )
    )
    ok, detail = _same(rig.read_mdl(backing), data)
    out.check("evict through scratch VAs to scattered pages", "TransferVirtual", ok, detail)

    # Re-point the source VA at other pages with a GPU update of the leaf table (GPU_PHYSICAL mode, in the
    # paging stream) and no flush: the GPU keeps the stale translation until FlushTlb.
    entries = pte_array(pages)
    entries["Flags"] = pte_flags(Valid=1, Segment=seg.local)
    entries["PageAddress"] = np.arange(pages, dtype=np.uint64) + (
        (rig.segment_address(seg.local, dst_offset) >> PAGE_SHIFT) - seg_base
    )
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
            PageTableLevel=0,
            PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuPhysical=space.physical(0, src_va)),
            pPageTableEntries=entries,
            StartIndex=rig.gpu.mmu.layout.index(src_va, 0),
            NumPageTableEntries=pages,
            UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL,
            FirstPteVirtualAddress=src_va,
        )
    )
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
            FillSizeInBytes=PAGE_SIZE, FillPattern=0x11111111, DestinationVirtualAddress=src_va
        )
    )
    stale = rig.read_segment(seg.local, src_offset, 4)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
            RootPageTableAddress=space.root_address, StartVirtualAddress=src_va, EndVirtualAddress=src_va + size - 1
        )
    )
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
            FillSizeInBytes=PAGE_SIZE, FillPattern=0x22222222, DestinationVirtualAddress=src_va
        )
    )
    fresh = rig.read_segment(seg.local, dst_offset, 4)
    ok = stale.tolist() == [0x11] * 4 and fresh.tolist() == [0x22] * 4
    out.check(
        "GPU page-table update; stale translation until FlushTlb, new one after",
        "UpdatePageTable + FlushTlb",
        ok,
        f"before {stale.tolist()}, after {fresh.tolist()}",
    )

    fence_page = rig.backing(PAGE_SIZE)
    fence_va = 0x300_0000
    space.map(fence_va, segment_id=0, page_numbers=fence_page.pfns)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(MonitoredFenceGpuVa=fence_va + 8, MonitoredFenceValue=0x1_0000_0007)
    )
    value = int(np.frombuffer(rig.read_mdl(fence_page, 8, 8).tobytes(), "<u8")[0])
    out.check(
        "the paging fence's 64-bit value, written by the GPU",
        "SignalMonitoredFence",
        value == 0x1_0000_0007,
        f"{value:#x}",
    )

    if rig.probe is None:
        return  # the rest checks what the driver wrote and recorded: only a DriverProbe says
    header_size = len(rig.probe.context_header(0, 0, 0))
    ctx_offset = at.context_allocation
    ctx_va = 0x400_0000
    space.map(
        ctx_va,
        segment_id=seg.local,
        page_numbers=np.arange(2, dtype=np.uint64)
        + ((rig.segment_address(seg.local, ctx_offset) >> PAGE_SHIFT) - seg_base),
    )
    state = rig.pattern(64, seed=9)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION(
            ContextAllocation=ctx_va,
            ContextAllocationSize=8 * KiB,
            pDriverPrivateData=state.tobytes(),
            DriverPrivateDataSize=64,
        )
    )
    ok, detail = _same(rig.read_segment(seg.local, ctx_offset + header_size, 64), state)
    out.check("context state rewritten through its VA", "UpdateContextAllocation", ok, detail)

    resident = rig.buffer(64 * KiB, usage=ResourceUsage.ACCESSED_PHYSICALLY | ResourceUsage.EXPLICIT_RESIDENCY)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY(
            hAllocation=resident.hAllocation,
            Resident=True,
            PhysicalAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=seg.local, SegmentOffset=at.resident),
        )
    )
    record = rig.probe.notified_residency(resident.hAllocation)
    out.check(
        "residency notification reaches the driver",
        "NotifyResidency",
        record == (seg.local, at.resident),
        f"{record}",
    )


def _multipass(rig: PagingRig, at: TourLayout, out: TourResult) -> None:
    seg = tour_segments(rig.vidmm.segments)
    size = MULTIPASS_SIZE
    info = rig.buffer(size)
    data = rig.pattern(size, seed=10)
    rig.write_segment(seg.local, at.multipass, data)
    scattered = rig.backing(size, scatter_seed=11)
    before = rig.vidmm.paging.submissions
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            hAllocation=info.hAllocation,
            TransferSize=size,
            Flags=BOTH_ENDS,
            Source=DXGK_TRANSFER_LOCATION.segment(seg.local, rig.segment_address(seg.local, at.multipass)),
            Destination=DXGK_TRANSFER_LOCATION.mdl(scattered),
        )
    )
    buffers = rig.vidmm.paging.submissions - before
    ok, detail = _same(rig.read_mdl(scattered), data)
    out.check(
        "8 192 scattered pages: the page list outgrows one paging buffer",
        "Transfer(multipass)",
        ok and buffers > 1,
        f"{buffers} paging buffers; {detail}",
    )


STEPS: tuple[Step, ...] = (_fill_and_transfers, _multipass, _swizzle, _physical, _context, _virtual)


def _runs(step: Step, rig: PagingRig) -> bool:
    """Whether the adapter's driver does what ``step`` shows (its capabilities; a probe for its own formats)."""
    caps = rig.adapter.capabilities
    if step is _swizzle:
        return caps.swizzling
    if step is _context:
        return rig.probe is not None
    if step is _virtual:
        return caps.gpummu
    return True


def run_tour(
    config: SystemConfig | None = None, *, on_rig: Callable[[PagingRig], None] | None = None
) -> tuple[PagingRig, TourResult]:
    """Run every step on a fresh adapter; the result holds one check per verified behaviour.

    The steps are placed by :func:`tour_layout` for the adapter's segment sizes (a :class:`ConfigurationError`
    naming ``vram`` when local memory is too small for any layout: nothing runs then).

    ``on_rig`` sees the rig before the first step (to attach observers such as a paging-buffer capture).
    """
    rig = PagingRig(config)
    seg = tour_segments(rig.vidmm.segments)
    layout = tour_layout(
        rig.vidmm.segment(seg.cpu_visible).Size, rig.vidmm.segment(seg.local).Size, rig.gpu.config.local_size
    )
    if on_rig is not None:
        on_rig(rig)
    result = TourResult()
    for step in STEPS:
        if _runs(step, rig):
            step(rig, layout, result)
    return rig, result


__all__ = [
    "COMPACT",
    "SPACIOUS",
    "STEPS",
    "Check",
    "TourLayout",
    "TourResult",
    "TourSegments",
    "run_tour",
    "tour_layout",
    "tour_segments",
]
