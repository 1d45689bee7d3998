"""Compiled writers of ``DXGKARG_BUILDPAGINGBUFFER``: the fast path of :mod:`wddmsim.drivers.native.marshal`.

The general walk goes member by member through ctypes and reads each number back to see that it fit: most of
what a C driver's small call cost.  A payload's *shape* -- its type and the types of its leaf values
(``Destination.pMdl`` is an MDL or None) -- rarely varies, so one function is generated per shape, once: it reads
every leaf, checks each number against its C member's range by arithmetic, and writes the whole 320-byte block
(header, payload and the zeros between) with one ``struct.pack_into``.  Each writer also checks that the values
are of its own shape (returning None if not), so a caller may try a payload type's writers in turn without
looking the shape up; the form :func:`shape_of` hands out reads the leaves itself (decision 0249).

The fast path only ever *declines*.  What it does not model (a bit-field member, an array of structures, the
unmodelled operations' ``Reserved`` words, a value of an unexpected type) gets no writer, and a value out of range raises
:class:`Declined`; the caller then runs the general walk, which writes the same bytes or raises its named error.
A test holds the two paths to the same bytes for every payload kind, with edge values that fit and that do not
(decision 0216).
"""

from __future__ import annotations

import ctypes
import dataclasses
import struct
from collections.abc import Callable
from enum import Enum
from operator import attrgetter
from typing import Any, Final

import numpy as np

from wddmsim.core.bits import BitUnion
from wddmsim.core.pointer import CpuPointer
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.drivers.native import kernel, paging

_ARG: Final = paging.DXGKARG_BUILDPAGINGBUFFER
_M64: Final = (1 << 64) - 1
_M32: Final = (1 << 32) - 1
_FORMATS: Final = {1: "B", 2: "H", 4: "I", 8: "Q"}
_SIGNED: Final = frozenset("bhilq")
_INTEGERS: Final = frozenset("bBhHiIlLqQP")
_VALUE: Final = BitUnion.__dict__["Value"]
"""``BitUnion.Value``: a union class that still has it gets its word computed inline (:func:`_word`)."""

Writer = Callable[..., int | None]
"""``write(c, args, values, image, host, keep)``: one shape's generated writer.  It returns the host address it
wrote for ``pDmaBuffer`` (0 for NULL), or None -- writing nothing -- when a value's type is not its shape's."""
Direct = Callable[..., int | None]
"""``direct(c, args, image, host, keep)``: the same writer reading the payload's leaves itself."""


class Declined(Exception):
    """The fast path does not write this call (a value it does not check itself): the general walk does."""


# --- how a Python value crosses into C (shared with the general walk) --------------------------------------------

_KINDS: dict[type, str] = {}
"""Python type -> how its values cross into C (worked out once per type)."""


def value_kind(value: object) -> str:
    """``flags``, ``mdl``, ``pointer``, ``array``, ``structs``, ``bytes``, ``nested``, ``number`` or ``unknown``."""
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, BitUnion):
        kind = "flags"
    elif isinstance(value, MDL):
        kind = "mdl"
    elif isinstance(value, CpuPointer):
        kind = "pointer"
    elif isinstance(value, np.ndarray):
        kind = "array"
    elif isinstance(value, tuple):
        kind = "structs"
    elif isinstance(value, bytes):
        kind = "bytes"
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = "nested"
    elif isinstance(value, int | Enum | np.integer | np.bool_):  # a numpy integer or bool (from an array) too
        kind = "number"
    else:
        return "unknown"
    _KINDS[type(value)] = kind
    return kind


MEMBERS: Final[dict[type, str]] = {}
"""Payload type -> the union member of ``DXGKARG_BUILDPAGINGBUFFER`` it fills (read off the Python class)."""
for _name in dir(DXGKARG_BUILDPAGINGBUFFER):
    _member = getattr(DXGKARG_BUILDPAGINGBUFFER, _name, None)
    _kind = getattr(_member, "kind", None)
    if isinstance(_kind, type) and dataclasses.is_dataclass(_kind) and hasattr(_ARG, _name):
        MEMBERS[_kind] = _name


