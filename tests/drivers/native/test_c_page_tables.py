"""The example C driver builds ``UpdatePageTable`` and ``CopyPageTableEntries`` exactly as the Python reference driver
does (decision 0122): the same scenario and seed give the same paging buffers, byte for byte, the same memory and
the same traffic; every ``DXGK_PTE`` encoding, every update mode, ``Repeat``, dual PTEs, 64 KB leaves and larger GPU
pages give the same hardware words; every refusal has the reference driver's status and changes nothing.

The C and the Python driver are compared on one adapter: the native driver's library (``NativeDriver.call``) and its
base, the reference driver (``NativeDriver.base``), are given the same arguments.
"""

from __future__ import annotations

import ctypes
import itertools
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_MEMORY_TRANSFER_DIRECTION, DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
    PagingPayload,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.drivers.native import include_dir
from wddmsim.drivers.native.adapter_desc import (
    MAX_PAGE_TABLE_LEVELS,
    WDDMSIM_ADAPTER_DESC,
    WDDMSIM_SEGMENT_DESC,
    segment_descriptors,
)
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.hw import commands as cmd
from wddmsim.hw.gpu import GpuConfig
from wddmsim.hw.mmu import PAGES_PER_64K
from wddmsim.scenarios import catalog, runner
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.cc import find_compilers
from wddmsim.viz.capture import PagingCapture

from .conftest import BuildDriver

SURFACE = "native driver: page tables in C"
SMALL = {"workload.frames": 4, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}
SHIPPED = Path(__file__).parents[3] / "examples" / "drivers" / "refgpu" / "refgpu-wddm2.toml"
CPU = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL
GPU_VIRTUAL = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL
GPU_PHYSICAL = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL
SUCCESS = NTSTATUS.STATUS_SUCCESS
INSUFFICIENT = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
TABLE_VA = 0x7_0000_0000
DMA_BYTES = 64 * 1024


def _description(library: Path, tmp_path: Path, *, discard: bool = True) -> Path:
    """The shipped wddm2 description beside ``library``; ``discard=False`` leaves DiscardContent to the base (the C
    driver's DiscardContent writes no NOTE packet, the reference driver's does: the buffers would differ by it)."""
    text = SHIPPED.read_text(encoding="utf-8").replace('"librefgpu.so"', f'"{library}"')
    if not discard:
        text = text.replace('"DiscardContent", ', "")
    toml = tmp_path / ("wddm2.toml" if discard else "wddm2-no-discard.toml")
    toml.write_text(text, encoding="utf-8")
    return toml


# --- whole runs ------------------------------------------------------------------------------------------------


