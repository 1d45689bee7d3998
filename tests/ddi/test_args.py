"""DXGKARG_BUILDPAGINGBUFFER: one payload, its union member readable, the others refused."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.ddi.memory import DXGK_ADL, DXGK_ADL_FLAGS, MDL, mdl_from_pfns
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_UNMODELLED,
    DXGK_FILL_DESTINATION,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
)
from wddmsim.ddi.status import NTSTATUS, InvalidArgument


def test_the_operation_follows_the_payload_and_other_members_are_refused() -> None:
    fill = DXGK_BUILDPAGINGBUFFER_FILL(
        FillSize=4096, FillPattern=1, Destination=DXGK_FILL_DESTINATION(SegmentId=1, SegmentAddress=0)
    )
    args = DXGKARG_BUILDPAGINGBUFFER(fill, pDmaBuffer=None, DmaSize=0)
    assert args.Operation == Op.DXGK_OPERATION_FILL
    assert args.Fill is fill
    assert args.MultipassOffset == 0
    with pytest.raises(AttributeError, match="Operation is DXGK_OPERATION_FILL"):
        _ = args.Transfer
    reserved = DXGKARG_BUILDPAGINGBUFFER(
        DXGK_BUILDPAGINGBUFFER_UNMODELLED(Operation=Op.DXGK_OPERATION_MAP_MMU), pDmaBuffer=None, DmaSize=0
    )
    assert reserved.Operation == 19


def test_an_mdl_is_read_only_and_checks_its_byte_count() -> None:
    mdl = mdl_from_pfns([5, 9, 2])
    assert mdl.ByteCount == 3 * 4096
    with pytest.raises(ValueError, match="read-only"):
        mdl.pfns[0] = 1
    with pytest.raises(ValueError, match="more bytes than its 1 page"):
        MDL(np.array([1], dtype=np.uint64), 8192)


def test_adl_contiguous_and_page_array_forms() -> None:
    contiguous = DXGK_ADL(PageCount=3, Flags=DXGK_ADL_FLAGS(Contiguous=True), BasePageNumber=0x100)
    assert contiguous.page_numbers(1, 2).tolist() == [0x101, 0x102]
    listed = DXGK_ADL(PageCount=3, Pages=np.array([7, 3, 9], dtype=np.uint64))
    assert listed.page_numbers(0, 3).tolist() == [7, 3, 9]
    with pytest.raises(ValueError, match="exactly one"):
        DXGK_ADL(PageCount=1, Flags=DXGK_ADL_FLAGS(Contiguous=True), Pages=np.zeros(1, dtype=np.uint64))
    with pytest.raises(IndexError):
        listed.page_numbers(2, 2)


def test_invalid_argument_names_argument_value_rule_and_status() -> None:
    error = InvalidArgument("Fill.FillSize", 0x10, "must be a multiple of 4")
    assert str(error) == "Fill.FillSize=0x10: must be a multiple of 4 [STATUS_INVALID_PARAMETER 0xc000000d]"
    assert error.status == NTSTATUS.STATUS_INVALID_PARAMETER
