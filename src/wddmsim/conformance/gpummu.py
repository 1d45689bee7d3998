"""The cases ``check-driver`` puts to the GpuMmu (WDDM 2.x) paging operations, each with its independent expectation.

Every case runs in VidMm's system paging process (DOC:system-paging-process.md): its VAs are mapped the way VidMm
maps its scratch area, one guard page mapped on each side of every range, onto canary bytes -- a driver that
writes a page too many changes a canary rather than faulting.  Expectations come from the documents and the GPU's
data sheet (``wddmsim.hw.pte``), never from a driver:

* TransferVirtual: ``TransferSizeInBytes`` bytes from ``SourceVirtualAddress`` land at
  ``DestinationVirtualAddress``; ``AllocationOffsetInBytes`` is never added to the VAs.
* FillVirtual: ``FillSizeInBytes`` bytes of the 32-bit ``FillPattern`` from ``DestinationVirtualAddress``.
* UpdatePageTable: entries ``[StartIndex, StartIndex + NumPageTableEntries)`` of the table hold the hardware words of
  ``pPageTableEntries`` (one entry replicated with ``Repeat``; a dual-PTE level-1 entry is its 4 KB-table word then
  its 64 KB-table word from ``pPageTableEntries64KB``); every other byte of the table is unchanged.
* FlushTlb: after it, the GPU translates the range through the page tables in memory, not the entries it cached.
* CopyPageTableEntries: each range's destination entries equal its source entries, byte for byte.
* SignalMonitoredFence: the 64-bit ``MonitoredFenceValue`` at ``MonitoredFenceGpuVa``, and only those 8 bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from wddmsim.conformance.cases import (
    CANARY_BYTE,
    Case,
    Effect,
    LocalBytes,
    MdlBytes,
    Translation,
    local_restore,
    mdl_restore,
)
from wddmsim.conformance.rig import Rig
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_MEMORY_TRANSFER_DIRECTION, DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
)
from wddmsim.ddi.pte import DXGK_PTE, PteArray, pte_array, pte_flags
from wddmsim.hw.faults import AccessKind
from wddmsim.hw.pte import PTE_SIZE, Target, encode_pte

Direction = DXGK_MEMORY_TRANSFER_DIRECTION
Mode = DXGK_PAGETABLEUPDATEMODE
PAGES_PER_64K: Final = 16
U64 = npt.NDArray[np.uint64]


def _pages(size: int) -> int:
    return -(-size // PAGE_SIZE)


# --- ranges of the paging process's VA space ---------------------------------------------------------------


@dataclass(slots=True)
class Window:
    """``pages`` pages mapped from ``va``, with a guard page mapped before and after, all canary bytes at first.
    The pages are local memory from ``local`` or pages ``1 ..`` of ``mdl``."""

    va: int
    pages: int
    local: int = -1
    mdl: MDL | None = None

    def write(self, rig: Rig, data: bytes) -> None:
        """``data`` from the window's first byte (the guard pages keep their canaries)."""
        if self.mdl is None:
            rig.local()[self.local : self.local + len(data)] = np.frombuffer(data, np.uint8)
            return
        image = bytes([CANARY_BYTE]) * PAGE_SIZE + data
        rig.write_mdl(self.mdl, image + bytes([CANARY_BYTE]) * (self.mdl.ByteCount - len(image)))

    def expect(self, data: bytes, offset: int = 0) -> Effect:
        """The window must hold ``data`` from byte ``offset`` (of a page, for system pages)."""
        if self.mdl is None:
            return LocalBytes(self.local + offset, data)
        assert offset % PAGE_SIZE == 0, "system pages are compared from a page start"
        return MdlBytes(self.mdl, 1 + offset // PAGE_SIZE, data)

    def restore(self, rig: Rig) -> Callable[[], None]:
        if self.mdl is None:
            return local_restore(rig, self.local - PAGE_SIZE, (self.pages + 2) * PAGE_SIZE)
        return mdl_restore(rig, self.mdl)

    @property
    def mdls(self) -> list[MDL]:
        return [] if self.mdl is None else [self.mdl]


def window(rig: Rig, where: str, pages: int) -> Window:
    """A mapped window onto local memory (``where == "local"``) or onto scattered system pages."""
    total = pages + 2
    va = rig.gpu_va(total * PAGE_SIZE)
    if where == "local":
        memory = rig.memory_segments()[0]
        base = rig.reserve(memory, total * PAGE_SIZE)
        rig.local()[base : base + total * PAGE_SIZE] = CANARY_BYTE
        rig.map_va(va, memory.id, rig.segment_pages(memory, base, total))
        return Window(va + PAGE_SIZE, pages, local=base + PAGE_SIZE)
    mdl = rig.scattered_mdl(total)
    rig.write_mdl(mdl, bytes([CANARY_BYTE]) * mdl.ByteCount)
    rig.map_va(va, 0, mdl.pfns.astype(np.uint64))
    return Window(va + PAGE_SIZE, pages, mdl=mdl)


def _pattern_bytes(pattern: int, size: int) -> bytes:
    word = pattern.to_bytes(4, "little")
    return (word * (size // 4 + 1))[:size]


# --- TransferVirtual, FillVirtual --------------------------------------------------------------------------


def transfer_virtual_cases(rig: Rig) -> list[Case]:
    """Each direction; a size ending mid-page; an ``AllocationOffsetInBytes`` that must not move the VAs."""
    if not rig.gpummu:
        return []
    cases = []
    for name, direction, src_where, dst_where, size, offset in (
        ("LOCAL_TO_SYSTEM, 5 pages", Direction.LOCAL_TO_SYSTEM, "local", "system", 5 * PAGE_SIZE, 0),
        (
            "SYSTEM_TO_LOCAL, 3 pages and 0x321 bytes, AllocationOffsetInBytes 0x3000",
            Direction.SYSTEM_TO_LOCAL,
            "system",
            "local",
            3 * PAGE_SIZE + 0x321,
            0x3000,
        ),
        ("LOCAL_TO_LOCAL, 9 pages", Direction.LOCAL_TO_LOCAL, "local", "local", 9 * PAGE_SIZE, 0),
    ):
        src, dst = window(rig, src_where, _pages(size)), window(rig, dst_where, _pages(size))
        data = rig.pattern(size).tobytes()
        src.write(rig, data)
        payload = DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
            AllocationOffsetInBytes=offset,
            TransferSizeInBytes=size,
            SourceVirtualAddress=src.va,
            DestinationVirtualAddress=dst.va,
            TransferDirection=direction,
        )
        effect = dst.expect(data)
        cases.append(Case("TransferVirtual", name, payload, [effect], src.mdls + dst.mdls, restore=dst.restore(rig)))
    return cases


def fill_virtual_cases(rig: Rig) -> list[Case]:
    if not rig.gpummu:
        return []
    cases = []
    for name, where, size, pattern in (
        ("4 pages of 0xDEADBEEF into local memory", "local", 4 * PAGE_SIZE, 0xDEADBEEF),
        ("2 pages and 64 bytes of 0x01234567 into system pages", "system", 2 * PAGE_SIZE + 64, 0x01234567),
    ):
        dst = window(rig, where, _pages(size))
        payload = DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
            AllocationOffsetInBytes=PAGE_SIZE,
            FillSizeInBytes=size,
            FillPattern=pattern,
            DestinationVirtualAddress=dst.va,
        )
        effect = dst.expect(_pattern_bytes(pattern, size))
        cases.append(Case("FillVirtual", name, payload, [effect], dst.mdls, restore=dst.restore(rig)))
    return cases


# --- SignalMonitoredFence ----------------------------------------------------------------------------------


def signal_cases(rig: Rig) -> list[Case]:
    """64-bit values whose high half matters, in local memory and in a system page."""
    if not rig.gpummu:
        return []
    cases = []
    for name, where, offset, value in (
        ("0x1_0000_0001 at +8 of a local page", "local", 8, 0x1_0000_0001),
        ("0xFFFF_FFFF_0000_0002 at the start of a system page", "system", 0, 0xFFFF_FFFF_0000_0002),
    ):
        fence = window(rig, where, 1)
        payload = DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE(
            MonitoredFenceGpuVa=fence.va + offset, MonitoredFenceValue=value
        )
        effect = fence.expect(value.to_bytes(8, "little"), offset)
        cases.append(Case("SignalMonitoredFence", name, payload, [effect], fence.mdls, restore=fence.restore(rig)))
    return cases


# --- FlushTlb ----------------------------------------------------------------------------------------------


def flush_tlb_cases(rig: Rig) -> list[Case]:
    """A range whose translation the GPU cached, then re-pointed in memory: stale until the flush runs."""
    if not rig.gpummu:
        return []
    return [
        _flush_case(rig, "[Start, End] of a re-pointed range", whole=False),
        _flush_case(rig, "Start = End = 0: the whole space", whole=True),
    ]


def _flush_case(rig: Rig, name: str, *, whole: bool) -> Case:
    pages = 4
    memory = rig.memory_segments()[0]
    old, new = rig.reserve(memory, pages * PAGE_SIZE), rig.reserve(memory, pages * PAGE_SIZE)
    va = rig.gpu_va(pages * PAGE_SIZE)

    def stale() -> None:
        rig.gpu.mmu.invalidate(rig.root(), va, va + pages * PAGE_SIZE - 1)  # this range only: others keep theirs
        rig.map_va(va, memory.id, rig.segment_pages(memory, old, pages))
        rig.gpu.mmu.translate(rig.root(), va, pages * PAGE_SIZE, AccessKind.READ)  # now cached
        rig.map_va(va, memory.id, rig.segment_pages(memory, new, pages))  # no flush: the GPU keeps the old one

    stale()
    start, end = (0, 0) if whole else (va, va + pages * PAGE_SIZE - 1)
    payload = DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
        RootPageTableAddress=rig.process.root_address, StartVirtualAddress=start, EndVirtualAddress=end
    )
    effect = Translation(rig.root(), va, tuple(new + i * PAGE_SIZE for i in range(pages)))
    return Case("FlushTlb", name, payload, [effect], restore=stale)


