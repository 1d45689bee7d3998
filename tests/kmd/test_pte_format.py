"""The driver's vectorised ``DXGK_PTE`` -> hardware translation against a one-entry-at-a-time reference written
from the two layouts (``DXGK_PTE``, ``HW_PTE``) and the rules of ``kmd/pte_format.py``: every flag combination,
uniform runs (the template fast path) and mixed runs (the lookup-table path), every level kind, with and without
dual PTEs and driver protection, and page numbers up to 64 bits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.ddi.pte import DXGK_PTE, PteArray, pte_array
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.pte import HW_PTE, Target
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.pte_format import SegmentTables, translate
from wddmsim.kmd.segments import SegmentKind, SegmentMap

SEGMENTS = SegmentMap(GpuConfig())
MEMORY = {s.segment_id: s.base >> PAGE_SHIFT for s in SEGMENTS.segments if s.kind == SegmentKind.MEMORY}
APERTURE = SEGMENTS.aperture.segment_id
U64 = (1 << 64) - 1
_D = DXGK_PTE.layout()


def reference(flags: int, page: int, *, level: int, dual: bool, protection: int) -> int:
    """One entry's hardware word, field by field; ``DriverContractError`` as the driver words it."""
    e = DXGK_PTE.decode(flags, page)
    if not (e.Valid or e.Zero):
        return 0  # invalid and not Zero: the whole word is 0, whatever else the entry says
    name = "pPageTableEntries[0]"
    if e.Segment != 0 and e.Segment not in MEMORY:
        raise DriverContractError(f"{name}.Segment", e.Segment, "must be 0 (system memory) or a memory segment")
    if e.PhysicalAdapterIndex:
        raise DriverContractError(f"{name}.PhysicalAdapterIndex", e.PhysicalAdapterIndex, "one physical adapter")
    if e.LargePage and level == 0:
        raise DriverContractError(f"{name}.LargePage", 1, "never in a leaf entry")
    if e.SystemReserved0 or e.Reserved:
        raise DriverContractError(f"{name}.Flags", e.Flags, "reserved bits")
    base = MEMORY.get(e.Segment, 0)
    word = HW_PTE.pack(
        {
            "Valid": 1,
            "Zero": e.Zero,
            "ReadOnly": e.ReadOnly,
            "NoExecute": e.NoExecute,
            "Snoop": e.CacheCoherent,
            "Target": Target.SYSTEM if e.Segment == 0 else Target.LOCAL,
            "LargePage": e.LargePage and level > 0,
            "Leaf64K": (e.PageTablePageSize & 1) if level == 1 and not dual else 0,
            "Key": protection & 0xFF if level == 0 else 0,
        }
    )
    # The address arithmetic of a 64-bit register: a page number too large for the field carries upwards.
    return word | (((page + base) << PAGE_SHIFT) & U64)


def entries(flags: list[int], pages: list[int]) -> PteArray:
    out = pte_array(len(flags))
    out["Flags"] = np.array(flags, dtype=np.uint64)
    out["PageAddress"] = np.array(pages, dtype=np.uint64)
    return out


def expected(flags: list[int], pages: list[int], **kind: int | bool) -> list[int] | str:
    """The words, or the argument name of the first refused entry (``[0]`` stands for its index)."""
    words = []
    for index, (f, p) in enumerate(zip(flags, pages, strict=True)):
        try:
            words.append(reference(f, p, **kind))  # type: ignore[arg-type]
        except DriverContractError as error:
            return error.argument.replace("[0]", f"[{index}]")
    return words


def actual(flags: list[int], pages: list[int], tables: SegmentTables, **kind: int | bool) -> list[int] | str:
    level, dual, protection = int(kind["level"]), bool(kind["dual"]), int(kind["protection"])
    try:
        words = translate(entries(flags, pages), tables, level=level, dual=dual, driver_protection=protection)
    except DriverContractError as error:
        return error.argument
    return [int(w) for w in words]


