"""The library's own ``DxgkDdiQueryAdapterInfo``, when it exports one: its answers cross-checked (decisions 0134, 0135).

The base package reports the adapter (decision 0110); a library that also answers ``DXGKQAITYPE_GPUMMUCAPS`` and
``DXGKQAITYPE_PAGETABLELEVELDESC`` describes the MMU its ``DxgkDdiBuildPagingBuffer`` was written for.  The two
must agree, member by member: a driver building page-table updates for 3 levels on a 4-level adapter would write
garbage.  A disagreement, or a failure status, refuses the driver with :class:`ConfigurationError` naming the
structure's member, the library's value and the adapter's.  ``DXGKQAITYPE_QUERYSEGMENT4`` is asked too, with the
two-call protocol (decision 0135): its segments and paging-buffer members must agree the same way.  A library that
answers a type ``STATUS_NOT_SUPPORTED`` need not answer it: the adapter's answer stands.  ``DXGKQAITYPE_DRIVERCAPS``
is not asked: the seeds do not give ``DXGK_DRIVERCAPS``'s layout.
"""

from __future__ import annotations

import ctypes
from typing import Final, final

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.caps import (
    DXGK_GPUMMUCAPS,
    DXGK_PAGE_TABLE_LEVEL_DESC,
    DXGK_QUERYADAPTERINFOTYPE,
    DXGK_QUERYPAGETABLELEVELDESCIN,
)
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT4
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.native import paging
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.native.marshal import address_of
from wddmsim.drivers.native.watchdog import Watchdog

QUERY_ADAPTER_INFO: Final = "DxgkDdiQueryAdapterInfo"
QUERY_ADAPTER_INFO_TYPE: Final = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(paging.DXGKARG_QUERYADAPTERINFO)
)
_CAPS_MEMBERS: Final = (
    "PageTableUpdateMode",
    "VirtualAddressBitCount",
    "LeafPageTableSizeFor64KPagesInBytes",
    "PageTableLevelCount",
)
_LEVEL_MEMBERS: Final = (
    "PageTableIndexBitCount",
    "PageTableSegmentId",
    "PagingProcessPageTableSegmentId",
    "PageTableSizeInBytes",
    "PageTableAlignmentInBytes",
)
_SEGMENT_MEMBERS: Final = ("Size", "CommitLimit")
_PAGING_BUFFER_MEMBERS: Final = ("PagingBufferSegmentId", "PagingBufferSize", "PagingBufferPrivateDataSize")
DESCRIPTOR_ROOM: Final = 256
"""Bytes the bridge gives each descriptor of the second ``QUERYSEGMENT4`` call: the stride the driver reports may be
larger than ``sizeof(DXGK_SEGMENTDESCRIPTOR4)`` (a later descriptor version), up to this (decision 0135)."""


