"""Bit layouts, declared once.

Two users share one mechanism:

* ``BitLayout`` -- a table of ``(name, lsb, width)`` fields over a 32- or 64-bit word, with ``pack`` /
  ``unpack`` and per-field ``get``.  Hardware formats (GPU PTEs, GART entries, packet headers) use it
  directly, and numpy code reads ``field.lsb`` / ``field.mask`` to encode whole arrays at once.
* ``BitUnion`` -- the base of the DDI's C bit-field unions (``DXGK_TRANSFERFLAGS``, ``DXGK_PTE`` ...).  A
  subclass is a frozen dataclass whose fields are declared with :func:`flag` / :func:`bits`; its layout is
  derived from those declarations, and ``Value`` is the C union's ``UINT Value`` member.

Never write ``(x >> 12) & 0x1ff`` inline: declare the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, final


@final
@dataclass(frozen=True, slots=True)
class BitField:
    """One field of a layout: ``width`` bits starting at bit ``lsb``."""

    name: str
    lsb: int
    width: int

    @property
    def mask(self) -> int:
        """The field's mask, unshifted (``(1 << width) - 1``)."""
        return (1 << self.width) - 1

    @property
    def shifted_mask(self) -> int:
        return self.mask << self.lsb

    def get(self, word: int) -> int:
        return (word >> self.lsb) & self.mask


@final
class BitLayout:
    """Named bit fields over a word of ``width`` bits; fields may not overlap or leave the word."""

    __slots__ = ("_by_name", "fields", "name", "width")

    def __init__(self, name: str, width: int, fields: Iterable[tuple[str, int, int]]) -> None:
        self.name = name
        self.width = width
        self.fields = tuple(BitField(n, lsb, w) for n, lsb, w in fields)
        self._by_name = {f.name: f for f in self.fields}
        used = 0
        for f in self.fields:
            if f.width <= 0 or f.lsb < 0 or f.lsb + f.width > width:
                raise ValueError(f"{name}.{f.name}: bits {f.lsb}..{f.lsb + f.width - 1} leave the {width}-bit word")
            if used & f.shifted_mask:
                raise ValueError(f"{name}.{f.name}: overlaps another field")
            used |= f.shifted_mask
        if len(self._by_name) != len(self.fields):
            raise ValueError(f"{name}: duplicate field names")

    def __getitem__(self, name: str) -> BitField:
        return self._by_name[name]

    def pack(self, values: Mapping[str, int]) -> int:
        """Build a word from field values; a value too wide for its field is an error, not a truncation."""
        word = 0
        for key, value in values.items():
            f = self._by_name.get(key)
            if f is None:
                raise ValueError(f"{self.name} has no field {key!r}")
            v = int(value)
            if v < 0 or v > f.mask:
                raise ValueError(f"{self.name}.{key}={v:#x}: does not fit {f.width} bit(s)")
            word |= v << f.lsb
        return word

    def unpack(self, word: int) -> dict[str, int]:
        """Every field's value in ``word``; bits outside every field are an error."""
        self.check_word(word)
        return {f.name: (word >> f.lsb) & f.mask for f in self.fields}

    def check_word(self, word: int) -> None:
        if word < 0 or word >> self.width:
            raise ValueError(f"{self.name}={word:#x}: does not fit {self.width} bits")
        covered = 0
        for f in self.fields:
            covered |= f.shifted_mask
        if word & ~covered:
            raise ValueError(f"{self.name}={word:#x}: bits {word & ~covered:#x} belong to no field")


def flag(lsb: int) -> bool:
    """Declare a one-bit field of a :class:`BitUnion` (defaults to clear)."""
    result: bool = field(default=False, metadata={"lsb": lsb, "width": 1})
    return result


def bits(lsb: int, width: int, default: int = 0) -> int:
    """Declare a ``width``-bit field of a :class:`BitUnion`."""
    result: int = field(default=default, metadata={"lsb": lsb, "width": width})
    return result


_LAYOUTS: dict[type[Any], BitLayout] = {}
_WORDS: dict[type[Any], Callable[[Any], int]] = {}
"""Per union class: a function of an instance giving its word, one expression over the fields (``Value`` is read
for every flag union of every paging event)."""


def _word_function(cls: type[BitUnion]) -> Callable[[Any], int]:
    terms = " | ".join(f"int(union.{f.name}) << {f.lsb}" for f in cls.layout().fields)
    scope: dict[str, Any] = {}
    exec(f"def word(union):\n    return 0 | {terms or '0'}\n", scope)  # the source: field names and shifts
    word: Callable[[Any], int] = scope["word"]
    _WORDS[cls] = word
    return word


_CHECKS: dict[type[Any], tuple[tuple[str, int], ...]] = {}
"""Per union class: ``(field, mask)`` of every bit field, for the construction check."""


class BitUnion:
    """Base of a C bit-field union: subclasses are ``@dataclass(frozen=True, slots=True, kw_only=True)``.

    ``WIDTH`` is the width of the union's ``Value`` member in bits.  A field value that does not fit its bits
    raises ``ValueError`` at construction.
    """

    __slots__ = ()
    WIDTH: ClassVar[int] = 32

    @classmethod
    def layout(cls) -> BitLayout:
        """The layout derived from the dataclass field declarations (computed once per class)."""
        layout = _LAYOUTS.get(cls)
        if layout is None:
            declared = [
                (f.name, int(f.metadata["lsb"]), int(f.metadata["width"]))
                for f in dataclasses.fields(cls)  # type: ignore[arg-type]
                if "lsb" in f.metadata
            ]
            layout = _LAYOUTS[cls] = BitLayout(cls.__name__, cls.WIDTH, declared)
        return layout

    def __post_init__(self) -> None:
        checks = _CHECKS.get(type(self))
        if checks is None:
            checks = _CHECKS[type(self)] = tuple((f.name, f.mask) for f in self.layout().fields)
        for name, mask in checks:
            value = getattr(self, name)
            kind = value.__class__
            if kind is bool or (kind is int and 0 <= value <= mask):
                continue  # the common cases, without a call (every DDI argument block builds its flags)
            self._refuse(name, value)

    def _refuse(self, name: str, value: object) -> None:
        f = self.layout()[name]
        if not isinstance(value, int):
            raise TypeError(f"{type(self).__name__}.{name}={value!r}: expected an integer or bool")
        if value < 0 or value > f.mask:
            raise ValueError(f"{type(self).__name__}.{name}={value!r}: does not fit {f.width} bit(s)")

    @property
    def Value(self) -> int:  # noqa: N802 - the C union member is named Value
        """The whole word, as the C union's ``Value`` member."""
        word = _WORDS.get(type(self))
        if word is None:
            word = _word_function(type(self))
        return word(self)

    @classmethod
    def from_value(cls, value: int) -> Self:
        """Decode a word; the inverse of :attr:`Value`."""
        layout = cls.layout()
        fields = layout.unpack(value)
        kinds = {f.name: f.type for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        # Fields without a bit position (e.g. DXGK_PTE.PageAddress) keep their defaults.
        kwargs: dict[str, int | bool] = {
            name: bool(v) if kinds[name] in (bool, "bool") else v for name, v in fields.items()
        }
        return cls(**kwargs)

    def set_flags(self) -> list[str]:
        """The names of the non-zero fields, in bit order (for messages and disassembly)."""
        return [f.name for f in self.layout().fields if getattr(self, f.name)]
