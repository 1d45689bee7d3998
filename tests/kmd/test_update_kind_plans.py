"""``UpdateKind.translate_into``'s remembered plans for uniform updates against the reference translation of
``test_pte_format`` (with the ``Leaf64K`` bit and the 64 KB alignment check of the general path): every kind of
plain table, entry counts from 1 to a whole table, flags words valid, Zero, invalid and refused, misaligned pages,
the first call (which makes the plan) and later ones (which use it, with other counts and other pages), and
updates that are uniform but for one entry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kmd.test_pte_format import SEGMENTS, U64, entries, expected
from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGKARG_BUILDPAGINGBUFFER,
)
from wddmsim.ddi.pte import DXGK_PTE
from wddmsim.ddi.status import NTSTATUS
from wddmsim.hw import commands as cmd
from wddmsim.hw.mmu import PAGES_PER_64K
from wddmsim.hw.pte import HW_PTE
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.paging import page_table
from wddmsim.kmd.pte_format import SegmentTables
from wddmsim.kmd.table_geometry import Geometry
from wddmsim.kmd.update_kind import UpdateKind, _byte_lane

_D = DXGK_PTE.layout()
_LEAF64K = HW_PTE["Leaf64K"].shifted_mask
_ZERO = HW_PTE["Zero"].shifted_mask
_ADDRESS_SHIFT = HW_PTE["Address"].lsb

# name: (level, dual, protection, entries in the table, alignment in pages, Leaf64K) -- every plain kind.
KINDS = {
    "leaf 4K": (0, True, 0, 512, 1, False),
    "leaf 4K with a key": (0, True, 0x1A5, 512, 1, False),
    "leaf 64K": (0, True, 0, 32, PAGES_PER_64K, False),
    "leaf 64K with a key": (0, True, 0x42, 32, PAGES_PER_64K, False),
    "level 1 of a single-PTE MMU -> 64K leaves": (1, False, 0, 512, 1, True),
    "level 1, dual": (1, True, 0, 512, 1, False),
    "level 2": (2, True, 0, 512, 1, False),
}
FLAGS = {
    "valid local": _D.pack({"Valid": 1, "Segment": 2}),
    "valid system, read-only, no-execute": _D.pack({"Valid": 1, "ReadOnly": 1, "NoExecute": 1}),
    "zero": _D.pack({"Zero": 1, "Segment": 2}),
    "valid zero, coherent": _D.pack({"Valid": 1, "Zero": 1, "CacheCoherent": 1}),
    "large page, 64K table size": _D.pack({"Valid": 1, "Segment": 2, "LargePage": 1, "PageTablePageSize": 1}),
    "invalid": 0,
    "invalid with other bits": _D.pack({"Segment": 5, "ReadOnly": 1, "Reserved": 3}),
    "aperture segment (refused)": _D.pack({"Valid": 1, "Segment": SEGMENTS.aperture.segment_id}),
    "reserved bit (refused)": _D.pack({"Valid": 1, "Reserved": 1}),
}


def _kind(name: str) -> UpdateKind:
    level, dual, protection, count, alignment, leaf64k = KINDS[name]
    translator = SegmentTables(SEGMENTS).translator(level, dual, protection)
    return UpdateKind(Geometry(count, 1, 1, alignment), translator, leaf64k=leaf64k, repeat=False)


def reference(name: str, flags: list[int], pages: list[int]) -> list[int] | str:
    """The words of the general path: the translator's, ``Leaf64K`` on live words, then the alignment of valid,
    non-Zero entries; or the argument a refusal names."""
    level, dual, protection, _, alignment, leaf64k = KINDS[name]
    words = expected(flags, pages, level=level, dual=dual, protection=protection)
    if isinstance(words, str):
        return words
    words = [w | _LEAF64K if leaf64k and w else w for w in words]
    mask = (alignment - 1) << _ADDRESS_SHIFT
    for index, word in enumerate(words):
        if word & mask and not word & _ZERO:
            return f"pPageTableEntries[{index}].PageAddress"
    return words


def translated(kind: UpdateKind, flags: list[int], pages: list[int]) -> list[int] | str:
    out = np.full(len(flags), 0xEEEE_EEEE_EEEE_EEEE, dtype="<u8")  # stale words: every one must be written
    try:
        kind.translate_into(out, entries(flags, pages), "pPageTableEntries")
    except DriverContractError as error:
        return error.argument
    return [int(w) for w in out]


def in_packet(kind: UpdateKind, flags: list[int], pages: list[int]) -> list[int] | str:
    """The words the driver's flat path (which applies a quick plan itself) packs into one WRITE_QWORDS."""
    count = len(flags)
    mapping = CpuMapping(CpuVa(0x1000_0000), np.full(cmd.write_qwords_length(count), 0xEE, dtype=np.uint8))
    payload = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=0,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0),
        pPageTableEntries=entries(flags, pages),
        StartIndex=0,
        NumPageTableEntries=count,
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    )
    args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=mapping.pointer(0), DmaSize=mapping.size)
    try:
        status = page_table._update_plain(args, payload, kind, 0)
    except DriverContractError as error:
        return error.argument
    assert status == NTSTATUS.STATUS_SUCCESS
    assert args.MultipassOffset == count
    words = mapping.data[cmd.WRITE_QWORDS_FIXED_SIZE :].view("<u8")[:count]
    return [int(w) for w in words]


