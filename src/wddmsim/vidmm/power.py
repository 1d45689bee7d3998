"""Power transitions: what VidMm does when the system sleeps or hibernates, and when it wakes.

The driver says, per memory segment, what a low-power state keeps (``DXGK_SEGMENTFLAGS``; wddm-spec section
4.2, conformance row 100)::

    PreservedDuringStandby  PreservedDuringHibernate  PartiallyPreservedDuringHibernate   standby     hibernate
              1                        1                           0                       kept        kept
              1                        0                           1                       kept        partly purged
              1                        0                           0                       kept        purged
              0                        0                           0                       purged      purged

Every other combination is invalid.  Partly purged: offsets ``0..SystemMemoryEndAddress`` (inclusive) are
driver-reserved RAM and kept; an allocation reaching past them is purged.  Hybrid sleep purges as hibernate.

Before the adapter enters ``PowerDeviceD3`` (``DxgkDdiSetPowerState``), VidMm empties every range a purge will
hit: allocations go to their backing stores as for an eviction (cause ``power``), the page-table trees of
application processes leave as under pressure (decision 0021), and the system paging process's tables -- pinned
at all other times (DOC:system-paging-process) -- are copied out by the CPU.  After ``PowerDeviceD0`` the paging
process's tables are written back, and the allocations the kernel holds (pinned ones, context images) are
placed again at once; everything else comes back when its device next needs it (decision 0045).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Final, final

from wddmsim.core.events import EventLog
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.power import DEVICE_POWER_STATE, DISPLAY_ADAPTER_HW_ID, POWER_ACTION
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.events import AdapterPowerState
from wddmsim.vidmm.gpu.scheduler import GpuScheduler
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.residency import ResidencyManager
from wddmsim.vidmm.segments import Segments
from wddmsim.vidmm.vaspace import GpuVaSpaces
from wddmsim.vidmm.work.submit import WorkSubmitter


class PowerKind(StrEnum):
    """The system power transition the adapter goes through."""

    STANDBY = "standby"
    HIBERNATE = "hibernate"
    HYBRID_SLEEP = "hybrid_sleep"
    """The system sleeps with a hibernation file written: segments are purged as for hibernate."""


class Purge(Enum):
    KEPT = "kept"
    PARTIAL = "partially purged"
    PURGED = "purged"


_MATRIX: Final = {
    (True, True, False): (Purge.KEPT, Purge.KEPT),
    (True, False, True): (Purge.KEPT, Purge.PARTIAL),
    (True, False, False): (Purge.KEPT, Purge.PURGED),
    (False, False, False): (Purge.PURGED, Purge.PURGED),
}
"""(PreservedDuringStandby, PreservedDuringHibernate, PartiallyPreservedDuringHibernate) -> (standby, hibernate)."""


def purge_rule(segment_id: int, descriptor: DXGK_SEGMENTDESCRIPTOR4) -> tuple[Purge, Purge]:
    """What standby and hibernate do to a memory segment; an invalid combination, or a partial preservation
    without a ``SystemMemoryEndAddress`` inside the segment, is refused (``STATUS_INVALID_PARAMETER``)."""
    flags = descriptor.Flags
    key = (
        bool(flags.PreservedDuringStandby),
        bool(flags.PreservedDuringHibernate),
        bool(flags.PartiallyPreservedDuringHibernate),
    )
    rule = _MATRIX.get(key)
    if rule is None:
        raise InvalidArgument(
            f"segment {segment_id} Flags",
            flags.Value,
            "PreservedDuringHibernate and PartiallyPreservedDuringHibernate each need PreservedDuringStandby, "
            "and exclude each other",
            NTSTATUS.STATUS_INVALID_PARAMETER,
        )
    end = descriptor.SystemMemoryEndAddress
    if rule[1] == Purge.PARTIAL and not 0 < end < descriptor.Size - 1:
        raise InvalidArgument(
            f"segment {segment_id} SystemMemoryEndAddress",
            end,
            f"a partially preserved segment keeps offsets 0..SystemMemoryEndAddress: it must lie inside "
            f"(0, {descriptor.Size - 1:#x})",
            NTSTATUS.STATUS_INVALID_PARAMETER,
        )
    return rule


def purged_from(descriptor: DXGK_SEGMENTDESCRIPTOR4, segment_id: int, kind: PowerKind) -> int | None:
    """The offset from which ``kind`` purges the segment (``None``: nothing; aperture segments keep
    everything -- their pages are system memory)."""
    if descriptor.Flags.Aperture:
        return None
    standby, hibernate = purge_rule(segment_id, descriptor)
    rule = standby if kind == PowerKind.STANDBY else hibernate
    if rule == Purge.KEPT:
        return None
    return 0 if rule == Purge.PURGED else descriptor.SystemMemoryEndAddress + 1


def check_segments(segments: Segments) -> None:
    """At start: every memory segment's power flags form a valid combination."""
    for space in segments:
        if not space.aperture:
            purge_rule(space.id, space.descriptor)


