"""Sizes, pages and alignment.

Byte counts are plain ``int`` by rule; a name ending in ``_pages`` counts 4 KiB pages.
"""

from __future__ import annotations

import re
from typing import Final

PAGE_SHIFT: Final = 12
PAGE_SIZE: Final = 1 << PAGE_SHIFT
"""The CPU (and DDI) page: VidMm manages GPU VA and system memory in 4 KiB units."""

KiB: Final = 1 << 10
MiB: Final = 1 << 20
GiB: Final = 1 << 30
TiB: Final = 1 << 40

SIZE_64K: Final = 64 * KiB

U32_MAX: Final = (1 << 32) - 1
U64_MAX: Final = (1 << 64) - 1


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def align_down(value: int, alignment: int) -> int:
    """Round ``value`` down to a multiple of ``alignment`` (any positive alignment)."""
    return value - value % alignment


def align_up(value: int, alignment: int) -> int:
    """Round ``value`` up to a multiple of ``alignment`` (any positive alignment)."""
    return -(-value // alignment) * alignment


def is_aligned(value: int, alignment: int) -> bool:
    return value % alignment == 0


def pages_spanned(size: int) -> int:
    """Number of 4 KiB pages needed to hold ``size`` bytes."""
    return -(-size // PAGE_SIZE)


_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMGTPE]i?B?|B)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": KiB, "m": MiB, "g": GiB, "t": TiB, "p": TiB << 10, "e": TiB << 20}


def parse_size(text: str) -> int:
    """Parse ``"256MiB"``, ``"64K"``, ``"80GiB"`` or ``"4096"`` into bytes (binary units)."""
    match = _SIZE_RE.match(text)
    if match is None:
        raise ValueError(f"size {text!r}: expected a number with an optional unit such as 64KiB, 256MiB, 80GiB")
    unit = (match.group(2) or "").lower()[:1]
    return int(match.group(1)) * _SIZE_UNITS[unit]


def format_size(size: int) -> str:
    """Render a byte count with the largest binary unit that divides it exactly."""
    for unit, name in ((TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} B"
