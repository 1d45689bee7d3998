"""Events the hardware emits (engine activity); they carry engine indices, never Windows names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from wddmsim.core.events import Event, quicken_events


@dataclass(frozen=True, slots=True, kw_only=True)
class DmaBufferStarted(Event):
    NAME: ClassVar[str] = "DmaBufferStarted"
    engine: int
    fence: int
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DmaBufferCompleted(Event):
    NAME: ClassVar[str] = "DmaBufferCompleted"
    engine: int
    fence: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PacketExecuted(Event):
    NAME: ClassVar[str] = "PacketExecuted"
    engine: int
    fence: int
    offset: int
    opcode: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineNote(Event):
    NAME: ClassVar[str] = "EngineNote"
    engine: int
    kind: int
    a: int
    b: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineFaulted(Event):
    NAME: ClassVar[str] = "EngineFaulted"
    engine: int
    kind: str
    address: int
    fence: int
    reason: str


quicken_events(globals(), __name__)
