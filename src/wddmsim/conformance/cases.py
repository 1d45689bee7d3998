"""The cases ``check-driver`` puts to each paging operation, each with its independent expectation.

A case prepares memory on the rig (random content where the operation reads, canary content where it writes),
names the operation's arguments, and says what must hold after the buffer executes: the exact bytes of each
destination (:class:`LocalBytes`, :class:`MdlBytes`), the aperture entries of a range (:class:`ApertureEntries`),
and nothing else changed.  Expectations are computed here from the documents' rules, never by a driver:

* Transfer: the segment side of page ``i`` is ``SegmentAddress + TransferOffset + 4096 i``; the MDL side is MDL
  page ``MdlOffset + i`` (``DXGK_BUILDPAGINGBUFFER_TRANSFER``, seed 001); ``TransferSize`` bytes move.
* Fill: ``FillSize`` bytes of the 32-bit ``FillPattern`` from ``Destination.SegmentAddress``.
* Map/UnmapApertureSegment: aperture pages ``[OffsetInPages, +NumberOfPages)`` of the segment point at MDL pages
  from ``MdlOffset`` / at ``DummyPage``.
* DiscardContent, ReadPhysical, WritePhysical: no byte of memory changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from wddmsim.conformance.rig import Rig
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.ddi.flags import DXGK_DISCARDCONTENTFLAGS, DXGK_MAPAPERTUREFLAGS, DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_FILL,
    DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_READPHYSICAL,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL,
    DXGK_FILL_DESTINATION,
    DXGK_TRANSFER_LOCATION,
    PagingPayload,
)
from wddmsim.hw.aperture import GART_ENTRY, GART_ENTRY_SIZE
from wddmsim.hw.pte import TablePointer

CANARY_BYTE: Final = 0x3C


@dataclass(frozen=True, slots=True)
class LocalBytes:
    """Local memory at GPU physical ``address`` must hold ``expected``."""

    address: int
    expected: bytes


@dataclass(frozen=True, slots=True)
class MdlBytes:
    """MDL ``mdl`` from page ``first_page`` must hold ``expected``."""

    mdl: MDL
    first_page: int
    expected: bytes


@dataclass(frozen=True, slots=True)
class ApertureEntries:
    """Aperture pages from ``first_page`` must be valid entries pointing at ``pfns``."""

    first_page: int
    pfns: tuple[int, ...]

    @property
    def table_bytes(self) -> tuple[int, int]:
        """``(offset, size)`` of these entries in local memory, relative to the table's start."""
        return self.first_page * GART_ENTRY_SIZE, len(self.pfns) * GART_ENTRY_SIZE


@dataclass(frozen=True, slots=True)
class Translation:
    """The GPU, walking from ``root``, must translate each page from ``va`` to local memory at ``addresses`` (what a
    TLB flush makes it see: the page tables in memory, not what it cached before)."""

    root: TablePointer
    va: int
    addresses: tuple[int, ...]


Effect = LocalBytes | MdlBytes | ApertureEntries | Translation


@dataclass(slots=True)
class Case:
    """One operation, one set of arguments, and what must hold after it executes."""

    operation: str
    name: str
    payload: PagingPayload
    effects: list[Effect]
    mdls: list[MDL] = field(default_factory=list)
    """System pages the case uses (snapshotted: nothing outside the effects may change)."""
    restore: Callable[[], None] = lambda: None
    """Put every destination back as it was before the first run (for the next DMA size)."""
    at_build: bool = False
    """The effects happen while the buffer is built: ``UpdatePageTable`` in the ``CPU_VIRTUAL`` mode, where the CPU
    writes the table (the ``build-time`` check does not apply)."""
    unbuffered: bool = False
    """Called with ``pDmaBuffer`` NULL and ``DmaSize`` 0: the forced ``CPU_VIRTUAL`` update of the paging
    process's own tables (DOC:system-paging-process.md), carried out at once in one call."""

    @property
    def must_change(self) -> bool:
        return bool(self.effects)


def _canary(size: int) -> bytes:
    return bytes([CANARY_BYTE]) * size


