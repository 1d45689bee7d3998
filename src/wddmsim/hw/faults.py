"""What goes wrong on the GPU, as values the engine records and raises as interrupts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class FaultKind(IntEnum):
    PAGE_FAULT = 0
    """A GPU VA access the page tables do not allow (invalid entry, write to read-only, execute to no-execute)."""
    INVALID_INSTRUCTION = 1
    """A packet the command processor cannot decode."""
    BUS_ERROR = 2
    """A physical access outside every memory (or through an invalid aperture entry)."""


class AccessKind(IntEnum):
    READ = 0
    WRITE = 1
    EXECUTE = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultRecord:
    """What the engine latches when it faults (the hardware side of ``DXGKARGCB_NOTIFY_INTERRUPT_DATA``)."""

    kind: FaultKind
    engine: int
    address: int
    """The faulting GPU VA (page faults) or physical address (bus errors); the packet offset otherwise."""
    access: AccessKind = AccessKind.READ
    level: int = 0
    """Page-table level at which the walk failed (0 = leaf)."""
    fence: int = 0
    """Completion fence of the submission that faulted."""
    packet_offset: int = 0
    reason: str = ""


class GpuFault(Exception):
    """Raised inside packet execution; the engine turns it into a :class:`FaultRecord` and halts."""

    def __init__(
        self, kind: FaultKind, address: int, reason: str, *, access: AccessKind = AccessKind.READ, level: int = 0
    ) -> None:
        super().__init__(reason)
        self.kind = kind
        self.address = address
        self.reason = reason
        self.access = access
        self.level = level