# --- UpdatePageTable ---------------------------------------------------------------------------------------


def hw_words(rig: Rig, entries: PteArray, *, level: int, protection: int = 0) -> U64:
    """The reference GPU's words for ``entries`` of a level-``level`` table, from its data sheet
    (``wddmsim.hw.pte``) and the documented ``DXGK_PTE`` fields: an entry neither ``Valid`` nor ``Zero`` is all
    zero; segment 0 is a system page number, another segment a page from its ``BaseAddress``; ``DriverProtection``'s
    low 8 bits are the leaf's ``Key``; ``CacheCoherent`` is ``Snoop``."""
    out = np.zeros(entries.shape[0], dtype=np.uint64)
    for i, (flags, page) in enumerate(zip(entries["Flags"].tolist(), entries["PageAddress"].tolist(), strict=True)):
        e = DXGK_PTE.decode(int(flags), int(page))
        if not (e.Valid or e.Zero):
            continue
        system = e.Segment == 0
        base = 0 if system else rig.vidmm.spaces.get(e.Segment).base
        out[i] = encode_pte(
            target=Target.SYSTEM if system else Target.LOCAL,
            address=base + (int(page) << PAGE_SHIFT),
            zero=bool(e.Zero),
            read_only=bool(e.ReadOnly),
            no_execute=bool(e.NoExecute),
            snoop=bool(e.CacheCoherent),
            large_page=bool(e.LargePage) and level > 0,
            key=protection & 0xFF if level == 0 else 0,
        )
    return out


