"""The ABI of ``wddmsim/ddk.h`` in one place: every ctypes structure of the mirror, and its layout as a table.

:data:`ABI_STRUCTS` lists the structures in header order; :func:`layout` gives each one's size and, for every
member reachable by a C member-designator (``Transfer.Source.pMdl``; anonymous unions elided as in C), its offset
and size.  The layout test compiles a C and a C++ program generated from this table and compares every number;
the header's ``_Static_assert`` block and the ABI table in ``docs/bring-your-own-driver.md`` are rendered from it
(:mod:`wddmsim.drivers.native.render`).  :data:`BIT_FIELDS` pairs each C bit-field word with the
:mod:`wddmsim.ddi` class that declares its bits, so the test checks positions against the DDI's own.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

from wddmsim.core.bits import BitUnion
from wddmsim.ddi.caps import DXGK_GPUMMUCAPS_FLAGS, DXGK_GPUMMUCAPS_LEGACYBEHAVIORS, DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.flags import (
    DXGK_DISCARDCONTENTFLAGS as DDI_DISCARDCONTENTFLAGS,
)
from wddmsim.ddi.flags import (
    DXGK_MAPAPERTUREFLAGS as DDI_MAPAPERTUREFLAGS,
)
from wddmsim.ddi.flags import (
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
)
from wddmsim.ddi.flags import (
    DXGK_TRANSFERFLAGS as DDI_TRANSFERFLAGS,
)
from wddmsim.ddi.flags import (
    DXGK_TRANSFERVIRTUALFLAGS as DDI_TRANSFERVIRTUALFLAGS,
)
from wddmsim.ddi.flags import (
    DXGK_UPDATEPAGETABLEFLAGS as DDI_UPDATEPAGETABLEFLAGS,
)
from wddmsim.ddi.memory import DXGK_ADL_FLAGS as DDI_ADL_FLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_OPERATION
from wddmsim.ddi.pte import DXGK_PTE as DDI_PTE
from wddmsim.ddi.pte import DXGK_PTE_PAGE_SIZE
from wddmsim.ddi.segments import DXGK_SEGMENTFLAGS as DDI_SEGMENTFLAGS
from wddmsim.drivers.native import executor, kernel, paging
from wddmsim.drivers.native.executor import *  # noqa: F403 - the mirror's one import surface
from wddmsim.drivers.native.kernel import *  # noqa: F403
from wddmsim.drivers.native.paging import *  # noqa: F403

CType = type[ctypes.Structure] | type[ctypes.Union]

ABI_STRUCTS: Final[tuple[CType, ...]] = (
    kernel.LARGE_INTEGER,
    kernel.D3DGPU_PHYSICAL_ADDRESS,
    kernel.MDL,
    kernel.WDDMSIM_KERNEL_SERVICES,
    paging.DXGK_TRANSFERFLAGS,
    paging.DXGK_DISCARDCONTENTFLAGS,
    paging.DXGK_MAPAPERTUREFLAGS,
    paging.DXGK_TRANSFERVIRTUALFLAGS,
    paging.DXGK_UPDATEPAGETABLEFLAGS,
    paging.DXGK_ADL_FLAGS,
    paging.DXGK_PTE,
    paging.DXGK_ADL,
    paging.DXGK_TRANSFER_LOCATION,
    paging.DXGK_FILL_DESTINATION,
    paging.DXGK_INITCONTEXTRESOURCE_DESTINATION,
    paging.DXGK_BUILDPAGINGBUFFER_TRANSFER,
    paging.DXGK_BUILDPAGINGBUFFER_FILL,
    paging.DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    paging.DXGK_BUILDPAGINGBUFFER_READPHYSICAL,
    paging.DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL,
    paging.DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT,
    paging.DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT,
    paging.DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    paging.DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE,
    paging.DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL,
    paging.DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL,
    paging.DXGK_PAGETABLEUPDATEADDRESS,
    paging.DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    paging.DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    paging.DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION,
    paging.DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    paging.DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES,
    paging.DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY,
    paging.DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    paging.DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2,
    paging.DXGK_BUILDPAGINGBUFFER_RESERVED,
    paging.DXGKARG_BUILDPAGINGBUFFER,
    paging.DXGK_QUERYADAPTERINFOFLAGS,
    paging.DXGKARG_QUERYADAPTERINFO,
    paging.DXGK_QUERYGPUMMUCAPSIN,
    paging.DXGK_GPUMMUCAPS,
    paging.DXGK_QUERYPAGETABLELEVELDESCIN,
    paging.DXGK_PAGE_TABLE_LEVEL_DESC,
    paging.DXGK_SEGMENTFLAGS,
    paging.DXGK_CPUHOSTAPERTURE,
    paging.DXGK_SEGMENTDESCRIPTOR4,
    paging.DXGK_QUERYSEGMENTIN4,
    paging.DXGK_QUERYSEGMENTOUT4,
    executor.WDDMSIM_GPU_SERVICES,
    executor.WDDMSIM_PAGING_SUBMISSION,
)
"""Every structure the header declares, in header order (the C names; the mirror's classes)."""


@dataclass(frozen=True, slots=True)
class AbiField:
    """One member: its C member-designator from the structure, its offset and its size in bytes."""

    path: str
    offset: int
    size: int

    @property
    def direct(self) -> bool:
        """A member of the structure itself (anonymous unions elided), not of a nested structure."""
        return "." not in self.path


@dataclass(frozen=True, slots=True)
class AbiStruct:
    name: str
    size: int
    fields: tuple[AbiField, ...]

    def offset(self, path: str) -> int:
        """The offset of member ``path`` (``"Transfer.Source.pMdl"``); ``KeyError`` if there is none."""
        for f in self.fields:
            if f.path == path:
                return f.offset
        raise KeyError(f"{self.name} has no member {path!r}")


def _is_aggregate(ctype: Any) -> bool:
    return isinstance(ctype, type) and issubclass(ctype, ctypes.Structure | ctypes.Union)


def _members(cls: Any, prefix: str, base: int) -> Iterator[AbiField]:
    """The members of ``cls`` at ``base``; bit-fields have no offset in C and are checked by :data:`BIT_FIELDS`."""
    anonymous = set(getattr(cls, "_anonymous_", ()))
    for spec in cls._fields_:
        name, ctype = spec[0], spec[1]
        if len(spec) == 3:
            continue
        offset = base + getattr(cls, name).offset
        if name in anonymous:
            yield from _members(ctype, prefix, offset)
            continue
        path = prefix + name
        yield AbiField(path, offset, ctypes.sizeof(ctype))
        if _is_aggregate(ctype):
            yield from _members(ctype, path + ".", offset)


def describe(cls: CType) -> AbiStruct:
    """The layout of one mirror structure."""
    return AbiStruct(cls.__name__, ctypes.sizeof(cls), tuple(_members(cls, "", 0)))


def layout() -> tuple[AbiStruct, ...]:
    """The layout of every structure of :data:`ABI_STRUCTS`."""
    return tuple(describe(cls) for cls in ABI_STRUCTS)


def layout_table() -> dict[str, tuple[int, dict[str, int]]]:
    """``{structure: (size, {member-designator: offset})}``, e.g. ``["MDL"][1]["ByteCount"] == 40``."""
    return {s.name: (s.size, {f.path: f.offset for f in s.fields}) for s in layout()}


@dataclass(frozen=True, slots=True)
class BitFieldWord:
    """A C bit-field word: in structure ``struct``, the bit-fields at ``prefix`` + name, declared by ``ddi``."""

    struct: CType
    prefix: str
    ddi: type[BitUnion]
    word_bytes: int
    word_offset: int = 0


BIT_FIELDS: Final[tuple[BitFieldWord, ...]] = (
    BitFieldWord(paging.DXGK_TRANSFERFLAGS, "", DDI_TRANSFERFLAGS, 4),
    BitFieldWord(paging.DXGK_DISCARDCONTENTFLAGS, "", DDI_DISCARDCONTENTFLAGS, 4),
    BitFieldWord(paging.DXGK_MAPAPERTUREFLAGS, "", DDI_MAPAPERTUREFLAGS, 4),
    BitFieldWord(paging.DXGK_TRANSFERVIRTUALFLAGS, "", DDI_TRANSFERVIRTUALFLAGS, 4),
    BitFieldWord(paging.DXGK_UPDATEPAGETABLEFLAGS, "", DDI_UPDATEPAGETABLEFLAGS, 4),
    BitFieldWord(paging.DXGK_ADL_FLAGS, "", DDI_ADL_FLAGS, 4),
    BitFieldWord(paging.DXGK_PTE, "", DDI_PTE, 8),
    BitFieldWord(paging.DXGK_GPUMMUCAPS, "Flags.", DXGK_GPUMMUCAPS_FLAGS, 4),
    BitFieldWord(paging.DXGK_GPUMMUCAPS, "LegacyBehaviors.", DXGK_GPUMMUCAPS_LEGACYBEHAVIORS, 4, 20),
    BitFieldWord(paging.DXGK_SEGMENTFLAGS, "", DDI_SEGMENTFLAGS, 4),
)
"""Each bit-field word of the header with the :mod:`wddmsim.ddi` class whose bit positions it must have."""

ENUMS: Final[tuple[type[IntEnum], ...]] = (
    DXGK_BUILDPAGINGBUFFER_OPERATION,
    DXGK_MEMORY_TRANSFER_DIRECTION,
    DXGK_PAGETABLEUPDATEMODE,
    DXGK_PTE_PAGE_SIZE,
    DXGK_QUERYADAPTERINFOTYPE,
)
"""The enumerations the header declares; their C constants carry the :mod:`wddmsim.ddi` names and values."""


def c_constant(enum_type: type[IntEnum], member: IntEnum) -> str:
    """The header's spelling of an enumeration constant (``DXGK_MEMORY_TRANSFER_DIRECTION`` prefixes its type)."""
    if enum_type is DXGK_MEMORY_TRANSFER_DIRECTION:
        return f"DXGK_MEMORY_TRANSFER_DIRECTION_{member.name}"
    return member.name


def constants() -> dict[str, int]:
    """Every constant of the header the test checks by value: enumerations, NTSTATUS codes, MDL flags."""
    table = {c_constant(e, m): int(m) for e in ENUMS for m in e}
    table.update(kernel.NTSTATUS_VALUES)
    table.update(kernel.MDL_FLAGS)
    return table
