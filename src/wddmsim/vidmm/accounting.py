"""What each process holds of video memory, per segment group, kept as its allocations change (decision 0175).

``QueryVideoMemoryInfo``'s ``CurrentUsage`` and the per-process numbers of the accounting over time are read
constantly (every budget check, every frame of a residency-managing client): summing every allocation each time
costs O(allocations) per call.  Instead the numbers move at the transitions -- an allocation created or
destroyed, its residency count leaving or reaching zero, its placement changing -- and each change is an event
named after DxgKrnl's (``VidMmProcessUsageChange``, ``VidMmProcessCommitmentChange``,
``VidMmProcessDemotedCommitmentChange``), so the log alone tells the story.  The invariant checker recounts them
from the allocations after every step (:func:`wddmsim.testing.residency.check_residency`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, final

from wddmsim.core.events import EventLog
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.vidmm.events import (
    AdapterAllocation,
    VidMmProcessCommitmentChange,
    VidMmProcessDemotedCommitmentChange,
    VidMmProcessUsageChange,
)
from wddmsim.vidmm.segments import Placement

LOCAL = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL


class Accountable(Protocol):
    """What the account reads of an allocation (a :class:`~wddmsim.vidmm.allocation.Accountable`; a protocol,
    so that this module sits below the allocation's, decision 0060)."""

    handle: HANDLE
    size: int
    group: D3DKMT_MEMORY_SEGMENT_GROUP
    accounted: bool

    @property
    def residency_count(self) -> int: ...

    @property
    def placement(self) -> Placement | None: ...


def _pair() -> list[int]:
    return [0, 0]


@dataclass(frozen=True, slots=True)
class Figures:
    """One process's bytes in one segment group (what :meth:`ProcessAccount.figures` answers)."""

    usage: int
    committed: int
    resident: int
    """In a memory segment."""
    aperture: int
    """In an aperture segment."""
    demoted: int

    @property
    def evicted(self) -> int:
        """Committed bytes placed nowhere: their content is in system memory."""
        return self.committed - self.resident - self.aperture


@final
@dataclass(slots=True, eq=False)
class ProcessAccount:
    """One process's bytes, indexed by ``D3DKMT_MEMORY_SEGMENT_GROUP`` (0 local, 1 non-local): the group an
    allocation is charged to (decision 0013), whatever segment holds it now."""

    process: int = 0
    apertures: frozenset[int] = frozenset()
    """The aperture segments' ids: a placement there is ``aperture``, elsewhere ``resident``."""
    events: EventLog | None = None
    usage: list[int] = field(default_factory=_pair)
    """Bytes of allocations its devices' residency lists hold (``CurrentUsage``)."""
    committed: list[int] = field(default_factory=_pair)
    """Bytes of its live allocations."""
    resident: list[int] = field(default_factory=_pair)
    aperture: list[int] = field(default_factory=_pair)
    demoted: list[int] = field(default_factory=_pair)
    """Bytes charged to the local group but placed in an aperture segment."""

    def figures(self, group: int) -> Figures:
        return Figures(
            self.usage[group], self.committed[group], self.resident[group], self.aperture[group], self.demoted[group]
        )

    def created(self, a: Accountable) -> None:
        """A new allocation of this process (not listed, not placed): ``AdapterAllocation``, then the commitment."""
        self._allocation(a, "create")
        a.accounted = True
        self.committed[a.group] += a.size
        self._commitment(a.group)

    def destroyed(self, a: Accountable) -> None:
        """An allocation gone (its placement already left): ``AdapterAllocation``, then its listing and commitment
        go with it."""
        self._allocation(a, "destroy")
        if not a.accounted:
            return
        if a.residency_count:
            self.listed(a, False)
        if a.placement is not None:
            self.moved(a, a.placement.segment_id, None)
        a.accounted = False
        self.committed[a.group] -= a.size
        self._commitment(a.group)

    def listed(self, a: Accountable, listed: bool) -> None:
        """``a``'s residency count left zero (``listed``) or came back to it."""
        self.usage[a.group] += a.size if listed else -a.size
        if self.events is not None:
            self.events.emit(
                VidMmProcessUsageChange(
                    time=self.events.clock.now, process=self.process, group=a.group, bytes=self.usage[a.group]
                )
            )

    def moved(self, a: Accountable, source: int | None, destination: int | None) -> None:
        """``a`` left segment ``source`` and/or entered ``destination`` (None: no segment)."""
        demoted = self.demoted[a.group]
        for segment, sign in ((source, -1), (destination, 1)):
            if segment is None:
                continue
            if segment in self.apertures:
                self.aperture[a.group] += sign * a.size
                if a.group == LOCAL:
                    self.demoted[a.group] += sign * a.size
            else:
                self.resident[a.group] += sign * a.size
        if self.demoted[a.group] != demoted and self.events is not None:
            self.events.emit(
                VidMmProcessDemotedCommitmentChange(
                    time=self.events.clock.now, process=self.process, group=a.group, bytes=self.demoted[a.group]
                )
            )

    def _allocation(self, a: Accountable, action: str) -> None:
        if self.events is not None:
            self.events.emit(
                AdapterAllocation(
                    time=self.events.clock.now,
                    allocation=a.handle,
                    size=a.size,
                    action=action,
                    process=self.process,
                    group=int(a.group),
                )
            )

    def _commitment(self, group: int) -> None:
        if self.events is not None:
            self.events.emit(
                VidMmProcessCommitmentChange(
                    time=self.events.clock.now, process=self.process, group=group, bytes=self.committed[group]
                )
            )


__all__ = ["Accountable", "Figures", "ProcessAccount"]