def _pages(size: int) -> int:
    return -(-size // PAGE_SIZE)


# --- Transfer -----------------------------------------------------------------------------------------------


def transfer_cases(rig: Rig) -> list[Case]:
    """All four directions with non-zero ``TransferOffset`` and ``MdlOffset``, a size ending mid-page."""
    memory = rig.memory_segments()[0]
    size, offset, mdl_offset = 3 * PAGE_SIZE + 0x321, 2 * PAGE_SIZE, 3
    span = offset + _pages(size) * PAGE_SIZE
    flags = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)
    cases: list[Case] = []

    def payload(src: DXGK_TRANSFER_LOCATION, dst: DXGK_TRANSFER_LOCATION) -> DXGK_BUILDPAGINGBUFFER_TRANSFER:
        return DXGK_BUILDPAGINGBUFFER_TRANSFER(
            TransferOffset=offset, TransferSize=size, Source=src, Destination=dst, Flags=flags, MdlOffset=mdl_offset
        )

    # memory -> memory
    src, dst = rig.reserve(memory, span), rig.reserve(memory, span)
    data = rig.pattern(size).tobytes()
    rig.local()[src + offset : src + offset + size] = np.frombuffer(data, np.uint8)
    rig.local()[dst : dst + span] = CANARY_BYTE
    cases.append(
        Case(
            "Transfer",
            "memory -> memory",
            payload(DXGK_TRANSFER_LOCATION.segment(memory.id, src), DXGK_TRANSFER_LOCATION.segment(memory.id, dst)),
            [LocalBytes(dst + offset, data)],
            restore=local_restore(rig, dst, span),
        )
    )
    # memory -> system
    src = rig.reserve(memory, span)
    data = rig.pattern(size).tobytes()
    rig.local()[src + offset : src + offset + size] = np.frombuffer(data, np.uint8)
    mdl = rig.scattered_mdl(mdl_offset + _pages(size) + 1)
    rig.write_mdl(mdl, _canary(mdl.ByteCount))
    cases.append(
        Case(
            "Transfer",
            "memory -> system",
            payload(DXGK_TRANSFER_LOCATION.segment(memory.id, src), DXGK_TRANSFER_LOCATION.mdl(mdl)),
            [MdlBytes(mdl, mdl_offset, data)],
            [mdl],
            restore=mdl_restore(rig, mdl),
        )
    )
    # system -> memory
    dst = rig.reserve(memory, span)
    rig.local()[dst : dst + span] = CANARY_BYTE
    mdl = rig.scattered_mdl(mdl_offset + _pages(size) + 1)
    image = rig.pattern(mdl.ByteCount).tobytes()
    rig.write_mdl(mdl, image)
    data = image[mdl_offset * PAGE_SIZE : mdl_offset * PAGE_SIZE + size]
    cases.append(
        Case(
            "Transfer",
            "system -> memory",
            payload(DXGK_TRANSFER_LOCATION.mdl(mdl), DXGK_TRANSFER_LOCATION.segment(memory.id, dst)),
            [LocalBytes(dst + offset, data)],
            [mdl],
            restore=local_restore(rig, dst, span),
        )
    )
    aperture = rig.aperture_segment()
    if aperture is not None:
        cases.append(_aperture_to_memory(rig, memory.id, payload, span, size, offset))
    cases.append(_idle_transfer(rig, memory.id, payload, span, size, offset))
    return cases


def _idle_transfer(
    rig: Rig,
    memory_id: int,
    payload: Callable[[DXGK_TRANSFER_LOCATION, DXGK_TRANSFER_LOCATION], DXGK_BUILDPAGINGBUFFER_TRANSFER],
    span: int,
    size: int,
    offset: int,
) -> Case:
    """memory -> memory with ``Flags.AllocationIsIdle`` set, as VidMm calls again after
    STATUS_GRAPHICS_ALLOCATION_BUSY: the allocation is idle for the call, so the answer may not be BUSY."""
    space = rig.vidmm.spaces.get(memory_id)
    src, dst = rig.reserve(space, span), rig.reserve(space, span)
    data = rig.pattern(size).tobytes()
    rig.local()[src + offset : src + offset + size] = np.frombuffer(data, np.uint8)
    rig.local()[dst : dst + span] = CANARY_BYTE
    busy = payload(DXGK_TRANSFER_LOCATION.segment(memory_id, src), DXGK_TRANSFER_LOCATION.segment(memory_id, dst))
    return Case(
        "Transfer",
        "memory -> memory, AllocationIsIdle set",
        dataclasses.replace(busy, Flags=dataclasses.replace(busy.Flags, AllocationIsIdle=True)),
        [LocalBytes(dst + offset, data)],
        restore=local_restore(rig, dst, span),
    )


