"""``WDDMSIM_ADAPTER_DESC`` (``wddmsim/adapter.h``): what the bridge tells a native driver about its adapter.

Built from the base driver's own segment report (``DXGKQAITYPE_QUERYSEGMENT4``, the two-call protocol) and the
GPU's address map, and handed to the library's optional ``WddmsimStartDevice`` export before the first
``DxgkDdiBuildPagingBuffer`` (decision 0110).  The block lives as long as the driver, as the header promises.

Version 2 (decision 0122) appends the GpuMmu's shape -- levels, entries per level, dual PTEs, the GPU page ratio and
the 64 KB leaf table's entries -- which a driver needs to build ``DXGK_OPERATION_UPDATE_PAGE_TABLE`` itself; the
version-1 prefix keeps its layout.
"""

from __future__ import annotations

import ctypes
from typing import Final, final

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTIN4, DXGK_QUERYSEGMENTOUT4, DXGK_SEGMENTDESCRIPTOR4
from wddmsim.ddi.status import status_name
from wddmsim.drivers.native.library import START_DEVICE, NativeLibrary
from wddmsim.drivers.native.marshal import address_of, fit
from wddmsim.drivers.native.watchdog import Watchdog
from wddmsim.drivers.package import DriverModel, SimulatedDriver
from wddmsim.hw.gpu import Gpu
from wddmsim.hw.mmu import MmuLayout

VERSION: Final = 2
MAX_PAGE_TABLE_LEVELS: Final = 6
SEGMENT_APERTURE: Final = 0x1
SEGMENT_CPU_VISIBLE: Final = 0x2


class WDDMSIM_SEGMENT_DESC(ctypes.Structure):
    _fields_ = (
        ("SegmentId", ctypes.c_uint32),
        ("Flags", ctypes.c_uint32),
        ("BaseAddress", ctypes.c_uint64),
        ("Size", ctypes.c_uint64),
    )


class WDDMSIM_ADAPTER_DESC(ctypes.Structure):
    _fields_ = (
        ("Version", ctypes.c_uint32),
        ("Size", ctypes.c_uint32),
        ("DriverModel", ctypes.c_uint32),
        ("SegmentCount", ctypes.c_uint32),
        ("Segments", ctypes.POINTER(WDDMSIM_SEGMENT_DESC)),
        ("LocalMemory", ctypes.c_void_p),
        ("LocalMemorySize", ctypes.c_uint64),
        ("ApertureBase", ctypes.c_uint64),
        ("ApertureSize", ctypes.c_uint64),
        ("ApertureTableAddress", ctypes.c_uint64),
        ("SystemMemorySize", ctypes.c_uint64),
        # Version 2: the GpuMmu's shape (zero in the segment model).
        ("PageTableLevels", ctypes.c_uint32),
        ("DualPte", ctypes.c_uint32),
        ("GpuPageRatio", ctypes.c_uint32),
        ("Leaf64KEntries", ctypes.c_uint32),
        ("EntriesPerLevel", ctypes.c_uint32 * MAX_PAGE_TABLE_LEVELS),
    )


def describe_mmu(desc: WDDMSIM_ADAPTER_DESC, layout: MmuLayout) -> None:
    """The version-2 members: the MMU's shape as ``DXGKQAITYPE_GPUMMUCAPS`` / ``DXGKQAITYPE_PAGETABLELEVELDESC``
    report it (levels, entries per level with the leaf counted in 4 KiB entries), plus what the hardware PTE
    format needs (dual PTEs, the GPU page ratio, the 64 KB leaf table).  ``MmuLayout`` has at most
    :data:`MAX_PAGE_TABLE_LEVELS` levels."""
    desc.PageTableLevels = _u32(layout.levels, "PageTableLevels")
    desc.DualPte = int(layout.dual_pte)
    desc.GpuPageRatio = _u32(layout.gpu_page_ratio, "GpuPageRatio")
    desc.Leaf64KEntries = _u32(layout.leaf64_entries, "Leaf64KEntries")
    for level in range(layout.levels):
        desc.EntriesPerLevel[level] = _u32(layout.entries(level), f"EntriesPerLevel[{level}]")


def _u32(value: int, member: str) -> int:
    return fit(value, f"WDDMSIM_ADAPTER_DESC.{member}", 0, _M32, "a 32-bit UINT32")


def _u64(value: int, path: str) -> int:
    return fit(value, path, 0, _M64, "a 64-bit UINT64")