def _run(driver: str, dual: bool) -> tuple[runner.RunResult, PagingCapture, list[bytes]]:
    """The default scenario; every paging buffer submitted, and the bytes of every table a CPU_VIRTUAL update wrote
    (read right after the call: they are written while the buffer is built)."""
    capture = PagingCapture()
    cpu_tables: list[bytes] = []

    def observe(adapter: Adapter) -> None:
        capture.attach(adapter)
        ddi = adapter.ddi
        build = ddi.build_paging_buffer

        def recorded(args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
            status = build(args)
            if args.Operation is Op.DXGK_OPERATION_UPDATE_PAGE_TABLE and args.UpdatePageTable.UpdateMode == CPU:
                pointer = args.UpdatePageTable.PageTableAddress.CpuVirtual
                assert pointer is not None
                cpu_tables.append(int(status).to_bytes(4, "little") + pointer.mapping.data.tobytes())
            return status

        ddi.build_paging_buffer = recorded  # type: ignore[method-assign]

    config = catalog.load("default", {"adapter.driver": driver, "adapter.dual_pte": dual, **SMALL})
    return runner.run_scenario(config, on_adapter=observe), capture, cpu_tables


@pytest.mark.parametrize("dual", [True, False], ids=["dual-pte", "single-pte"])
def test_the_same_run_through_the_c_driver_and_the_reference_driver_is_identical(
    build_driver: BuildDriver, tmp_path: Path, dual: bool
) -> None:
    toml = _description(build_driver(), tmp_path, discard=False)
    c_run, c_capture, c_tables = _run(str(toml), dual)
    py_run, py_capture, py_tables = _run("reference", dual)
    assert c_run.verified and py_run.verified, [c for c in c_run.checks + py_run.checks if not c.ok]
    native = c_run.adapter.driver
    assert isinstance(native, NativeDriver)
    assert "DXGK_OPERATION_UPDATE_PAGE_TABLE" not in native.served_by_base
    assert c_tables and c_tables == py_tables, "the tables written by CPU_VIRTUAL updates differ"
    assert [b.data for b in c_capture.buffers] == [b.data for b in py_capture.buffers], "paging buffers differ"
    writes = sum(isinstance(p, cmd.WriteQwords) for b in c_capture.buffers for _, p in cmd.decode_all(b.data))
    assert writes > 0, "GPU-mode page-table updates were built"
    assert c_run.traffic == py_run.traffic
    assert np.array_equal(c_run.adapter.gpu.local.data, py_run.adapter.gpu.local.data), "destination bytes differ"
    assert native.services.breaches == []


def test_the_shipped_wddm2_description_runs_the_tour_with_page_tables_in_c(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    (tmp_path / "librefgpu.so").symlink_to(build_driver())
    toml = tmp_path / SHIPPED.name
    toml.write_text(SHIPPED.read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(main, ["run", "tour", "--driver", str(toml)])
    assert result.exit_code == 0, result.output
    assert "checks passed" in result.output
    run = runner.run_scenario(catalog.load("default", {"adapter.driver": str(toml), **SMALL}))
    assert run.verified, [c for c in run.checks if not c.ok]
    native = run.adapter.driver
    assert isinstance(native, NativeDriver)
    assert not {"DXGK_OPERATION_UPDATE_PAGE_TABLE", "DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES"} & set(
        native.served_by_base
    )


# --- one adapter, both drivers ---------------------------------------------------------------------------------


@dataclass
class Pair:
    """The C driver and the reference driver of one GpuMmu adapter."""

    native: NativeDriver
    local: int
    """A memory segment's id (local memory)."""
    visible: int
    """Another memory segment (CPU-visible)."""
    aperture: int
    local_size: int

    @property
    def layout(self) -> Any:
        return self.native.gpu.mmu.layout

    def entries(self, level: int, use_64k: bool) -> int:
        if use_64k:
            return int(self.layout.leaf64_entries)
        return int(self.layout.entries(level))


def _pair(toml: Path, **gpu: Any) -> Pair:
    config = SystemConfig(gpu=GpuConfig(local_size=64 << 20, bar_size=16 << 20, **gpu), driver_package=str(toml))
    adapter = build_adapter(config)
    native = adapter.driver
    assert isinstance(native, NativeDriver)
    descriptors = segment_descriptors(native.base)
    memory = [i + 1 for i, d in enumerate(descriptors) if not d.Flags.Aperture]
    aperture = next(i + 1 for i, d in enumerate(descriptors) if d.Flags.Aperture)
    local = max(memory, key=lambda i: descriptors[i - 1].Size)
    visible = next(i for i in memory if i != local)
    return Pair(native, local, visible, aperture, descriptors[local - 1].Size)


@pytest.fixture(scope="module")
def shapes(build_driver: BuildDriver, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Pair]:
    toml = _description(build_driver(), tmp_path_factory.mktemp("c-page-tables"))
    return {
        "dual": _pair(toml, dual_pte=True),
        "single": _pair(toml, dual_pte=False),
        "16k-pages": _pair(toml, dual_pte=False, gpu_page_shift=14, mmu_index_bits=(9, 9, 9)),
    }


@dataclass
class Calls:
    """What one driver did with one call sequence: per call the status, the bytes it put in the paging buffer and
    MultipassOffset; and the table a CPU_VIRTUAL update wrote."""

    calls: list[tuple[int, bytes, int, int]]
    table: bytes


def _mapping(size: int) -> CpuMapping:
    return CpuMapping(CpuVa(0x10_0000), np.zeros(size, dtype=np.uint8))


def _drive(build: Callable[[DXGKARG_BUILDPAGINGBUFFER], object], payload: PagingPayload, dma: int) -> Calls:
    """Call ``build`` as VidMm does -- a fresh paging buffer of ``dma`` bytes after each INSUFFICIENT -- until it
    succeeds or refuses (a refusal is its status, from a code or an exception)."""
    table = _mapping(1 << 16)
    payload = _with_table(payload, table)
    calls: list[tuple[int, bytes, int, int]] = []
    offset = 0
    for _ in range(10_000):
        buffer = _mapping(DMA_BYTES)
        args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=buffer.pointer(0), DmaSize=dma, MultipassOffset=offset)
        try:
            status = int(build(args))  # type: ignore[call-overload]
        except DdiError as error:
            calls.append((int(error.status), b"", offset, dma))
            break
        assert args.pDmaBuffer is not None
        written = args.pDmaBuffer.offset
        calls.append((status, buffer.data[:written].tobytes(), args.MultipassOffset, args.DmaSize))
        if status != INSUFFICIENT:
            break
        offset = args.MultipassOffset
    return Calls(calls, table.data.tobytes())


def _with_table(payload: PagingPayload, table: CpuMapping) -> PagingPayload:
    """A CPU_VIRTUAL update writes into ``table`` (each driver its own)."""
    if (
        isinstance(payload, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE)
        and payload.UpdateMode == CPU
        and payload.PageTableAddress.CpuVirtual is not None
    ):
        return replace(payload, PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=table.pointer(0)))
    return payload


def _both(pair: Pair, payload: PagingPayload, dma: int = DMA_BYTES) -> tuple[Calls, Calls]:
    return _drive(pair.native.call, payload, dma), _drive(pair.native.base.build_paging_buffer, payload, dma)


def _update(
    pair: Pair,
    entries: PteArray,
    *,
    level: int,
    mode: DXGK_PAGETABLEUPDATEMODE = CPU,
    start: int = 0,
    **changes: Any,
) -> DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE:
    address = {
        CPU: DXGK_PAGETABLEUPDATEADDRESS(CpuVirtual=_mapping(8).pointer(0)),
        GPU_VIRTUAL: DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=TABLE_VA),
        GPU_PHYSICAL: DXGK_PAGETABLEUPDATEADDRESS(
            GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=pair.local, SegmentOffset=0x20_0000)
        ),
    }[mode]
    payload = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE(
        PageTableLevel=level,
        PageTableAddress=address,
        pPageTableEntries=entries,
        StartIndex=start,
        NumPageTableEntries=int(entries.shape[0]),
        UpdateMode=mode,
    )
    return replace(payload, **changes)