def flag_words() -> list[int]:
    """Every combination of the defined bits that matter, over a few segment ids, plus each refused bit."""
    words = []
    for valid, zero, coherent, read_only, no_execute, large, page_size in itertools.product((0, 1), repeat=7):
        for segment in (0, *MEMORY, APERTURE, 31):
            words.append(
                _D.pack(
                    {
                        "Valid": valid,
                        "Zero": zero,
                        "CacheCoherent": coherent,
                        "ReadOnly": read_only,
                        "NoExecute": no_execute,
                        "Segment": segment,
                        "LargePage": large,
                        "PageTablePageSize": page_size,
                    }
                )
            )
    live = _D.pack({"Valid": 1, "Segment": 0})
    for field, value in (("PhysicalAdapterIndex", 1), ("SystemReserved0", 1), ("Reserved", 1 << 43)):
        words.append(live | _D.pack({field: value}))
        words.append(_D.pack({field: value}))  # refused bits of an invalid entry do not matter
    return words


FLAG_WORDS = flag_words()
KINDS = [
    {"level": level, "dual": dual, "protection": protection}
    for level in (0, 1, 2)
    for dual in (False, True)
    for protection in (0, 0x1A5)
]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"level{k['level']}-dual{k['dual']}-key{k['protection']:#x}")
def test_uniform_runs_translate_as_the_reference_for_every_flags_word(kind: dict[str, int | bool]) -> None:
    """A run sharing one flags word takes the template path: compared word by word for every flags word."""
    tables = SegmentTables(SEGMENTS)
    pages = [0, 1, 0x1234, (1 << 40) - 1, 1 << 40, U64]
    for word in FLAG_WORDS:
        flags = [word] * len(pages)
        assert actual(flags, pages, tables, **kind) == expected(flags, pages, **kind), hex(word)
        # the template is cached: asking again gives the same words
        assert actual(flags, pages, tables, **kind) == expected(flags, pages, **kind), hex(word)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"level{k['level']}-dual{k['dual']}-key{k['protection']:#x}")
def test_mixed_runs_translate_as_the_reference(kind: dict[str, int | bool]) -> None:
    """Every flags word in one array (the lookup-table path), next to a valid system page."""
    tables = SegmentTables(SEGMENTS)
    plain = _D.pack({"Valid": 1})
    for word in FLAG_WORDS:
        flags, pages = [plain, word, plain], [7, 0x5_4321, 9]
        assert actual(flags, pages, tables, **kind) == expected(flags, pages, **kind), hex(word)


@settings(max_examples=150, deadline=None)
@given(
    flags=st.lists(st.sampled_from(FLAG_WORDS), min_size=1, max_size=40),
    uniform=st.booleans(),
    pages=st.lists(st.integers(0, U64), min_size=40, max_size=40),
    kind=st.sampled_from([*KINDS, {"level": 3, "dual": True, "protection": 7}]),
)
def test_any_array_translates_as_the_reference(
    flags: list[int], uniform: bool, pages: list[int], kind: dict[str, int | bool]
) -> None:
    if uniform:
        flags = [flags[0]] * len(flags)
    pages = pages[: len(flags)]
    assert actual(flags, pages, SegmentTables(SEGMENTS), **kind) == expected(flags, pages, **kind)


def test_the_template_cache_keeps_levels_and_protections_apart() -> None:
    """One flags word, translated for a leaf with a key, a leaf without, and level 1: three different words."""
    tables = SegmentTables(SEGMENTS)
    word = _D.pack({"Valid": 1, "Segment": 2, "PageTablePageSize": 1, "LargePage": 0})
    leaf_key = actual([word], [5], tables, level=0, dual=False, protection=0x42)
    leaf = actual([word], [5], tables, level=0, dual=False, protection=0)
    level1 = actual([word], [5], tables, level=1, dual=False, protection=0x42)
    assert leaf_key == expected([word], [5], level=0, dual=False, protection=0x42)
    assert leaf == expected([word], [5], level=0, dual=False, protection=0)
    assert level1 == expected([word], [5], level=1, dual=False, protection=0x42)
    assert len({str(leaf_key), str(leaf), str(level1)}) == 3