@dataclass(frozen=True, slots=True)
class PurgeMap:
    """Where a power transition purges: segment id -> first purged offset."""

    starts: dict[int, int]

    def hits(self, segment_id: int, offset: int, size: int) -> bool:
        """Whether ``[offset, offset + size)`` of the segment loses its contents."""
        start = self.starts.get(segment_id)
        return start is not None and offset + size > start


@dataclass(frozen=True, slots=True)
class PowerReport:
    """What one transition did."""

    kind: PowerKind
    purged: dict[int, int]
    """Segment id -> first purged offset."""
    evicted: int
    """Allocations that left a purged range."""
    evicted_bytes: int
    trees: int
    """Application page-table trees that left."""
    paging_tables: int
    """Tables of the system paging process copied out and back."""
    restored: int
    """Allocations placed again at once after the wake (pinned, context images)."""


@final
class AdapterPower:
    """Sleep and wake of the adapter, as VidMm drives them (``DxgkDdiSetPowerState``; decision 0091)."""

    def __init__(
        self,
        driver: KernelModeDriver,
        segments: Segments,
        residency: ResidencyManager,
        scheduler: GpuScheduler,
        work: WorkSubmitter,
        events: EventLog,
        *,
        va: GpuVaSpaces | None,
        paging_process: SystemPagingProcess | None,
    ) -> None:
        self.driver = driver
        self.segments = segments
        self.residency = residency
        self.scheduler = scheduler
        self.work = work
        self.events = events
        self.va = va
        self.paging_process = paging_process
        self.transitions: list[PowerReport] = []

    def purge_map(self, kind: PowerKind) -> PurgeMap:
        starts = {}
        for space in self.segments:
            start = purged_from(space.descriptor, space.id, kind)
            if start is not None and start < space.size:
                starts[space.id] = start
        return PurgeMap(starts)

    def transition(self, kind: PowerKind | str) -> PowerReport:
        """The system sleeps (``kind``) and wakes: content in purged ranges survives in system memory and
        every allocation reads back as before; returns what was moved."""
        try:
            kind = PowerKind(kind)
        except ValueError:
            raise InvalidArgument(
                "kind",
                kind,
                f"must be one of {', '.join(k.value for k in PowerKind)}",
                NTSTATUS.STATUS_INVALID_PARAMETER,
            ) from None
        purge = self.purge_map(kind)
        self._idle()
        moved = self.residency.outages.power_down(purge.hits)
        trees = 0 if self.va is None else self.va.power_down(purge.hits)
        saved = {} if self.paging_process is None else self.paging_process.save_tables(purge.hits)
        self._idle()
        action = POWER_ACTION.PowerActionHibernate if kind == PowerKind.HIBERNATE else POWER_ACTION.PowerActionSleep
        self.events.emit(
            AdapterPowerState(
                time=self.events.clock.now,
                state="D3",
                kind=kind.value,
                allocations=len(moved),
                bytes=sum(a.size for a in moved),
            )
        )
        self._set(DEVICE_POWER_STATE.PowerDeviceD3, action)
        self._set(DEVICE_POWER_STATE.PowerDeviceD0, POWER_ACTION.PowerActionNone)
        if self.paging_process is not None:
            self.paging_process.restore_tables(saved)
        restored = self.residency.outages.power_up(moved)
        self.events.emit(
            AdapterPowerState(time=self.events.clock.now, state="D0", kind=kind.value, allocations=restored, bytes=0)
        )
        report = PowerReport(
            kind, dict(purge.starts), len(moved), sum(a.size for a in moved), trees, len(saved), restored
        )
        self.transitions.append(report)
        return report

    def _idle(self) -> None:
        """Nothing runs or waits to run: every device's work and every paging buffer has completed."""
        for device in list(self.residency.objects.devices.values()):
            self.work.quiesce(device)
        self.residency.settle()
        self.scheduler.wait_idle()

    def _set(self, state: DEVICE_POWER_STATE, action: POWER_ACTION) -> None:
        status = self.driver.set_power_state(DISPLAY_ADAPTER_HW_ID, state, action)
        if status < 0:
            raise DdiError(NTSTATUS(status), f"DxgkDdiSetPowerState({state.name}, {action.name}) failed")
