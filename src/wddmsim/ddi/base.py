"""Basic DDI types (d3dukmdt.h): handles, physical and GPU virtual addresses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NewType

from wddmsim.core.addresses import FenceValue

HANDLE = NewType("HANDLE", int)
"""An opaque handle; :data:`NULL` is 0."""
NULL: Final = HANDLE(0)

D3DKMT_HANDLE = NewType("D3DKMT_HANDLE", int)
"""A user-mode (thunk) handle."""

D3DGPU_NULL: Final = 0

NO_FENCE: Final = FenceValue(0)
"""An [out] fence value of 0: nothing to wait for (the work is already complete)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DGPU_PHYSICAL_ADDRESS:
    """``{ UINT SegmentId; UINT Padding; UINT64 SegmentOffset; }`` (16 bytes, d3dukmdt.h)."""

    SegmentId: int = 0
    SegmentOffset: int = 0