@dataclass(slots=True)
class Table:
    """A test table: where it is, and how an update in ``mode`` names it."""

    local: int
    address: DXGK_PAGETABLEUPDATEADDRESS
    size: int


def case_table(rig: Rig, size: int, mode: Mode) -> Table:
    """A table of ``size`` bytes, all canaries, named as ``mode`` names it: by CPU VA, by the paging process's GPU
    VA (its pages mapped there), or by (SegmentId, SegmentOffset)."""
    local, offset, mapping = rig.table(size)
    process = rig.process
    if mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
        return Table(local, DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=mapping.pointer(0)), size)
    if mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
        va = rig.gpu_va(size)
        rig.map_va(va, process.segment_id, rig.segment_pages(process.space, local, _pages(size)))
        return Table(local, DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=va), size)
    where = D3DGPU_PHYSICAL_ADDRESS(SegmentId=process.segment_id, SegmentOffset=offset)
    return Table(local, DXGK_PAGETABLEUPDATEADDRESS(GpuPhysical=where), size)


def _entries(pages: list[tuple[int, int]], **flags: int) -> PteArray:
    """Entries for ``(segment, page)`` pairs, all with ``flags``."""
    out = pte_array(len(pages))
    for i, (segment, page) in enumerate(pages):
        out[i] = (pte_flags(Valid=1, Segment=segment, **flags), page)
    return out


