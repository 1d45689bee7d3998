"""The C ABI of ``wddmsim/ddk.h`` against its ctypes mirror (issue 21 item 1).

Programs generated from the mirror's table (:func:`wddmsim.drivers.native.abi.layout`) are compiled with every C
and C++ compiler present and print ``sizeof``/``offsetof`` of every structure and member, every constant, and the
word each bit-field sets; every number is compared with ctypes and with :mod:`wddmsim.ddi`.  A shared library built
the way a user builds a driver then proves the kernel-services table, the MDL macros, ``DxgkDdiBuildPagingBuffer``
and the executor entry through ctypes.  Each compiler builds once per session; without a compiler these tests skip.
"""

from __future__ import annotations

import ctypes
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS as DDI_TRANSFERFLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_OPERATION as Op
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT4, SEGMENTDESCRIPTOR4_SIZE
from wddmsim.ddi.status import NTSTATUS as DDI_NTSTATUS
from wddmsim.drivers import DriverModel, DriverSettings, driver_package
from wddmsim.drivers.native import abi, header_path, include_dir, paging
from wddmsim.drivers.native.render import (
    DOC_BEGIN,
    DOC_END,
    HEADER_BEGIN,
    HEADER_END,
    abi_table,
    current_block,
    static_asserts,
)
from wddmsim.system import SystemConfig, build_adapter
from wddmsim.testing.cc import CompileError, Compiler, find_compilers

COMPILERS: list[Compiler | None] = [*find_compilers()]
REPO = Path(__file__).resolve().parents[3]


def _compiler_ids(compiler: Compiler | None) -> str:
    return compiler.name if compiler else "none"


@pytest.fixture(scope="module", params=COMPILERS or [None], ids=_compiler_ids)
def compiler(request: pytest.FixtureRequest) -> Compiler:
    if request.param is None:
        pytest.skip("no C or C++ compiler on PATH (CI installs gcc)")
    found: Compiler = request.param
    return found


# --- the generated layout program ------------------------------------------------------------------------------


def _layout_lines() -> list[str]:
    lines = []
    for struct in abi.layout():
        lines.append(f'printf("S {struct.name} %zu 0\\n", sizeof({struct.name}));')
        for f in struct.fields:
            lines.append(
                f'printf("F {struct.name}.{f.path} %zu %zu\\n", offsetof({struct.name}, {f.path}), '
                f"sizeof((({struct.name} *)0)->{f.path}));"
            )
    return lines


def _constant_lines() -> list[str]:
    return [f'printf("C {name} %llu\\n", (unsigned long long)(ULONG)({name}));' for name in sorted(abi.constants())]


def _bit_lines() -> list[str]:
    """For each bit-field: set it to all ones in a zeroed object and print the word it lands in."""
    lines = []
    for word in abi.BIT_FIELDS:
        name = word.struct.__name__
        for f in word.ddi.layout().fields:
            lines.append(
                "{ " + f"{name} x; unsigned long long w = 0; memset(&x, 0, sizeof x); "
                f"x.{word.prefix}{f.name} = {f.mask:#x}ULL; "
                f"memcpy(&w, (const char *)&x + {word.word_offset}, {word.word_bytes}); "
                f'printf("B {name}.{word.prefix}{f.name} %llu\\n", w); ' + "}"
            )
    return lines


def layout_program() -> str:
    body = "\n    ".join(_layout_lines() + _constant_lines() + _bit_lines())
    return f"#include <wddmsim/ddk.h>\n#include <stdio.h>\n\nint main(void) {{\n    {body}\n    return 0;\n}}\n"


@dataclass
class Report:
    """What a compiled layout program printed."""

    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    bits: dict[str, int] = field(default_factory=dict)


def _parse(output: str) -> Report:
    report = Report()
    for line in output.splitlines():
        kind, name, *numbers = line.split()
        if kind in "SF":
            report.sizes[name] = (int(numbers[0]), int(numbers[1]))
        elif kind == "C":
            report.constants[name] = int(numbers[0])
        else:
            report.bits[name] = int(numbers[0])
    return report


