"""The page-table trees' shared state and the steps every other part builds on.

:class:`TableBase` holds what VidMm keeps of every process's tree and of the driver's page-table caps, the
tree's geometry (which table of a level covers a VA), the contexts that run in a space (held idle around
updates with ``PageTableUpdateRequireAddressSpaceIdle``, wddm-spec section 2.8), and the DDI operations every
step builds: ``UpdatePageTable`` in the driver's update mode (``GPU_VIRTUAL`` names a table by its window in the
system paging process, ``GPU_PHYSICAL`` by segment address, ``CPU_VIRTUAL`` through a CPU mapping of the BAR,
written once the paging engine is idle), ``FlushTlb`` and ``DxgkDdiSetRootPageTable``.  Where room for a table
comes from is here too (:meth:`TableBase.place`): tables come first when a segment is full.

The rest of the tree is layered on it (see the package docstring): :mod:`.placement`, :mod:`.links`,
:mod:`.tree`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np

from wddmsim.core.addresses import GpuVa, SegmentOffset
from wddmsim.core.units import GiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.driver import DXGKARG_SETROOTPAGETABLE, KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    make_page_table_address,
    make_update_page_table,
)
from wddmsim.ddi.pte import NOT_INVALID_FLAGS, PteArray, pte_array
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.vidmm.events import AddressSpaceResumed, AddressSpaceSuspended
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.process import SystemPagingProcess
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.ports import VaResidency
from wddmsim.vidmm.ranges import RangeAllocator
from wddmsim.vidmm.segments import Segments, SegmentSpace
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable

if TYPE_CHECKING:
    from wddmsim.vidmm.device import Device, Process

Mode = DXGK_PAGETABLEUPDATEMODE
VA_ALIGNMENT = 64 * 1024
"""Reservations and mappings without an explicit base are 64 KB aligned."""
SIZE_64K = 64 * 1024
WINDOW_SIZE = 1 * GiB
"""Paging-process VA below VidMm's region through which process tables are updated (``GPU_VIRTUAL``)."""
LEAF64 = -1
"""The level recorded for a 64 KB-page leaf table in :attr:`GpuVaSpace.saved`."""


class TreeHooks(Protocol):
    """What the tree asks of the VA services built on it, handed to its constructor (decision 0060): the leaf
    entries (:mod:`.entries`), the privileged spaces (:mod:`.privileged`) and the tiled updates (:mod:`.update`)
    are built on the tree, so the tree reaches them through these calls, not through hooks set afterwards."""

    def render(self, space: GpuVaSpace, lo: int, hi: int) -> None:
        """Write every entry of ``[lo, hi)`` from the records (:meth:`.entries.Entries.render`)."""
        ...

    def table_created(self, table: ProcessTable) -> None:
        """A table was created and initialised (it is mapped into the privileged VA space)."""
        ...

    def table_freed(self, table: ProcessTable) -> None:
        """A table is about to be freed (its privileged mapping goes first)."""
        ...

    def wait_companions(self, process: Process) -> None:
        """The process's paging companions finish what they were given."""
        ...