# --- the C side: where each member sits ------------------------------------------------------------------------


def layout(ctype: Any) -> dict[str, tuple[int, Any, bool]]:
    """Name -> (byte offset, C type, is a bit-field) of every member reachable by name (anonymous ones flattened,
    as C reads them)."""
    out: dict[str, tuple[int, Any, bool]] = {}
    anonymous = set(getattr(ctype, "_anonymous_", ()))
    for entry in getattr(ctype, "_fields_", ()):
        name, member = entry[0], entry[1]
        offset = getattr(ctype, name).offset
        if name in anonymous:
            out.update({k: (offset + o, t, b) for k, (o, t, b) in layout(member).items()})
        else:
            out[name] = (offset, member, len(entry) > 2)
    return out


def integer_limits(ctype: Any) -> tuple[int, int, int] | None:
    """(bytes, lowest, highest) of a plain C integer or pointer-sized member; None for anything else."""
    code = getattr(ctype, "_type_", None)
    if not isinstance(code, str) or code not in _INTEGERS:
        return None
    size = ctypes.sizeof(ctype)
    if code in _SIGNED:
        return size, -(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1
    return size, 0, (1 << (8 * size)) - 1


def _bit_word(ctype: Any) -> int | None:
    """The width of a plain bit-field struct that is one little-endian word, LSB first (what the general walk's
    bit-by-bit write amounts to); None when it is not one.  Probed on the type itself, not assumed."""
    fields = getattr(ctype, "_fields_", ())
    size = ctypes.sizeof(ctype)
    if not fields or any(len(f) != 3 for f in fields) or size not in _FORMATS:
        return None
    width = int(sum(f[2] for f in fields))
    if width != 8 * size:
        return None
    for probe in (0x5A5A5A5A5A5A5A5A, 0xA5A5A5A5A5A5A5A5, _M64, 1, 1 << (width - 1)):
        probe &= (1 << width) - 1
        instance, shift = ctype(), 0
        for name, _, bits in fields:
            setattr(instance, name, (probe >> shift) & ((1 << bits) - 1))
            shift += bits
        if bytes(instance) != probe.to_bytes(size, "little"):
            return None
    return width


# --- one payload type's shape and its writers ------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Shape:
    leaves: tuple[tuple[str, int, Any, bool], ...]
    """(dotted path, offset in the argument block, C type, is a bit-field), in the general walk's order."""
    read: Callable[[object], tuple[Any, ...]]
    operation: int | None
    """The payload type's ``OPERATION`` -- what ``Operation`` always is for it -- when it has one."""
    writers: dict[tuple[type, ...], Writer | None] = dataclasses.field(default_factory=dict)
    compiled: list[Direct] = dataclasses.field(default_factory=list)
    """The writers made so far (reading the leaves themselves), in the order they were made: what a caller may try
    without a lookup."""


_SHAPES: dict[type, _Shape | None] = {}


def _shape(payload: object) -> _Shape | None:
    member = MEMBERS.get(type(payload))
    if member is None:
        return None
    offset, ctype, _ = layout(_ARG)[member]
    leaves = tuple(_leaves(payload, ctype, offset, ""))
    paths = [path for path, *_ in leaves]
    read: Callable[[object], tuple[Any, ...]]
    if len(paths) > 1:
        read = attrgetter(*paths)
    else:  # attrgetter of one name gives the value itself
        getter = attrgetter(paths[0]) if paths else None
        read = (lambda p: (getter(p),)) if getter is not None else (lambda p: ())
    operation = getattr(type(payload), "OPERATION", None)
    return _Shape(leaves, read, int(operation) if isinstance(operation, int) else None)


def _leaves(value: object, ctype: Any, base: int, prefix: str) -> list[tuple[str, int, Any, bool]]:
    """The leaves of ``value`` the C type has, nested structures walked into, as the general walk goes."""
    members = layout(ctype)
    out: list[tuple[str, int, Any, bool]] = []
    for f in dataclasses.fields(value):  # type: ignore[arg-type]
        if f.name not in members:
            continue
        offset, member, bits = members[f.name]
        inner = getattr(value, f.name)
        if inner is not None and value_kind(inner) == "nested" and not bits and hasattr(member, "_fields_"):
            out.extend(_leaves(inner, member, base + offset, f"{prefix}{f.name}."))
        else:
            out.append((prefix + f.name, base + offset, member, bits))
    return out


def shape_of(kind: type) -> list[Direct] | None:
    """The writers :func:`write` has made so far for payload type ``kind`` (a list that grows as it makes more), or
    None while it has made none: the caller's way to try them directly, each returning None for values of a shape
    not its own."""
    shape = _SHAPES.get(kind)
    return None if shape is None or not shape.compiled else shape.compiled


def write(
    c: Any, args: Any, image: Callable[[MDL], int], host: Callable[[Any], int | None], keep: list[object]
) -> bool:
    """Write ``args`` into ``c`` through its shape's writer; False when the shape has none (the general walk's
    turn).  Raises :class:`Declined` (or the error of a value of the wrong type) for a value it does not check."""
    payload = args.payload
    kind = type(payload)
    if kind in _SHAPES:
        shape = _SHAPES[kind]
    else:
        shape = _SHAPES[kind] = _shape(payload)
    if shape is None:
        return False
    values = shape.read(payload)
    types = tuple(map(type, values))
    writers = shape.writers
    if types in writers:
        writer = writers[types]
    else:
        both = _compile(shape.leaves, values, shape.operation)
        writer = writers[types] = None if both is None else both[0]
        if both is not None:
            shape.compiled.append(both[1])
    if writer is None:
        return False
    writer(c, args, values, image, host, keep)
    return True


# --- generating a writer ----------------------------------------------------------------------------------------

_HEADER: Final = (
    # (member, the expression of its value, whether the value is checked here against the member's range: every
    # number is, as the general walk refuses it out of range; the pointers are host addresses, which fit)
    ("pDmaBuffer", "host(a.pDmaBuffer) or 0", False),
    ("DmaSize", "a.DmaSize", True),
    ("pDmaBufferPrivateData", "host(a.pDmaBufferPrivateData) or 0", False),
    ("DmaBufferPrivateDataSize", "a.DmaBufferPrivateDataSize", True),
    ("Operation", "int(a.Operation)", True),
    ("MultipassOffset", "a.MultipassOffset", True),
    ("hSystemContext", "a.hSystemContext", True),  # a HANDLE is a plain int; anything else is the walk's
    ("DmaBufferGpuVirtualAddress", "a.DmaBufferGpuVirtualAddress", True),
    ("DmaBufferWriteOffset", "a.DmaBufferWriteOffset", True),
)


@dataclasses.dataclass(frozen=True)
class _Slot:
    offset: int
    size: int
    variable: str
    number: bool
    """A number: the general walk leaves a zero unwritten, so a later union arm that is 0 does not overwrite."""


@dataclasses.dataclass
class _Code:
    """A writer's statements as they are worked out: every number is read and checked before any reference is made
    (a declined call has made no MDL image)."""

    lines: list[str] = dataclasses.field(default_factory=list)
    """Reading each value (and the checks that do not fit the groups below)."""
    ints: list[str] = dataclasses.field(default_factory=list)
    """Variables that must be exactly ``int``: checked in one chain of identity tests."""
    unsigned: dict[int, list[str]] = dataclasses.field(default_factory=dict)
    """Bits -> the ``int`` variables that must lie in ``0 .. 2**bits - 1``: checked together, as ``(a | b) >> bits``
    is 0 exactly when each is in range (a negative one makes it negative)."""
    references: tuple[list[str], list[str]] = dataclasses.field(default_factory=lambda: ([], []))
    """What the leaves reach (arrays, bytes, CPU pointers; then the MDL images)."""

    def in_range(self, variable: str, bits: int) -> None:
        self.unsigned.setdefault(bits, []).append(variable)

    def body(self) -> list[str]:
        checks = []
        if self.ints:
            checks.append(f"    if not {' is '.join(f'{v}.__class__' for v in self.ints)} is int: raise Declined")
        for bits, variables in sorted(self.unsigned.items()):
            checks.append(f"    if ({' | '.join(variables)}) >> {bits}: raise Declined")
        return [*self.lines, *checks, *self.references[0], *self.references[1]]


def compile_writer(
    leaves: tuple[tuple[str, int, Any, bool], ...], values: tuple[Any, ...], operation: int | None = None
) -> Writer | None:
    """The writer of one shape (``values``: a sample of its leaf values), or None when it is not modelled here;
    ``operation``: the ``Operation`` every payload of the shape's type has, written as a constant."""
    both = _compile(leaves, values, operation)
    return None if both is None else both[0]


def _compile(
    leaves: tuple[tuple[str, int, Any, bool], ...], values: tuple[Any, ...], operation: int | None
) -> tuple[Writer, Direct] | None:
    """:func:`compile_writer`'s writer, and the same one reading the leaves from ``args.payload`` itself."""
    code = _Code()
    slots = _header(code, operation)
    for index, ((_, offset, ctype, bits), value) in enumerate(zip(leaves, values, strict=True)):
        if value is None:
            continue  # the block is zeroed: NULL / 0, as the general walk leaves it
        slot = _leaf(f"v{index}", value, ctype, bits, offset, code)
        if slot is None:
            return None
        slots.append(slot)
    packing = _packing(slots)
    if packing is None:
        return None
    fmt, variables, late = packing
    scope: dict[str, Any] = {"Declined": Declined, "array": _array, "blob": _blob}
    scope["pack"] = struct.Struct(fmt).pack_into
    scope.update({f"pack{size}": pack for size, pack in _PACK_ONE.items()})
    body = (
        _guard(values, scope)
        + "\n".join(code.body())
        + f"\n    pack(c, 0, {', '.join(variables)})\n"
        + "".join(line + "\n" for line in late)
        + "    return h0\n"
    )
    unpack = f"    {', '.join(f'v{i}' for i in range(len(values)))}, = values\n" if values else ""
    source = (
        f"def write(c, a, values, image, host, keep):\n{unpack}{body}\n"
        f"def direct(c, a, image, host, keep):\n{_reads(leaves)}{body}"
    )
    exec(source, scope)  # the source: names, offsets and limits worked out above
    return scope["write"], scope["direct"]


def _header(code: _Code, operation: int | None) -> list[_Slot]:
    """The header's statements: each number must be an ``int`` in its member's range (the walk refuses any other,
    or takes a numpy integer the fast path leaves to it)."""
    slots = []
    for index, (name, expression, checked) in enumerate(_HEADER):
        offset, ctype, _ = layout(_ARG)[name]
        limits = integer_limits(ctype)
        assert limits is not None
        if name == "Operation" and operation is not None and 0 <= operation <= limits[2]:
            expression, checked = str(operation), False  # the payload type's own: no property, nothing to check
        h = f"h{index}"
        code.lines.append(f"    {h} = {expression}")
        if checked:
            code.ints.append(h)
            code.in_range(h, 8 * limits[0])
        slots.append(_Slot(offset, limits[0], h, number=False))
    return slots


def _guard(values: tuple[Any, ...], scope: dict[str, Any]) -> str:
    """The statement returning None unless each value has the type of the sample the writer was made for: a caller
    may try a writer on values it has not looked up (one identity test per leaf)."""
    if not values:
        return ""
    scope.update({f"t{i}": type(value) for i, value in enumerate(values)})
    test = " or ".join(f"v{i}.__class__ is not t{i}" for i in range(len(values)))
    return f"    if {test}: return None\n"


def _reads(leaves: tuple[tuple[str, int, Any, bool], ...]) -> str:
    """The statements reading each leaf of ``a.payload`` into ``v<n>`` (what the shape's ``attrgetter`` reads), each
    nested structure read once."""
    lines, names = ["    p = a.payload"], {"": "p"}
    for index, (path, *_) in enumerate(leaves):
        *parents, leaf = path.split(".")
        for depth in range(len(parents)):
            prefix = ".".join(parents[: depth + 1])
            if prefix not in names:
                names[prefix] = f"q{len(names)}"
                lines.append(f"    {names[prefix]} = {names['.'.join(parents[:depth])]}.{parents[depth]}")
        lines.append(f"    v{index} = {names['.'.join(parents)]}.{leaf}")
    return "".join(line + "\n" for line in lines)


def _leaf(v: str, value: object, ctype: Any, bits: bool, offset: int, code: _Code) -> _Slot | None:
    """The statements reading one leaf into ``y<n>`` (and checking it), and where it goes; None: not modelled."""
    y = "y" + v[1:]
    kind = type(value)
    if bits:
        return None
    if kind is int or kind is bool or value_kind(value) == "number":
        number = v if kind is int or kind is bool else f"int({v}.value)" if isinstance(value, Enum) else f"int({v})"
        if ctype is kernel.LARGE_INTEGER:
            size, low, high = 8, -(1 << 63), _M64
        else:
            limits = integer_limits(ctype)
            if limits is None:
                return None
            size, low, high = limits
        if number == v and low == 0:
            y = v  # the value as it is: no copy
        else:
            code.lines.append(f"    {y} = {number}")
        if low == 0 and high == (1 << (8 * size)) - 1:
            code.in_range(y, 8 * size)  # an int: the guard holds the type, int() made it one
        else:
            code.lines.append(f"    if not {low} <= {y} <= {high}: raise Declined")
        if low < 0:
            code.lines.append(f"    {y} &= {(1 << (8 * size)) - 1}")
        return _Slot(offset, size, y, number=True)
    return _reference(v, y, value, ctype, offset, code)


def _flag_word(code: _Code, v: str, y: str, value: object, bits: int) -> None:
    """A flag union's word into ``y``, which must fit ``bits``: its fields shifted into place, as ``BitUnion.Value``
    computes it, without the property and its table lookup (a third of a small call's writing) -- the fields are
    bools or ints in range, checked when it was made, so the word is an int; ``.Value`` itself, checked on its own,
    for a union whose class computes its word otherwise."""
    kind = type(value)
    if getattr(kind, "Value", None) is not _VALUE or not issubclass(kind, BitUnion):
        code.lines.append(f"    {y} = {v}.Value")
        code.lines.append(f"    if not 0 <= {y} < {1 << bits}: raise Declined")
        return
    fields = "".join(f" | {v}.{f.name}" + (f" << {f.lsb}" if f.lsb else "") for f in kind.layout().fields)
    code.lines.append(f"    {y} = 0{fields}")
    code.in_range(y, bits)


def _reference(v: str, y: str, value: object, ctype: Any, offset: int, code: _Code) -> _Slot | None:
    """A flag union, an MDL, a CPU pointer, an array or bytes: always written, as the general walk does."""
    lines, references = code.lines, code.references
    kind = value_kind(value)
    if kind == "flags" and isinstance(ctype, type) and issubclass(ctype, ctypes.Structure | ctypes.Union):
        word = next((w for w in ("Value", "Flags") if hasattr(ctype, w)), None)
        if word is not None:
            where, wtype, wbits = layout(ctype)[word]
            limits = integer_limits(wtype)
            if limits is None or wbits:
                return None
            _flag_word(code, v, y, value, 8 * limits[0])  # ctypes would keep the low bits: checked
            return _Slot(offset + where, limits[0], y, number=False)
        width = _bit_word(ctype)
        if width is None:
            return None
        _flag_word(code, v, y, value, width)
        return _Slot(offset, ctypes.sizeof(ctype), y, number=False)
    if kind == "mdl" and ctype is kernel.PMDL:
        lines.append(f"    if {v}.ByteCount > {_M32}: raise Declined")  # the image's ULONG: the walk names it
        references[1].append(f"    {y} = image({v})")
    elif kind == "pointer" and ctype is kernel.PVOID:
        references[0].append(f"    {y} = host({v})")
    elif kind == "array" and isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer):
        references[0].append(f"    {y} = array({v}, {ctypes.sizeof(ctype._type_)}, keep)")
    elif kind == "bytes" and ctype is kernel.PVOID:
        references[0].append(f"    {y} = blob({v}, keep)")
    else:
        return None
    return _Slot(offset, 8, y, number=False)


