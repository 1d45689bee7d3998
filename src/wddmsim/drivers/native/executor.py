"""The ctypes mirror of the executor ABI (issue 21 item 3; decision 0103): the GPU services a driver's own
paging-buffer executor receives, and the description of one submitted paging buffer.

Addresses are given in the form the DDI hands the driver for that kind of memory: local memory by the segment
address VidMm passes in ``Transfer``/``Fill`` (``SegmentOffset + BaseAddress``), system memory by physical address
(PFN << 12), page tables and roots by ``(SegmentId, SegmentOffset)`` as in ``D3DGPU_PHYSICAL_ADDRESS``.
"""

from __future__ import annotations

from ctypes import CFUNCTYPE, POINTER, Structure
from typing import Final

from wddmsim.drivers.native.kernel import (
    D3DGPU_VIRTUAL_ADDRESS,
    NTSTATUS,
    PFN_NUMBER,
    PFN_WDDMSIM_LOG,
    PVOID,
    SIZE_T,
    UINT,
    UINT64,
    ULONG,
)
from wddmsim.drivers.native.paging import DXGK_PTE

WDDMSIM_GPU_SERVICES_VERSION: Final = 1
WDDMSIM_PAGING_SUBMISSION_VERSION: Final = 1
EXECUTOR_ENTRY: Final = "WddmsimExecutePagingBuffer"
"""The default name of the executor entry a library exports (decision 0103)."""

PFN_WDDMSIM_READ_LOCAL = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, PVOID, SIZE_T)
PFN_WDDMSIM_WRITE_LOCAL = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, PVOID, SIZE_T)
PFN_WDDMSIM_READ_SYSTEM = CFUNCTYPE(NTSTATUS, PVOID, UINT64, PVOID, SIZE_T)
PFN_WDDMSIM_WRITE_SYSTEM = CFUNCTYPE(NTSTATUS, PVOID, UINT64, PVOID, SIZE_T)
PFN_WDDMSIM_SET_APERTURE_PAGE = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, PFN_NUMBER, UINT)
PFN_WDDMSIM_CLEAR_APERTURE_PAGE = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64)
PFN_WDDMSIM_SIGNAL_FENCE_VIRTUAL = CFUNCTYPE(NTSTATUS, PVOID, D3DGPU_VIRTUAL_ADDRESS, UINT64)
PFN_WDDMSIM_SIGNAL_FENCE_PHYSICAL = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, UINT64)
PFN_WDDMSIM_READ_PAGE_TABLE = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, UINT, UINT, POINTER(DXGK_PTE))
PFN_WDDMSIM_WRITE_PAGE_TABLE = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, UINT, UINT, POINTER(DXGK_PTE))
PFN_WDDMSIM_FLUSH_TLB = CFUNCTYPE(NTSTATUS, PVOID, UINT, UINT64, D3DGPU_VIRTUAL_ADDRESS, D3DGPU_VIRTUAL_ADDRESS)


class WDDMSIM_GPU_SERVICES(Structure):
    """``WDDMSIM_GPU_SERVICES``: the simulated GPU's memories, aperture, fences and MMU, for a C executor."""

    _fields_ = [
        ("Version", ULONG),
        ("Size", ULONG),
        ("Context", PVOID),
        ("LocalMemoryBase", PVOID),
        ("LocalMemorySize", UINT64),
        ("ReadLocal", PFN_WDDMSIM_READ_LOCAL),
        ("WriteLocal", PFN_WDDMSIM_WRITE_LOCAL),
        ("ReadSystem", PFN_WDDMSIM_READ_SYSTEM),
        ("WriteSystem", PFN_WDDMSIM_WRITE_SYSTEM),
        ("SetAperturePage", PFN_WDDMSIM_SET_APERTURE_PAGE),
        ("ClearAperturePage", PFN_WDDMSIM_CLEAR_APERTURE_PAGE),
        ("SignalFenceVirtual", PFN_WDDMSIM_SIGNAL_FENCE_VIRTUAL),
        ("SignalFencePhysical", PFN_WDDMSIM_SIGNAL_FENCE_PHYSICAL),
        ("ReadPageTable", PFN_WDDMSIM_READ_PAGE_TABLE),
        ("WritePageTable", PFN_WDDMSIM_WRITE_PAGE_TABLE),
        ("FlushTlb", PFN_WDDMSIM_FLUSH_TLB),
        ("Log", PFN_WDDMSIM_LOG),
    ]


class WDDMSIM_PAGING_SUBMISSION(Structure):
    """``WDDMSIM_PAGING_SUBMISSION``: the range ``[StartOffset, EndOffset)`` of the paging buffer at ``pDmaBuffer``."""

    _fields_ = [
        ("Version", ULONG),
        ("Size", ULONG),
        ("pDmaBuffer", PVOID),
        ("DmaBufferSize", UINT),
        ("StartOffset", UINT),
        ("EndOffset", UINT),
        ("DmaBufferPrivateDataSize", UINT),
        ("pDmaBufferPrivateData", PVOID),
        ("SubmissionFenceId", UINT64),
        ("DmaBufferGpuVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    ]


PFN_WDDMSIM_EXECUTE_PAGING_BUFFER = CFUNCTYPE(
    NTSTATUS, POINTER(WDDMSIM_GPU_SERVICES), POINTER(WDDMSIM_PAGING_SUBMISSION)
)
"""``NTSTATUS WddmsimExecutePagingBuffer(const WDDMSIM_GPU_SERVICES*, const WDDMSIM_PAGING_SUBMISSION*)``."""
