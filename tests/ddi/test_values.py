"""Every enum value, flag bit and status code of the contract, exactly as documented (wddm-spec.md)."""

from __future__ import annotations

import pytest

from wddmsim.ddi import allocation, caps, flags, pte, segments, status, submit
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_OPERATION as Op

OPERATIONS = [
    "TRANSFER", "FILL", "DISCARD_CONTENT", "READ_PHYSICAL", "WRITE_PHYSICAL", "MAP_APERTURE_SEGMENT",
    "UNMAP_APERTURE_SEGMENT", "SPECIAL_LOCK_TRANSFER", "VIRTUAL_TRANSFER", "VIRTUAL_FILL", "INIT_CONTEXT_RESOURCE",
    "UPDATE_PAGE_TABLE", "FLUSH_TLB", "UPDATE_CONTEXT_ALLOCATION", "COPY_PAGE_TABLE_ENTRIES", "NOTIFY_RESIDENCY",
    "SIGNAL_MONITORED_FENCE", "MAP_APERTURE_SEGMENT2", "NOTIFY_FENCE_RESIDENCY", "MAP_MMU", "UNMAP_MMU",
    "NOTIFY_RESIDENCY2", "RESERVED22", "TRANSFER2", "FILL2", "DISCARD_CONTENT2",
]  # fmt: skip


@pytest.mark.parametrize(("value", "name"), list(enumerate(OPERATIONS)))
def test_operation_values(value: int, name: str) -> None:
    assert Op[f"DXGK_OPERATION_{name}"] == value


STATUSES = {
    "STATUS_SUCCESS": 0x0, "STATUS_INVALID_PARAMETER": 0xC000000D, "STATUS_NO_MEMORY": 0xC0000017,
    "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER": 0xC01E0001, "STATUS_GRAPHICS_NO_VIDEO_MEMORY": 0xC01E0100,
    "STATUS_GRAPHICS_CANT_LOCK_MEMORY": 0xC01E0101, "STATUS_GRAPHICS_ALLOCATION_BUSY": 0xC01E0102,
    "STATUS_GRAPHICS_TOO_MANY_REFERENCES": 0xC01E0103, "STATUS_GRAPHICS_TRY_AGAIN_LATER": 0xC01E0104,
    "STATUS_GRAPHICS_TRY_AGAIN_NOW": 0xC01E0105, "STATUS_GRAPHICS_ALLOCATION_INVALID": 0xC01E0106,
    "STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNAVAILABLE": 0xC01E0107,
    "STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED": 0xC01E0108,
    "STATUS_GRAPHICS_CANT_EVICT_PINNED_ALLOCATION": 0xC01E0109, "STATUS_GRAPHICS_INVALID_ALLOCATION_USAGE": 0xC01E0110,
    "STATUS_GRAPHICS_CANT_RENDER_LOCKED_ALLOCATION": 0xC01E0111, "STATUS_GRAPHICS_ALLOCATION_CLOSED": 0xC01E0112,
    "STATUS_GRAPHICS_INVALID_ALLOCATION_INSTANCE": 0xC01E0113,
    "STATUS_GRAPHICS_INVALID_ALLOCATION_HANDLE": 0xC01E0114, "STATUS_GRAPHICS_WRONG_ALLOCATION_DEVICE": 0xC01E0115,
    "STATUS_GRAPHICS_ALLOCATION_CONTENT_LOST": 0xC01E0116,
}  # fmt: skip


@pytest.mark.parametrize(("name", "value"), STATUSES.items())
def test_status_values(name: str, value: int) -> None:
    assert status.NTSTATUS[name] == value


def test_only_three_statuses_are_legal_from_build_paging_buffer() -> None:
    assert {s.name for s in status.BUILD_PAGING_BUFFER_STATUSES} == {
        "STATUS_SUCCESS",
        "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER",
        "STATUS_GRAPHICS_ALLOCATION_BUSY",
    }
    assert status.NT_SUCCESS(0) and not status.NT_SUCCESS(0xC01E0001)


