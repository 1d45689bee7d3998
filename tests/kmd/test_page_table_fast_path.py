"""UpdatePageTable's flattened path for one word per entry (decision 0199) against the general path it replaces:
the same bytes, statuses, ``MultipassOffset`` and cursor at every paging-buffer size around the packet limits, from
an aligned and a misaligned cursor, and the same named errors."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGKARG_BUILDPAGINGBUFFER,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.hw import commands as cmd
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.mmu import PAGES_PER_64K
from wddmsim.kmd.paging import page_table
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig

LOCAL = 2
VA = 0x4000_0000
_SUCCESS = NTSTATUS.STATUS_SUCCESS
_INSUFFICIENT = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER


@pytest.fixture(scope="module")
def rigs() -> dict[str, PagingRig]:
    return {
        "dual": PagingRig(SystemConfig()),
        "single": PagingRig(SystemConfig(gpu=GpuConfig(dual_pte=False))),
    }


def _entries(count: int, *, step: int = 1, mixed: bool = False) -> PteArray:
    entries = pte_array(count)
    entries["Flags"] = pte_flags(Valid=1, Segment=LOCAL)
    entries["PageAddress"] = np.arange(count, dtype=np.uint64) * step + 64
    if mixed:  # every third entry invalid, every fifth read-only: the per-field path
        entries["Flags"][::3] = 0
        entries["Flags"][1::5] = pte_flags(Valid=1, ReadOnly=1, Segment=LOCAL)
    return entries


def _payload(
    level: int, entries: PteArray, start: int, *, use_64k: bool = False
) -> DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE:
    return DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=level,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=VA),
        pPageTableEntries=entries,
        StartIndex=start,
        NumPageTableEntries=int(entries.shape[0]),
        Flags=DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=use_64k),
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    )


# (rig, level, entries, StartIndex, Use64KBPages): every plain shape -- 4 KB leaves, 64 KB leaves (their alignment
# check), level-1 pointers at 64 KB-page tables on a single-PTE MMU (the Leaf64K bit), an upper level.
CASES = {
    "leaf 4K, 1 entry": ("dual", 0, _entries(1), 0, False),
    "leaf 4K, 3 entries at 509": ("dual", 0, _entries(3), 509, False),
    "leaf 4K, 32 mixed": ("dual", 0, _entries(32, mixed=True), 7, False),
    "leaf 4K, 512": ("dual", 0, _entries(512), 0, False),
    "leaf 64K, 32": ("dual", 0, _entries(32, step=PAGES_PER_64K), 0, True),
    "single PTE level 1 -> 64K leaves": ("single", 1, _entries(20, mixed=True), 3, True),
    "level 2": ("dual", 2, _entries(9), 100, False),
}


def _sizes(count: int) -> Iterator[int]:
    """DMA sizes around the limits: nothing, below one word's packet, each packet length of 1..4 words and of the
    whole update, one byte either side of each."""
    yield from (0, 8, 16, 24, 31)
    for words in (1, 2, 3, 4, count - 1, count, count + 1):
        length = cmd.write_qwords_length(max(words, 1))
        yield from (length - 1, length, length + 8, length + 15)
    yield 64 * 1024


def _drive(rig: PagingRig, payload: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, dma: int, skew: int) -> list[object]:
    """Build ``payload`` into fresh ``dma``-byte buffers (cursor ``skew`` bytes into each) until it succeeds; what
    every call returned and wrote."""
    trail: list[object] = []
    offset = 0
    for _ in range(2 * payload.NumPageTableEntries + 4):
        mapping = CpuMapping(CpuVa(0x1000_0000), np.full(dma + skew + 64, 0xEE, dtype=np.uint8))
        args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=mapping.pointer(skew), DmaSize=dma, MultipassOffset=offset)
        status = rig.driver.build_paging_buffer(args)
        assert args.pDmaBuffer is not None
        trail.append((status, args.MultipassOffset, args.pDmaBuffer.offset, args.DmaSize, mapping.data.tobytes()))
        if status == _SUCCESS or (args.MultipassOffset == offset == 0 and dma < 32):
            return trail
        offset = args.MultipassOffset
    raise AssertionError("the update never completed")


def _both(
    rig: PagingRig, payload: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, dma: int, skew: int
) -> tuple[list[object], list[object]]:
    fast = _drive(rig, payload, dma, skew)
    page_table._fast_plain = False
    try:
        general = _drive(rig, payload, dma, skew)
    finally:
        page_table._fast_plain = True
    return fast, general


@pytest.mark.parametrize("name", list(CASES))
def test_the_flat_path_writes_what_the_general_path_writes_at_every_size(rigs: dict[str, PagingRig], name: str) -> None:
    rig_name, level, entries, start, *rest = CASES[name]
    rig = rigs[rig_name]
    payload = _payload(level, entries, start, use_64k=bool(rest and rest[0]))
    state = rig.driver.state  # type: ignore[attr-defined]
    assert page_table._update_kind(state, payload, page_table.geometry(state, payload)).plain, "a case of the flat path"
    for dma in sorted(set(_sizes(payload.NumPageTableEntries))):
        for skew in (0, 4):
            fast, general = _both(rig, payload, dma, skew)
            assert fast == general, (dma, skew)
    # The sweep reached both outcomes: a buffer too small for one word, and one that holds the whole update.
    small = _drive(rig, payload, 16, 0)
    assert [t[0] for t in small] == [_INSUFFICIENT]  # type: ignore[index]
    whole = _drive(rig, payload, 64 * 1024, 0)
    assert [(t[0], t[1]) for t in whole] == [(_SUCCESS, payload.NumPageTableEntries)]  # type: ignore[index]
    words = np.frombuffer(whole[0][4], dtype="<u8", count=payload.NumPageTableEntries, offset=24)  # type: ignore[index]
    live = entries["Flags"] & 1 != 0
    assert np.all((words != 0) == live), "every valid entry, and only those, became a live word"


def _error(rig: PagingRig, payload: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, **fields: int) -> str:
    mapping = CpuMapping(CpuVa(0x1000_0000), np.zeros(PAGE_SIZE, dtype=np.uint8))
    args = DXGKARG_BUILDPAGINGBUFFER(
        payload,
        pDmaBuffer=mapping.pointer(0),
        DmaSize=fields.get("dma", PAGE_SIZE),
        MultipassOffset=fields.get("mp", 0),
    )
    with pytest.raises(DdiError) as raised:
        rig.driver.build_paging_buffer(args)
    return f"{type(raised.value).__name__}: {raised.value}"


@pytest.mark.parametrize(
    ("case", "fields", "expected"),
    [
        ("negative DmaSize", {"dma": -16}, "DmaSize=-0x10: must not be negative"),
        ("MultipassOffset past the entries", {"mp": 33}, "MultipassOffset=0x21: must lie in [0, 32]"),
        ("misaligned 64 KB page", {}, "pPageTableEntries[1].PageAddress=0x4051000: a page of this table must be"),
    ],
)
def test_the_flat_path_refuses_what_the_general_path_refuses(
    rigs: dict[str, PagingRig], case: str, fields: dict[str, int], expected: str
) -> None:
    rig = rigs["dual"]
    entries = _entries(32, step=PAGES_PER_64K)
    if case.startswith("misaligned"):
        entries["PageAddress"][1] += 1
    payload = _payload(0, entries, 0, use_64k=True)
    fast = _error(rig, payload, **fields)
    page_table._fast_plain = False
    try:
        general = _error(rig, payload, **fields)
    finally:
        page_table._fast_plain = True
    assert fast == general
    assert expected in fast


def _update(level: int, entries: PteArray, **fields: object) -> DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE:
    defaults: dict[str, object] = {
        "PageTableLevel": level,
        "PageTableAddress": DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=VA),
        "pPageTableEntries": entries,
        "StartIndex": 0,
        "NumPageTableEntries": int(entries.shape[0]),
        "UpdateMode": DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    }
    return DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(**{**defaults, **fields})  # type: ignore[arg-type]


# (level, what the update gets wrong, the name its refusal starts with): each after an update of the same kind was
# accepted (its checks then take the one-expression path, decision 0203) and on a driver that has seen none.
REFUSALS: dict[str, tuple[int, dict[str, object], str]] = {
    "Reserved0": (0, {"Reserved0": 1}, "UpdatePageTable.Reserved0"),
    "Flags.Reserved": (0, {"Flags": DXGK_UPDATEPAGETABLEFLAGS(Reserved=2)}, "UpdatePageTable.Flags.Reserved"),
    "negative StartIndex": (0, {"StartIndex": -1}, "UpdatePageTable.StartIndex"),
    "negative count": (0, {"NumPageTableEntries": -1}, "UpdatePageTable.StartIndex"),
    "past the table": (0, {"StartIndex": 510}, "UpdatePageTable.StartIndex"),
    "too few entries": (0, {"NumPageTableEntries": 5}, "UpdatePageTable.pPageTableEntries"),
    "64 KB entries at level 0": (0, {"pPageTableEntries64KB": _entries(4)}, "UpdatePageTable.pPageTableEntries64KB"),
    "too few 64 KB entries at level 1": (1, {"pPageTableEntries64KB": _entries(2)}, "UpdatePageTable.pPageTableEntries64KB"),
    "a VA past the address field": (0, {"PageTableAddress": DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=1 << 60)}, "UpdatePageTable.PageTableAddress.GpuVirtual"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(REFUSALS))
def test_an_update_of_a_known_kind_is_refused_as_one_of_a_new_kind(rigs: dict[str, PagingRig], name: str) -> None:
    rig = rigs["dual"]
    state = rig.driver.state  # type: ignore[attr-defined]
    level, wrong, expected = REFUSALS[name]
    entries = _entries(4)
    good = _update(level, entries, pPageTableEntries64KB=_entries(4) if level == 1 else None)
    bad = _update(level, entries, **wrong)
    state.update_kinds.clear()
    unknown = _error(rig, bad)
    if "GpuVirtual" not in expected:  # the VA is looked at after the kind is known
        assert not state.update_kinds, "a refused update caches nothing"
    mapping = CpuMapping(CpuVa(0x1000_0000), np.zeros(PAGE_SIZE, dtype=np.uint8))
    args = DXGKARG_BUILDPAGINGBUFFER(good, pDmaBuffer=mapping.pointer(0), DmaSize=PAGE_SIZE)
    assert rig.driver.build_paging_buffer(args) == _SUCCESS
    assert state.update_kinds, "the accepted update's kind is kept"
    known = _error(rig, bad)
    assert known == unknown
    assert known.startswith(f"DriverContractError: {expected}="), known
