"""The top-level recipe reads a nested structure's fields in place (decision 0222): while the nested value keeps
the shape the recipe was made for, and, when it does not (another field set, another type), through the general
recipe -- the same items as the field-by-field walk either way."""

from __future__ import annotations

import dataclasses

from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
)
from wddmsim.ddi.pte import pte_array
from wddmsim.vidmm.paging.stream import scalar_fields

from .test_scalar_fields import walked

ENTRIES = pte_array(2)


def _update(address: DXGK_PAGETABLEUPDATEADDRESS) -> DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE:
    return DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=0,
        PageTableAddress=address,
        pPageTableEntries=ENTRIES,
        StartIndex=1,
        NumPageTableEntries=2,
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    )


@dataclasses.dataclass
class _Elsewhere:
    """A structure of another type where the payload's nested one goes (its recipe must not be reused)."""

    SegmentId: int
    Spare: int


def test_nested_values_of_one_and_of_another_shape_give_what_the_walk_gives() -> None:
    virtual = _update(DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0x4000_0000))
    physical = _update(DXGK_PAGETABLEUPDATEADDRESS(GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=1, SegmentOffset=8)))
    both = _update(DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=0x1000, GpuVirtual=0x2000))  # type: ignore[arg-type]
    for payload in (virtual, physical, both, virtual, both, physical):
        assert scalar_fields(payload) == walked(payload)
    assert dict(scalar_fields(virtual))["PageTableAddress.GpuVirtual"] == 0x4000_0000
    assert dict(scalar_fields(physical))["PageTableAddress.GpuVirtual"] == 0
    assert "PageTableAddress.CpuVirtual" not in dict(scalar_fields(physical))
    assert dict(scalar_fields(both))["PageTableAddress.CpuVirtual"] == 0x1000


def test_a_nested_value_of_another_type_or_field_type_takes_the_general_recipe() -> None:
    flush = DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
        RootPageTableAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=2, SegmentOffset=0x1000), EndVirtualAddress=1 << 40
    )
    assert scalar_fields(flush) == walked(flush)
    odd = DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=_Elsewhere(3, 4))  # type: ignore[arg-type]
    assert scalar_fields(odd) == walked(odd)
    assert dict(scalar_fields(odd))["RootPageTableAddress.Spare"] == 4
    unset = DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
        RootPageTableAddress=D3DGPU_PHYSICAL_ADDRESS(SegmentId=None, SegmentOffset=5)  # type: ignore[arg-type]
    )
    assert scalar_fields(unset) == walked(unset)
    assert "RootPageTableAddress.SegmentId" not in dict(scalar_fields(unset))
    assert scalar_fields(flush) == walked(flush), "the inline reading still serves its own shape"
