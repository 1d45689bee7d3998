"""The aperture and MMU services of ``WDDMSIM_GPU_SERVICES`` (decisions 0103, 0128), called from C as an executor
calls them: ``SetAperturePage``/``ClearAperturePage`` honour ``MapApertureFlags``; ``WritePageTable`` stores the
words the reference driver's translation gives and ``ReadPageTable`` gives the entries back; ``FlushTlb`` drops
exactly the cached translations asked for.  A bad segment id, index, count or entry is refused with
STATUS_INVALID_PARAMETER, named, and nothing changes."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, MiB
from wddmsim.ddi.pte import DXGK_PTE, DXGK_PTE_DTYPE
from wddmsim.drivers.native.adapter_desc import AdapterDescBlock
from wddmsim.drivers.native.cexec import CExecutor, ExecutorFailed
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.package import DriverModel, DriverSettings
from wddmsim.drivers.registry import driver_package
from wddmsim.hw.aperture import GART_ENTRY
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.kmd.pte_format import SegmentTables, translate
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .conftest import c_compiler

SURFACE = "native executor: GPU services"
ENTRY = "WddmsimExecutePagingBuffer"

SCRIPT = r"""
#include <wddmsim/ddk.h>

/* One services call per buffer, its arguments in the buffer; the executor returns the call's status. */
typedef struct {
    UINT32 Call;
    UINT32 SegmentId;
    UINT64 A, B, C, D;
    UINT32 Count;
    UINT32 NullEntries;
    DXGK_PTE Entries[4];
} SCRIPT;

NTSTATUS WddmsimExecutePagingBuffer(const WDDMSIM_GPU_SERVICES *s, const WDDMSIM_PAGING_SUBMISSION *sub)
{
    SCRIPT script;
    DXGK_PTE read[4];
    NTSTATUS status;
    memcpy(&script, (const UCHAR *)sub->pDmaBuffer + sub->StartOffset, sizeof(script));
    const DXGK_PTE *entries = script.NullEntries ? NULL : script.Entries;
    switch (script.Call) {
    case 1:
        return s->SetAperturePage(s->Context, script.SegmentId, script.A, (PFN_NUMBER)script.B, (UINT)script.C);
    case 2:
        return s->ClearAperturePage(s->Context, script.SegmentId, script.A);
    case 3:
        return s->WritePageTable(s->Context, script.SegmentId, script.A, (UINT)script.B, script.Count, entries);
    case 4:
        status = s->ReadPageTable(s->Context, script.SegmentId, script.A, (UINT)script.B, script.Count,
                                  script.NullEntries ? NULL : read);
        if (!NT_SUCCESS(status))
            return status;
        return s->WriteSystem(s->Context, script.D, read, script.Count * sizeof(DXGK_PTE));
    case 5:
        return s->FlushTlb(s->Context, script.SegmentId, script.A, script.B, script.C);
    default:
        return STATUS_NOT_SUPPORTED;
    }
}
"""
SET, CLEAR, WRITE, READ, FLUSH = 1, 2, 3, 4, 5
APERTURE = -1
"""Stands for the adapter's aperture segment id in a parameter."""


@pytest.fixture(scope="module")
def script_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    source = "#include <string.h>\n" + SCRIPT
    return compiler.shared_library(source, tmp_path_factory.mktemp("services") / "libscript.so", ("-O2",))


@dataclass
class Bench:
    """One small WDDM 1.x adapter, its segments, and the script executor over its paging engine."""

    adapter: Adapter
    executor: CExecutor
    memory: int
    """A memory segment's id."""
    aperture: int
    aperture_pages: int
    aperture_first: int
    """The GART page of the aperture segment's page 0."""
    memory_size: int
    scratch: int
    """A system physical address the read-back entries go to."""

    def call(
        self,
        call: int,
        segment: int,
        a: int = 0,
        b: int = 0,
        c: int = 0,
        *,
        entries: list[DXGK_PTE] | None = None,
        count: int | None = None,
        null: bool = False,
    ) -> None:
        given = entries or []
        words = b"".join(struct.pack("<QQ", e.Flags, e.PageAddress) for e in given).ljust(64, b"\0")
        n = len(given) if count is None else count
        script = struct.pack("<II4QII", call, segment, a, b, c, self.scratch, n, int(null)) + words
        self.executor(script, None, self.adapter.gpu.engines[0].services)

    def read_back(self, count: int) -> list[tuple[int, int]]:
        raw = self.adapter.gpu.system.view[self.scratch : self.scratch + 16 * count]
        return [(int(e["Flags"]), int(e["PageAddress"])) for e in np.frombuffer(raw, dtype=DXGK_PTE_DTYPE)]

    def state(self) -> tuple[bytes, bytes, object]:
        """Everything a refused call must leave alone: local memory, the scratch page, the adapter's footprint."""
        gpu = self.adapter.gpu
        return (
            bytes(gpu.local.data),
            bytes(gpu.system.view[self.scratch : self.scratch + PAGE_SIZE]),
            self.adapter.footprint(),
        )


