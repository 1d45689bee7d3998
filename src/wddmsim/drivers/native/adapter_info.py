"""The library's own ``DxgkDdiQueryAdapterInfo``, when it exports one: its GpuMmu answers cross-checked (decision 0134).

The base package reports the adapter (decision 0110); a library that also answers ``DXGKQAITYPE_GPUMMUCAPS`` and
``DXGKQAITYPE_PAGETABLELEVELDESC`` describes the MMU its ``DxgkDdiBuildPagingBuffer`` was written for.  The two
must agree, member by member: a driver building page-table updates for 3 levels on a 4-level adapter would write
garbage.  A disagreement, or a failure status, refuses the driver with :class:`ConfigurationError` naming the
structure's member, the library's value and the adapter's.  Only the queries whose structures the header declares
are asked (decision 0102): ``DXGKQAITYPE_DRIVERCAPS`` and the segment queries are not.
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
        self._query(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_GPUMMUCAPS, paging.DXGK_QUERYGPUMMUCAPSIN(), out)
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
        self._query(DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_PAGETABLELEVELDESC, query, out)
        for member in _LEVEL_MEMBERS:
            name = f"DXGK_PAGE_TABLE_LEVEL_DESC[{request.LevelIndex}].{member}"
            _same(name, int(getattr(out, member)), int(getattr(adapter, member)))

    def _query(self, kind: DXGK_QUERYADAPTERINFOTYPE, request: ctypes.Structure, out: ctypes.Structure) -> None:
        args = paging.DXGKARG_QUERYADAPTERINFO(
            Type=int(kind),
            pInputData=ctypes.addressof(request),
            InputDataSize=ctypes.sizeof(request),
            pOutputData=ctypes.addressof(out),
            OutputDataSize=ctypes.sizeof(out),
        )
        function, pointer = self._function, ctypes.byref(args)
        raw = self._watchdog.call_driver(QUERY_ADAPTER_INFO, lambda: int(function(None, pointer)), args, request, out)
        raw &= 0xFFFFFFFF
        if raw != NTSTATUS.STATUS_SUCCESS:
            shown = NTSTATUS(raw).name if raw in NTSTATUS._value2member_map_ else f"{raw:#010x}"
            raise ConfigurationError(
                QUERY_ADAPTER_INFO, kind.name, f"the library {self.library.path.name} answered {shown}"
            )


def _same(member: str, library: int, adapter: int) -> None:
    if library != adapter:
        raise ConfigurationError(
            member,
            library,
            f"the library's DxgkDdiQueryAdapterInfo answers {library:#x}, the adapter (its base and description) "
            f"has {adapter:#x}: they must agree",
        )


__all__ = ["QUERY_ADAPTER_INFO", "LibraryAdapterInfo"]
