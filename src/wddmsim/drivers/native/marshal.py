"""``DxgkDdiBuildPagingBuffer`` across the C ABI: the Python arguments written into the x64 structure, the call,
and what the driver changed read back.

The DDI's Python payloads (:mod:`wddmsim.ddi.paging`) carry the WDK's field names, so one walk over a payload's
fields fills the ctypes mirror (:mod:`wddmsim.drivers.native.paging`) member by member: integers and enums as
they are, flag unions by their ``Value`` word, ``LARGE_INTEGER`` members through ``QuadPart``, nested structures
recursively, and the pointers -- ``pMdl`` (an MDL image: the 48-byte header and its PFN array, see
:class:`~wddmsim.drivers.native.services.MdlImages`), CPU pointers into simulated memory (their host address),
PTE arrays, ADL page lists, copy ranges and private data -- to memory that lives until the call returns.

That walk is the general path and says what every value becomes; the calls VidMm makes go through writers
compiled once per payload shape (:mod:`wddmsim.drivers.native.plan`), which write the same bytes and hand
anything they do not check themselves back to the walk.  :class:`PagingBufferCall` tries a payload type's writers
directly, each checking the values are of its shape (decision 0249).

After the call only the in/out members are read back: ``pDmaBuffer`` (as a pointer into the same paging buffer;
anywhere else is reported by VidMm's contract checker), ``DmaSize``, ``MultipassOffset`` and the status.
"""

from __future__ import annotations

import ctypes
import dataclasses
import struct
from collections.abc import Callable
from enum import Enum
from typing import Any, Final, final

import numpy as np

from wddmsim.core.errors import UnfitArgument
from wddmsim.core.pointer import CpuMapping, CpuPointer
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_UNMODELLED, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.native import kernel, paging, plan
from wddmsim.drivers.native.library import BUILD_PAGING_BUFFER, NativeLibrary
from wddmsim.drivers.native.services import KernelServices, MdlImages

BUILD_PAGING_BUFFER_TYPE: Final = ctypes.CFUNCTYPE(
    kernel.NTSTATUS, kernel.HANDLE, ctypes.POINTER(paging.DXGKARG_BUILDPAGINGBUFFER)
)
_STATUSES: Final[dict[int, NTSTATUS | int]] = {int(s): s for s in NTSTATUS}
"""A status code the DDI names, as its ``NTSTATUS`` member (any other code travels as a plain int)."""


class MarshalError(UnfitArgument, ValueError):
    """A value a C structure cannot hold (e.g. a size past ``UINT``, a HANDLE past 64 bits): named -- the member
    path, the value, the rule -- never truncated, and raised before anything is written."""