@pytest.fixture
def bench(script_library: Path) -> Iterator[Bench]:
    package = driver_package("reference")
    gpu = GpuConfig(local_size=32 * MiB, bar_size=8 * MiB, aperture_size=16 * MiB, system_size=256 * MiB)
    adapter = build_adapter(
        SystemConfig(gpu=gpu, driver_package=package, driver=package.configure(DriverSettings(model=DriverModel.WDDM1)))
    )
    block = AdapterDescBlock(adapter.gpu, adapter.driver, DriverModel.WDDM1)
    segments = list(block.segments[: block.desc.SegmentCount])
    memory = next(s for s in segments if not s.Flags & 1)
    aperture = next(s for s in segments if s.Flags & 1)
    library = NativeLibrary(script_library, setting="executor.library", entry=ENTRY)
    scratch = 200 * MiB
    yield Bench(
        adapter,
        CExecutor(library, ENTRY, block),
        memory=int(memory.SegmentId),
        aperture=int(aperture.SegmentId),
        aperture_pages=int(aperture.Size) >> PAGE_SHIFT,
        aperture_first=(int(aperture.BaseAddress) - adapter.gpu.aperture.base) >> PAGE_SHIFT,
        memory_size=int(memory.Size),
        scratch=scratch,
    )
    library.close()


def _refused(bench: Bench, words: tuple[str, ...], call: int, segment: int, *args: int, **kwargs: object) -> None:
    """The call fails with STATUS_INVALID_PARAMETER, its message names ``words``, and nothing changed."""
    with campaign.case(SURFACE) as box:
        before = bench.state()
        with pytest.raises(ExecutorFailed) as caught:
            bench.call(call, segment, *args, **kwargs)  # type: ignore[arg-type]
        message = str(caught.value)
        assert "STATUS_INVALID_PARAMETER" in message and all(w in message for w in words), message
        assert bench.state() == before, "a refused call changed nothing"
        box.append(Outcome.REFUSED)


# --- the aperture -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("coherent", [False, True])
def test_set_aperture_page_stores_the_gart_entry_honouring_cache_coherent(bench: Bench, coherent: bool) -> None:
    with campaign.case(SURFACE) as box:
        bench.call(SET, bench.aperture, 5, 0x1234, int(coherent))
        entry = int(bench.adapter.gpu.aperture.entries[bench.aperture_first + 5])
        assert GART_ENTRY.unpack(entry) == {"Valid": 1, "Snoop": int(coherent), "Pfn": 0x1234}
        bench.call(CLEAR, bench.aperture, 5)
        assert int(bench.adapter.gpu.aperture.entries[bench.aperture_first + 5]) == 0
        box.append(Outcome.ACCEPTED)


def test_set_aperture_page_refuses_bad_arguments_unchanged(bench: Bench) -> None:
    pages = bench.aperture_pages
    _refused(bench, ("SetAperturePage", f"SegmentId={bench.memory:#x}", "aperture segment"), SET, bench.memory, 0, 1)
    _refused(bench, ("SegmentId=0x63",), SET, 99, 0, 1)
    _refused(bench, (f"PageIndex={pages:#x}", "must be a page"), SET, bench.aperture, pages, 1)
    _refused(bench, ("PageIndex",), SET, bench.aperture, 1 << 63, 1)
    _refused(bench, ("pfn", "frame of RAM"), SET, bench.aperture, 0, 1 << 36)
    _refused(bench, ("MapApertureFlags=0x2", "CacheCoherent"), SET, bench.aperture, 0, 1, 2)