class TableBase:
    """What every step on a process's page-table tree reads and builds (the tree's state, its geometry, the
    contexts using it, ``UpdatePageTable``, ``FlushTlb``, ``SetRootPageTable``)."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        paging: PagingStream,
        mmu: GpuMmuDescription,
        segments: Segments,
        process: SystemPagingProcess,
        objects: ObjectTable,
        residency: VaResidency,
        hooks: TreeHooks,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.paging = paging
        self.mmu = mmu
        self.segments = segments
        self.paging_process = process
        self.objects = objects
        """Devices and contexts, by handle: who runs in a space."""
        self.events = paging.events
        flags = mmu.caps.Flags
        self.mode = mmu.caps.PageTableUpdateMode
        self.flush_new = not flags.InvalidTlbEntriesNotCached
        self.dual = bool(flags.DualPteSupported)
        self.large_pages = bool(flags.LargePageSupported)
        self.explicit_invalidation = bool(flags.ExplicitPageTableInvalidation)
        """``ExplicitPageTableInvalidation``: every entry of a table is invalidated before the table is freed."""
        self.require_idle = bool(flags.PageTableUpdateRequireAddressSpaceIdle)
        """``PageTableUpdateRequireAddressSpaceIdle``: contexts are suspended around PTE updates and flushes."""
        window_base = process.region_base - WINDOW_SIZE
        self.windows = RangeAllocator(WINDOW_SIZE)
        self.window_high = 0
        """Window VAs below this were handed out before (their paging-process entries were valid)."""
        self.retired: list[int] = []
        """Windows of freed tables.  Operations already built may still name them, and the CPU maps a window at
        once: one is handed out again only after everything built so far has run."""
        self.window_base = window_base
        self.root_moves = 0
        """How many times a resizable root was replaced (grown or shrunk)."""
        self.conversions = 0
        """Single-PTE mode: how many 2 MiB ranges went from 64 KB to 4 KB pages."""
        self.residency = residency
        """Room in full segments (tables come first), and quiescent devices."""
        self.hooks = hooks
        """The VA services built on the tree: entries rendered, tables created and freed, companions waited for."""
        self.stream = paging
        """Where table updates, TLB flushes and entry copies are built: the system paging stream, or -- while
        :meth:`redirect` holds -- a paging companion's."""
        self.address: Callable[[ProcessTable], int] | None = None
        """While redirected (``GPU_VIRTUAL``): the VA the companion names a table by (its privileged VA)."""
        self._stamp = 0

    # --- geometry ----------------------------------------------------------------------------------------------

    @property
    def top(self) -> int:
        return self.mmu.level_count - 1

    @property
    def span1(self) -> int:
        """Bytes one level-1 entry covers (one leaf table; a large page)."""
        return 1 << self.mmu.shift(1)

    def key(self, level: int, va: int) -> int:
        """Which table of ``level`` covers ``va`` (the root is 0)."""
        return 0 if level == self.top else va >> self.mmu.shift(level + 1)

    def coverage(self, level: int, key: int) -> tuple[int, int]:
        """The VA range a table of ``level`` with ``key`` covers."""
        if level == self.top:
            return 0, 1 << self.mmu.caps.VirtualAddressBitCount
        span = 1 << self.mmu.shift(level + 1)
        return key * span, (key + 1) * span

    def entries(self, level: int) -> int:
        return 1 << self.mmu.levels[level].PageTableIndexBitCount

    def entries64(self) -> int:
        """Entries of a 64 KB-page leaf table: one per 64 KiB of the 2 MiB (or so) a leaf covers."""
        return self.span1 // SIZE_64K

    def count(self, table: ProcessTable) -> int:
        """Entries of ``table``."""
        return table.entries

    def all_tables(self, space: GpuVaSpace) -> list[ProcessTable]:
        """Every table of the tree, leaves first, the root last."""
        tables = sorted(space.tables.values(), key=lambda t: (t.level, t.key))
        return list(space.leaves64.values()) + tables

    # --- who uses a space ------------------------------------------------------------------------------------

    def devices(self, process: Process) -> list[Device]:
        return self.objects.devices_of(process)

    def contexts(self, space: GpuVaSpace) -> list[HANDLE]:
        """The contexts that run in ``space``: its process's, or -- a privileged space -- the paging companions."""
        if space.owner is not None:
            return list(space.companions)
        return self.objects.contexts_of(space.process)

    def quiesce(self, process: Process) -> None:
        """Every context of the process is idle: the work it has in flight completes, and so do the page-table
        updates its paging companions were given."""
        self.hooks.wait_companions(process)
        for device in self.devices(process):
            self.residency.quiesce(device)

    def suspend(self, space: GpuVaSpace, reason: str) -> None:
        """The process's contexts are idle and held back until the page-table work built from now on has run
        (:meth:`resume`, called before any of them runs again)."""
        if space.suspended:
            return
        self.quiesce(space.process)
        space.suspended = True
        self.events.emit(
            AddressSpaceSuspended(time=self.events.clock.now, process=int(space.process.handle), reason=reason)
        )

    def resume(self, space: GpuVaSpace) -> None:
        """The page-table work built while the contexts were suspended has run: they may run again."""
        if not space.suspended:
            return
        self.paging.wait(self.paging.flush())
        space.suspended = False
        self.events.emit(AddressSpaceResumed(time=self.events.clock.now, process=int(space.process.handle)))

    def _changing(self, space: GpuVaSpace | None) -> None:
        """Before a PTE update or a TLB invalidation of ``space`` (``PageTableUpdateRequireAddressSpaceIdle``)."""
        if space is not None and self.require_idle:
            self.suspend(space, "PageTableUpdateRequireAddressSpaceIdle")

    @contextmanager
    def hold(self, space: GpuVaSpace) -> Iterator[None]:
        """VidMm is changing the tree: memory pressure may not evict it meanwhile."""
        partner = space.owner or space.privileged  # an application space and its privileged one go together
        space.busy += 1
        if partner is not None:
            partner.busy += 1
        try:
            yield
        finally:
            space.busy -= 1
            if partner is not None:
                partner.busy -= 1

    @contextmanager
    def redirect(self, stream: PagingStream, address: Callable[[ProcessTable], int]) -> Iterator[None]:
        """Build table updates, flushes and entry copies into ``stream`` (a paging companion), naming tables by
        ``address`` (their privileged VA).  Tables created meanwhile are still created by the system paging
        stream (which the caller submits first: both run on the paging engine, in submission order)."""
        kept = self.stream, self.address
        self.stream, self.address = stream, address
        try:
            yield
        finally:
            self.stream, self.address = kept

    @contextmanager
    def _system(self) -> Iterator[None]:
        kept = self.stream, self.address
        self.stream, self.address = self.paging, None
        try:
            yield
        finally:
            self.stream, self.address = kept

    def stamp(self, space: GpuVaSpace) -> None:
        self._stamp += 1
        space.last_use = self._stamp

    # --- the root's programming -------------------------------------------------------------------------------

    def root_address(self, space: GpuVaSpace) -> D3DGPU_PHYSICAL_ADDRESS:
        root = space.tables[(self.top, 0)]
        return D3DGPU_PHYSICAL_ADDRESS(SegmentId=root.segment_id, SegmentOffset=root.offset)

    def set_root(self, space: GpuVaSpace, context: HANDLE) -> None:
        """``DxgkDdiSetRootPageTable`` for a context of the process (the context is idle)."""
        self.driver.set_root_page_table(
            DXGKARG_SETROOTPAGETABLE(
                hContext=context,
                Address=self.root_address(space),
                NumEntries=space.root_entries or self.entries(self.top),
            )
        )

    def set_roots(self, space: GpuVaSpace) -> None:
        for context in self.contexts(space):
            self.set_root(space, context)

    # --- room, and the DDI operations every step builds -------------------------------------------------------

    def place(self, segment: SegmentSpace, size: int, table: ProcessTable, alignment: int) -> SegmentOffset:
        """A range for a table, from the top of the segment (tables do not cut the space allocations share
        into pieces); when the segment is full, room is made for it (tables come first)."""
        offset = segment.allocate(size, table, alignment=alignment, from_end=True)
        if offset is None:
            offset = self.residency.make_room(segment, size, table, alignment=alignment)
        if offset is None:
            raise DdiError(
                NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY,
                f"segment {segment.id} cannot hold a {size:#x}-byte level-{table.level} page table",
            )
        return SegmentOffset(offset)

    def update(
        self,
        table: ProcessTable,
        start: int,
        entries: PteArray,
        *,
        big: PteArray | None = None,
        initial: bool = False,
        protection: int = 0,
        use_64k: bool = False,
        notify_eviction: bool = False,
        source: tuple[int, int] | None = None,
    ) -> None:
        """``UpdatePageTable`` of ``entries`` from ``start`` in ``table``, in the driver's update mode; ``source``:
        the allocation whose pages the entries map and the byte offset of the first (``hAllocation``,
        ``AllocationOffsetInBytes``; NULL for tables and for entries of no allocation)."""
        self._changing(table.space)
        if table.level == 0:
            _track_live(table, start, entries)
        if self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
            va = table.window if self.address is None else self.address(table)
            where = make_page_table_address(GpuVirtual=va)
        elif self.mode == Mode.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL:
            where = make_page_table_address(
                GpuPhysical=D3DGPU_PHYSICAL_ADDRESS(SegmentId=table.segment_id, SegmentOffset=table.offset)
            )
        else:
            assert table.cpu is not None
            self.paging.wait_within(self.paging.flush())  # the CPU writes now: nothing in flight may read it
            where = make_page_table_address(CpuVirtual=table.cpu.pointer(0))
        self.stream.build(
            make_update_page_table(
                PageTableLevel=table.level,
                PageTableAddress=where,
                pPageTableEntries=entries,
                StartIndex=start,
                NumPageTableEntries=int(entries.shape[0]),
                Flags=_update_flags(initial, use_64k, notify_eviction),
                UpdateMode=self.mode,
                pPageTableEntries64KB=big,
                DriverProtection=protection if table.level == 0 else 0,
                hAllocation=HANDLE(0 if source is None else source[0]),
                AllocationOffsetInBytes=0 if source is None else source[1],
            )
        )

    def invalidate_all(self, table: ProcessTable, *, initial: bool = False, notify_eviction: bool = False) -> None:
        """``UpdatePageTable`` of every entry of ``table`` to invalid (both kinds for a dual level-1 table)."""
        count = self.count(table)
        dual_level1 = self.dual and table.level == 1 and not table.big
        self.update(
            table,
            0,
            pte_array(count),
            big=pte_array(count) if dual_level1 else None,
            use_64k=table.big,
            initial=initial,
            notify_eviction=notify_eviction,
        )

    # --- the TLB -----------------------------------------------------------------------------------------------

    def flush_range(self, space: GpuVaSpace, va: GpuVa, size: int) -> None:
        """``FlushTlb`` of ``[va, va + size)`` for the process's root."""
        if space.evicted:
            return
        self._changing(space)
        self.stream.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(
                RootPageTableAddress=self.root_address(space), StartVirtualAddress=va, EndVirtualAddress=va + size - 1
            )
        )

    def _flush_root(self, root: D3DGPU_PHYSICAL_ADDRESS) -> None:
        """``FlushTlb`` of every translation under ``root`` (Start = End = 0)."""
        self.paging.build(
            DXGK_BUILDPAGINGBUFFER_FLUSHTLB(RootPageTableAddress=root, StartVirtualAddress=0, EndVirtualAddress=0)
        )