# --- every DXGK_PTE encoding --------------------------------------------------------------------------------------


def _combinations(pair: Pair, level: int) -> Iterator[int]:
    """Flags words: the five low bits in every combination, each segment kind, LargePage above the leaf, every
    PageTablePageSize; and entries neither Valid nor Zero carrying bits that would be refused in a live entry."""
    segments = (0, pair.local, pair.visible)
    large = (0, 1) if level > 0 else (0,)
    for low, segment, big, size in itertools.product(range(32), segments, large, range(4)):
        yield low | pte_flags(Segment=segment, LargePage=big, PageTablePageSize=size)
    for junk in (pte_flags(PhysicalAdapterIndex=3), pte_flags(Segment=pair.aperture), 1 << 40, pte_flags(LargePage=1)):
        yield junk | pte_flags(CacheCoherent=1, ReadOnly=1)


def _entries(flags: list[int], pages_step: int, seed: int) -> PteArray:
    entries = pte_array(len(flags))
    entries["Flags"] = np.array(flags, dtype=np.uint64)
    rng = np.random.default_rng(seed)
    entries["PageAddress"] = rng.integers(0, 1 << 20, len(flags), dtype=np.uint64) * np.uint64(pages_step)
    return entries


def _chunks(values: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def _assert_same(c: Calls, py: Calls, what: str) -> None:
    assert c.calls == py.calls, f"{what}: C {c.calls[-1][:1]} ... Python {py.calls[-1][:1]}"
    assert c.table == py.table, f"{what}: the CPU-written tables differ"


CASES = [
    # (shape, level, Use64KBPages, DriverProtection)
    ("dual", 0, False, 0),
    ("dual", 0, False, 0x1A5),
    ("dual", 0, True, 0x5A),
    ("dual", 1, False, 0),
    ("dual", 2, False, 0),
    ("single", 0, False, 0x33),
    ("single", 0, True, 0),
    ("single", 1, False, 0),
    ("single", 1, True, 0),
    ("single", 3, False, 0),
    ("16k-pages", 0, False, 0x7),
    ("16k-pages", 1, False, 0),
]


@pytest.mark.parametrize(("shape", "level", "use_64k", "protection"), CASES)
def test_every_dxgk_pte_encoding_gives_the_reference_driver_s_hardware_words(
    shapes: dict[str, Pair], shape: str, level: int, use_64k: bool, protection: int
) -> None:
    pair = shapes[shape]
    flags = list(_combinations(pair, level))
    if level == 0:  # a live leaf entry with LargePage is refused: those are the refusal table's
        flags = [f for f in flags if not (f & 3 and f & pte_flags(LargePage=1))]
    table = pair.entries(level, use_64k)
    step = PAGES_PER_64K
    dual_level1 = pair.layout.dual_pte and level == 1
    for n, chunk in enumerate(_chunks(flags, table)):
        entries = _entries(chunk, step, n)
        big = _entries(list(reversed(chunk)), step, n + 100) if dual_level1 else None
        flag_word = DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=use_64k, InitialUpdate=n % 2 == 0)
        for mode in (CPU, GPU_VIRTUAL, GPU_PHYSICAL):
            payload = _update(
                pair,
                entries,
                level=level,
                mode=mode,
                Flags=flag_word,
                DriverProtection=protection,
                pPageTableEntries64KB=big,
            )
            c, py = _both(pair, payload)
            assert py.calls[-1][0] == SUCCESS, py.calls[-1]
            _assert_same(c, py, f"{shape} level {level} {mode.name} chunk {n}")
            campaign.record(SURFACE, Outcome.ACCEPTED)


