"""The ctypes mirror of ``wddmsim/ddk.h``'s kernel part: LLP64 base types, ``LARGE_INTEGER``, ``MDL`` (the WDK's x64
layout, 48 bytes, PFN array after the header) and the kernel-services table the bridge hands a loaded driver.

Every class keeps the C name; anonymous C unions are ctypes ``_anonymous_`` members, so ``mdl.ByteCount`` and
``address.QuadPart`` read as in C.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_char_p,
    c_int16,
    c_int32,
    c_int64,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Final

from wddmsim.ddi.status import NTSTATUS as NTSTATUS_CODES

# LLP64: ULONG/UINT/LONG are 32-bit; pointers, HANDLE, SIZE_T, ULONG_PTR are 64-bit.
PVOID = c_void_p
UINT = c_uint32
ULONG = c_uint32
LONG = c_int32
CSHORT = c_int16
LONGLONG = c_int64
ULONGLONG = c_uint64
UINT64 = c_uint64
SIZE_T = c_uint64
ULONG_PTR = c_uint64
PFN_NUMBER = c_uint64
DXGK_PAGE_NUMBER = c_uint64
HANDLE = PVOID
NTSTATUS = c_int32
D3DGPU_VIRTUAL_ADDRESS = c_uint64
D3DGPU_SIZE_T = c_uint64
ENUM = c_uint32
"""A C enumeration whose values are all non-negative: 32 bits on both ABIs."""

PAGE_SIZE: Final = 0x1000
PAGE_SHIFT: Final = 12


def ntstatus(value: int) -> int:
    """The unsigned 32-bit code (as :class:`wddmsim.ddi.status.NTSTATUS` spells it) of a C ``NTSTATUS`` value."""
    return value & 0xFFFFFFFF


def NT_SUCCESS(status: int) -> bool:
    """``NT_SUCCESS``: the top bit of the 32-bit code is clear."""
    return not ntstatus(status) & 0x80000000


class _LARGE_INTEGER_PARTS(Structure):
    _fields_ = [("LowPart", ULONG), ("HighPart", LONG)]


class LARGE_INTEGER(Union):
    """``LARGE_INTEGER``: ``QuadPart``, or ``LowPart``/``HighPart`` (also as ``u.LowPart``/``u.HighPart``)."""

    _anonymous_ = ("_parts",)
    _fields_ = [("_parts", _LARGE_INTEGER_PARTS), ("u", _LARGE_INTEGER_PARTS), ("QuadPart", LONGLONG)]


PHYSICAL_ADDRESS = LARGE_INTEGER


class D3DGPU_PHYSICAL_ADDRESS(Structure):
    """``D3DGPU_PHYSICAL_ADDRESS { UINT SegmentId; UINT Padding; UINT64 SegmentOffset; }`` (16 bytes)."""

    _fields_ = [("SegmentId", UINT), ("Padding", UINT), ("SegmentOffset", UINT64)]


class MDL(Structure):
    """``MDL`` (WDM, x64): 48 bytes; the PFN array (``MmGetMdlPfnArray``) follows the header in memory."""


MDL._fields_ = [
    ("Next", POINTER(MDL)),
    ("Size", CSHORT),
    ("MdlFlags", CSHORT),
    ("Process", PVOID),
    ("MappedSystemVa", PVOID),
    ("StartVa", PVOID),
    ("ByteCount", ULONG),
    ("ByteOffset", ULONG),
]
PMDL = POINTER(MDL)

MDL_FLAGS: Final = {
    "MDL_MAPPED_TO_SYSTEM_VA": 0x0001,
    "MDL_PAGES_LOCKED": 0x0002,
    "MDL_SOURCE_IS_NONPAGED_POOL": 0x0004,
    "MDL_ALLOCATED_FIXED_SIZE": 0x0008,
    "MDL_PARTIAL": 0x0010,
    "MDL_PARTIAL_HAS_BEEN_MAPPED": 0x0020,
    "MDL_IO_PAGE_READ": 0x0040,
    "MDL_WRITE_OPERATION": 0x0080,
    "MDL_LOCKED_PAGE_TABLES": 0x0100,
    "MDL_FREE_EXTRA_PTES": 0x0200,
    "MDL_DESCRIBES_AWE": 0x0400,
    "MDL_IO_SPACE": 0x0800,
    "MDL_NETWORK_HEADER": 0x1000,
    "MDL_MAPPING_CAN_FAIL": 0x2000,
    "MDL_PAGE_CONTENTS_INVARIANT": 0x4000,
    "MDL_INTERNAL": 0x8000,
}
"""``MdlFlags`` bits (wdm.h values)."""
MDL_MAPPED_TO_SYSTEM_VA: Final = MDL_FLAGS["MDL_MAPPED_TO_SYSTEM_VA"]
MDL_PAGES_LOCKED: Final = MDL_FLAGS["MDL_PAGES_LOCKED"]
MDL_SOURCE_IS_NONPAGED_POOL: Final = MDL_FLAGS["MDL_SOURCE_IS_NONPAGED_POOL"]


def mdl_size(page_count: int) -> int:
    """``MDL.Size`` of an MDL with ``page_count`` PFNs: the header plus the array."""
    return ctypes.sizeof(MDL) + page_count * ctypes.sizeof(PFN_NUMBER)


def MmGetMdlPfnArray(mdl: MDL, page_count: int) -> ctypes.Array[c_uint64]:
    """``MmGetMdlPfnArray``: the ``page_count`` PFNs right after ``mdl``'s header (a view, not a copy).

    ``mdl`` must live in a buffer of at least :func:`mdl_size` bytes (see :func:`new_mdl`).
    """
    return (PFN_NUMBER * page_count).from_address(ctypes.addressof(mdl) + ctypes.sizeof(MDL))


def new_mdl(pfns: list[int], byte_count: int, byte_offset: int = 0) -> tuple[ctypes.Array[ctypes.c_char], MDL]:
    """A buffer holding an MDL header and its PFN array, and the header over it (keep the buffer alive).

    ``StartVa`` is 0, ``MdlFlags`` is ``MDL_PAGES_LOCKED`` (no system view yet: the bridge sets
    ``MappedSystemVa`` with ``MDL_MAPPED_TO_SYSTEM_VA`` when it maps one).
    """
    storage = ctypes.create_string_buffer(mdl_size(len(pfns)))
    mdl = MDL.from_buffer(storage)
    mdl.Size = mdl_size(len(pfns))
    mdl.MdlFlags = MDL_PAGES_LOCKED
    mdl.ByteCount = byte_count
    mdl.ByteOffset = byte_offset
    array = MmGetMdlPfnArray(mdl, len(pfns))
    for i, pfn in enumerate(pfns):
        array[i] = pfn
    return storage, mdl


# Kernel services (decision 0101): the table a loaded driver reaches through WddmsimKernelServices.
WDDMSIM_KERNEL_SERVICES_VERSION: Final = 1
PFN_WDDMSIM_MAP_LOCKED_PAGES = CFUNCTYPE(PVOID, PVOID, PMDL, ULONG, ULONG, PVOID, ULONG, ULONG)
PFN_WDDMSIM_UNMAP_LOCKED_PAGES = CFUNCTYPE(None, PVOID, PVOID, PMDL)
PFN_WDDMSIM_LOG = CFUNCTYPE(None, PVOID, ULONG, c_char_p)
PFN_WDDMSIM_BUGCHECK = CFUNCTYPE(None, PVOID, ULONG, ULONG_PTR, ULONG_PTR, ULONG_PTR, ULONG_PTR)


class WDDMSIM_KERNEL_SERVICES(Structure):
    """``WDDMSIM_KERNEL_SERVICES``: what ``MmMapLockedPagesSpecifyCache``, ``MmUnmapLockedPages``, ``DbgPrint``
    and ``KeBugCheckEx`` call in a driver built with ``wddmsim/ddk.h``."""

    _fields_ = [
        ("Version", ULONG),
        ("Size", ULONG),
        ("Context", PVOID),
        ("MapLockedPagesSpecifyCache", PFN_WDDMSIM_MAP_LOCKED_PAGES),
        ("UnmapLockedPages", PFN_WDDMSIM_UNMAP_LOCKED_PAGES),
        ("Log", PFN_WDDMSIM_LOG),
        ("BugCheck", PFN_WDDMSIM_BUGCHECK),
    ]


NTSTATUS_VALUES: Final = {status.name: int(status) for status in NTSTATUS_CODES}
"""The NTSTATUS codes the header defines (``wddmsim.ddi.status.NTSTATUS``, unsigned)."""