def _mixed_leaf(rig: Rig, count: int) -> PteArray:
    """Local and system pages, read-only, no-execute, cache-coherent, Zero and invalid entries, in turn."""
    memory = rig.memory_segments()[0]
    local = rig.segment_pages(memory, rig.reserve(memory, count * PAGE_SIZE), count)
    system = rig.scattered_mdl(count).pfns
    out = pte_array(count)
    kinds: tuple[dict[str, int], ...] = (
        {"Valid": 1, "Segment": memory.id},
        {"Valid": 1},
        {"Valid": 1, "Segment": memory.id, "ReadOnly": 1},
        {"Valid": 1, "NoExecute": 1},
        {"Valid": 1, "CacheCoherent": 1},
        {"Valid": 1, "Zero": 1},
        {},
    )
    for i in range(count):
        kind = kinds[i % len(kinds)]
        page = int(local[i]) if kind.get("Segment") else int(system[i])
        out[i] = (pte_flags(**kind), page if kind else 0)
    return out


def update_page_table_cases(rig: Rig) -> list[Case]:
    """Leaf, 64 KB-page leaf, dual-PTE level 1 and a directory level, in the mode the driver reported, plus the
    forced ``CPU_VIRTUAL`` update with no DMA buffer."""
    if not rig.gpummu:
        return []
    mmu = rig.vidmm.gpummu
    assert mmu is not None
    mode = mmu.caps.PageTableUpdateMode
    layout = rig.gpu.mmu.layout
    memory = rig.memory_segments()[0]
    cases = [
        _update(
            rig,
            "leaf: 40 mixed entries from index 5, DriverProtection 0x5A",
            mode,
            0,
            5,
            _mixed_leaf(rig, 40),
            protection=0x5A,
        ),
        _update(
            rig,
            "leaf, Repeat: one entry into 300 slots from index 100",
            mode,
            0,
            100,
            _entries([(memory.id, 7)]),
            count=300,
            flags=DXGK_UPDATEPAGETABLEFLAGS(Repeat=True),
        ),
        _update(
            rig,
            "forced CPU_VIRTUAL, pDmaBuffer NULL: 24 leaf entries from index 480",
            Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL,
            0,
            480,
            _mixed_leaf(rig, 24),
            unbuffered=True,
        ),
    ]
    # A 64 KB-page leaf: one entry per 64 KiB, each page 64 KiB aligned.
    base = rig.reserve_aligned(memory, 8 * PAGES_PER_64K * PAGE_SIZE, PAGES_PER_64K * PAGE_SIZE)
    first = (base - memory.base) >> PAGE_SHIFT
    big = _entries([(memory.id, first + PAGES_PER_64K * i) for i in range(8)])
    cases.append(
        _update(
            rig,
            "64 KB-page leaf (Use64KBPages): 8 entries from index 2",
            mode,
            0,
            2,
            big,
            flags=DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=True),
            size=layout.leaf64_table_size,
        )
    )
    tables = rig.process.segment_id
    pointers = _entries([(tables, 0x40 + i) for i in range(6)])
    if layout.dual_pte:
        pointers64 = _entries([(tables, 0x80 + i) for i in range(6)])
        pointers[1] = (0, 0)  # only a 64 KB table
        pointers64[4] = (0, 0)  # only a 4 KB table
        cases.append(
            _update(
                rig,
                "level 1, dual PTE: 6 entries from index 3 (4 KB and 64 KB tables)",
                mode,
                1,
                3,
                pointers,
                big=pointers64,
                size=layout.table_size(1),
            )
        )
    if layout.levels > 2:
        cases.append(_update(rig, "level 2: 3 directory entries from index 9", mode, 2, 9, pointers[:3]))
    return cases