@functools.cache
def _update_flags(initial: bool, use_64k: bool, notify_eviction: bool) -> DXGK_UPDATEPAGETABLEFLAGS:
    """The flags of an ``UpdatePageTable`` VidMm builds: eight values, made once (every table write names one)."""
    return DXGK_UPDATEPAGETABLEFLAGS(InitialUpdate=initial, Use64KBPages=use_64k, NotifyEviction=notify_eviction)


_NOT_INVALID: Final = int(NOT_INVALID_FLAGS)


def _track_live(table: ProcessTable, start: int, entries: PteArray) -> None:
    """Keep :attr:`ProcessTable.live` of a leaf table true across an update of ``entries`` from ``start``."""
    count = int(entries.shape[0])
    flags = entries["Flags"]
    if count <= 8:  # most updates: a few entries, where one pass in Python beats numpy's per-call cost
        bits = 0
        for i, word in enumerate(flags.tolist()):
            if word & _NOT_INVALID:
                bits |= 1 << i
    else:
        masked = flags & NOT_INVALID_FLAGS
        n = int(np.count_nonzero(masked))
        if n == count:
            bits = (1 << count) - 1
        elif n:
            bits = int.from_bytes(np.packbits(masked != 0, bitorder="little").tobytes(), "little")
        else:
            bits = 0
    span = ((1 << count) - 1) << start
    table.live = (table.live & ~span) | (bits << start)