def _aperture_to_memory(
    rig: Rig,
    memory_id: int,
    payload: Callable[[DXGK_TRANSFER_LOCATION, DXGK_TRANSFER_LOCATION], DXGK_BUILDPAGINGBUFFER_TRANSFER],
    span: int,
    size: int,
    offset: int,
) -> Case:
    """The source lies in an aperture segment: system pages the GART maps there (set up directly)."""
    aperture = rig.aperture_segment()
    assert aperture is not None
    src = rig.reserve(aperture, span)
    backing = rig.scattered_mdl(_pages(span))
    image = rig.pattern(backing.ByteCount).tobytes()
    rig.write_mdl(backing, image)
    first = (src - rig.gpu.aperture.base) >> PAGE_SHIFT
    valid = GART_ENTRY["Valid"].shifted_mask
    rig.gpu.aperture.entries[first : first + backing.page_count] = (backing.pfns << np.uint64(12)) | np.uint64(valid)
    dst = rig.reserve(rig.vidmm.spaces.get(memory_id), span)
    rig.local()[dst : dst + span] = CANARY_BYTE
    return Case(
        "Transfer",
        "aperture -> memory",
        payload(DXGK_TRANSFER_LOCATION.segment(aperture.id, src), DXGK_TRANSFER_LOCATION.segment(memory_id, dst)),
        [LocalBytes(dst + offset, image[offset : offset + size])],
        [backing],
        restore=local_restore(rig, dst, span),
    )


# --- Fill ---------------------------------------------------------------------------------------------------


def fill_cases(rig: Rig) -> list[Case]:
    memory = rig.memory_segments()[0]
    cases: list[Case] = []
    for name, size, pattern in (
        ("3 pages and 64 bytes of 0xDEADBEEF", 3 * PAGE_SIZE + 64, 0xDEADBEEF),
        (
            "one page of zeros",
            PAGE_SIZE,
            0,
        ),
    ):
        span = _pages(size) * PAGE_SIZE + PAGE_SIZE
        dst = rig.reserve(memory, span)
        rig.local()[dst : dst + span] = CANARY_BYTE
        word = pattern.to_bytes(4, "little")
        expected = (word * (size // 4 + 1))[:size]
        cases.append(
            Case(
                "Fill",
                name,
                DXGK_BUILDPAGINGBUFFER_FILL(
                    FillSize=size,
                    FillPattern=pattern,
                    Destination=DXGK_FILL_DESTINATION(SegmentId=memory.id, SegmentAddress=dst),
                ),
                [LocalBytes(dst, expected)],
                restore=local_restore(rig, dst, span),
            )
        )
    return cases


# --- operations with no effect on memory -------------------------------------------------------------------


def discard_cases(rig: Rig) -> list[Case]:
    memory = rig.memory_segments()[0]
    where = rig.reserve(memory, 4 * PAGE_SIZE)
    rig.local()[where : where + 4 * PAGE_SIZE] = np.frombuffer(rig.pattern(4 * PAGE_SIZE).tobytes(), np.uint8)
    payload = DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT(SegmentId=memory.id, SegmentAddress=where)
    idle = dataclasses.replace(payload, Flags=DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True))
    return [
        Case("DiscardContent", "4 pages of a memory segment", payload, []),
        Case("DiscardContent", "4 pages, AllocationIsIdle set", idle, []),
    ]


def physical_cases(rig: Rig) -> list[Case]:
    memory = rig.memory_segments()[0]
    where = rig.reserve(memory, PAGE_SIZE)
    rig.local()[where : where + PAGE_SIZE] = np.frombuffer(rig.pattern(PAGE_SIZE).tobytes(), np.uint8)
    cases = []
    for address, what in ((where + 0x40, "8-byte aligned"), (where + 0x43, "unaligned")):
        cases.append(
            Case(
                "ReadPhysical",
                what,
                DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=memory.id, PhysicalAddress=address),
                [],
            )
        )
        cases.append(
            Case(
                "WritePhysical",
                what,
                DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=memory.id, PhysicalAddress=address),
                [],
            )
        )
    return cases


# --- the aperture -------------------------------------------------------------------------------------------


