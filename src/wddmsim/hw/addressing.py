"""How the GPU names memory in its packets: a 64-bit word tagged with its address space.

``SPACE`` selects how the low 60 bits are resolved:

* ``GPU_PHYS`` -- the GPU physical address map: local memory at ``[0, local_size)``, the aperture (GART) window
  at ``[aperture_base, aperture_base + aperture_size)``;
* ``SYSTEM`` -- a system bus address (host RAM, reached over PCIe);
* ``GPU_VA`` -- a GPU virtual address, translated by the MMU of the engine's current address space.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

from wddmsim.core.bits import BitLayout


class Space(IntEnum):
    GPU_PHYS = 0
    SYSTEM = 1
    GPU_VA = 2


HW_ADDRESS: Final = BitLayout("HwAddress", 64, [("address", 0, 60), ("space", 60, 4)])
_ADDRESS_MASK: Final = HW_ADDRESS["address"].mask
_SPACE_LSB: Final = HW_ADDRESS["space"].lsb


def hw_address(space: Space, address: int) -> int:
    """Encode ``address`` in ``space`` as a packet address word."""
    if address < 0 or address > _ADDRESS_MASK:
        raise ValueError(f"address={address:#x}: does not fit the 60-bit address field")
    return (space << _SPACE_LSB) | address


def split_address(word: int) -> tuple[int, int]:
    """``(space, address)`` of a packet address word (the space is not validated here)."""
    return word >> _SPACE_LSB, word & _ADDRESS_MASK


def format_address(word: int) -> str:
    space, address = split_address(word)
    try:
        name = Space(space).name
    except ValueError:
        name = f"SPACE{space}"
    return f"{name}:{address:#x}"