def test_clear_aperture_page_refuses_bad_arguments_unchanged(bench: Bench) -> None:
    bench.call(SET, bench.aperture, bench.aperture_pages - 1, 7)
    _refused(bench, ("ClearAperturePage", "SegmentId"), CLEAR, bench.memory, 0)
    _refused(bench, (f"PageIndex={bench.aperture_pages:#x}",), CLEAR, bench.aperture, bench.aperture_pages)


# --- page tables --------------------------------------------------------------------------------------------


def _entries(bench: Bench) -> list[DXGK_PTE]:
    return [
        DXGK_PTE(Valid=True, Segment=0, PageAddress=0x4321, CacheCoherent=True),
        DXGK_PTE(Valid=True, Segment=bench.memory, PageAddress=3, ReadOnly=True, NoExecute=True),
        DXGK_PTE(Valid=True, Segment=bench.memory, PageAddress=16, LargePage=True, PageTablePageSize=1),
        DXGK_PTE(),
    ]


def test_write_page_table_stores_what_the_reference_driver_would(bench: Bench) -> None:
    """The hardware words equal the reference driver's own translation (a level-1 table: LargePage and
    PageTablePageSize both apply there), at the entries asked for and nowhere else."""
    offset, start = 0x10000, 2
    entries = _entries(bench)
    with campaign.case(SURFACE) as box:
        before = bytes(bench.adapter.gpu.local.data)
        bench.call(WRITE, bench.memory, offset, start, entries=entries)
        array = np.array([(e.Flags, e.PageAddress) for e in entries], dtype=DXGK_PTE_DTYPE)
        driver = bench.adapter.driver
        expected = translate(array, SegmentTables(driver.segments), level=1, dual=False)  # type: ignore[attr-defined]
        base = int(bench.adapter.vidmm.segment(bench.memory).BaseAddress)
        at = base + offset + 8 * start
        got = np.frombuffer(bytes(bench.adapter.gpu.local.data[at : at + 32]), dtype="<u8")
        assert got.tolist() == expected.tolist()
        after = bytearray(bench.adapter.gpu.local.data)
        after[at : at + 32] = before[at : at + 32]
        assert bytes(after) == before, "only the four entries changed"
        box.append(Outcome.ACCEPTED)


def test_read_page_table_gives_the_entries_back(bench: Bench) -> None:
    entries = _entries(bench)
    bench.call(WRITE, 0, 0x8000, 1, entries=entries)  # a table in system memory (segment 0)
    with campaign.case(SURFACE) as box:
        bench.call(READ, 0, 0x8000, 1, count=4)
        assert bench.read_back(4) == [(e.Flags, e.PageAddress) for e in entries[:3]] + [(0, 0)]
        box.append(Outcome.ACCEPTED)


def test_a_zero_entry_reads_back_as_a_valid_zero_page(bench: Bench) -> None:
    bench.call(WRITE, bench.memory, 0, 0, entries=[DXGK_PTE(Zero=True, Segment=bench.memory, PageAddress=9)])
    bench.call(READ, bench.memory, 0, 0, count=1)
    assert bench.read_back(1) == [(DXGK_PTE(Valid=True, Zero=True).Flags, 0)]