def map_aperture_cases(rig: Rig) -> list[Case]:
    aperture = rig.aperture_segment()
    if aperture is None:
        return []
    pages, offset, mdl_offset = 5, 3, 2
    base = rig.reserve(aperture, (offset + pages) * PAGE_SIZE)
    first = (base - rig.gpu.aperture.base) >> PAGE_SHIFT
    segment_first = (aperture.base - rig.gpu.aperture.base) >> PAGE_SHIFT
    mdl = rig.scattered_mdl(mdl_offset + pages)
    payload = DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT(
        SegmentId=aperture.id,
        OffsetInPages=first - segment_first + offset,
        NumberOfPages=pages,
        pMdl=mdl,
        Flags=DXGK_MAPAPERTUREFLAGS(),
        MdlOffset=mdl_offset,
    )
    expected = ApertureEntries(first + offset, tuple(int(p) for p in mdl.pfns[mdl_offset : mdl_offset + pages]))
    return [
        Case(
            "MapApertureSegment",
            f"{pages} pages from MDL page {mdl_offset}",
            payload,
            [expected],
            [mdl],
            restore=_aperture_restore(rig, expected),
        )
    ]


def unmap_aperture_cases(rig: Rig) -> list[Case]:
    aperture = rig.aperture_segment()
    if aperture is None:
        return []
    pages, offset = 6, 1
    base = rig.reserve(aperture, (offset + pages) * PAGE_SIZE)
    first = (base - rig.gpu.aperture.base) >> PAGE_SHIFT
    segment_first = (aperture.base - rig.gpu.aperture.base) >> PAGE_SHIFT
    mapped = rig.scattered_mdl(pages)
    valid = np.uint64(GART_ENTRY["Valid"].shifted_mask)
    rig.gpu.aperture.entries[first + offset : first + offset + pages] = (mapped.pfns << np.uint64(12)) | valid
    dummy = rig.scattered_mdl(1)
    payload = DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT(
        SegmentId=aperture.id,
        OffsetInPages=first - segment_first + offset,
        NumberOfPages=pages,
        DummyPage=int(dummy.pfns[0]) << PAGE_SHIFT,
    )
    expected = ApertureEntries(first + offset, (int(dummy.pfns[0]),) * pages)
    saved = rig.gpu.aperture.entries[first + offset : first + offset + pages].copy()

    def restore() -> None:
        rig.gpu.aperture.entries[first + offset : first + offset + pages] = saved

    return [
        Case(
            "UnmapApertureSegment",
            f"{pages} pages to the dummy page",
            payload,
            [expected],
            [mapped, dummy],
            restore=restore,
        )
    ]


def local_restore(rig: Rig, address: int, size: int) -> Callable[[], None]:
    """Puts ``size`` bytes of local memory from ``address`` back as they are now."""
    saved = rig.local()[address : address + size].copy()

    def restore() -> None:
        rig.local()[address : address + size] = saved

    return restore


def mdl_restore(rig: Rig, mdl: MDL) -> Callable[[], None]:
    """Puts the pages of ``mdl`` back as they are now."""
    saved = rig.mdl_bytes(mdl)

    def restore() -> None:
        rig.write_mdl(mdl, saved)

    return restore


def _aperture_restore(rig: Rig, effect: ApertureEntries) -> Callable[[], None]:
    count = len(effect.pfns)
    saved = rig.gpu.aperture.entries[effect.first_page : effect.first_page + count].copy()

    def restore() -> None:
        rig.gpu.aperture.entries[effect.first_page : effect.first_page + count] = saved

    return restore


CASES: Final[dict[str, Callable[[Rig], list[Case]]]] = {
    "Transfer": transfer_cases,
    "Fill": fill_cases,
    "DiscardContent": discard_cases,
    "ReadPhysical": physical_cases,
    "WritePhysical": physical_cases,
    "MapApertureSegment": map_aperture_cases,
    "UnmapApertureSegment": unmap_aperture_cases,
}
"""Operation name (``DXGKARG_BUILDPAGINGBUFFER``'s union member) -> its cases."""

__all__ = [
    "CANARY_BYTE",
    "CASES",
    "ApertureEntries",
    "Case",
    "Effect",
    "LocalBytes",
    "MdlBytes",
    "Translation",
    "local_restore",
    "mdl_restore",
]
