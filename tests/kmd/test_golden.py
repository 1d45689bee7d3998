"""A canonical paging buffer, disassembled: the byte format is stable and reads as documented.

Regenerate after an intended format change with ``pytest tests/kmd/test_golden.py --update-goldens``.
"""

from __future__ import annotations

from pathlib import Path

from wddmsim.core.units import PAGE_SIZE, KiB
from wddmsim.ddi.flags import DXGK_MAPAPERTUREFLAGS, DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_READPHYSICAL,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL,
    DXGK_FILL_DESTINATION,
    DXGK_INITCONTEXTRESOURCE_DESTINATION,
)
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.scenarios.rig import PagingRig
from wddmsim.viz.disasm import disassemble, render

GOLDEN = Path(__file__).parent.parent / "golden" / "canonical_paging_buffer.txt"


def canonical_buffer() -> bytes:
    rig = PagingRig()
    captured: list[bytes] = []
    rig.vidmm.paging.capture = lambda _event, data: captured.append(data)
    local = rig.segment_address(2, 0)
    surface = rig.surface(256, 64, mips=2, usage=AllocationUsage.SWIZZLED)
    context = rig.context(8 * KiB)
    mdl = rig.backing(4 * PAGE_SIZE, scatter_seed=7)
    build = rig.vidmm.paging.build
    build(
        DXGK_BUILDPAGINGBUFFER_FILL(
            FillSize=64 * KiB,
            FillPattern=0xDEADBEEF,
            Destination=DXGK_FILL_DESTINATION(SegmentId=2, SegmentAddress=local),
        )
    )
    build(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            TransferOffset=PAGE_SIZE,
            TransferSize=3 * PAGE_SIZE,
            MdlOffset=1,
            Source=Loc.segment(2, local),
            Destination=Loc.mdl(mdl),
            Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
        )
    )
    build(
        DXGK_BUILDPAGINGBUFFER_TRANSFER(
            hAllocation=surface.hAllocation,
            TransferSize=surface.Size,
            Source=Loc.segment(2, local),
            Destination=Loc.segment(1, 0),
            Flags=DXGK_TRANSFERFLAGS(Unswizzle=True, TransferStart=True, TransferEnd=True),
        )
    )
    build(
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
            SegmentId=3, OffsetInPages=16, NumberOfPages=4, pMdl=mdl, Flags=DXGK_MAPAPERTUREFLAGS(CacheCoherent=True)
        )
    )
    build(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(SegmentId=3, OffsetInPages=16, NumberOfPages=4, DummyPage=0x1000))
    build(DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=2, PhysicalAddress=local + 4))
    build(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=2, PhysicalAddress=local + 8))
    build(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(SegmentId=2, SegmentAddress=local))
    build(
        DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE(
            hAllocation=context.hAllocation,
            Destination=DXGK_INITCONTEXTRESOURCE_DESTINATION(
                SegmentId=2, SegmentAddress=local + 64 * KiB, GpuVirtualAddress=0x10000
            ),
        )
    )
    rig.vidmm.paging.wait(rig.vidmm.paging.flush())
    (data,) = captured
    return data


def test_the_canonical_paging_buffer_disassembles_as_recorded(update_goldens: bool) -> None:
    text = render(disassemble(canonical_buffer())) + "\n"
    if update_goldens:
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
