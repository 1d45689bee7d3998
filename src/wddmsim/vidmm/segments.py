"""The segments as VidMm manages them: each driver segment's descriptor and the allocator of its ranges.

Segment ids are the driver's (1-based; decision D4: 0 is the implicit system-memory segment).  A memory
segment's ranges are memory; an aperture segment's ranges are addresses that the backing pages are mapped
behind (``DXGK_OPERATION_MAP_APERTURE_SEGMENT``).  Besides allocations, VidMm places its own objects -- the
system paging process's page tables -- and they are named owners of their ranges, so the invariant checker
and the inspector can say what each range holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, final

from wddmsim.core.events import EventLog
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.vidmm.events import ReportSegment, SegmentRange, TotalBytesResidentInSegment
from wddmsim.vidmm.ranges import RangeAllocator

SYSTEM_SEGMENT = 0
"""Decision D4: the implicit system-memory segment."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an allocation's content is: a range of a driver segment."""

    segment_id: int
    offset: int
    """Offset into the segment; ``SegmentAddress`` = ``BaseAddress`` + offset."""


@final
class ApertureCommit:
    """``DXGK_DRIVERCAPS.ApertureSegmentCommitLimit``: VidMm never maps more than ``limit`` bytes of physical
    memory into the aperture segments, together."""

    __slots__ = ("limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def fits(self, size: int) -> bool:
        return self.used + size <= self.limit


@final
class SegmentSpace:
    """One driver segment: its descriptor and its range allocator."""

    def __init__(
        self,
        segment_id: int,
        descriptor: DXGK_SEGMENTDESCRIPTOR4,
        events: EventLog | None = None,
        commit: ApertureCommit | None = None,
    ) -> None:
        self.id = segment_id
        self.commit = commit
        """An aperture segment's share of the adapter's aperture commit limit (None: only its own limits)."""
        self.events = events
        """Where range changes are reported (``SegmentRange``, ``TotalBytesResidentInSegment``), if anywhere."""
        self.descriptor = descriptor
        usable = min(descriptor.Size, descriptor.CommitLimit or descriptor.Size)  # never commit past CommitLimit
        self.ranges = RangeAllocator(usable - usable % PAGE_SIZE)
        self.owners: dict[int, object] = {}
        """Offset -> what holds the range there (an allocation, or VidMm's own object)."""
        self._held: tuple[list[tuple[int, int]], list[tuple[int, int, object]]] = ([], [])
        """:meth:`held`, with the allocator's spans it was made from (made again when they change)."""
        # Read once: the driver's descriptor is fixed once VidMm has it, and these are asked on every placement
        # (a bit field read through its accessors each time).
        self.aperture = bool(descriptor.Flags.Aperture)
        self.cpu_visible = bool(descriptor.Flags.CpuVisible)
        self.base = int(descriptor.BaseAddress)

    @property
    def size(self) -> int:
        return self.ranges.size

    @property
    def group(self) -> D3DKMT_MEMORY_SEGMENT_GROUP:
        """The budget group: ``NonLocalBudgetGroup`` (or an aperture) is non-local, everything else local."""
        flags = self.descriptor.Flags
        if flags.NonLocalBudgetGroup or (flags.Aperture and not flags.LocalBudgetGroup):
            return D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL
        return D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL

    def allocate(
        self, size: int, owner: object, *, alignment: int = 0, from_end: bool = False, at: int | None = None
    ) -> int | None:
        """A range for ``owner``: where the allocator finds one, or exactly at ``at`` (a hole an eviction scan
        freed); None if there is none."""
        if self.commit is not None and not self.commit.fits(-(-size // PAGE_SIZE) * PAGE_SIZE):
            return None  # as if full: what makes room here (evicting from this segment) lowers the commit too
        free = self.ranges.free_bytes
        if at is None:
            offset = self.ranges.allocate(size, alignment=alignment, from_end=from_end)
        elif at < 0 or at + size > self.ranges.size:
            offset = None
        else:
            offset = self.ranges.allocate_in(size, alignment=alignment, lo=at, hi=at + size)
        if offset is not None:
            if self.commit is not None:
                self.commit.used += free - self.ranges.free_bytes
            self.owners[offset] = owner
            if self.events is not None and self.events.enabled:
                self._report(offset, free - self.ranges.free_bytes, "allocate", owner)
        return offset

    def fits_after_freeing(
        self, size: int, offsets: Sequence[int], *, alignment: int = 0, uncommitted: int = 0
    ) -> bool:
        """Whether :meth:`allocate` of ``size`` bytes would succeed once the ranges at ``offsets`` were freed
        (the commit limit included, with ``uncommitted`` bytes more given back to it by ranges freed in the other
        segments that share it); nothing changes (decision 0218)."""
        if self.commit is not None:
            freed = sum(self.ranges.size_of(offset) for offset in offsets) + uncommitted
            if not self.commit.fits(-(-size // PAGE_SIZE) * PAGE_SIZE - freed):
                return False
        return self.ranges.fits_after_freeing(size, offsets, alignment=alignment)

    def free(self, offset: int) -> None:
        free = self.ranges.free_bytes
        self.ranges.free(offset)
        if self.commit is not None:
            self.commit.used -= self.ranges.free_bytes - free
        owner = self.owners.pop(offset)
        if self.events is not None and self.events.enabled:
            self._report(offset, self.ranges.free_bytes - free, "free", owner)

    def _report(self, offset: int, size: int, action: str, owner: object) -> None:
        events = self.events
        assert events is not None
        now = events.clock.now
        if not events.skips(SegmentRange, now):  # a plain run has no one for these: they are not even built
            kind, allocation, process = _describe(owner)
            events.emit(
                SegmentRange(
                    time=now,
                    segment=self.id,
                    offset=offset,
                    size=size,
                    action=action,
                    owner=kind,
                    allocation=allocation,
                    process=process,
                    label=repr(owner) if kind != "allocation" else "",
                )
            )
        if not events.skips(TotalBytesResidentInSegment, now):
            used = self.ranges.size - self.ranges.free_bytes
            events.emit(TotalBytesResidentInSegment(time=now, segment=self.id, bytes=used))

    def held(self) -> Iterator[tuple[int, int, object]]:
        """``(offset, size, owner)`` of every range, in address order."""
        spans = self.ranges.allocated_spans()
        made_from, held = self._held
        if spans is not made_from:  # a range was allocated or freed since (owners change only with them)
            owners = self.owners
            held = [(start, size, owners[start]) for start, size in spans]
            self._held = (spans, held)
        return iter(held)


@final
class Segments:
    """Every driver segment, by id."""

    def __init__(
        self,
        descriptors: list[DXGK_SEGMENTDESCRIPTOR4],
        events: EventLog | None = None,
        *,
        aperture_commit_limit: int = 0,
    ) -> None:
        self.aperture_commit = ApertureCommit(aperture_commit_limit) if aperture_commit_limit else None
        """``ApertureSegmentCommitLimit`` across the aperture segments (0 from the driver: no limit but theirs)."""
        self.spaces = [
            SegmentSpace(i + 1, d, events, self.aperture_commit if d.Flags.Aperture else None)
            for i, d in enumerate(descriptors)
        ]

    def __iter__(self) -> Iterator[SegmentSpace]:
        return iter(self.spaces)

    def __len__(self) -> int:
        return len(self.spaces)

    def get(self, segment_id: int, argument: str = "SegmentId") -> SegmentSpace:
        if not 1 <= segment_id <= len(self.spaces):
            raise InvalidArgument(
                argument,
                segment_id,
                f"segments are 1..{len(self.spaces)} (0 is system memory)",
                NTSTATUS.STATUS_INVALID_PARAMETER,
            )
        return self.spaces[segment_id - 1]

    def ids_in(self, segment_set: int) -> list[int]:
        """The ids of a segment-set bit mask (bit ``id - 1``), in id order."""
        return [s.id for s in self.spaces if segment_set >> (s.id - 1) & 1]

    @property
    def aperture(self) -> SegmentSpace | None:
        return next((s for s in self.spaces if s.aperture), None)


def _describe(owner: object) -> tuple[str, int, int]:
    """What holds a range, for the event log: (kind, allocation handle, process handle).

    Allocations carry a handle and a device (whose process owns them); page tables carry a level and a key.
    Read by attribute so that this module does not depend on the owners' modules.
    """
    handle = getattr(owner, "handle", None)
    device = getattr(owner, "device", None)
    if isinstance(handle, int) and device is not None:
        process = getattr(getattr(device, "process", None), "handle", 0)
        return "allocation", int(handle), int(process) if isinstance(process, int) else 0
    if hasattr(owner, "level") and hasattr(owner, "key"):
        return "page-table", 0, 0
    return "other", 0, 0


class MakeRoom(Protocol):
    """A range of ``size`` bytes of ``space`` for ``owner`` (one of VidMm's own objects), made by evicting if need
    be; None if even that cannot free one."""

    def __call__(self, space: SegmentSpace, size: int, owner: object, *, alignment: int = 0) -> int | None: ...


class IdleTables(Protocol):
    """Room from VidMm's own movable objects (page tables of idle processes), asked before allocations a residency
    list needs are evicted, with the ranges of the allocations that may still leave for the same request
    (``others``).  Returns where the request was placed (or None), and whether trees left (decision 0218)."""

    def __call__(
        self,
        segment: SegmentSpace,
        size: int,
        owner: object,
        alignment: int,
        from_end: bool,
        others: Callable[[], Sequence[int]],
    ) -> tuple[int | None, bool]: ...


def report_segments(spaces: Segments, events: EventLog) -> None:
    """``ReportSegment`` for each driver segment, as VidMm learnt it from ``DXGKQAITYPE_QUERYSEGMENT4``."""
    for space in spaces:
        d = space.descriptor
        events.emit(
            ReportSegment(
                time=events.clock.now,
                segment=space.id,
                base_address=int(d.BaseAddress),
                size=space.size,
                commit_limit=int(d.CommitLimit),
                cpu_translated_address=int(d.CpuTranslatedAddress),
                flags=d.Flags.Value,
                group=int(space.group),
                aperture=space.aperture,
                cpu_visible=space.cpu_visible,
            )
        )