@final
class PagingBufferCall:
    """One library's ``DxgkDdiBuildPagingBuffer``, callable with the DDI's Python arguments."""

    __slots__ = ("_function", "_host", "_image", "_shapes", "arg", "calls", "images", "services", "watchdog", "writer")

    def __init__(self, library: NativeLibrary, services: KernelServices) -> None:
        function = library.function(BUILD_PAGING_BUFFER)
        assert function is not None  # NativeLibrary refuses a library without it
        self._function = BUILD_PAGING_BUFFER_TYPE(address_of(function))
        self.services = services
        self.watchdog = services.watchdog
        self.images: MdlImages = services.images
        self.writer = ArgumentWriter(services.images)
        self._image = self.images.image
        self._host = self.writer.host
        self._shapes: dict[type, list[plan.Direct] | None] = {}
        """Payload type -> its compiled writers, once :func:`plan.shape_of` has them."""
        self.arg = paging.DXGKARG_BUILDPAGINGBUFFER()
        self.calls = 0

    def __call__(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS | int:
        """Call the driver once; the in/out members of ``args`` are updated as the driver left them.  A call the
        watchdog abandons raises :class:`~.watchdog.DriverTimedOut`; any call after it :class:`~.watchdog.LibraryLost`
        (nothing the abandoned call was given is reused: it may still be reading it)."""
        watchdog = self.watchdog
        if watchdog.lost is not None:
            watchdog.check(BUILD_PAGING_BUFFER)
        c, writer = self.arg, self.writer
        host = self._write(c, args)
        self.calls += 1
        function = self._function
        raw: int
        if watchdog.driver_delay is None:  # no bound: the watchdog would make the same call inline
            raw = function(None, c)
        else:
            raw = watchdog.call_driver(BUILD_PAGING_BUFFER, lambda: function(None, c), c, writer.keep, writer.hosts)
        raw &= 0xFFFFFFFF
        dma, size, offset = _READ_BACK(c)
        before = args.pDmaBuffer
        # Where the driver left the pointer, as a position in the mapping it was given (its distance from the
        # mapping's start kept even outside it, for VidMm's contract checker to report); NULL as None.
        args.pDmaBuffer = CpuPointer(before.mapping, before.offset + dma - host) if before is not None and dma else None
        args.DmaSize = size
        args.MultipassOffset = offset
        return _STATUSES.get(raw, raw)

    def _write(self, c: paging.DXGKARG_BUILDPAGINGBUFFER, args: DXGKARG_BUILDPAGINGBUFFER) -> int:
        """Every byte of ``c`` from ``args`` (:meth:`ArgumentWriter.write`'s bytes and refusals); the host address
        written for ``pDmaBuffer`` (0 for NULL).

        The payload type's compiled writers are tried first, without the lookup by value types: each checks that
        the values are of its own shape (None if not) before it writes; what none of them writes -- a new shape, a
        value one declines -- goes to :meth:`ArgumentWriter.write`."""
        payload = args.payload
        entry = self._shapes.get(payload.__class__)
        if entry is not None:
            keep: list[object] = []
            try:
                for write in entry:
                    host = write(c, args, self._image, self._host, keep)
                    if host is not None:
                        self.writer.keep = keep
                        return host
            except _DECLINED:
                pass  # the walk writes it or names why not
        self.writer.write(c, args)
        if entry is None:
            self._shapes[payload.__class__] = plan.shape_of(payload.__class__)
        host_written: int = _HOST_WRITTEN(c)[0]
        return host_written


_READ_BACK: Final = struct.Struct("<QI20xI").unpack_from
_HOST_WRITTEN: Final = struct.Struct("<Q").unpack_from
"""``pDmaBuffer`` as written into the block, before the call."""
"""``pDmaBuffer``, ``DmaSize`` and ``MultipassOffset``: the in/out members, at 0, 8 and 32."""
_DECLINED: Final = (plan.Declined, struct.error, TypeError, ValueError, AttributeError, OverflowError)
"""What makes the fast path hand a call to the general walk, which gives the same bytes or the named error."""


@final
class ArgumentWriter:
    """Writes the DDI's Python arguments into the C argument block, with the memory its pointers reach.

    :meth:`write` takes the shape's compiled writer (:mod:`wddmsim.drivers.native.plan`) and, where there is none
    or it declines, :meth:`general`: the walk over the payload's fields that says what every value becomes.
    """

    __slots__ = ("_host", "_image", "hosts", "images", "keep")

    def __init__(self, images: MdlImages) -> None:
        self.images = images
        self._image = images.image
        self._host = self.host
        self.keep: list[object] = []
        """What the pointers of the call being made reach (arrays, private data, copy ranges)."""
        self.hosts: dict[CpuMapping, int] = {}
        """Host address of each mapping seen, keyed by the mapping itself: compared by identity (a mapping defines
        no equality), and held, so that no other mapping takes its place."""

    def write(self, c: paging.DXGKARG_BUILDPAGINGBUFFER, args: DXGKARG_BUILDPAGINGBUFFER) -> None:
        """Every byte of ``c`` from ``args``: the compiled writer, or the general walk.  A refusal
        (:class:`MarshalError`) leaves ``c``, the MDL images and :attr:`keep` as they were."""
        keep: list[object] = []
        try:
            if plan.write(c, args, self._image, self._host, keep):
                self.keep = keep
                return
        except _DECLINED:
            pass
        self.general(c, args)

    def general(self, c: paging.DXGKARG_BUILDPAGINGBUFFER, args: DXGKARG_BUILDPAGINGBUFFER) -> None:
        """The general walk: every byte of ``c`` from ``args``, a value that does not fit refused by name.

        The walk runs twice: first over a scratch block with the MDLs only checked, so that a refusal leaves ``c``,
        the MDL images and :attr:`keep` as they were; then, every value known to fit, over ``c``.
        """
        before = self.keep
        try:
            self.keep = []
            self._walk(paging.DXGKARG_BUILDPAGINGBUFFER(), args, _checked_image)
            self.keep = []
            self._walk(c, args, self._image)
        except BaseException:
            self.keep = before
            raise

    def _walk(
        self, c: paging.DXGKARG_BUILDPAGINGBUFFER, args: DXGKARG_BUILDPAGINGBUFFER, image: Callable[[MDL], int]
    ) -> None:
        ctypes.memset(ctypes.addressof(c), 0, ctypes.sizeof(c))
        c.pDmaBuffer = self.host(args.pDmaBuffer)
        c.DmaSize = fit(args.DmaSize, _ARG + "DmaSize", 0, _M32, "a 32-bit UINT")
        c.pDmaBufferPrivateData = self.host(args.pDmaBufferPrivateData)
        c.DmaBufferPrivateDataSize = fit(
            args.DmaBufferPrivateDataSize, _ARG + "DmaBufferPrivateDataSize", 0, _M32, "a 32-bit UINT"
        )
        c.Operation = fit(args.Operation, _ARG + "Operation", 0, _M32, "a 32-bit ENUM")
        c.MultipassOffset = fit(args.MultipassOffset, _ARG + "MultipassOffset", 0, _M32, "a 32-bit UINT")
        c.hSystemContext = fit(args.hSystemContext, _ARG + "hSystemContext", 0, _M64, "a 64-bit HANDLE") or None
        c.DmaBufferGpuVirtualAddress = fit(
            args.DmaBufferGpuVirtualAddress,
            _ARG + "DmaBufferGpuVirtualAddress",
            0,
            _M64,
            "a 64-bit D3DGPU_VIRTUAL_ADDRESS",
        )
        c.DmaBufferWriteOffset = fit(args.DmaBufferWriteOffset, _ARG + "DmaBufferWriteOffset", 0, _M32, "a 32-bit UINT")
        self._write_payload(c, args, image)

    def _write_payload(
        self, c: paging.DXGKARG_BUILDPAGINGBUFFER, args: DXGKARG_BUILDPAGINGBUFFER, image: Callable[[MDL], int]
    ) -> None:
        payload = args.payload
        if isinstance(payload, DXGK_BUILDPAGINGBUFFER_UNMODELLED):
            words = c.Reserved.Reserved
            if len(payload.Reserved) > len(words):
                raise MarshalError(
                    f"{_ARG}Reserved.Reserved: {len(payload.Reserved)} words, the C array holds {len(words)}"
                )
            for i, word in enumerate(payload.Reserved):
                words[i] = fit(word, f"{_ARG}Reserved.Reserved[{i}]", 0, _M32, "a 32-bit UINT")
            return
        member = plan.MEMBERS[type(payload)]
        self._fill(getattr(c, member), payload, _ARG + member, image)

    def host(self, pointer: CpuPointer | None) -> int | None:
        """The host address a C driver sees for a pointer into simulated memory (NULL for None)."""
        if pointer is None:
            return None
        base = self.hosts.get(pointer.mapping)
        if base is None:
            base = self.hosts[pointer.mapping] = int(pointer.mapping.data.ctypes.data)
        return base + pointer.offset

    def _fill(self, target: Any, source: Any, path: str, image: Callable[[MDL], int]) -> None:
        for name, ctype, rule in _members_of(type(source), type(target)):
            value = getattr(source, name)
            if value is None:
                continue  # the structure was zeroed: NULL / 0
            kind = type(value)
            if kind is int or kind is bool:  # the common case first: most members are plain numbers
                if value:
                    self._number(target, name, ctype, rule, value, f"{path}.{name}")
                continue
            self._set(target, name, ctype, rule, value, f"{path}.{name}", image)

    def _number(self, target: Any, name: str, ctype: object, rule: _Rule | None, number: int, path: str) -> None:
        """A number into its C member, refused unless it fits the member's range (checked before it is written:
        ctypes would keep the low bits -- of a bit-field too -- or make a too-large pointer NULL)."""
        if rule is None:
            raise MarshalError(f"{path}={_shown(number)}: no number goes into a {getattr(ctype, '__name__', ctype)}")
        low, high, text = rule
        if ctype is kernel.LARGE_INTEGER:
            getattr(target, name).QuadPart = _signed64(number, path)
        else:
            setattr(target, name, fit(number, path, low, high, text))

    def _set(
        self,
        target: Any,
        name: str,
        ctype: object,
        rule: _Rule | None,
        value: object,
        path: str,
        image: Callable[[MDL], int],
    ) -> None:
        kind = plan.value_kind(value)
        if kind == "nested":
            self._fill(getattr(target, name), value, path, image)
        elif kind == "flags":
            _set_word(getattr(target, name), value.Value, path)  # type: ignore[attr-defined]
        elif kind == "mdl":
            setattr(target, name, ctypes.cast(image(value), kernel.PMDL))  # type: ignore[arg-type]
        elif kind == "pointer":
            setattr(target, name, self.host(value))  # type: ignore[arg-type]
        elif kind == "array":
            setattr(target, name, self._array(value, type(getattr(target, name)), path))  # type: ignore[arg-type]
        elif kind == "structs":
            if value:
                setattr(target, name, self._structs(value, type(getattr(target, name)), path, image))  # type: ignore[arg-type]
        elif kind == "bytes":
            buffer = ctypes.create_string_buffer(value, max(len(value), 1))  # type: ignore[arg-type]
            self.keep.append(buffer)
            setattr(target, name, ctypes.addressof(buffer))
        elif kind == "number":
            number = int(value.value) if isinstance(value, Enum) else int(value)  # type: ignore[call-overload]
            if number:
                self._number(target, name, ctype, rule, number, path)
        else:
            raise MarshalError(f"{path}={value!r}: no C form for a {type(value).__name__}")

    def _array(self, value: np.ndarray, pointer_type: Any, path: str) -> Any:
        """A PTE array or page-number list handed to C as a pointer to its first element (the data as is: the
        DDI's arrays already have the C element layout, ``DXGK_PTE_DTYPE`` and 64-bit page numbers)."""
        data = np.ascontiguousarray(value)
        element = pointer_type._type_
        if data.dtype.itemsize != ctypes.sizeof(element):
            raise MarshalError(f"{path}: {data.dtype.itemsize}-byte elements, C expects {ctypes.sizeof(element)}")
        self.keep.append(data)
        return ctypes.cast(data.ctypes.data, pointer_type)

    def _structs(self, values: tuple[Any, ...], pointer_type: Any, path: str, image: Callable[[MDL], int]) -> Any:
        element = pointer_type._type_
        array = (element * len(values))()
        for i, value in enumerate(values):
            self._fill(array[i], value, f"{path}[{i}]", image)
        self.keep.append(array)
        return ctypes.cast(array, pointer_type)


_Rule = tuple[int, int, str]
"""(lowest, highest, the rule a refusal names) of a C integer member."""
_MEMBERS_OF: dict[tuple[type, type], tuple[tuple[str, object, _Rule | None], ...]] = {}


def _members_of(source: type, target: type) -> tuple[tuple[str, object, _Rule | None], ...]:
    """The members of Python type ``source`` that C type ``target`` has, each with its C type and, for a number,
    its range (worked out once)."""
    key = (source, target)
    found = _MEMBERS_OF.get(key)
    if found is None:
        members = _c_members(target)
        found = tuple(
            (f.name, members[f.name][0], _rule(*members[f.name], f.name))
            for f in dataclasses.fields(source)
            if f.name in members
        )
        _MEMBERS_OF[key] = found
    return found


def _c_members(ctype: type) -> dict[str, tuple[object, int | None]]:
    """Name -> (C type, bit-field width or None) of every member reachable by name (anonymous members flattened, as
    C reads them)."""
    out: dict[str, tuple[object, int | None]] = {}
    anonymous = set(getattr(ctype, "_anonymous_", ()))
    for entry in getattr(ctype, "_fields_", ()):
        name, member = entry[0], entry[1]
        if name in anonymous:
            out.update(_c_members(member))
        else:
            out[name] = (member, entry[2] if len(entry) > 2 else None)
    return out


def address_of(function: object) -> int:
    address = ctypes.cast(function, ctypes.c_void_p).value  # type: ignore[arg-type]
    assert address is not None
    return address


_ARG: Final = "DXGKARG_BUILDPAGINGBUFFER."
"""The prefix of every member path a refusal names (the C structure's, as the WDK spells it)."""
_M32: Final = (1 << 32) - 1
_M64: Final = (1 << 64) - 1
_SIGNED64: Final = (-(1 << 63), _M64, "a 64-bit LARGE_INTEGER (QuadPart: -2**63 to 2**64-1)")


def _shown(value: object) -> str:
    """A value as a refusal shows it: an integer in hex, digits grouped by four; anything else as its repr."""
    return f"{value:#_x}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)


def fit(value: object, path: str, low: int, high: int, rule: str) -> int:
    """``value`` as the integer a C member of range ``low``..``high`` holds, or a :class:`MarshalError` naming the
    member path, the value and ``rule``.  Never truncated: ctypes would keep the low bits."""
    if not isinstance(value, int | np.integer | np.bool_):
        raise MarshalError(f"{path}={_shown(value)}: not an integer, the C member is {rule}")
    number = int(value)  # an enum, a HANDLE, a numpy integer or bool as its plain value
    if not low <= number <= high:
        raise MarshalError(f"{path}={_shown(number)}: does not fit {rule}")
    return number


def _rule(ctype: object, bits: int | None, name: str) -> _Rule | None:
    """(lowest, highest, rule) of a plain integer, pointer-sized or ``LARGE_INTEGER`` member, a bit-field by its
    width; None for any other C type.  A pointer member named like a handle (``hAllocation``) is called a HANDLE,
    as the WDK declares it."""
    if ctype is kernel.LARGE_INTEGER:
        return _SIGNED64
    limits = plan.integer_limits(ctype)
    if limits is None:
        return None
    size, low, high = limits
    if bits is not None:  # the C bit-fields here are all UINT
        return 0, (1 << bits) - 1, f"a {bits}-bit field"
    if getattr(ctype, "_type_", "") == "P":
        handle = len(name) > 1 and name[0] == "h" and name[1].isupper()
        return low, high, f"a {8 * size}-bit {'HANDLE' if handle else 'pointer'}"
    return low, high, f"a {8 * size}-bit {'signed' if low < 0 else 'unsigned'} integer"


def _signed64(value: int, path: str) -> int:
    """A ``LARGE_INTEGER``'s ``QuadPart``: signed or unsigned 64-bit values both fit (an address reads either way)."""
    low, high, rule = _SIGNED64
    number = fit(value, path, low, high, rule)
    return number - (1 << 64) if number >= 1 << 63 else number


def _checked_image(mdl: MDL) -> int:
    """The first pass's stand-in for an MDL image: only checks what the image will hold (a NULL address)."""
    if mdl.ByteCount > _M32:
        raise MarshalError(f"MDL.ByteCount={_shown(mdl.ByteCount)}: does not fit a 32-bit ULONG (an MDL's bytes)")
    return 0


def _set_word(flags: Any, value: int, path: str) -> None:
    """A flag union's ``Value`` word (``Flags`` for ``DXGK_TRANSFERVIRTUALFLAGS``); plain bit-field structs bit by
    bit, in declaration order."""
    for word in ("Value", "Flags"):
        if hasattr(flags, word):
            _, ctype, _ = plan.layout(type(flags))[word]
            limits = plan.integer_limits(ctype)
            assert limits is not None  # a flag union's word is a plain integer
            setattr(flags, word, fit(value, path, 0, limits[2], f"a {8 * limits[0]}-bit flag word"))
            return
    bits = sum(width for _, _, width in flags._fields_)
    fit(value, path, 0, (1 << bits) - 1, f"the structure's {bits} bits")
    shift = 0
    for field_name, _, width in flags._fields_:
        setattr(flags, field_name, (value >> shift) & ((1 << width) - 1))
        shift += width


__all__ = ["BUILD_PAGING_BUFFER_TYPE", "ArgumentWriter", "MarshalError", "PagingBufferCall", "address_of", "fit"]
