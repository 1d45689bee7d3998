"""The ``PagingOp`` event's ``args`` by recipe (decision 0203) against the field-by-field walk they replace: the
same names, values and order for a payload of every kind, optional fields set and unset, nested structures, flag
unions, enums and values of unusual types."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from wddmsim.core.bits import BitUnion
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_TRANSFERFLAGS,
    DXGK_UPDATEPAGETABLEFLAGS,
)
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UNMODELLED,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_FILL_DESTINATION,
    DXGK_PAGETABLEUPDATEADDRESS,
    Op,
)
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.ddi.pte import pte_array
from wddmsim.vidmm.paging.stream import scalar_fields


def walked(payload: object, prefix: str = "") -> tuple[tuple[str, int], ...]:
    """The field-by-field walk, as it was: integers (bool, IntEnum) as ints, unions by Value, one nested level."""
    out: list[tuple[str, int]] = []
    for f in dataclasses.fields(payload):  # type: ignore[arg-type]
        value = getattr(payload, f.name)
        if isinstance(value, int):
            out.append((prefix + f.name, int(value)))
        elif isinstance(value, BitUnion):
            out.append((prefix + f.name, value.Value))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type) and not prefix:
            out.extend(walked(value, f.name + "."))
    return tuple(out)


MDL_4 = MDL(np.arange(4, dtype=np.uint64) + 100, 4 * 4096)
ENTRIES = pte_array(3)
PAYLOADS = {
    "transfer, MDL destination": DXGK_BUILDPAGINGBUFFER_TRANSFER(
        hAllocation=HANDLE(7), TransferSize=8192, Source=Loc.segment(2, 0x4000), Destination=Loc.mdl(MDL_4),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True), MdlOffset=1,
    ),
    "transfer, segments": DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferOffset=4096, TransferSize=4096, Source=Loc.segment(1, 0x10), Destination=Loc.segment(2, 0x20)
    ),
    "fill": DXGK_BUILDPAGINGBUFFER_FILL(
        hAllocation=HANDLE(3), FillSize=64, FillPattern=0xDEADBEEF, Destination=DXGK_FILL_DESTINATION(SegmentId=1, SegmentAddress=9)
    ),
    "discard": DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(
        hAllocation=HANDLE(4), SegmentId=1, SegmentAddress=0x2000, Flags=DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True)
    ),
    "map aperture (an MDL at the top level)": DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
        SegmentId=3, OffsetInPages=5, NumberOfPages=4, pMdl=MDL_4
    ),
    "update, no 64 KB entries": DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=0, PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0x4000_0000),
        pPageTableEntries=ENTRIES, StartIndex=5, NumPageTableEntries=3,
        Flags=DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=True),
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    ),
    "update, 64 KB entries and a physical table": DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=1,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=1, SegmentOffset=8)),
        pPageTableEntries=ENTRIES, StartIndex=0, NumPageTableEntries=3, pPageTableEntries64KB=ENTRIES,
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL, DriverProtection=0x33,
    ),
    "flush": DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
        RootPageTableAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=2, SegmentOffset=0x1000), EndVirtualAddress=1 << 40
    ),
    "virtual transfer (an enum)": DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
        TransferSizeInBytes=4096, SourceVirtualAddress=1 << 20, DestinationVirtualAddress=2 << 20,
        TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.SYSTEM_TO_LOCAL,
    ),
    "unmodelled (a tuple)": DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=Op.DXGK_OPERATION_MAP_MMU),
    "a NumPy integer and a bool where ints go": DXGK_BUILDPAGINGBUFFER_FILL(
        hAllocation=True, FillSize=np.int64(64), FillPattern=1,  # type: ignore[arg-type]
        Destination=DXGK_FILL_DESTINATION(SegmentId=1, SegmentAddress=0),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_the_recipe_gives_what_the_walk_gives(name: str) -> None:
    payload = PAYLOADS[name]
    expected = walked(payload)
    assert scalar_fields(payload) == expected
    assert scalar_fields(payload) == expected, "the second time, from the kept recipe"
    assert all(type(value) is int for _, value in expected)


def test_a_payload_type_whose_field_types_vary_gets_a_recipe_for_each() -> None:
    with_64k = PAYLOADS["update, 64 KB entries and a physical table"]
    without = PAYLOADS["update, no 64 KB entries"]
    for payload in (with_64k, without, with_64k, without):
        assert scalar_fields(payload) == walked(payload)
    names = [name for name, _ in scalar_fields(with_64k)]
    assert names[:4] == ["PageTableLevel", "hAllocation", "PageTableAddress.GpuVirtual", "StartIndex"]
    assert "PageTableAddress.GpuPhysical" not in names, "one level of nesting, as the event shows it"
    assert dict(scalar_fields(PAYLOADS["map aperture (an MDL at the top level)"]))["pMdl.ByteCount"] == 4 * 4096
    assert "FillSize" not in dict(scalar_fields(PAYLOADS["a NumPy integer and a bool where ints go"]))