def test_page_table_calls_refuse_bad_arguments_unchanged(bench: Bench) -> None:
    good = [DXGK_PTE(Valid=True, Segment=bench.memory, PageAddress=1)]
    last = bench.memory_size // 8
    _refused(bench, ("WritePageTable", f"SegmentId={bench.aperture:#x}"), WRITE, bench.aperture, 0, 0, entries=good)
    _refused(bench, ("SegmentId=0x63",), WRITE, 99, 0, 0, entries=good)
    _refused(bench, ("TableOffset=0x4", "aligned"), WRITE, bench.memory, 4, 0, entries=good)
    _refused(bench, ("TableOffset",), WRITE, bench.memory, bench.memory_size, 0, entries=good)
    _refused(bench, ("Count=0x2", "run past the end"), WRITE, bench.memory, 0, last - 1, entries=good * 2)
    _refused(bench, ("Count=0x1",), WRITE, bench.memory, 0, 1 << 31, entries=good)
    _refused(bench, ("Entries=NULL",), WRITE, bench.memory, 0, 0, entries=good, null=True)
    _refused(bench, ("Count=0x2", "run past the end"), READ, bench.memory, 0, last - 1, count=2)
    _refused(bench, ("Entries=NULL",), READ, bench.memory, 0, 0, count=1, null=True)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ({"Segment": APERTURE}, ("Entries[1].Segment=",)),
        ({"PhysicalAdapterIndex": 1}, ("Entries[1].Flags", "PhysicalAdapterIndex")),
        ({"Reserved": 1}, ("Entries[1].Flags", "Reserved")),
        ({"PageTablePageSize": 2}, ("Entries[1].PageTablePageSize=0x2",)),
        ({"PageAddress": 1 << 40}, ("Entries[1].PageAddress",)),
    ],
)
def test_a_bad_entry_stores_no_entry_at_all(bench: Bench, bad: dict[str, int], words: tuple[str, ...]) -> None:
    """The first entry is good, the second bad: neither is stored (all or none)."""
    fields = {"Valid": True, "Segment": bench.memory, "PageAddress": 2, **bad}
    if fields["Segment"] == APERTURE:
        fields["Segment"] = bench.aperture
    entries = [DXGK_PTE(Valid=True, Segment=0, PageAddress=5), DXGK_PTE(**fields)]  # type: ignore[arg-type]
    _refused(bench, words, WRITE, bench.memory, 0x2000, 0, entries=entries)


def test_read_page_table_refuses_an_entry_no_dxgk_pte_can_say(bench: Bench) -> None:
    """A local address outside every memory segment (the aperture table's own pages): refused, the output
    untouched."""
    from wddmsim.hw.pte import encode_pte

    base = int(bench.adapter.vidmm.segment(bench.memory).BaseAddress)
    outside = bench.adapter.gpu.aperture.table_offset & ~(PAGE_SIZE - 1)
    bench.adapter.gpu.local.u64[(base + 0x3000) // 8] = np.uint64(encode_pte(target=Target.LOCAL, address=outside))
    _refused(bench, ("ReadPageTable", "lies in no memory segment"), READ, bench.memory, 0x3000, 0, count=1)


# --- the TLB ------------------------------------------------------------------------------------------------


def test_flush_tlb_drops_the_translations_asked_for(bench: Bench) -> None:
    mmu = bench.adapter.gpu.mmu
    base = int(bench.adapter.vidmm.segment(bench.memory).BaseAddress)
    root = TablePointer(Target.LOCAL, base + 0x4000)
    region = 1 << mmu.layout.shift(1)
    with campaign.case(SURFACE) as box:
        mmu.tlb[root] = {0: object(), 1: object(), 5: object()}  # type: ignore[dict-item]
        bench.call(FLUSH, bench.memory, 0x4000, region, 2 * region - 1)
        assert set(mmu.tlb[root]) == {0, 5}
        bench.call(FLUSH, bench.memory, 0x4000, 0, 0)
        assert root not in mmu.tlb, "Start = End = 0: the whole address space (a root left with nothing goes)"
        box.append(Outcome.ACCEPTED)


def test_flush_tlb_refuses_bad_arguments_unchanged(bench: Bench) -> None:
    mmu = bench.adapter.gpu.mmu
    base = int(bench.adapter.vidmm.segment(bench.memory).BaseAddress)
    root = TablePointer(Target.LOCAL, base + 0x4000)
    mmu.tlb[root] = {0: object()}  # type: ignore[dict-item]
    _refused(
        bench,
        ("FlushTlb", "StartVirtualAddress=0x2000", "EndVirtualAddress=0x1000"),
        FLUSH,
        bench.memory,
        0x4000,
        0x2000,
        0x1000,
    )
    _refused(bench, (f"RootSegmentId={bench.aperture:#x}",), FLUSH, bench.aperture, 0, 0, 0)
    _refused(bench, ("RootOffset=0x4004", "aligned"), FLUSH, bench.memory, 0x4004, 0, 0)
    assert set(mmu.tlb[root]) == {0}