@pytest.mark.parametrize("shape", ["dual", "single", "16k-pages"])
def test_repeat_multipass_and_unaligned_starts_give_the_same_packets(shapes: dict[str, Pair], shape: str) -> None:
    """Every update mode at DMA sizes from one packet's worth to single-pass, with Repeat and without, from aligned
    and unaligned start indices: the same packets, the same MultipassOffset after each call."""
    pair = shapes[shape]
    valid = pte_flags(Valid=1, Segment=pair.local)
    for level in (0, 1):
        count = pair.entries(level, False) - 5
        entries = _entries([valid] * count, PAGES_PER_64K, level)
        big = _entries([valid] * count, PAGES_PER_64K, 7) if pair.layout.dual_pte and level == 1 else None
        for mode, repeat, start, dma in itertools.product(
            (CPU, GPU_VIRTUAL, GPU_PHYSICAL), (False, True), (0, 3), (48, 80, 200, 1000, DMA_BYTES)
        ):
            if mode == CPU and dma != DMA_BYTES:
                continue  # the CPU path writes no packet
            payload = _update(
                pair,
                entries,
                level=level,
                mode=mode,
                start=start,
                Flags=DXGK_UPDATEPAGETABLEFLAGS(Repeat=repeat),
                pPageTableEntries64KB=big,
            )
            c, py = _both(pair, payload, dma)
            assert py.calls[-1][0] == SUCCESS
            _assert_same(c, py, f"{shape} level {level} {mode.name} repeat={repeat} start={start} dma={dma}")
            campaign.record(SURFACE, Outcome.ACCEPTED)


def test_copy_page_table_entries_gives_the_same_packets(shapes: dict[str, Pair]) -> None:
    pair = shapes["dual"]
    ranges = tuple(
        DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
            NumPageTableEntries=1 + 37 * i,
            SrcPageTableAddress=TABLE_VA + (i << 16),
            DstPageTableAddress=TABLE_VA + ((i + 9) << 16),
            SrcStartPteIndex=i,
            DstStartPteIndex=3 * i,
        )
        for i in range(6)
    )
    for dma in (48, 100, DMA_BYTES):
        payload = DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=len(ranges), pRanges=ranges)
        c, py = _both(pair, payload, dma)
        assert py.calls[-1][0] == SUCCESS and len(py.calls) > (1 if dma < 100 else 0)
        _assert_same(c, py, f"CopyPageTableEntries dma={dma}")
        campaign.record(SURFACE, Outcome.ACCEPTED)


# --- refusals -------------------------------------------------------------------------------------------------


def _one_bad(pair: Pair, flags: int, *, page: int = 16, count: int = 4, at: int = 2) -> PteArray:
    """``count`` valid entries, entry ``at`` replaced by ``flags`` / ``page``."""
    entries = _entries([pte_flags(Valid=1, Segment=pair.local)] * count, PAGES_PER_64K, 1)
    entries["Flags"][at] = flags
    entries["PageAddress"][at] = page
    return entries