BITS = [
    (flags.DXGK_TRANSFERFLAGS, {"Swizzle": 0x1, "Unswizzle": 0x2, "AllocationIsIdle": 0x4, "TransferStart": 0x8, "TransferEnd": 0x10}),
    (flags.DXGK_DISCARDCONTENTFLAGS, {"AllocationIsIdle": 0x1}),
    (flags.DXGK_MAPAPERTUREFLAGS, {"CacheCoherent": 0x1}),
    (flags.DXGK_TRANSFERVIRTUALFLAGS, {"Src64KBPages": 0x1, "Dst64KBPages": 0x2}),
    (flags.DXGK_UPDATEPAGETABLEFLAGS, {"Repeat": 0x1, "InitialUpdate": 0x2, "NotifyEviction": 0x4, "Use64KBPages": 0x8}),
    (flags.DXGK_SUBMITCOMMANDFLAGS, {"Paging": 0x1}),
    (pte.DXGK_PTE, {"Valid": 1 << 0, "Zero": 1 << 1, "CacheCoherent": 1 << 2, "ReadOnly": 1 << 3, "NoExecute": 1 << 4,
                    "LargePage": 1 << 10, "SystemReserved0": 1 << 19}),
    (segments.DXGK_SEGMENTFLAGS, {
        "Aperture": 0x1, "Agp": 0x2, "CpuVisible": 0x4, "UseBanking": 0x8, "CacheCoherent": 0x10, "PitchAlignment": 0x20,
        "PopulatedFromSystemMemory": 0x40, "PreservedDuringStandby": 0x80, "PreservedDuringHibernate": 0x100,
        "PartiallyPreservedDuringHibernate": 0x200, "DirectFlip": 0x400, "Use64KBPages": 0x800, "ReservedSysMem": 0x1000,
        "SupportsCpuHostAperture": 0x2000, "SupportsCachedCpuHostAperture": 0x4000, "ApplicationTarget": 0x8000,
        "VprSupported": 0x10000, "VprPreservedDuringStandby": 0x20000, "EncryptedPagingSupported": 0x40000,
        "LocalBudgetGroup": 0x80000, "NonLocalBudgetGroup": 0x100000, "PopulatedByReservedDDRByFirmware": 0x200000}),
    (caps.DXGK_VIDMMCAPS, {"VirtualAddressingSupported": 1 << 5, "GpuMmuSupported": 1 << 6, "IoMmuSupported": 1 << 7,
                           "MapAperture2Supported": 1 << 14, "AlwaysPoweredVRAM": 1 << 17}),
    (caps.DXGK_GPUMMUCAPS_FLAGS, {"ReadOnlyMemorySupported": 1 << 0, "ZeroInPteSupported": 1 << 2, "LargePageSupported": 1 << 6,
                                  "DualPteSupported": 1 << 7, "InvalidTlbEntriesNotCached": 1 << 10, "CachedPageTables": 1 << 12}),
    (allocation.DXGK_ALLOCATIONINFOFLAGS, {"CpuVisible": 1 << 0, "Swizzled": 1 << 7, "UseAlternateVA": 1 << 10,
                                           "AccessedPhysically": 1 << 15, "ExplicitResidencyNotification": 1 << 16}),
    (allocation.DXGK_ALLOCATIONINFOFLAGS_WDDM2_0, {"DisableLargePageMapping": 1 << 7, "MapApertureCpuVisible": 1 << 13}),
]  # fmt: skip


@pytest.mark.parametrize(("union", "expected"), BITS, ids=lambda x: getattr(x, "__name__", ""))
def test_flag_bit_positions(union: type, expected: dict[str, int]) -> None:
    for name, mask in expected.items():
        assert union(**{name: True}).Value == mask, name


def test_dxgk_pte_multi_bit_fields_and_page_address() -> None:
    entry = pte.DXGK_PTE(Valid=True, Segment=0x1F, PhysicalAdapterIndex=0x3F, PageTablePageSize=1, PageAddress=0x12345)
    assert entry.Flags == 0x1 | (0x1F << 5) | (0x3F << 11) | (1 << 17)
    assert entry.PageAddress == entry.PageTableAddress == 0x12345
    assert pte.DXGK_PTE_DTYPE.itemsize == 16
    assert pte.page_number(0x5000) == 5


def test_other_enumerations() -> None:
    assert [int(v) for v in flags.DXGK_MEMORY_TRANSFER_DIRECTION] == [0, 1, 2]
    assert [int(v) for v in flags.DXGK_PAGETABLEUPDATEMODE] == [0, 1, 2]
    assert [int(v) for v in pte.DXGK_PTE_PAGE_SIZE] == [0, 1]
    assert int(submit.DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED) == 1
    assert int(submit.DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_FAULTED) == 4
    assert int(submit.DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED) == 9
    assert [int(v) for v in submit.DXGK_PAGE_FAULT_FLAGS] == [0x1, 0x2, 0x4, 0x8, 0x10, 0x20]
    assert int(caps.DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4) == 11
    assert int(caps.DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_GPUMMUCAPS) == 13
    assert (caps.DXGK_MIN_PAGE_TABLE_LEVEL_COUNT, caps.DXGK_MAX_PAGE_TABLE_LEVEL_COUNT) == (2, 6)
    assert allocation.D3DDDI_ALLOCATIONPRIORITY_NORMAL == 0x78000000
    assert int(status.HRESULT.D3DERR_WASSTILLDRAWING) == 0x8876021C