@final
class LibraryAdapterInfo:
    """The library's ``DxgkDdiQueryAdapterInfo`` (None-safe: :meth:`of` returns None when it is not exported)."""

    def __init__(self, library: NativeLibrary, function: object, watchdog: Watchdog) -> None:
        self.library = library
        self._function = QUERY_ADAPTER_INFO_TYPE(address_of(function))
        self._watchdog = watchdog

    @classmethod
    def of(cls, library: NativeLibrary, watchdog: Watchdog) -> LibraryAdapterInfo | None:
        function = library.function(QUERY_ADAPTER_INFO)
        return None if function is None else cls(library, function, watchdog)

    def check_caps(self, adapter: DXGK_GPUMMUCAPS) -> None:
        """``DXGKQAITYPE_GPUMMUCAPS``: the library's answer must equal the adapter's."""
        out = paging.DXGK_GPUMMUCAPS()
        if not self._query(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_GPUMMUCAPS, paging.DXGK_QUERYGPUMMUCAPSIN(), out):
            return
        _same("DXGK_GPUMMUCAPS.Flags", int(out.Flags.Value), int(adapter.Flags.Value))
        _same("DXGK_GPUMMUCAPS.LegacyBehaviors", int(out.LegacyBehaviors.Value), int(adapter.LegacyBehaviors.Value))
        for member in _CAPS_MEMBERS:
            _same(f"DXGK_GPUMMUCAPS.{member}", int(getattr(out, member)), int(getattr(adapter, member)))

    def check_level(self, request: DXGK_QUERYPAGETABLELEVELDESCIN, adapter: DXGK_PAGE_TABLE_LEVEL_DESC) -> None:
        """``DXGKQAITYPE_PAGETABLELEVELDESC`` for one level: the library's answer must equal the adapter's."""
        out = paging.DXGK_PAGE_TABLE_LEVEL_DESC()
        query = paging.DXGK_QUERYPAGETABLELEVELDESCIN(
            LevelIndex=request.LevelIndex, PhysicalAdapterIndex=request.PhysicalAdapterIndex
        )
        if not self._query(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_PAGETABLELEVELDESC, query, out):
            return
        for member in _LEVEL_MEMBERS:
            name = f"DXGK_PAGE_TABLE_LEVEL_DESC[{request.LevelIndex}].{member}"
            _same(name, int(getattr(out, member)), int(getattr(adapter, member)))

    def check_segments(self, adapter: DXGK_QUERYSEGMENTOUT4) -> None:
        """``DXGKQAITYPE_QUERYSEGMENT4``, both calls: the count, then every descriptor's ``Flags``, ``BaseAddress``,
        ``Size``, ``CommitLimit`` and the paging-buffer members must equal the adapter's (decision 0135)."""
        descriptors = adapter.pSegmentDescriptor or []
        count = paging.DXGK_QUERYSEGMENTOUT4()
        if not self._query(_QUERYSEGMENT4, paging.DXGK_QUERYSEGMENTIN4(), count):
            return
        if count.NbSegment == 0:
            raise ConfigurationError(
                "DXGK_QUERYSEGMENTOUT4.NbSegment", 0, "the first DXGKQAITYPE_QUERYSEGMENT4 call must report the count"
            )
        _same("DXGK_QUERYSEGMENTOUT4.NbSegment", int(count.NbSegment), len(descriptors))
        out, array = self._query_descriptors(len(descriptors))
        _same("DXGK_QUERYSEGMENTOUT4.NbSegment", int(out.NbSegment), len(descriptors))
        stride = _stride(int(out.SegmentDescriptorStride))
        for index, expected in enumerate(descriptors):
            got = paging.DXGK_SEGMENTDESCRIPTOR4.from_buffer(array, index * stride)
            name = f"DXGK_SEGMENTDESCRIPTOR4[{index}]"
            _same(f"{name}.Flags", int(got.Flags.Value), int(expected.Flags.Value))
            _same(f"{name}.BaseAddress", int(got.BaseAddress.QuadPart), int(expected.BaseAddress))
            for member in _SEGMENT_MEMBERS:
                _same(f"{name}.{member}", int(getattr(got, member)), int(getattr(expected, member)))
        for member in _PAGING_BUFFER_MEMBERS:
            _same(f"DXGK_QUERYSEGMENTOUT4.{member}", int(getattr(out, member)), int(getattr(adapter, member)))

    def _query_descriptors(self, count: int) -> tuple[paging.DXGK_QUERYSEGMENTOUT4, ctypes.Array[ctypes.c_char]]:
        """The second call: ``NbSegment`` descriptors into a zeroed array with room for a larger stride."""
        array = ctypes.create_string_buffer(count * DESCRIPTOR_ROOM)
        out = paging.DXGK_QUERYSEGMENTOUT4(NbSegment=count, pSegmentDescriptor=ctypes.addressof(array))
        self._query(_QUERYSEGMENT4, paging.DXGK_QUERYSEGMENTIN4(), out, array, optional=False)
        return out, array

    def _query(
        self,
        kind: DXGK_QUERYADAPTERINFOTYPE,
        request: ctypes.Structure,
        out: ctypes.Structure,
        *keep: object,
        optional: bool = True,
    ) -> bool:
        """Ask the library; False when it does not answer ``kind`` (``STATUS_NOT_SUPPORTED``, if ``optional``)."""
        args = paging.DXGKARG_QUERYADAPTERINFO(
            Type=int(kind),
            pInputData=ctypes.addressof(request),
            InputDataSize=ctypes.sizeof(request),
            pOutputData=ctypes.addressof(out),
            OutputDataSize=ctypes.sizeof(out),
        )
        function, pointer = self._function, ctypes.byref(args)
        raw = self._watchdog.call_driver(
            QUERY_ADAPTER_INFO, lambda: int(function(None, pointer)), args, request, out, *keep
        )
        raw &= 0xFFFFFFFF
        if optional and raw == NTSTATUS.STATUS_NOT_SUPPORTED:
            return False
        if raw != NTSTATUS.STATUS_SUCCESS:
            shown = NTSTATUS(raw).name if raw in NTSTATUS._value2member_map_ else f"{raw:#010x}"
            raise ConfigurationError(
                QUERY_ADAPTER_INFO, kind.name, f"the library {self.library.path.name} answered {shown}"
            )
        return True


_QUERYSEGMENT4: Final = DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4


def _stride(stride: int) -> int:
    """``SegmentDescriptorStride`` must hold a whole ``DXGK_SEGMENTDESCRIPTOR4`` and fit the room the bridge gave."""
    smallest = ctypes.sizeof(paging.DXGK_SEGMENTDESCRIPTOR4)
    if not smallest <= stride <= DESCRIPTOR_ROOM:
        raise ConfigurationError(
            "DXGK_QUERYSEGMENTOUT4.SegmentDescriptorStride",
            stride,
            f"the library's DxgkDdiQueryAdapterInfo answers {stride}, it must be from sizeof(DXGK_SEGMENTDESCRIPTOR4) "
            f"= {smallest} to {DESCRIPTOR_ROOM}",
        )
    return stride


def _same(member: str, library: int, adapter: int) -> None:
    if library != adapter:
        raise ConfigurationError(
            member,
            library,
            f"the library's DxgkDdiQueryAdapterInfo answers {library:#x}, the adapter (its base and description) "
            f"has {adapter:#x}: they must agree",
        )


__all__ = ["QUERY_ADAPTER_INFO", "LibraryAdapterInfo"]
