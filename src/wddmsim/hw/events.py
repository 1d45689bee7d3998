"""Events the hardware emits (engine activity); they carry engine indices, never Windows names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from wddmsim.core.events import Event, quicken_events


@dataclass(frozen=True, slots=True, kw_only=True)
class DmaBufferStarted(Event):
    """An engine began executing a DMA buffer (``size`` bytes) submitted with ``fence``."""

    NAME: ClassVar[str] = "DmaBufferStarted"
    engine: int
    fence: int
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DmaBufferCompleted(Event):
    """An engine finished the DMA buffer of ``fence`` (its fence value is written next)."""

    NAME: ClassVar[str] = "DmaBufferCompleted"
    engine: int
    fence: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PacketExecuted(Event):
    """One command packet executed: its ``opcode`` at byte ``offset`` of the DMA buffer of ``fence``."""

    NAME: ClassVar[str] = "PacketExecuted"
    engine: int
    fence: int
    offset: int
    opcode: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineNote(Event):
    """A ``NOTE`` packet executed: its ``kind`` and two values, put in the buffer for the event log to show."""

    NAME: ClassVar[str] = "EngineNote"
    engine: int
    kind: int
    a: int
    b: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineFaulted(Event):
    """The engine stopped on a fault: its kind, the faulting address, the buffer's fence, and why."""

    NAME: ClassVar[str] = "EngineFaulted"
    engine: int
    kind: str
    address: int
    fence: int
    reason: str


quicken_events(globals(), __name__)
