"""Bit layouts: declared once, packed and unpacked exactly, wrong widths refused."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wddmsim.core.bits import BitLayout, BitUnion, bits, flag
from wddmsim.ddi import allocation, caps, flags, memory, pte, segments

UNIONS: list[type[BitUnion]] = [
    flags.DXGK_TRANSFERFLAGS,
    flags.DXGK_DISCARDCONTENTFLAGS,
    flags.DXGK_MAPAPERTUREFLAGS,
    flags.DXGK_TRANSFERVIRTUALFLAGS,
    flags.DXGK_UPDATEPAGETABLEFLAGS,
    flags.DXGK_SUBMITCOMMANDFLAGS,
    segments.DXGK_SEGMENTFLAGS,
    caps.DXGK_VIDMMCAPS,
    caps.DXGK_GPUMMUCAPS_FLAGS,
    allocation.DXGK_ALLOCATIONINFOFLAGS,
    allocation.DXGK_ALLOCATIONINFOFLAGS_WDDM2_0,
    allocation.DXGK_SEGMENTPREFERENCE,
    memory.DXGK_ADL_FLAGS,
    pte.DXGK_PTE,
]


@pytest.mark.parametrize("union", UNIONS, ids=lambda u: u.__name__)
@given(data=st.data())
def test_every_flag_union_round_trips_through_its_value(union: type[BitUnion], data: st.DataObject) -> None:
    word = data.draw(st.integers(0, (1 << union.WIDTH) - 1))
    decoded = union.from_value(word)
    assert decoded.Value == word
    assert union.from_value(decoded.Value) == decoded


@pytest.mark.parametrize("union", UNIONS, ids=lambda u: u.__name__)
def test_every_layout_covers_its_whole_word_without_overlap(union: type[BitUnion]) -> None:
    layout = union.layout()
    covered = 0
    for field in layout.fields:
        assert covered & field.shifted_mask == 0
        covered |= field.shifted_mask
    assert covered == (1 << union.WIDTH) - 1


def test_a_value_too_wide_for_its_field_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match=r"DXGK_PTE.Segment=32: does not fit 5 bit"):
        pte.DXGK_PTE(Segment=32)


def test_bit_layout_rejects_overlap_and_bits_outside_the_word() -> None:
    with pytest.raises(ValueError, match="overlaps"):
        BitLayout("x", 8, [("a", 0, 4), ("b", 3, 2)])
    with pytest.raises(ValueError, match="leave the 8-bit word"):
        BitLayout("x", 8, [("a", 6, 4)])
    layout = BitLayout("x", 8, [("a", 0, 4)])
    with pytest.raises(ValueError, match="belong to no field"):
        layout.unpack(0x10)
    with pytest.raises(ValueError, match="does not fit 4 bit"):
        layout.pack({"a": 16})


def test_a_union_declares_its_layout_from_its_fields() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Demo(BitUnion):
        Low: bool = flag(0)
        Middle: int = bits(1, 3)
        Rest: int = bits(4, 28)

    assert Demo(Low=True, Middle=5).Value == 0b1011
    assert Demo.from_value(0b1011) == Demo(Low=True, Middle=5)
    assert Demo(Middle=5).set_flags() == ["Middle"]