def _bad_entries(pair: Pair) -> Iterator[tuple[str, PteArray, int, DXGK_UPDATEPAGETABLEFLAGS]]:
    """(name, entries, level, flags): one entry the reference driver refuses."""
    valid = pte_flags(Valid=1, Segment=pair.local)
    plain = DXGK_UPDATEPAGETABLEFLAGS()
    yield "aperture segment", _one_bad(pair, valid | pte_flags(Segment=pair.aperture)), 0, plain
    yield "no such segment", _one_bad(pair, pte_flags(Valid=1, Segment=31)), 0, plain
    yield "PhysicalAdapterIndex", _one_bad(pair, valid | pte_flags(PhysicalAdapterIndex=1)), 0, plain
    yield "SystemReserved0", _one_bad(pair, valid | pte_flags(SystemReserved0=1)), 1, plain
    yield "Reserved", _one_bad(pair, valid | 1 << 63), 1, plain
    yield "a Zero entry in no segment", _one_bad(pair, pte_flags(Zero=1, Segment=30)), 2, plain
    yield "LargePage in a leaf", _one_bad(pair, valid | pte_flags(LargePage=1)), 0, plain
    yield "a misaligned 64 KB page", _one_bad(pair, valid, page=17), 0, DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=True)
    yield (
        "a bad first entry with Repeat",
        _one_bad(pair, valid | 1 << 40, at=0),
        1,
        DXGK_UPDATEPAGETABLEFLAGS(Repeat=True),
    )


def _bad_arguments(pair: Pair, mode: DXGK_PAGETABLEUPDATEMODE) -> Iterator[tuple[str, PagingPayload]]:
    good = _one_bad(pair, pte_flags(Valid=1, Segment=pair.local))
    for name, entries, level, flags in _bad_entries(pair):
        yield name, _update(pair, entries, level=level, mode=mode, Flags=flags)
    yield "level past the MMU", _update(pair, good, level=pair.layout.levels, mode=mode)
    yield "Reserved0", _update(pair, good, level=0, mode=mode, Reserved0=1)
    yield "Flags.Reserved", _update(pair, good, level=0, mode=mode, Flags=DXGK_UPDATEPAGETABLEFLAGS(Reserved=2))
    yield "past the table", _update(pair, good, level=0, mode=mode, start=pair.entries(0, False) - 3)
    if not pair.layout.dual_pte:
        yield "64 KB entries without dual PTEs", _update(pair, good, level=1, mode=mode, pPageTableEntries64KB=good)
    yield "64 KB entries at a leaf", _update(pair, good, level=0, mode=mode, pPageTableEntries64KB=good)


def _bad_tables(pair: Pair) -> Iterator[tuple[str, PagingPayload]]:
    good = _one_bad(pair, pte_flags(Valid=1, Segment=pair.local))
    yield "CPU_VIRTUAL without CpuVirtual", _update(pair, good, level=0, PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS())
    gpu = _update(pair, good, level=0, mode=GPU_PHYSICAL)
    for name, where in (
        ("a table in an aperture segment", D3DGPU_PHYSICAL_ADDRESS(SegmentId=pair.aperture, SegmentOffset=0)),
        ("a table past its segment", D3DGPU_PHYSICAL_ADDRESS(SegmentId=pair.local, SegmentOffset=pair.local_size - 4)),
        ("a table past system memory", D3DGPU_PHYSICAL_ADDRESS(SegmentId=0, SegmentOffset=1 << 50)),
        ("a table in no segment", D3DGPU_PHYSICAL_ADDRESS(SegmentId=29, SegmentOffset=0)),
    ):
        yield name, replace(gpu, PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuPhysical=where))
    far = DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=1 << 61)
    yield (
        "a table VA past the packet's address field",
        _update(pair, good, level=0, mode=GPU_VIRTUAL, PageTableAddress=far),
    )
    root = D3DGPU_PHYSICAL_ADDRESS(SegmentId=pair.aperture, SegmentOffset=0)
    yield "FlushTlb: a root in an aperture segment", DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=root)
    for name, src, dst in (("Src", 0x1000, 0), ("Dst", 0, 0x8000), ("Dst VA", 0, 1 << 62)):
        bad = DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
            NumPageTableEntries=4,
            SrcPageTableAddress=TABLE_VA + src,
            DstPageTableAddress=TABLE_VA + dst,
            SrcStartPteIndex=0,
            DstStartPteIndex=0,
        )
        yield (
            f"CopyPageTableEntries: {name} not 64 KB aligned",
            DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=1, pRanges=(bad,)),
        )