TRANSLATIONS = {"translate_into": translated, "_update_plain": in_packet}
"""The two ways a plain update's entries become words: the kind's own, and the flat path's inline quick plans."""


def _pages(count: int, *, step: int, skew: int = 0) -> list[int]:
    return [(100 * step + i * step + skew) & U64 for i in range(count)]


def _counts(table: int) -> list[int]:
    return sorted({1, 2, 33, table - 1, table} & set(range(1, table + 1)))


@pytest.mark.parametrize("via", list(TRANSLATIONS))
@pytest.mark.parametrize("name", list(KINDS))
def test_uniform_updates_translate_as_the_general_path_first_and_later(name: str, via: str) -> None:
    translated = TRANSLATIONS[via]
    table, alignment = KINDS[name][3], KINDS[name][4]
    for flag_name, word in FLAGS.items():
        kind = _kind(name)
        for count in _counts(table):  # the first call makes the plan; the others use it, with other counts
            variants = [
                _pages(count, step=alignment),
                [(1 << 40) - 1, 1 << 40, U64, 0][:count] + _pages(max(count - 4, 0), step=alignment),
            ]
            if alignment > 1:
                variants.append(_pages(count, step=alignment, skew=alignment // 2))  # every page misaligned
            for pages in variants:
                flags = [word] * count
                assert translated(kind, flags, pages) == reference(name, flags, pages), (flag_name, count)
        refused = isinstance(reference(name, [word], [0]), str) and word & 1
        assert (word in kind._plans) == (not refused), f"{flag_name}: a refused word has no plan, others have one"
        assert kind.quick.keys() <= kind._plans.keys()
        if flag_name == "valid local":  # the usual word is one _update_plain applies itself: that path was taken
            assert word in kind.quick


@pytest.mark.parametrize("via", list(TRANSLATIONS))
@pytest.mark.parametrize("name", list(KINDS))
def test_an_update_uniform_but_for_one_entry_does_not_take_the_plan(name: str, via: str) -> None:
    translated = TRANSLATIONS[via]
    table, alignment = KINDS[name][3], KINDS[name][4]
    usual, other = FLAGS["valid local"], FLAGS["valid system, read-only, no-execute"]
    kind = _kind(name)
    count = table
    pages = _pages(count, step=alignment)
    assert translated(kind, [usual] * count, pages) == reference(name, [usual] * count, pages)  # the plan is made
    for odd in (0, 1, count // 2, count - 1):
        for word in (other, 0, FLAGS["reserved bit (refused)"]):
            flags = [usual] * count
            flags[odd] = word
            assert translated(kind, flags, pages) == reference(name, flags, pages), (odd, hex(word))


@pytest.mark.parametrize("via", list(TRANSLATIONS))
def test_a_misaligned_zero_page_is_accepted_and_a_misaligned_valid_page_is_named(via: str) -> None:
    translated = TRANSLATIONS[via]
    kind = _kind("leaf 64K")
    pages = _pages(32, step=PAGES_PER_64K)
    zero, valid = [FLAGS["zero"]] * 32, [FLAGS["valid local"]] * 32
    for _ in range(2):  # without a plan, then with one
        skewed = list(pages)
        skewed[7] += 1
        assert translated(kind, zero, skewed) == reference("leaf 64K", zero, skewed)
        assert isinstance(translated(kind, zero, skewed), list)
        assert translated(kind, valid, skewed) == "pPageTableEntries[7].PageAddress"


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.integers(0, U64), min_size=1, max_size=40),
    mask_bits=st.integers(1, 255),
    lane=st.integers(0, 7),
)
def test_the_byte_lane_test_finds_a_masked_bit_exactly_when_an_or_reduction_does(
    words: list[int], mask_bits: int, lane: int
) -> None:
    mask = mask_bits << (8 * lane)
    found_lane, aligned = _byte_lane(mask)
    assert found_lane == lane
    array = np.array(words, dtype="<u8")
    by_lane = bool(array.tobytes()[found_lane::8].translate(None, aligned))
    assert by_lane == bool(int(np.bitwise_or.reduce(array)) & mask)


def test_a_mask_across_two_bytes_has_no_lane() -> None:
    assert _byte_lane(0) == (-1, b"")
    assert _byte_lane(0x1F0)[0] == -1
    assert _byte_lane(0x1FF00)[0] == -1
    assert _byte_lane(0xF000)[0] == 1
    assert len(_byte_lane(0xF000)[1]) == 16  # the byte values with bits 4-7 clear