@pytest.fixture(scope="module")
def report(compiler: Compiler, tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The layout program, built by ``compiler`` once per session, run."""
    out = tmp_path_factory.mktemp(f"layout-{compiler.name}") / "layout"
    compiler.executable(layout_program(), out)
    done = subprocess.run([str(out)], capture_output=True, text=True, check=True, timeout=60)
    return _parse(done.stdout)


def test_every_size_and_offset_matches_the_mirror(report: Report) -> None:
    expected: dict[str, tuple[int, int]] = {}
    for struct in abi.layout():
        expected[struct.name] = (struct.size, 0)
        expected.update({f"{struct.name}.{f.path}": (f.offset, f.size) for f in struct.fields})
    mismatches = {k: (report.sizes.get(k), v) for k, v in expected.items() if report.sizes.get(k) != v}
    assert not mismatches, f"(C, ctypes) differ: {mismatches}"
    assert len(report.sizes) == len(expected) > 500


def test_every_constant_has_the_ddi_value(report: Report) -> None:
    expected = abi.constants()
    assert report.constants == expected
    assert (
        report.constants["STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER"]
        == DDI_NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
    )
    assert report.constants["DXGK_OPERATION_MAP_APERTURE_SEGMENT2"] == 17


def test_every_bit_field_sits_where_the_ddi_declares_it(report: Report) -> None:
    expected = {
        f"{w.struct.__name__}.{w.prefix}{f.name}": f.shifted_mask for w in abi.BIT_FIELDS for f in w.ddi.layout().fields
    }
    assert report.bits == expected


# --- the mirror alone (no compiler) ----------------------------------------------------------------------------


def _mirror_word(word: abi.BitFieldWord, name: str, value: int) -> int:
    obj = word.struct()
    target = obj
    for part in word.prefix.split(".")[:-1]:
        target = getattr(target, part)
    setattr(target, name, value)
    raw = bytes(obj)[word.word_offset : word.word_offset + word.word_bytes]
    return int.from_bytes(raw, "little")


@pytest.mark.parametrize("word", abi.BIT_FIELDS, ids=lambda w: f"{w.struct.__name__}.{w.prefix}")
def test_mirror_bit_fields_sit_where_the_ddi_declares_them(word: abi.BitFieldWord) -> None:
    for f in word.ddi.layout().fields:
        assert _mirror_word(word, f.name, f.mask) == f.shifted_mask, f.name


def test_the_documented_x64_offsets() -> None:
    """The numbers real-drivers.md and the issue state, independent of any compiler."""
    args = abi.describe(abi.DXGKARG_BUILDPAGINGBUFFER)
    assert args.size == 320
    assert [args.offset(p) for p in ("pDmaBuffer", "DmaSize", "pDmaBufferPrivateData", "DmaBufferPrivateDataSize")] == [
        0,
        8,
        16,
        24,
    ]
    assert [args.offset(p) for p in ("Operation", "MultipassOffset", "Transfer", "Reserved")] == [28, 32, 40, 40]
    assert [args.offset(p) for p in ("hSystemContext", "DmaBufferGpuVirtualAddress", "DmaBufferWriteOffset")] == [
        296,
        304,
        312,
    ]
    mdl = abi.describe(abi.MDL)
    assert mdl.size == 48
    names = ("Next", "Size", "MdlFlags", "Process", "MappedSystemVa", "StartVa", "ByteCount", "ByteOffset")
    assert [mdl.offset(n) for n in names] == [0, 8, 10, 16, 24, 32, 40, 44]
    assert abi.layout_table()["DXGK_BUILDPAGINGBUFFER_TRANSFER"][1]["MdlOffset"] == 60
    assert ctypes.sizeof(abi.DXGK_PTE) == 16 and ctypes.sizeof(abi.DXGK_GPUMMUCAPS) == 0x18
    assert ctypes.sizeof(abi.DXGK_PAGE_TABLE_LEVEL_DESC) == 0x14
    assert (abi.MDL_MAPPED_TO_SYSTEM_VA, abi.MDL_PAGES_LOCKED, abi.MDL_SOURCE_IS_NONPAGED_POOL) == (1, 2, 4)


def test_the_mirror_reads_like_c() -> None:
    args = abi.DXGKARG_BUILDPAGINGBUFFER()
    args.Operation = Op.DXGK_OPERATION_TRANSFER
    args.Transfer.Source.SegmentAddress.QuadPart = 0x12345678_9ABCDEF0
    args.Transfer.Flags.TransferStart = 1
    assert args.Transfer.Source.SegmentAddress.LowPart == 0x9ABCDEF0
    assert args.Transfer.Source.SegmentAddress.u.HighPart == 0x12345678
    assert args.Transfer.Flags.Value == DDI_TRANSFERFLAGS(TransferStart=True).Value
    raw = bytes(args)
    assert int.from_bytes(raw[40 + 32 : 40 + 40], "little") == 0x12345678_9ABCDEF0  # Source.SegmentAddress


# --- the generated text is current ------------------------------------------------------------------------------


def test_the_header_asserts_are_generated_from_the_mirror() -> None:
    text = header_path().read_text(encoding="utf-8")
    assert current_block(text, HEADER_BEGIN, HEADER_END) == static_asserts(), (
        "run: python -m wddmsim.drivers.native.render --write docs/bring-your-own-driver.md"
    )


def test_the_abi_table_of_the_document_is_current() -> None:
    text = (REPO / "docs" / "bring-your-own-driver.md").read_text(encoding="utf-8")
    assert current_block(text, DOC_BEGIN, DOC_END) == abi_table(), (
        "run: python -m wddmsim.drivers.native.render --write docs/bring-your-own-driver.md"
    )


def test_the_include_dir_holds_the_header_and_the_wdk_shims() -> None:
    assert header_path().parent.parent == include_dir()
    for shim in ("d3dkmddi.h", "ntddk.h", "wdm.h", "ntstatus.h"):
        assert "#include <wddmsim/ddk.h>" in (include_dir() / shim).read_text(encoding="utf-8")


# --- the header under a compiler --------------------------------------------------------------------------------

_SHIMS = "#include <d3dkmddi.h>\n#include <ntddk.h>\n#include <wdm.h>\n#include <ntstatus.h>\n"


def test_the_header_compiles_with_the_usual_driver_flags(compiler: Compiler, tmp_path: Path) -> None:
    """Twice included through every shim, with -fms-extensions -fshort-wchar as the WDK's code wants."""
    source = _SHIMS + _SHIMS + 'WCHAR name[] = L"wddmsim";\n'
    compiler.object_file(source, tmp_path / "shims.o", ("-fms-extensions", "-fshort-wchar"))


def test_a_layout_change_breaks_the_build(compiler: Compiler, tmp_path: Path) -> None:
    """The static assertions are live: a header with DmaSize widened to 64 bits does not compile."""
    broken = tmp_path / "include" / "wddmsim"
    broken.mkdir(parents=True)
    text = header_path().read_text(encoding="utf-8")
    assert "    UINT DmaSize;     /*" in text
    (broken / "ddk.h").write_text(
        text.replace("    UINT DmaSize;     /*", "    SIZE_T DmaSize;   /*"), encoding="utf-8"
    )
    with pytest.raises(CompileError, match=r"sizeof\(DXGKARG_BUILDPAGINGBUFFER\.DmaSize\)"):
        compiler.object_file("#include <wddmsim/ddk.h>\n", tmp_path / "broken.o", (f"-I{tmp_path / 'include'}",))


# --- a driver library through the ABI ---------------------------------------------------------------------------

DRIVER = r"""
#include <d3dkmddi.h>
#include <ntddk.h>

#ifdef __cplusplus
#define EXPORT extern "C" WDDMSIM_EXPORT
#else
#define EXPORT WDDMSIM_EXPORT
#endif

/* The driver's own record of a Fill, replayed by its executor (the sample drivers' software-log pattern). */
typedef struct { UINT Operation; UINT Pattern; UINT SegmentId; UINT Pad; ULONGLONG Address; ULONGLONG Size; } RECORD;

EXPORT PVOID TestSystemAddress(PMDL Mdl) { return MmGetSystemAddressForMdlSafe(Mdl, NormalPagePriority); }
EXPORT VOID TestUnmap(PVOID Va, PMDL Mdl) { MmUnmapLockedPages(Va, Mdl); }
EXPORT PFN_NUMBER TestPfn(PMDL Mdl, ULONG Index) { return MmGetMdlPfnArray(Mdl)[Index]; }
EXPORT ULONG TestPrint(ULONG Value) { return DbgPrint("value=%u", Value); }

EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(const HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs) {
    RECORD record;
    UNREFERENCED_PARAMETER(hAdapter);
    if (pArgs->Operation != DXGK_OPERATION_FILL) {
        return STATUS_INVALID_PARAMETER;
    }
    if (pArgs->DmaSize < sizeof record) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    record.Operation = (UINT)pArgs->Operation;
    record.Pattern = pArgs->Fill.FillPattern;
    record.SegmentId = pArgs->Fill.Destination.SegmentId;
    record.Pad = 0;
    record.Address = (ULONGLONG)pArgs->Fill.Destination.SegmentAddress.QuadPart;
    record.Size = pArgs->Fill.FillSize;
    RtlCopyMemory(pArgs->pDmaBuffer, &record, sizeof record);
    pArgs->pDmaBuffer = (PUCHAR)pArgs->pDmaBuffer + sizeof record;
    pArgs->DmaSize -= (UINT)sizeof record;
    return STATUS_SUCCESS;
}

EXPORT NTSTATUS WddmsimExecutePagingBuffer(const WDDMSIM_GPU_SERVICES *Services,
                                           const WDDMSIM_PAGING_SUBMISSION *Submission) {
    UINT offset;
    for (offset = Submission->StartOffset; offset + sizeof(RECORD) <= Submission->EndOffset; offset += sizeof(RECORD)) {
        RECORD record;
        UINT pattern[16];
        ULONGLONG done;
        RtlCopyMemory(&record, (PUCHAR)Submission->pDmaBuffer + offset, sizeof record);
        RtlFillMemory(pattern, sizeof pattern, 0);
        for (UINT i = 0; i < 16; i++) pattern[i] = record.Pattern;
        for (done = 0; done < record.Size; done += sizeof pattern) {
            SIZE_T chunk = record.Size - done < sizeof pattern ? (SIZE_T)(record.Size - done) : sizeof pattern;
            NTSTATUS status = Services->WriteLocal(Services->Context, record.SegmentId, record.Address + done,
                                                   pattern, chunk);
            if (!NT_SUCCESS(status)) return status;
        }
    }
    return STATUS_SUCCESS;
}
"""


@pytest.fixture(scope="module")
def driver(compiler: Compiler, tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    out = tmp_path_factory.mktemp(f"driver-{compiler.name}") / "libdriver.so"
    lib = ctypes.CDLL(str(compiler.shared_library(DRIVER, out)))
    lib.TestSystemAddress.restype = ctypes.c_void_p
    lib.TestSystemAddress.argtypes = [ctypes.POINTER(abi.MDL)]
    lib.TestUnmap.argtypes = [ctypes.c_void_p, ctypes.POINTER(abi.MDL)]
    lib.TestPfn.restype = ctypes.c_uint64
    lib.TestPfn.argtypes = [ctypes.POINTER(abi.MDL), ctypes.c_uint32]
    lib.TestPrint.restype = ctypes.c_uint32
    lib.TestPrint.argtypes = [ctypes.c_uint32]
    lib.DxgkDdiBuildPagingBuffer.restype = abi.NTSTATUS
    lib.DxgkDdiBuildPagingBuffer.argtypes = [ctypes.c_void_p, ctypes.POINTER(abi.DXGKARG_BUILDPAGINGBUFFER)]
    lib.WddmsimExecutePagingBuffer.restype = abi.NTSTATUS
    lib.WddmsimExecutePagingBuffer.argtypes = [
        ctypes.POINTER(abi.WDDMSIM_GPU_SERVICES),
        ctypes.POINTER(abi.WDDMSIM_PAGING_SUBMISSION),
    ]
    return lib


def test_kernel_services_reach_the_bridge(driver: ctypes.CDLL) -> None:
    """MmGetSystemAddressForMdlSafe, MmUnmapLockedPages, DbgPrint and MmGetMdlPfnArray, as the WDK defines them."""
    view = ctypes.create_string_buffer(0x3000)
    calls: list[tuple[str, int]] = []

    def map_pages(
        _ctx: int | None, mdl: ctypes._Pointer[abi.MDL], mode: int, cache: int, _req: int | None, _bug: int, prio: int
    ) -> int:
        calls.append(("map", mdl.contents.ByteCount))
        assert (mode, cache, prio) == (0, 1, 16)  # KernelMode, MmCached, NormalPagePriority
        return ctypes.addressof(view)

    def unmap_pages(_ctx: int | None, va: int | None, mdl: ctypes._Pointer[abi.MDL]) -> None:
        calls.append(("unmap", int(va or 0) - ctypes.addressof(view)))

    def log(_ctx: int | None, level: int, message: bytes) -> None:
        calls.append((message.decode(), level))

    services = abi.WDDMSIM_KERNEL_SERVICES(
        Version=abi.WDDMSIM_KERNEL_SERVICES_VERSION,
        Size=ctypes.sizeof(abi.WDDMSIM_KERNEL_SERVICES),
        MapLockedPagesSpecifyCache=abi.PFN_WDDMSIM_MAP_LOCKED_PAGES(map_pages),
        UnmapLockedPages=abi.PFN_WDDMSIM_UNMAP_LOCKED_PAGES(unmap_pages),
        Log=abi.PFN_WDDMSIM_LOG(log),
    )
    pointer = ctypes.c_void_p.in_dll(driver, "WddmsimKernelServices")
    storage, mdl = abi.new_mdl([0x111, 0x222, 0x333], byte_count=0x2800, byte_offset=0x10)
    try:
        assert driver.TestSystemAddress(mdl) is None  # no bridge attached: the mapping fails, nothing crashes
        pointer.value = ctypes.addressof(services)
        assert [driver.TestPfn(mdl, i) for i in range(3)] == [0x111, 0x222, 0x333]
        assert driver.TestSystemAddress(mdl) == ctypes.addressof(view)
        driver.TestUnmap(ctypes.addressof(view), mdl)
        mdl.MdlFlags |= abi.MDL_MAPPED_TO_SYSTEM_VA
        mdl.MappedSystemVa = 0x7000_0000
        assert driver.TestSystemAddress(mdl) == 0x7000_0000  # the existing view: no service call
        assert driver.TestPrint(7) == abi.ntstatus(DDI_NTSTATUS.STATUS_SUCCESS)
    finally:
        pointer.value = None
    assert calls == [("map", 0x2800), ("unmap", 0), ("value=7", 0)]
    assert len(storage) == abi.mdl_size(3) == 48 + 3 * 8


def test_build_paging_buffer_and_executor_through_the_abi(driver: ctypes.CDLL) -> None:
    """A Fill built by the library's DxgkDdiBuildPagingBuffer and carried out by its own executor."""
    dma = ctypes.create_string_buffer(4096)
    args = abi.DXGKARG_BUILDPAGINGBUFFER(pDmaBuffer=ctypes.addressof(dma), DmaSize=16)
    args.Operation = Op.DXGK_OPERATION_FILL
    args.Fill.FillSize = 0x50
    args.Fill.FillPattern = 0xA5A5_0F0F
    args.Fill.Destination.SegmentId = 2
    args.Fill.Destination.SegmentAddress.QuadPart = 0x1008
    status = driver.DxgkDdiBuildPagingBuffer(None, ctypes.byref(args))
    assert abi.ntstatus(status) == DDI_NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
    assert args.pDmaBuffer == ctypes.addressof(dma)
    args.DmaSize = 4096
    assert abi.ntstatus(driver.DxgkDdiBuildPagingBuffer(None, ctypes.byref(args))) == DDI_NTSTATUS.STATUS_SUCCESS
    end = args.pDmaBuffer - ctypes.addressof(dma)
    assert (end, args.DmaSize) == (32, 4096 - 32)

    local = bytearray(0x2000)
    writes: list[tuple[int, int, int]] = []

    def write_local(_ctx: int | None, segment: int, address: int, data: int | None, size: int) -> int:
        writes.append((segment, address, size))
        local[address : address + size] = ctypes.string_at(data or 0, size)
        return abi.NTSTATUS(DDI_NTSTATUS.STATUS_SUCCESS).value

    services = abi.WDDMSIM_GPU_SERVICES(
        Version=abi.WDDMSIM_GPU_SERVICES_VERSION,
        Size=ctypes.sizeof(abi.WDDMSIM_GPU_SERVICES),
        WriteLocal=abi.PFN_WDDMSIM_WRITE_LOCAL(write_local),
    )
    submission = abi.WDDMSIM_PAGING_SUBMISSION(
        Version=abi.WDDMSIM_PAGING_SUBMISSION_VERSION,
        Size=ctypes.sizeof(abi.WDDMSIM_PAGING_SUBMISSION),
        pDmaBuffer=ctypes.addressof(dma),
        DmaBufferSize=4096,
        StartOffset=0,
        EndOffset=end,
    )
    assert driver.WddmsimExecutePagingBuffer(ctypes.byref(services), ctypes.byref(submission)) == 0
    assert writes == [(2, 0x1008, 64), (2, 0x1048, 16)]
    assert bytes(local[0x1008:0x1058]) == bytes.fromhex("0f0fa5a5") * 20
    assert not any(local[:0x1008]) and not any(local[0x1058:])


def test_the_stride_the_drivers_report_is_the_descriptor_s_x64_size() -> None:
    """Regression: both Python drivers reported ``SegmentDescriptorStride = 88``, the size without the 16-byte
    ``CpuHostAperture`` member of the descriptor's union; a reader walking the array by it read every descriptor
    after the first at the wrong place."""
    assert ctypes.sizeof(paging.DXGK_SEGMENTDESCRIPTOR4) == SEGMENTDESCRIPTOR4_SIZE == 96
    for name in ("reference", "simple"):
        package = driver_package(name)
        config = package.configure(
            DriverSettings(model=DriverModel.WDDM2 if name == "reference" else DriverModel.WDDM1)
        )
        adapter = build_adapter(SystemConfig(driver_package=name, driver=config))
        out = DXGK_QUERYSEGMENTOUT4(NbSegment=0)
        query = DXGKARG_QUERYADAPTERINFO(Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4, pOutputData=out)
        adapter.driver.query_adapter_info(query)
        adapter.driver.query_adapter_info(query)
        assert out.SegmentDescriptorStride == SEGMENTDESCRIPTOR4_SIZE, name
