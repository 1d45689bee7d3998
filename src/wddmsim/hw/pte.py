"""The reference GPU's page-table entry, declared once (the hardware "data sheet").

One 64-bit format serves every level.  At level 0 (leaf) an entry maps one 4 KiB page; above, it points at the
next table, or -- with ``LargePage`` -- maps a whole page of that level's coverage.  ``Target`` says which
memory the address is in.  ``Key`` carries eight driver-protection bits at the leaf (``DriverProtection`` is
folded in there by the driver, never above level 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from wddmsim.core.bits import BitLayout
from wddmsim.core.units import PAGE_SHIFT

HW_PTE: Final = BitLayout(
    "HwPte",
    64,
    [
        ("Valid", 0, 1),
        ("Zero", 1, 1),
        ("ReadOnly", 2, 1),
        ("NoExecute", 3, 1),
        ("Snoop", 4, 1),
        ("Target", 5, 2),
        ("LargePage", 7, 1),
        ("Leaf64K", 8, 1),
        ("Address", 12, 40),
        ("Key", 52, 8),
    ],
)
PTE_SIZE: Final = 8


class Target(IntEnum):
    """Which memory an entry's address is in."""

    LOCAL = 0
    SYSTEM = 1


@dataclass(frozen=True, slots=True)
class TablePointer:
    """Where a page table is: ``address`` bytes into ``target`` memory."""

    target: Target
    address: int


def encode_pte(
    *,
    valid: bool = True,
    target: Target = Target.LOCAL,
    address: int = 0,
    zero: bool = False,
    read_only: bool = False,
    no_execute: bool = False,
    snoop: bool = False,
    large_page: bool = False,
    leaf_64k: bool = False,
    key: int = 0,
) -> int:
    """A hardware entry; ``address`` is a byte address, 4 KiB aligned."""
    if address % (1 << PAGE_SHIFT):
        raise ValueError(f"address={address:#x}: page-table addresses are 4 KiB aligned")
    return HW_PTE.pack(
        {
            "Valid": valid,
            "Zero": zero,
            "ReadOnly": read_only,
            "NoExecute": no_execute,
            "Snoop": snoop,
            "Target": target,
            "LargePage": large_page,
            "Leaf64K": leaf_64k,
            "Address": address >> PAGE_SHIFT,
            "Key": key,
        }
    )


def pte_address(entry: int) -> int:
    return HW_PTE["Address"].get(entry) << PAGE_SHIFT


def pte_target(entry: int) -> Target:
    return Target(HW_PTE["Target"].get(entry) & 1)
