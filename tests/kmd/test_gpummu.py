"""GpuMmu through the DDI: capabilities, UpdatePageTable in every mode (differentially), 16 KiB GPU pages, dual
64 KB PTEs, large pages, Zero, the TLB, resizable roots, and the fault records the driver reports."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, KiB, MiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE, DXGK_QUERYPAGETABLELEVELDESCIN
from wddmsim.ddi.driver import DXGKARG_GETROOTPAGETABLESIZE, DXGKARG_QUERYADAPTERINFO, DXGKARG_SETROOTPAGETABLE
from wddmsim.ddi.flags import DXGK_MEMORY_TRANSFER_DIRECTION, DXGK_TRANSFERVIRTUALFLAGS, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE as Mode
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGKARG_BUILDPAGINGBUFFER,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS
from wddmsim.ddi.submit import DXGK_GENERAL_ERROR_CODE, DXGK_INTERRUPT_TYPE, DXGK_PAGE_FAULT_FLAGS
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.mmu import PAGES_PER_64K
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.paging.page_table import geometry
from wddmsim.scenarios.rig import PagingRig, ScratchAddressSpace
from wddmsim.system import SystemConfig
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.vidmm.errors import DeviceRemoved

CPU, LOCAL = 1, 2

CONFIGS = {
    "4 levels, dual PTEs": GpuConfig(),
    "3 levels": GpuConfig(mmu_index_bits=(9, 9, 9)),
    "5 levels": GpuConfig(mmu_index_bits=(9, 9, 9, 9, 4)),
    "4 levels, single PTE": GpuConfig(dual_pte=False),
    "2 levels, resizable root": GpuConfig(mmu_index_bits=(9, 11), dual_pte=False),
    "6 levels": GpuConfig(mmu_index_bits=(9, 9, 9, 9, 4, 4)),
    "16 KiB GPU pages": GpuConfig(gpu_page_shift=14, dual_pte=False),
}


def rig_for(config: GpuConfig) -> PagingRig:
    return PagingRig(SystemConfig(gpu=config))


@pytest.mark.parametrize("name", list(CONFIGS))
def test_caps_and_level_descriptors_follow_the_gpu(name: str) -> None:
    rig = rig_for(CONFIGS[name])
    layout = rig.gpu.mmu.layout
    description = rig.vidmm.gpummu
    assert description is not None, "VidMm queried and accepted them"
    caps = description.caps
    assert caps.PageTableLevelCount == layout.levels
    assert caps.VirtualAddressBitCount == layout.va_bits == 12 + sum(layout.index_bits)
    assert caps.Flags.DualPteSupported == layout.dual_pte
    assert caps.Flags.ReadOnlyMemorySupported and caps.Flags.NoExecuteMemorySupported and caps.Flags.ZeroInPteSupported
    assert caps.Flags.LargePageSupported
    assert caps.PageTableUpdateMode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL
    assert caps.LeafPageTableSizeFor64KPagesInBytes % 4096 == 0
    assert [d.PageTableIndexBitCount for d in description.levels] == list(layout.index_bits)
    for level, desc in enumerate(description.levels):
        assert desc.PageTableSizeInBytes % 4096 == 0
        assert desc.PageTableSizeInBytes >= layout.table_size(level)
    assert description.resizable_root == (layout.levels == 2)


@pytest.mark.parametrize(
    ("mode", "segment"),
    [
        (Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL, CPU),
        (Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL, LOCAL),
        (Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL, LOCAL),
    ],
)
def test_every_update_mode_can_be_reported(mode: Mode, segment: int) -> None:
    rig = PagingRig(SystemConfig(driver=DriverConfig(page_table_update_mode=mode, page_table_segment=segment)))
    assert rig.vidmm.gpummu is not None
    assert rig.vidmm.gpummu.caps.PageTableUpdateMode == mode
    assert rig.vidmm.gpummu.levels[0].PageTableSegmentId == segment


def test_cpu_virtual_updates_of_tables_the_cpu_cannot_reach_are_refused() -> None:
    from wddmsim.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="CPU_VIRTUAL needs page tables the CPU can reach"):
        PagingRig(SystemConfig(driver=DriverConfig(page_table_update_mode=Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL)))


def test_a_level_descriptor_is_asked_per_level_and_checked() -> None:
    rig = rig_for(GpuConfig())
    args = DXGKARG_QUERYADAPTERINFO(
        Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_PAGETABLELEVELDESC,
        pInputData=DXGK_QUERYPAGETABLELEVELDESCIN(LevelIndex=1),
    )
    rig.driver.query_adapter_info(args)
    assert args.pOutputData.PageTableSizeInBytes == 512 * 16, "dual level-1 entries are 16 bytes"  # type: ignore[attr-defined]
    with pytest.raises(DriverContractError, match=r"LevelIndex=0x4: levels are 0\.\.3"):
        rig.driver.query_adapter_info(
            DXGKARG_QUERYADAPTERINFO(
                Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_PAGETABLELEVELDESC,
                pInputData=DXGK_QUERYPAGETABLELEVELDESCIN(LevelIndex=4),
            )
        )


def test_get_root_page_table_size_is_for_two_level_layouts_in_whole_pages() -> None:
    rig = rig_for(CONFIGS["2 levels, resizable root"])
    args = DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=700)
    size = rig.driver.get_root_page_table_size(args)
    assert (size, args.NumberOfPte) == (8192, 1024)
    args = DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=1)
    assert (rig.driver.get_root_page_table_size(args), args.NumberOfPte) == (4096, 512)
    with pytest.raises(DriverContractError, match="at most 2048 entries"):
        rig.driver.get_root_page_table_size(DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=4096))
    with pytest.raises(DriverContractError, match="2-level layouts only"):
        rig_for(GpuConfig()).driver.get_root_page_table_size(DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=1))


# --- a small address-space builder for these tests -----------------------------------------------------------


@dataclass
class Tables:
    """Table slots in the CPU-visible segment: CPU mappings (CPU_VIRTUAL), segment offsets (GPU_PHYSICAL) and
    paging-process VAs (GPU_VIRTUAL) of the same bytes."""

    rig: PagingRig
    space: ScratchAddressSpace
    base_offset: int
    slot: int = 16 * KiB
    va_base: int = 0x4000_0000

    def offset(self, index: int) -> int:
        return self.base_offset + index * self.slot

    def bytes(self, index: int) -> np.ndarray:
        return self.rig.read_segment(CPU, self.offset(index), self.slot)

    def clear(self, count: int) -> None:
        self.rig.write_segment(CPU, self.offset(0), np.zeros(count * self.slot, np.uint8))

    def map_into_paging_va(self, count: int) -> None:
        pages = np.arange(count * self.slot // PAGE_SIZE, dtype=np.uint64) + (self.offset(0) >> PAGE_SHIFT)
        self.space.map(self.va_base, segment_id=CPU, page_numbers=pages)

    def update(self, mode: Mode, index: int, payload: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE) -> None:
        if mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            mapping = self.rig.mm.map_io_space(self.rig.gpu.bar.bus_base + self.offset(index), self.slot)
            address = DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=mapping.pointer(0))
        elif mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
            address = DXGK_PAGETABLEUPDATEADDRESS(
                GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=CPU, SegmentOffset=self.offset(index))
            )
        else:
            address = DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=self.va_base + index * self.slot)
        concrete = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
            PageTableLevel=payload.PageTableLevel,
            PageTableAddress=address,
            pPageTableEntries=payload.pPageTableEntries,
            StartIndex=payload.StartIndex,
            NumPageTableEntries=payload.NumPageTableEntries,
            Flags=payload.Flags,
            DriverProtection=payload.DriverProtection,
            UpdateMode=mode,
            pPageTableEntries64KB=payload.pPageTableEntries64KB,
        )
        if mode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
            status = self.rig.driver.build_paging_buffer(
                DXGKARG_BUILDPAGINGBUFFER(concrete, pDmaBuffer=None, DmaSize=0)
            )
            assert status == NTSTATUS.STATUS_SUCCESS
        else:
            self.rig.vidmm.paging.build(concrete)


@st.composite
def entry_arrays(draw: st.DrawFn, count: int, level: int, alignment: int) -> PteArray:
    entries = pte_array(count)
    for i in range(count):
        kind = draw(st.sampled_from(["invalid", "valid", "valid", "zero"]))
        if kind == "invalid":
            continue
        segment = draw(st.sampled_from([0, CPU, LOCAL]))
        limit = {0: 1 << 20, CPU: 8192, LOCAL: 32768}[segment]
        flags = {
            "Valid": 1,
            "Zero": int(kind == "zero"),
            "Segment": segment,
            "ReadOnly": draw(st.integers(0, 1)),
            "NoExecute": draw(st.integers(0, 1)),
            "CacheCoherent": draw(st.integers(0, 1)),
        }
        if level > 0:
            flags["LargePage"] = draw(st.sampled_from([0, 0, 0, 1]))
        if level == 1:
            flags["PageTablePageSize"] = draw(st.integers(0, 1))
        entries["Flags"][i] = pte_flags(**flags)
        entries["PageAddress"][i] = draw(st.integers(0, limit // alignment - 1)) * alignment
    return entries


@st.composite
def updates(draw: st.DrawFn, rig: PagingRig) -> tuple[int, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE]:
    layout = rig.gpu.mmu.layout
    level = draw(st.integers(0, layout.levels - 1))
    use64 = level in (0, 1) and draw(st.booleans())
    shell = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=level,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(),
        pPageTableEntries=pte_array(0),
        StartIndex=0,
        NumPageTableEntries=0,
        Flags=DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=use64),
        UpdateMode=Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    )
    shape = geometry(reference_driver(rig.driver).state, shell)
    start = draw(st.integers(0, shape.entries_in_table - 1))
    count = draw(st.integers(1, min(shape.entries_in_table - start, 90)))
    repeat = draw(st.booleans())
    alignment = shape.alignment_pages if level == 0 else 1
    source = draw(entry_arrays(1 if repeat else count, level, alignment))
    big = draw(entry_arrays(1 if repeat else count, level, alignment)) if shape.words_per_entry == 2 else None
    payload = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=level,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(),
        pPageTableEntries=source,
        StartIndex=start,
        NumPageTableEntries=count,
        Flags=DXGK_UPDATEPAGETABLEFLAGS(Repeat=repeat, Use64KBPages=use64),
        DriverProtection=draw(st.integers(0, (1 << 64) - 1)),
        UpdateMode=Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
        pPageTableEntries64KB=big,
    )
    return draw(st.integers(0, 2)), payload


DIFFERENTIAL = ["4 levels, dual PTEs", "4 levels, single PTE", "16 KiB GPU pages", "2 levels, resizable root"]


@pytest.mark.parametrize("name", DIFFERENTIAL)
def test_cpu_and_gpu_page_table_updates_write_bit_identical_tables_at_every_buffer_size(name: str) -> None:
    """The same updates, applied by the CPU (CPU_VIRTUAL) and as paging buffers (GPU_PHYSICAL, GPU_VIRTUAL) split
    at random buffer sizes, leave the same bytes -- the class of bug where a chunked GPU update re-reads its
    source from index 0 shows here as a mismatch."""
    rig = rig_for(CONFIGS[name])
    space = ScratchAddressSpace(rig)
    sets = {mode: Tables(rig, space, (8 + 2 * i) * MiB) for i, mode in enumerate(Mode)}
    sets[Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL].map_into_paging_va(3)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(steps=st.lists(updates(rig), min_size=1, max_size=6), dma=st.integers(48, 2048))
    def check(steps: list[tuple[int, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE]], dma: int) -> None:
        for tables in sets.values():
            tables.clear(3)
        rig.vidmm.resize_paging_buffers(dma)
        for index, payload in steps:
            for mode, tables in sets.items():
                tables.update(mode, index, payload)
        rig.vidmm.paging.wait(rig.vidmm.paging.flush())
        by_cpu = [sets[Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL].bytes(i) for i in range(3)]
        for mode in (Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL, Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL):
            for i in range(3):
                assert np.array_equal(sets[mode].bytes(i), by_cpu[i]), f"{mode.name} table {i}"

    check()


# --- address spaces built through the DDI, checked by the GPU and by the invariant checker ---------------------


def paging_space(config: GpuConfig) -> tuple[PagingRig, ScratchAddressSpace, MemoryRanges]:
    rig = rig_for(config)
    return rig, ScratchAddressSpace(rig), MemoryRanges.of(rig.driver)


def assert_tables_sound(rig: PagingRig, space: ScratchAddressSpace, ranges: MemoryRanges) -> None:
    problems = check_page_tables(rig.gpu, space.hw_root, ranges)
    assert problems == []


def local_pages(rig: PagingRig, offset: int, count: int, segment: int = LOCAL) -> np.ndarray:
    return np.arange(count, dtype=np.uint64) + (offset >> PAGE_SHIFT)


def fill_va(rig: PagingRig, va: int, size: int, pattern: int) -> None:
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(FillSizeInBytes=size, FillPattern=pattern, DestinationVirtualAddress=va)
    )


def test_16_kib_gpu_pages_take_only_the_entries_that_start_a_gpu_page() -> None:
    rig, space, ranges = paging_space(CONFIGS["16 KiB GPU pages"])
    va = 0x80_0000
    for chunk in range(4):  # four updates, the invariant checked after each
        space.map(
            va + chunk * 16 * PAGE_SIZE, segment_id=LOCAL, page_numbers=local_pages(rig, 4 * MiB + chunk * 64 * KiB, 16)
        )
        assert_tables_sound(rig, space, ranges)
    words = rig.read_segment(CPU, space.table_offset(0, va), 1024).view(np.uint64)
    assert int((words != 0).sum()) == 16, "64 entries of 4 KiB, 16 GPU pages of 16 KiB"
    fill_va(rig, va, 64 * PAGE_SIZE, 0x01020304)
    assert (rig.read_segment(LOCAL, 4 * MiB, 64 * PAGE_SIZE).view(np.uint32) == 0x01020304).all()
    with pytest.raises(DriverContractError, match="must be 0x4000-byte aligned"):
        space.map(va + 64 * PAGE_SIZE, segment_id=LOCAL, page_numbers=local_pages(rig, 4 * MiB + PAGE_SIZE, 4))


def test_dual_ptes_map_64_kb_pages_and_never_both_kinds_for_one_range() -> None:
    rig, space, ranges = paging_space(GpuConfig())
    va = 0x1000_0000
    space.map(va, segment_id=LOCAL, page_numbers=local_pages(rig, 16 * MiB, 16))  # a 4 KB leaf table on the path
    layout = rig.gpu.mmu.layout
    big_table_offset, mapping = space.new_table()
    big = pte_array(layout.leaf64_entries)
    big["Flags"][2:4] = pte_flags(Valid=1, Segment=LOCAL)
    big["PageAddress"][2:4] = (32 * MiB >> PAGE_SHIFT) + np.array([0, 16], dtype=np.uint64)
    space.write_entries(0, mapping, 0, big, use_64k=True)  # a 64 KB leaf table, written by the CPU path
    level1 = pte_array(1)
    level1["Flags"] = pte_flags(Valid=1, Segment=CPU)
    level1["PageAddress"] = space.table_page(0, va)
    big_pointer = pte_array(1)
    big_pointer["Flags"] = pte_flags(Valid=1, Segment=CPU)
    big_pointer["PageAddress"] = big_table_offset >> PAGE_SHIFT
    space.write_entries(1, space.table_mapping(1, va), layout.index(va, 1), level1, big=big_pointer)
    assert_tables_sound(rig, space, ranges)
    data = rig.pattern(128 * KiB, seed=3)
    source = rig.backing(128 * KiB, scatter_seed=4)
    rig.write_mdl(source, data)
    space.map(0x2000_0000, segment_id=0, page_numbers=source.pfns)
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
            TransferSizeInBytes=128 * KiB,
            SourceVirtualAddress=0x2000_0000,
            DestinationVirtualAddress=va + 2 * 64 * KiB,
            TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.SYSTEM_TO_LOCAL,
            Flags=DXGK_TRANSFERVIRTUALFLAGS(Dst64KBPages=True),
        )
    )
    assert np.array_equal(rig.read_segment(LOCAL, 32 * MiB, 128 * KiB), data), "TransferVirtual into 64 KB pages"
    assert_tables_sound(rig, space, ranges)
    fill_va(rig, va + 2 * 64 * KiB, 128 * KiB, 0xCAFEF00D)
    assert (rig.read_segment(LOCAL, 32 * MiB, 128 * KiB).view(np.uint32) == 0xCAFEF00D).all()
    fill_va(rig, va, 16 * PAGE_SIZE, 0x11111111)
    assert (rig.read_segment(LOCAL, 16 * MiB, 16 * PAGE_SIZE).view(np.uint32) == 0x11111111).all(), (
        "the 4 KB table still serves 0-64 KiB"
    )
    big["Flags"][0] = pte_flags(Valid=1, Segment=LOCAL)
    big["PageAddress"][0] = 48 * MiB >> PAGE_SHIFT
    space.write_entries(0, mapping, 0, big, use_64k=True)
    assert check_page_tables(rig.gpu, space.hw_root, ranges) == [
        f"VA {va:#x}: its 4 KB and 64 KB leaf entries are both valid"
    ]
    rig.execute(DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=space.root_address))
    with pytest.raises(DeviceRemoved, match="node 0 reported a fault"):
        fill_va(rig, va, PAGE_SIZE, 1)
    fault = rig.vidmm.scheduler.fault
    assert fault is None, "the reset cleared it"


def test_64_kb_entries_must_map_64_kib_aligned_pages() -> None:
    rig, _, _ = paging_space(GpuConfig())
    big = pte_array(1)
    big["Flags"] = pte_flags(Valid=1, Segment=LOCAL)
    big["PageAddress"] = 3
    payload = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=0,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0x1000),
        pPageTableEntries=big,
        StartIndex=0,
        NumPageTableEntries=1,
        Flags=DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=True),
        UpdateMode=Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    )
    buffer = rig.vidmm.pool.buffers[0]
    with pytest.raises(DriverContractError, match="must be 0x10000-byte aligned"):
        rig.driver.build_paging_buffer(DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=buffer.cursor, DmaSize=4096))
    assert PAGES_PER_64K == 16


def test_large_pages_and_zero_ranges_above_the_leaf() -> None:
    rig, space, ranges = paging_space(GpuConfig(dual_pte=False))
    layout = rig.gpu.mmu.layout
    va = 0x4000_0000
    space.map(va, segment_id=LOCAL, page_numbers=local_pages(rig, 0, 1))  # builds the path down to level 1
    entries = pte_array(2)
    entries["Flags"][0] = pte_flags(Valid=1, LargePage=1, Segment=LOCAL)
    entries["PageAddress"][0] = (2 * MiB) >> PAGE_SHIFT
    entries["Flags"][1] = pte_flags(Zero=1)
    space.write_entries(1, space.table_mapping(1, va), layout.index(va, 1), entries)
    rig.execute(DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=space.root_address))
    assert_tables_sound(rig, space, ranges)
    fill_va(rig, va + 4096, 2 * MiB - 4096, 0x5A5A5A5A)
    assert (rig.read_segment(LOCAL, 2 * MiB + 4096, 2 * MiB - 4096) == 0x5A).all()
    walk = rig.gpu.mmu.walk(space.hw_root, va + 2 * MiB + 8)
    assert walk.zero, "the Zero level-1 entry makes its whole 2 MiB read zero"
    fill_va(rig, va + 2 * MiB, 4096, 0x77777777)  # dropped, no fault
    leaf = pte_array(1)
    leaf["Flags"] = pte_flags(Valid=1, LargePage=1, Segment=LOCAL)
    with pytest.raises(DriverContractError, match=r"LargePage=0x1: LargePage is never set in a leaf"):
        space.write_entries(0, space.table_mapping(0, va), 0, leaf)


def test_a_missing_flush_leaves_a_stale_translation_and_a_sub_range_flush_keeps_the_others() -> None:
    rig, space, _ = paging_space(GpuConfig())
    near, far = 0x200_0000, 0x800_0000
    space.map(near, segment_id=LOCAL, page_numbers=local_pages(rig, 1 * MiB, 1))
    space.map(far, segment_id=LOCAL, page_numbers=local_pages(rig, 2 * MiB, 1))
    fill_va(rig, near, 4096, 0x01010101)
    fill_va(rig, far, 4096, 0x02020202)
    space.map(near, segment_id=LOCAL, page_numbers=local_pages(rig, 3 * MiB, 1))
    space.map(far, segment_id=LOCAL, page_numbers=local_pages(rig, 4 * MiB, 1))
    fill_va(rig, near, 4096, 0x03030303)
    assert rig.read_segment(LOCAL, 1 * MiB, 4).tolist() == [3, 3, 3, 3], "stale: the old page still receives writes"
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
            RootPageTableAddress=space.root_address, StartVirtualAddress=near, EndVirtualAddress=near + 4095
        )
    )
    fill_va(rig, near, 4096, 0x04040404)
    fill_va(rig, far, 4096, 0x05050505)
    assert rig.read_segment(LOCAL, 3 * MiB, 4).tolist() == [4, 4, 4, 4], "flushed: the new page"
    assert rig.read_segment(LOCAL, 2 * MiB, 4).tolist() == [5, 5, 5, 5], "outside the flushed range: still cached"
    rig.execute(DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=space.root_address))
    fill_va(rig, far, 4096, 0x06060606)
    assert rig.read_segment(LOCAL, 4 * MiB, 4).tolist() == [6, 6, 6, 6]


def test_fault_records_carry_the_documented_fields() -> None:
    rig, space, _ = paging_space(GpuConfig())
    space.map(0x300_0000, segment_id=LOCAL, page_numbers=local_pages(rig, 1 * MiB, 1), read_only=True)
    reported = []
    original = rig.vidmm.scheduler.notify_interrupt

    def record(data):  # type: ignore[no-untyped-def]
        reported.append(data)
        original(data)

    rig.vidmm.scheduler.notify_interrupt = record  # type: ignore[method-assign]
    with pytest.raises(DeviceRemoved):
        fill_va(rig, 0x300_0000 + 8, 8, 1)
    (fault,) = [d for d in reported if d.InterruptType == DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED]
    page = fault.DmaPageFaulted
    assert page is not None
    assert page.FaultedVirtualAddress == 0x300_0008
    assert page.PageFaultFlags == DXGK_PAGE_FAULT_FLAGS.DXGK_PAGE_FAULT_WRITE
    assert page.PageTableLevel == 0
    assert page.FaultErrorCode == DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT
    assert page.FaultedFenceId == rig.vidmm.scheduler.nodes[0].submitted
    reported.clear()
    with pytest.raises(DeviceRemoved):
        fill_va(rig, 0x7000_0000_0000, 8, 1)
    (missing,) = [d.DmaPageFaulted for d in reported if d.DmaPageFaulted is not None]
    assert missing.FaultedVirtualAddress == 0x7000_0000_0000
    assert missing.PageTableLevel == 3, "the root entry is invalid"
    assert missing.PageFaultFlags == DXGK_PAGE_FAULT_FLAGS.DXGK_PAGE_FAULT_WRITE


def test_a_two_level_root_faults_beyond_num_entries() -> None:
    rig = rig_for(CONFIGS["2 levels, resizable root"])
    space = ScratchAddressSpace(rig)
    va_far = 3 << rig.gpu.mmu.layout.shift(1)
    space.map(va_far, segment_id=LOCAL, page_numbers=local_pages(rig, 0, 1))
    fill_va(rig, va_far, 8, 0x01010101)
    rig.driver.set_root_page_table(DXGKARG_SETROOTPAGETABLE(hContext=1, Address=space.root_address, NumEntries=2))  # type: ignore[arg-type]
    with pytest.raises(DeviceRemoved):
        fill_va(rig, va_far, 8, 0x02020202)
    assert rig.read_segment(LOCAL, 0, 4).tolist() == [1, 1, 1, 1]
    walk = rig.gpu.mmu.walk(space.hw_root, va_far, root_entries=2)
    assert "beyond the root's 2 entries" in walk.fault
    with pytest.raises(DriverContractError, match="NumEntries=0x0"):
        rig.driver.set_root_page_table(DXGKARG_SETROOTPAGETABLE(hContext=1, Address=space.root_address, NumEntries=0))  # type: ignore[arg-type]


def test_initial_update_leaves_a_fresh_table_all_invalid_and_repeat_replicates_one_entry() -> None:
    rig, space, ranges = paging_space(GpuConfig())
    va = 0x40_0000
    space.map(va, segment_id=LOCAL, page_numbers=local_pages(rig, 0, 1))
    leaf_offset = space.table_offset(0, va)
    words = rig.read_segment(CPU, leaf_offset, 4096).view(np.uint64)
    assert int((words != 0).sum()) == 1, "InitialUpdate wrote 512 invalid entries, then one mapping"
    one = pte_array(1)
    one["Flags"] = pte_flags(Valid=1, Segment=LOCAL, NoExecute=1)
    one["PageAddress"] = 7
    rig.execute(
        DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
            PageTableLevel=0,
            PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuPhysical=space.physical(0, va)),
            pPageTableEntries=one,
            StartIndex=10,
            NumPageTableEntries=300,
            Flags=DXGK_UPDATEPAGETABLEFLAGS(Repeat=True),
            UpdateMode=Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL,
        )
    )
    words = rig.read_segment(CPU, leaf_offset, 4096).view(np.uint64)
    assert len(set(words[10:310].tolist())) == 1 and words[10] != 0 and words[310] == 0
    assert_tables_sound(rig, space, ranges)


def test_the_tour_leaves_sound_page_tables() -> None:
    from wddmsim.scenarios.tour import run_tour

    rig, result = run_tour()
    assert result.verified
    engine = rig.gpu.engines[0]
    assert engine.root is not None
    assert check_page_tables(rig.gpu, engine.root, MemoryRanges.of(rig.driver), root_entries=engine.root_entries) == []


def test_the_invariant_checker_names_an_entry_outside_every_memory() -> None:
    rig, space, ranges = paging_space(GpuConfig())
    space.map(0x1000, segment_id=LOCAL, page_numbers=np.array([(200 * MiB) >> PAGE_SHIFT], dtype=np.uint64))
    problems = check_page_tables(rig.gpu, space.hw_root, ranges)
    assert len(problems) == 1
    assert "VA 0x1000: page at LOCAL 0x10800000 leaves every reported memory" in problems[0]
    assert TablePointer(Target.LOCAL, 0) != space.hw_root


@pytest.mark.parametrize(
    ("kind", "access", "interrupt", "code"),
    [
        (
            "PAGE_FAULT",
            "READ",
            DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
            DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT,
        ),
        (
            "PAGE_FAULT",
            "WRITE",
            DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
            DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT,
        ),
        (
            "PAGE_FAULT",
            "EXECUTE",
            DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
            DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_PAGE_FAULT,
        ),
        (
            "INVALID_INSTRUCTION",
            "READ",
            DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
            DXGK_GENERAL_ERROR_CODE.DXGK_GENERAL_ERROR_INVALID_INSTRUCTION,
        ),
        ("BUS_ERROR", "READ", DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_FAULTED, None),
    ],
)
def test_the_interrupt_routine_reports_each_fault_kind(
    kind: str, access: str, interrupt: DXGK_INTERRUPT_TYPE, code: object
) -> None:
    from wddmsim.drivers.kit.interrupts import interrupt_data
    from wddmsim.hw.engine import Interrupt, InterruptKind
    from wddmsim.hw.faults import AccessKind, FaultKind, FaultRecord

    record = FaultRecord(
        kind=FaultKind[kind], engine=0, address=0x1234_5000, access=AccessKind[access], level=2, fence=41
    )
    data = interrupt_data(Interrupt(0, InterruptKind.FAULT, 41, record))
    assert data is not None
    assert data.InterruptType == interrupt
    if interrupt == DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_FAULTED:
        assert data.DmaFaulted is not None
        assert data.DmaFaulted.FaultedFenceId == 41
        return
    page = data.DmaPageFaulted
    assert page is not None
    assert page.FaultErrorCode == code
    assert page.FaultedFenceId == 41
    assert page.PageTableLevel == 2
    assert page.FaultedVirtualAddress == (0x1234_5000 if kind == "PAGE_FAULT" else 0)
    assert bool(page.PageFaultFlags & DXGK_PAGE_FAULT_FLAGS.DXGK_PAGE_FAULT_WRITE) == (access == "WRITE")


def test_the_paging_process_writes_each_entry_of_a_path_once_and_again_after_a_direct_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The paging process's tables never move: the entries pointing down to a leaf are written with its first
    mapping only; a write through ``write_entries`` (which may change them) makes the next mapping write its path
    again.  Every mapping still translates."""
    rig, space, ranges = paging_space(GpuConfig())
    process = rig.vidmm.paging_process
    assert process is not None
    levels: list[int] = []
    build = process.driver.build_paging_buffer

    def counted(args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if args.Operation.name == "DXGK_OPERATION_UPDATE_PAGE_TABLE":
            levels.append(args.UpdatePageTable.PageTableLevel)
        return build(args)

    monkeypatch.setattr(process.driver, "build_paging_buffer", counted)
    va = 0x4000_0000
    top = rig.gpu.mmu.layout.levels - 1
    space.map(va, segment_id=LOCAL, page_numbers=local_pages(rig, 1 * MiB, 1))
    assert levels.count(0) == 2 and set(range(1, top + 1)) <= set(levels), "new tables, then the path, then the leaf"
    levels.clear()
    space.map(va + 4096, segment_id=LOCAL, page_numbers=local_pages(rig, 2 * MiB, 1))
    assert levels == [0], "same 2 MiB: only the leaf entry is written"
    levels.clear()
    space.map(va + 2 * MiB, segment_id=LOCAL, page_numbers=local_pages(rig, 3 * MiB, 1))
    assert sorted(levels) == [0, 0, 1], "a new leaf table: created, pointed at from level 1, written"
    levels.clear()
    space.write_entries(0, space.table_mapping(0, va), 5, pte_array(1))
    space.map(va + 8192, segment_id=LOCAL, page_numbers=local_pages(rig, 4 * MiB, 1))
    assert sorted(levels) == [0, 0, *range(1, top + 1)], "after a direct write, the whole path is written again"
    rig.execute(DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=space.root_address))
    assert_tables_sound(rig, space, ranges)
    for at, offset in ((va, 1 * MiB), (va + 4096, 2 * MiB), (va + 2 * MiB, 3 * MiB), (va + 8192, 4 * MiB)):
        fill_va(rig, at, 4096, 0x3C3C3C3C)
        assert (rig.read_segment(LOCAL, offset, 4096) == 0x3C).all(), hex(at)