def _refused_alike(c: Calls, py: Calls) -> bool:
    """Both refused with one status, after the same passes; the refusing call changed nothing: no byte written,
    MultipassOffset and DmaSize as they were, the CPU-written table untouched."""
    last_c, last_py = c.calls[-1], py.calls[-1]
    return (
        last_py[0] not in (SUCCESS, INSUFFICIENT)
        and c.calls[:-1] == py.calls[:-1]
        and last_c == last_py
        and c.table == bytes(len(c.table))
    )


@pytest.mark.parametrize("shape", ["dual", "single"])
def test_every_refusal_has_the_reference_driver_s_status_and_changes_nothing(
    shapes: dict[str, Pair], shape: str
) -> None:
    pair = shapes[shape]
    cases = [
        (f"{mode.name}: {name}", payload)
        for mode in (CPU, GPU_VIRTUAL, GPU_PHYSICAL)
        for name, payload in _bad_arguments(pair, mode)
    ]
    cases += list(_bad_tables(pair))
    many = _entries([pte_flags(Valid=1, Segment=pair.local)] * 400, PAGES_PER_64K, 3)
    many["Flags"][350] |= np.uint64(pte_flags(SystemReserved0=1))
    second_pass = ("a bad entry met in the second pass", _update(pair, many, level=0, mode=GPU_VIRTUAL))
    for name, payload, dma in [(n, p, DMA_BYTES) for n, p in cases] + [(*second_pass, 1024)]:
        with campaign.case(SURFACE) as box:
            c, py = _both(pair, payload, dma)
            assert py.calls[-1][0] == NTSTATUS.STATUS_INVALID_PARAMETER, (name, py.calls[-1])
            box.append(Outcome.REFUSED if _refused_alike(c, py) else Outcome.MISMATCHED)
            assert box[-1] is Outcome.REFUSED, (name, c.calls[-1][:1], py.calls[-1][:1], len(c.calls), len(py.calls))


@pytest.mark.parametrize(
    ("what", "dma", "offset"), [("no paging buffer", None, 0), ("MultipassOffset past the entries", DMA_BYTES, 5)]
)
def test_a_bad_paging_buffer_or_offset_is_refused_alike(
    shapes: dict[str, Pair], what: str, dma: int | None, offset: int
) -> None:
    pair = shapes["dual"]
    good = _one_bad(pair, pte_flags(Valid=1, Segment=pair.local))
    ranges = (
        DXGK_BUILDPAGINGBUFFER_COPY_RANGE(
            NumPageTableEntries=2,
            SrcPageTableAddress=TABLE_VA,
            DstPageTableAddress=TABLE_VA,
            SrcStartPteIndex=0,
            DstStartPteIndex=0,
        ),
    )
    for payload in (
        _update(pair, good, level=0, mode=GPU_VIRTUAL),
        _update(pair, good, level=0, mode=GPU_PHYSICAL),
        DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES(NumRanges=1, pRanges=ranges),
    ):
        statuses = []
        for build in (pair.native.call, pair.native.base.build_paging_buffer):
            buffer = _mapping(DMA_BYTES)
            pointer = None if dma is None else buffer.pointer(0)
            args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=pointer, DmaSize=dma or 0, MultipassOffset=offset)
            try:
                statuses.append(int(build(args)))
            except DdiError as error:
                statuses.append(int(error.status))
            assert (args.pDmaBuffer, args.DmaSize, args.MultipassOffset) == (pointer, dma or 0, offset), what
        with campaign.case(SURFACE) as box:
            box.append(Outcome.REFUSED if statuses == [NTSTATUS.STATUS_INVALID_PARAMETER] * 2 else Outcome.MISMATCHED)
            assert box[-1] is Outcome.REFUSED, (what, payload.OPERATION.name, statuses)


# --- the adapter description, version 2 ---------------------------------------------------------------------


LAYOUT_PROGRAM = r"""
#include <stddef.h>
#include <stdio.h>
#include <wddmsim/adapter.h>
#define F(m) printf("%s %zu %zu\n", #m, offsetof(WDDMSIM_ADAPTER_DESC, m), sizeof(((WDDMSIM_ADAPTER_DESC *)0)->m));
int main(void) {
    printf("size %zu %u %u\n", sizeof(WDDMSIM_ADAPTER_DESC), WDDMSIM_ADAPTER_DESC_VERSION, WDDMSIM_MAX_PAGE_TABLE_LEVELS);
    FIELDS
    return 0;
}
"""