_M32: Final = (1 << 32) - 1
_M64: Final = (1 << 64) - 1


START_DEVICE_TYPE: Final = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(WDDMSIM_ADAPTER_DESC))


def segment_descriptors(driver: SimulatedDriver) -> list[DXGK_SEGMENTDESCRIPTOR4]:
    """The base driver's segments, asked the documented way (first the count, then the descriptors)."""
    kind = DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4
    count = DXGK_QUERYSEGMENTOUT4()
    driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=kind, pInputData=DXGK_QUERYSEGMENTIN4(), pOutputData=count))
    out = DXGK_QUERYSEGMENTOUT4(NbSegment=count.NbSegment)
    driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=kind, pInputData=DXGK_QUERYSEGMENTIN4(), pOutputData=out))
    return list(out.pSegmentDescriptor or ())


def segment_desc(index: int, descriptor: DXGK_SEGMENTDESCRIPTOR4) -> WDDMSIM_SEGMENT_DESC:
    """The library's description of the base driver's segment ``index + 1``; an address or size past 64 bits (or
    negative) is refused by name, not wrapped."""
    d, name = descriptor, f"WDDMSIM_SEGMENT_DESC[{index}]"
    flags = (SEGMENT_APERTURE if d.Flags.Aperture else 0) | (SEGMENT_CPU_VISIBLE if d.Flags.CpuVisible else 0)
    address, size = _u64(d.BaseAddress, f"{name}.BaseAddress"), _u64(d.Size, f"{name}.Size")
    return WDDMSIM_SEGMENT_DESC(index + 1, flags, address, size)


@final
class AdapterDescBlock:
    """The C block and the segment array it points at, kept alive with the driver."""

    __slots__ = ("desc", "model", "segments")

    def __init__(self, gpu: Gpu, base: SimulatedDriver, model: DriverModel) -> None:
        descriptors = segment_descriptors(base)
        self.segments = (WDDMSIM_SEGMENT_DESC * max(len(descriptors), 1))()
        for i, d in enumerate(descriptors):
            self.segments[i] = segment_desc(i, d)
        self.model = 2 if model is DriverModel.WDDM2 else 1
        self.desc = WDDMSIM_ADAPTER_DESC(
            Version=VERSION,
            Size=ctypes.sizeof(WDDMSIM_ADAPTER_DESC),
            DriverModel=self.model,
            SegmentCount=len(descriptors),
            Segments=ctypes.cast(self.segments, ctypes.POINTER(WDDMSIM_SEGMENT_DESC)),
            LocalMemory=gpu.local.data.ctypes.data,
            LocalMemorySize=_u64(gpu.local.size, "WDDMSIM_ADAPTER_DESC.LocalMemorySize"),
            ApertureBase=_u64(gpu.aperture.base, "WDDMSIM_ADAPTER_DESC.ApertureBase"),
            ApertureSize=_u64(gpu.aperture.size, "WDDMSIM_ADAPTER_DESC.ApertureSize"),
            ApertureTableAddress=_u64(gpu.aperture.table_offset, "WDDMSIM_ADAPTER_DESC.ApertureTableAddress"),
            SystemMemorySize=_u64(gpu.system.size, "WDDMSIM_ADAPTER_DESC.SystemMemorySize"),
        )
        if self.model == 2:
            describe_mmu(self.desc, gpu.mmu.layout)

    def start(self, library: NativeLibrary, watchdog: Watchdog) -> None:
        """Call ``WddmsimStartDevice`` if the library exports it, bounded as every driver entry point is
        (``call_timeout``, decision 0132); a failure status refuses the driver, named."""
        function = library.function(START_DEVICE)
        if function is None:
            return
        start, desc = START_DEVICE_TYPE(address_of(function)), ctypes.byref(self.desc)
        status = watchdog.call_driver(START_DEVICE, lambda: int(start(None, desc)), self.desc) & 0xFFFFFFFF
        if status >> 30 == 3:  # NT_ERROR: severity bits 11
            raise ConfigurationError("driver", str(library.path), f"{START_DEVICE} failed with {status_name(status)}")


__all__ = [
    "WDDMSIM_ADAPTER_DESC",
    "WDDMSIM_SEGMENT_DESC",
    "AdapterDescBlock",
    "describe_mmu",
    "segment_desc",
    "segment_descriptors",
]