def _packing(slots: list[_Slot]) -> tuple[str, list[str], list[str]] | None:
    """The ``struct`` format of the whole block, the value of each of its fields, and the statements writing the
    union members that overlap unevenly after it.

    Union arms at one place and of one size fold into one value (the last written wins, a zero number not being
    written, as in the general walk); arms that overlap otherwise (a pointer over a two-member structure) are
    written one by one after the block, in the walk's order, a zero number skipped.
    """
    order = {id(slot): index for index, slot in enumerate(slots)}
    clusters: list[list[_Slot]] = []
    end = -1
    for slot in sorted(slots, key=lambda s: s.offset):  # stable: arms keep the general walk's order
        if clusters and slot.offset < end:
            clusters[-1].append(slot)
        else:
            clusters.append([slot])
        end = max(end, slot.offset + slot.size) if len(clusters[-1]) > 1 else slot.offset + slot.size
    fmt, position, variables, late = "<", 0, [], []
    for cluster in clusters:
        first = cluster[0]
        if any((s.offset, s.size) != (first.offset, first.size) for s in cluster):
            for arm in sorted(cluster, key=lambda s: order[id(s)]):
                guard = f"if {arm.variable}: " if arm.number else ""
                late.append(f"    {guard}pack{arm.size}(c, {arm.offset}, {arm.variable})")
            continue  # the block leaves the region zero
        expression = first.variable
        for arm in cluster[1:]:
            expression = f"({arm.variable} or {expression})" if arm.number else arm.variable
        if first.offset > position:
            fmt += f"{first.offset - position}x"
        fmt += _FORMATS[first.size]
        position = first.offset + first.size
        variables.append(expression)
    size = ctypes.sizeof(_ARG)
    if position > size or any(s.offset + s.size > size for s in slots):
        return None
    if position < size:
        fmt += f"{size - position}x"
    return fmt, variables, late


_PACK_ONE: Final = {size: struct.Struct("<" + code).pack_into for size, code in _FORMATS.items()}


def _array(value: np.ndarray, element_size: int, keep: list[object]) -> int:
    data = np.ascontiguousarray(value)
    if data.dtype.itemsize != element_size:
        raise Declined  # the general walk names the mismatch
    keep.append(data)
    return int(data.ctypes.data)


def _blob(value: bytes, keep: list[object]) -> int:
    buffer = ctypes.create_string_buffer(value, max(len(value), 1))
    keep.append(buffer)
    return ctypes.addressof(buffer)


__all__ = [
    "MEMBERS",
    "Declined",
    "Direct",
    "Writer",
    "compile_writer",
    "integer_limits",
    "layout",
    "shape_of",
    "value_kind",
    "write",
]