@pytest.mark.parametrize("compiler", find_compilers() or [None], ids=lambda c: c.name if c else "none")
def test_the_adapter_description_s_layout_is_its_ctypes_mirror_s(compiler: Any, tmp_path: Path) -> None:
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    names = [f[0] for f in WDDMSIM_ADAPTER_DESC._fields_]
    source = LAYOUT_PROGRAM.replace("FIELDS", " ".join(f"F({n})" for n in names))
    program = compiler.executable(source, tmp_path / "adapter_layout")
    lines = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert lines[0].split() == ["size", str(ctypes.sizeof(WDDMSIM_ADAPTER_DESC)), "2", str(MAX_PAGE_TABLE_LEVELS)]
    for line, name in zip(lines[1:], names, strict=True):
        member = getattr(WDDMSIM_ADAPTER_DESC, name)
        assert line.split() == [name, str(member.offset), str(member.size)], line
    assert WDDMSIM_ADAPTER_DESC.SystemMemorySize.offset == 64, "the version-1 prefix keeps its layout"
    assert (include_dir() / "wddmsim" / "adapter.h").is_file()


def test_the_adapter_description_carries_the_mmu_s_shape(shapes: dict[str, Pair]) -> None:
    for pair in shapes.values():
        desc = pair.native.adapter.desc
        layout = pair.layout
        assert desc.Version == 2 and desc.DriverModel == 2
        assert (desc.PageTableLevels, bool(desc.DualPte), desc.GpuPageRatio, desc.Leaf64KEntries) == (
            layout.levels,
            layout.dual_pte,
            layout.gpu_page_ratio,
            layout.leaf64_entries,
        )
        shown = list(desc.EntriesPerLevel)
        assert shown == [layout.entries(i) for i in range(layout.levels)] + [0] * (
            MAX_PAGE_TABLE_LEVELS - layout.levels
        )


def test_flush_tlb_refuses_a_root_table_in_an_aperture_segment(shapes: dict[str, Pair]) -> None:
    """Regression: the C driver's FlushTlb took a root table in an aperture segment for a GPU physical address; the
    reference driver refuses it (a page table lives in system memory or a memory segment)."""
    pair = shapes["dual"]
    root = D3DGPU_PHYSICAL_ADDRESS(SegmentId=pair.aperture, SegmentOffset=0)
    payload = DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=root, StartVirtualAddress=0, EndVirtualAddress=0)
    with campaign.case(SURFACE) as box:
        c, py = _both(pair, payload)
        assert py.calls == [(NTSTATUS.STATUS_INVALID_PARAMETER, b"", 0, DMA_BYTES)]
        assert c.calls == py.calls, c.calls
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize(
    "payload",
    [
        DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL(
            SourceVirtualAddress=1 << 62,
            DestinationVirtualAddress=0x100_0000,
            TransferSizeInBytes=PAGE_SIZE,
            TransferDirection=DXGK_MEMORY_TRANSFER_DIRECTION.LOCAL_TO_LOCAL,
        ),
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL(
            DestinationVirtualAddress=(1 << 60) - PAGE_SIZE, FillSizeInBytes=64 * PAGE_SIZE, FillPattern=7
        ),
    ],
    ids=["TransferVirtual", "FillVirtual"],
)
def test_a_va_range_past_the_packet_address_field_is_refused_alike(
    shapes: dict[str, Pair], payload: PagingPayload
) -> None:
    """Regression: the reference driver's encoder raised a ValueError (a crash); both drivers now refuse the range
    before writing a byte."""
    with campaign.case(SURFACE) as box:
        c, py = _both(shapes["dual"], payload)
        assert py.calls == [(NTSTATUS.STATUS_INVALID_PARAMETER, b"", 0, DMA_BYTES)]
        assert c.calls == py.calls, c.calls
        box.append(Outcome.REFUSED)


def test_bring_your_own_driver_lists_the_adapter_description_s_layout() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "bring-your-own-driver.md").read_text(encoding="utf-8")
    for struct in (WDDMSIM_SEGMENT_DESC, WDDMSIM_ADAPTER_DESC):
        assert f"| `{struct.__name__}` | *(whole)* | 0 | {ctypes.sizeof(struct)} |" in doc
        for name, *_ in struct._fields_:
            member = getattr(struct, name)
            assert f"| | `{name}` | {member.offset} | {member.size} |" in doc, name
