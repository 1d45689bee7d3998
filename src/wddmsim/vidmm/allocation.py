"""VidMm's record of one allocation: what the driver said of it, where its content is, who needs it resident.

Content is in exactly one authoritative place: while the allocation is placed in a *memory* segment, there;
otherwise in its backing store (system pages, an MDL), which an *aperture* placement only maps.  The backing
store is committed when the allocation is created (so eviction can never fail for want of memory) and is
zeroed by the OS, so an allocation that was never written reads zero wherever it first lands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from wddmsim.core.addresses import CpuVa
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGK_ALLOCATIONINFOFLAGS
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCKFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.residency import D3DDDI_OFFER_PRIORITY, D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.vidmm.segments import Placement

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device
    from wddmsim.vidmm.paging.stream import PagingTicket


@dataclass(slots=True, eq=False)
class CpuLock:
    """One allocation's CPU lock (:mod:`wddmsim.vidmm.cpu.locks`): how it was taken and what its view shows."""

    flags: D3DDDICB_LOCKFLAGS
    lock2: bool = False
    count: int = 1
    on_bus: bool = False
    """The view shows the BAR (the allocation is in a CPU-visible memory segment); else system pages."""
    private_data: int = 0
    swizzling_range: int | None = None
    """The ``RangeId`` this lock linearises through (swizzled allocations), if any."""


class Content(Enum):
    """What the allocation's bytes are."""

    ZERO = "zero"
    """Never written: the first placement in a memory segment is a ``Fill`` with 0, not a copy."""
    DATA = "data"
    """Written at some time: moves copy it."""
    DISCARDED = "discarded"
    """Offered and dropped by VidMm: undefined until the application writes it again (reclaim says so)."""


@dataclass(slots=True, eq=False)
class VidMmAllocation:
    """One allocation, as VidMm tracks it (``DXGK_ALLOCATIONINFO`` plus the manager's state)."""

    handle: HANDLE
    device: Device
    size: int
    alignment: int
    preferred: tuple[int, ...]
    """``PreferredSegment``, most preferred first."""
    read_set: int
    write_set: int
    eviction_set: int
    flags: DXGK_ALLOCATIONINFOFLAGS
    priority: int
    group: D3DKMT_MEMORY_SEGMENT_GROUP
    """The budget group it is charged to: that of its most preferred segment (decision 0013)."""
    backing: MDL | None
    """The system pages holding the content while the allocation is not in a memory segment."""
    _placement: Placement | None = None
    content: Content = Content.ZERO
    backing_current: bool = True
    """The backing store holds the same bytes as the placement (true right after a page-in, or after
    ``Evict`` with ``NotWrittenTo``): evicting may then discard instead of copy."""
    clean_start: bool = True
    """Nothing but the GPU has written the placement since it last equalled the backing store (a page-in), and
    no period of use ended without ``NotWrittenTo`` since: an ``Evict`` with ``NotWrittenTo`` then leaves the
    backing store as good as the segment (decision 0015)."""
    _residency_count: int = 0
    last_use: int = 0
    """A stamp from VidMm's use counter: the eviction policies' recency."""
    ready_fence: int = 0
    """The paging-queue fence value after which the current placement is valid (0: it already is)."""
    offered: D3DDDI_OFFER_PRIORITY | None = None
    allow_decommit: bool = False
    pin_count: int = 0
    """Pins (a lock in progress, a paging operation under way): a pinned allocation is never a victim."""
    notify: bool = False
    """``ExplicitResidencyNotification`` on an ``AccessedPhysically`` allocation: ``NotifyResidency`` is sent."""
    moves: int = field(default=0)
    """How many times it was paged in (for statistics)."""
    placed_at: int = 0
    """The use-counter stamp of its last page-in (first in, first out)."""
    context: bool = False
    """A context or device allocation (``DxgkCbCreateContextAllocation``): initialised by ``InitContextResource``."""
    swizzled: bool = False
    """The driver set ``Swizzled`` (WDDM 1.x): VidMm tracks whether its backing store holds swizzled bits."""
    backing_linear: bool = False
    """The backing store holds the allocation unswizzled (an ``Unswizzle`` transfer put it there for the CPU):
    paging it back in asks for ``Swizzle``, and it may not be mapped into an aperture for the GPU as it is."""
    cpu_view: CpuVa | None = None
    """The view reserved in the owner's CPU address space at its first lock (``pData``; kept until destroy)."""
    lock: CpuLock | None = None
    """The CPU lock in force, if any."""
    ranges: dict[int, int] = field(default_factory=dict)
    """Swizzling ranges held: ``PrivateDriverData`` -> ``RangeId`` (cached until evicted, destroyed or stolen)."""
    large_pages_disabled: bool = False
    """``DXGK_ALLOCATIONINFOFLAGS_WDDM2_0.DisableLargePageMapping``: never mapped with a large page."""
    paging: PagingTicket | None = None
    """The paging work of its last move (a copy, fill or map built and maybe not yet run): no CPU view shows its
    bytes before that work ran (decision 0058); None once it is known to have run."""
    accounted: bool = False
    """Live in its process's :class:`~wddmsim.vidmm.accounting.ProcessAccount`: its transitions move the counts."""

    @staticmethod
    def from_info(
        info: DXGK_ALLOCATIONINFO,
        device: Device,
        group: D3DKMT_MEMORY_SEGMENT_GROUP,
        backing: MDL,
        *,
        segment_model: bool = False,
    ) -> VidMmAllocation:
        return VidMmAllocation(
            handle=info.hAllocation,
            device=device,
            size=info.Size,
            alignment=info.Alignment,
            preferred=tuple(info.PreferredSegment.segment_ids()),
            read_set=info.SupportedReadSegmentSet,
            write_set=info.SupportedWriteSegmentSet,
            eviction_set=info.EvictionSegmentSet,
            flags=info.Flags,
            priority=info.AllocationPriority,
            group=group,
            backing=backing,
            notify=bool(info.Flags.ExplicitResidencyNotification and info.Flags.AccessedPhysically),
            swizzled=segment_model and bool(info.Flags.Swizzled),  # bit 7 means something else in WDDM 2.x
            large_pages_disabled=bool(info.FlagsWddm2.DisableLargePageMapping),
        )

    @property
    def residency_count(self) -> int:
        """``MakeResident`` calls not yet matched by ``Evict`` (the device's residency list holds it while > 0)."""
        return self._residency_count

    @residency_count.setter
    def residency_count(self, value: int) -> None:
        # A property, so that no path can change the listing behind the process's CurrentUsage (decision 0175).
        if self.accounted and (value > 0) != (self._residency_count > 0):
            self.device.process.account.listed(self, value > 0)
        self._residency_count = value

    @property
    def placement(self) -> Placement | None:
        return self._placement

    @placement.setter
    def placement(self, value: Placement | None) -> None:
        old = self._placement
        self._placement = value
        if self.accounted and old != value:
            self.device.process.account.moved(
                self, None if old is None else old.segment_id, None if value is None else value.segment_id
            )

    @property
    def usable_set(self) -> int:
        """Segments the allocation may be placed in: readable and writable by the GPU there."""
        return self.read_set & self.write_set

    @property
    def resident(self) -> bool:
        return self.placement is not None

    def __repr__(self) -> str:
        where = "system" if self.placement is None else f"seg{self.placement.segment_id}+{self.placement.offset:#x}"
        return f"<allocation {int(self.handle):#x} {self.size:#x} bytes at {where}, refs={self.residency_count}>"