def _update(
    rig: Rig,
    name: str,
    mode: Mode,
    level: int,
    start: int,
    entries: PteArray,
    *,
    count: int | None = None,
    flags: DXGK_UPDATEPAGETABLEFLAGS | None = None,
    protection: int = 0,
    big: PteArray | None = None,
    size: int | None = None,
    unbuffered: bool = False,
) -> Case:
    layout = rig.gpu.mmu.layout
    count = entries.shape[0] if count is None else count
    flags = flags or DXGK_UPDATEPAGETABLEFLAGS()
    table = case_table(rig, size if size is not None else layout.table_size(level), mode)
    words = hw_words(rig, entries, level=level, protection=protection)
    if flags.Repeat:
        words = np.repeat(words[:1], count)
    stride = 1
    if big is not None:  # a dual-PTE level-1 entry: the 4 KB-table word, then the 64 KB-table word
        stride = 2
        pair = np.empty(2 * count, dtype=np.uint64)
        pair[0::2], pair[1::2] = words, hw_words(rig, big, level=level)
        words = pair
    payload = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=level,
        PageTableAddress=table.address,
        pPageTableEntries=entries,
        StartIndex=start,
        NumPageTableEntries=count,
        Flags=flags,
        DriverProtection=protection,
        UpdateMode=mode,
        pPageTableEntries64KB=big,
    )
    at = table.local + start * stride * PTE_SIZE
    cpu = mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
    return Case(
        "UpdatePageTable",
        f"{name} ({_mode_name(mode)})" if not unbuffered else name,
        payload,
        [LocalBytes(at, words.astype("<u8").tobytes())],
        restore=local_restore(rig, table.local, table.size),
        at_build=cpu,
        unbuffered=unbuffered,
    )


def _mode_name(mode: Mode) -> str:
    return mode.name.removeprefix("DXGK_PAGETABLEUPDATE_")


# --- CopyPageTableEntries ----------------------------------------------------------------------------------


def copy_page_table_entries_cases(rig: Rig) -> list[Case]:
    """Ranges between leaf tables mapped at 64 KB-aligned paging-process VAs (the paging companion's tile
    copies): the destination entries equal the source entries, byte for byte."""
    if not rig.gpummu:
        return []
    cases = []
    for name, spans in (
        ("3 ranges between two tables", ((7, 3, 10), (20, 100, 200), (1, 511, 0))),
        ("one whole table", ((512, 0, 0),)),
    ):
        src = case_table(rig, PAGE_SIZE, Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL)
        dst = case_table(rig, PAGE_SIZE, Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL)
        words = rig.pattern(PAGE_SIZE).tobytes()
        rig.local()[src.local : src.local + PAGE_SIZE] = np.frombuffer(words, np.uint8)
        ranges = tuple(
            DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
                NumPageTableEntries=n,
                SrcPageTableAddress=src.address.GpuVirtual,
                DstPageTableAddress=dst.address.GpuVirtual,
                SrcStartPteIndex=s,
                DstStartPteIndex=d,
            )
            for n, s, d in spans
        )
        effects: list[Effect] = [
            LocalBytes(dst.local + d * PTE_SIZE, words[s * PTE_SIZE : (s + n) * PTE_SIZE]) for n, s, d in spans
        ]
        payload = DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=len(ranges), pRanges=ranges)
        cases.append(
            Case("CopyPageTableEntries", name, payload, effects, restore=local_restore(rig, dst.local, PAGE_SIZE))
        )
    return cases


GPUMMU_CASES: Final[dict[str, Callable[[Rig], list[Case]]]] = {
    "TransferVirtual": transfer_virtual_cases,
    "FillVirtual": fill_virtual_cases,
    "UpdatePageTable": update_page_table_cases,
    "FlushTlb": flush_tlb_cases,
    "CopyPageTableEntries": copy_page_table_entries_cases,
    "SignalMonitoredFence": signal_cases,
}
"""Operation name -> its cases, for the GpuMmu model."""

__all__ = ["GPUMMU_CASES", "Window", "case_table", "hw_words", "window"]
