"""The system paging process: the GPU address space every paging buffer runs in (GpuMmu, WDDM 2.x).

VidMm creates it at start (DOC:system-paging-process.md): its page tables live in
``PagingProcessPageTableSegmentId`` (a CPU-visible segment), are placed like any other range of that segment,
and are written by the CPU alone -- ``DXGK_OPERATION_UPDATE_PAGE_TABLE`` in the forced ``CPU_VIRTUAL`` mode
with ``pDmaBuffer`` NULL -- so that the space works before any paging buffer can run.  The paging context's
root is set with ``DxgkDdiSetRootPageTable``.

VidMm keeps the top :data:`VIDMM_REGION` of the space for itself: the paging fences of the paging queues
(``DXGK_OPERATION_SIGNAL_MONITORED_FENCE`` writes them by GPU VA) and the scratch area through which content
is moved by ``TransferVirtual``.  The rest of the space is free for whoever drives paging operations by hand
(tests, the paging tour).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, MiB
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS, HANDLE
from wddmsim.ddi.driver import DXGKARG_SETROOTPAGETABLE, KernelModeDriver, SystemMemoryServices
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DXGKARG_BUILDPAGINGBUFFER,
    make_page_table_address,
    make_update_page_table,
)
from wddmsim.ddi.pte import PteArray, pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS, status_name
from wddmsim.vidmm.errors import VidMmError
from wddmsim.vidmm.gpummu import GpuMmuDescription
from wddmsim.vidmm.segments import MakeRoom, Segments

VIDMM_REGION: Final = 64 * MiB
"""The top of the paging process's VA space that VidMm keeps (2 MiB-aligned pieces, from its base): the
paging-queue fences, a window onto the scratch area's leaf tables, then the scratch area."""
FENCE_PAGES: Final = 16
"""Pages of paging-queue fences (one 8-byte fence each, 512 to a page)."""
_PIECE: Final = 2 * MiB


class PageTableTag:
    """The owner recorded for a range that holds one of the paging process's tables."""

    __slots__ = ("key", "level")

    def __init__(self, level: int, key: int) -> None:
        self.level = level
        self.key = key

    def __repr__(self) -> str:
        return f"paging-process level-{self.level} table #{self.key}"


@final
class SystemPagingProcess:
    """The paging process's page tables, kept by the CPU, and VidMm's region at the top of its space."""

    def __init__(
        self,
        driver: KernelModeDriver,
        mm: SystemMemoryServices,
        mmu: GpuMmuDescription,
        segments: Segments,
        context: HANDLE,
        *,
        make_room: MakeRoom | None = None,
        before_cpu_write: Callable[[], None] | None = None,
        scratch_size: int = 16 * MiB,
    ) -> None:
        self.driver = driver
        self.mm = mm
        self.mmu = mmu
        self.segment_id = mmu.levels[0].PagingProcessPageTableSegmentId
        self.space = segments.get(self.segment_id, "PagingProcessPageTableSegmentId")
        if not self.space.cpu_visible:
            raise VidMmError(
                f"PagingProcessPageTableSegmentId={self.segment_id}: the segment must be CPU-visible "
                "(the paging process's tables are written by the CPU)"
            )
        self.dual = bool(mmu.caps.Flags.DualPteSupported)
        self.before_cpu_write = before_cpu_write
        """Waits until nothing queued can still touch a range just handed out (a range freed by an eviction whose
        copy has not run yet would otherwise be overwritten by the CPU first)."""
        self.make_room = make_room
        """A range made by evicting allocations when the segment is full (the residency manager's, as for process
        page tables)."""
        self.tables: dict[tuple[int, int], tuple[int, CpuMapping]] = {}
        self._pointed: set[tuple[int, int]] = set()
        """(level, key) of the tables below the root whose parent entry :meth:`_ensure_path` wrote: this space's
        tables never move nor go, so that entry stays right until something else writes the parent."""
        self._kept_over_reset: dict[tuple[int, int], bytes] = {}
        """The tables' bytes while an adapter reset runs."""
        top = mmu.level_count - 1
        self.root_address = self.physical(top, 0)
        driver.set_root_page_table(
            DXGKARG_SETROOTPAGETABLE(hContext=context, Address=self.root_address, NumEntries=self.entries(top))
        )
        self.va_size = 1 << mmu.caps.VirtualAddressBitCount
        if self.va_size < 4 * VIDMM_REGION:
            raise VidMmError(
                f"VirtualAddressBitCount={mmu.caps.VirtualAddressBitCount}: the paging process needs at least "
                f"{4 * VIDMM_REGION // MiB} MiB of VA space"
            )
        self.region_base = self.va_size - VIDMM_REGION
        self.fence_base = self.region_base
        self.window_base = self.region_base + _PIECE
        """Where the scratch area's leaf tables are mapped, one page each (GPU_VIRTUAL updates name them so)."""
        self.scratch_base = self.region_base + 2 * _PIECE
        if scratch_size <= 0 or scratch_size % _PIECE or scratch_size > VIDMM_REGION - 2 * _PIECE:
            raise VidMmError(
                f"scratch_size={scratch_size:#x}: must be a positive multiple of 2 MiB, at most "
                f"{(VIDMM_REGION - 2 * _PIECE) // MiB} MiB"
            )
        self.scratch_size = scratch_size
        self.scratch_leaves: list[tuple[int, CpuMapping]] = []
        self._prepare_scratch()

    def _prepare_scratch(self) -> None:
        """Create the scratch area's tables (all invalid) and map its leaf tables into the window."""
        span = 1 << self.mmu.shift(1)
        for va in range(self.scratch_base, self.scratch_base + self.scratch_size, span):
            self._ensure_path(va)
            self.scratch_leaves.append(self._table(0, self._key(0, va)))
        per_table = self.mmu.page_size // PAGE_SIZE  # each leaf whole, on its own GPU page(s) (decision 0011)
        pages = np.concatenate(
            [np.arange(per_table, dtype=np.uint64) + (offset >> PAGE_SHIFT) for offset, _ in self.scratch_leaves]
        )
        self.map(self.window_base, segment_id=self.segment_id, page_numbers=pages)

    def scratch_leaf(self, va: int) -> tuple[int, int, CpuMapping, int]:
        """For a scratch VA: the index of its leaf table, the table's segment offset, CPU mapping and window VA."""
        index = (va - self.scratch_base) >> self.mmu.shift(1)
        offset, mapping = self.scratch_leaves[index]
        return index, offset, mapping, self.window_base + index * self.mmu.page_size

    # --- power transitions -------------------------------------------------------------------------------------

    def save_tables(self, purged: Callable[[int, int, int], bool]) -> dict[tuple[int, int], bytes]:
        """Before a power-down: the bytes of every table in a range it purges, copied out by the CPU (these
        tables are pinned at all other times; they are written by the CPU anyway).  Nothing may be queued."""
        return {
            key: mapping.data.tobytes()
            for key, (offset, mapping) in self.tables.items()
            if purged(self.segment_id, offset, mapping.size)
        }

    def restore_tables(self, saved: dict[tuple[int, int], bytes]) -> None:
        """After the adapter is back in D0: each saved table written back in place, before any paging buffer
        runs in this space again."""
        self._pointed.clear()  # the paths are written again too (cheap, and right whatever was saved)
        for key, data in saved.items():
            _, mapping = self.tables[key]
            mapping.data[:] = np.frombuffer(data, dtype=np.uint8)

    # --- adapter reset (decision 0055) -------------------------------------------------------------------------

    def before_reset(self) -> None:
        """Before ``DxgkDdiResetFromTimeout``: every table, written by the CPU alone, copied out (the reset loses
        the memory segments' bytes)."""
        self._kept_over_reset = self.save_tables(lambda segment, offset, size: True)

    def after_reset(self, reason: str) -> None:
        """After ``DxgkDdiRestartFromTimeout``: the tables written back before any paging buffer runs again."""
        saved, self._kept_over_reset = self._kept_over_reset, {}
        self.restore_tables(saved)

    # --- geometry ----------------------------------------------------------------------------------------------

    def entries(self, level: int) -> int:
        return 1 << self.mmu.levels[level].PageTableIndexBitCount

    def index(self, va: int, level: int) -> int:
        return self.mmu.index(va, level)

    def _key(self, level: int, va: int) -> int:
        return 0 if level == self.mmu.level_count - 1 else va >> self.mmu.shift(level + 1)

    def _dual(self, level: int) -> bool:
        return self.dual and level == 1

    # --- tables ------------------------------------------------------------------------------------------------

    def _range(self, size: int, owner: object) -> tuple[int, int]:
        """A range for a table: whole GPU pages, aligned on one (its pages are mapped, e.g. into the window); when
        the segment is full, room is made by evicting allocations (:attr:`make_room`).  Returns offset, size."""
        page = self.mmu.page_size
        size = max(-(-size // page) * page, page)
        alignment = page if page > PAGE_SIZE else 0
        offset = self.space.allocate(size, owner, alignment=alignment, from_end=True)
        if offset is None and self.make_room is not None:
            offset = self.make_room(self.space, size, owner, alignment=alignment)
        if offset is None:
            raise VidMmError(f"segment {self.segment_id} has no room for a {size:#x}-byte table of the paging process")
        return offset, size

    def _map_range(self, offset: int, size: int) -> tuple[int, CpuMapping]:
        """The CPU mapping of a range just handed out, once nothing queued can still touch it."""
        if self.before_cpu_write is not None:
            self.before_cpu_write()  # the CPU writes the table at once; queued moves out of the range run first
        return offset, self.mm.map_io_space(int(self.space.descriptor.CpuTranslatedAddress) + offset, size)

    def _table(self, level: int, key: int) -> tuple[int, CpuMapping]:
        """Segment offset and CPU mapping of the table at ``level`` with ``key``, created all-invalid."""
        found = self.tables.get((level, key))
        if found is not None:
            return found
        offset, size = self._range(self.mmu.levels[level].PageTableSizeInBytes, PageTableTag(level, key))
        # Making room moves allocations; mapping them again may have created this very table meanwhile (a window
        # for a new process table in the same 2 MiB): that one holds entries already, so it is the one kept.
        found = self.tables.get((level, key))
        if found is not None:
            self.space.free(offset)
            return found
        placed = self._map_range(offset, size)
        self.tables[(level, key)] = placed
        count = self.entries(level)
        self._update(
            level, placed[1], 0, pte_array(count), initial=True, big=pte_array(count) if self._dual(level) else None
        )
        return placed

    def physical(self, level: int, va: int) -> D3DGPU_PHYSICAL_ADDRESS:
        """The table covering ``va`` at ``level`` as (SegmentId, SegmentOffset)."""
        offset, _ = self._table(level, self._key(level, va))
        return D3DGPU_PHYSICAL_ADDRESS(SegmentId=self.segment_id, SegmentOffset=offset)

    def table_offset(self, level: int, va: int) -> int:
        return self._table(level, self._key(level, va))[0]

    def table_mapping(self, level: int, va: int) -> CpuMapping:
        return self._table(level, self._key(level, va))[1]

    def new_table(self, size: int = PAGE_SIZE) -> tuple[int, CpuMapping]:
        """A zeroed table of ``size`` bytes outside the tree (a 64 KB-page leaf table): offset and mapping."""
        offset, mapping = self._map_range(*self._range(size, PageTableTag(0, -1)))
        mapping.data[:] = 0
        return offset, mapping

    def write_entries(
        self,
        level: int,
        mapping: CpuMapping,
        start: int,
        entries: PteArray,
        *,
        big: PteArray | None = None,
        use_64k: bool = False,
    ) -> None:
        """``UpdatePageTable`` through the forced CPU path on any table of this space."""
        self._pointed.clear()  # it may have changed an entry that pointed down: every path is written again
        self._update(level, mapping, start, entries, big=big, use_64k=use_64k)

    def _update(
        self,
        level: int,
        mapping: CpuMapping,
        start: int,
        entries: PteArray,
        *,
        initial: bool = False,
        big: PteArray | None = None,
        use_64k: bool = False,
    ) -> None:
        payload = make_update_page_table(
            PageTableLevel=level,
            PageTableAddress=make_page_table_address(CpuVirtual=mapping.pointer(0)),
            pPageTableEntries=entries,
            StartIndex=start,
            NumPageTableEntries=int(entries.shape[0]),
            Flags=DXGK_UPDATEPAGETABLEFLAGS(InitialUpdate=initial, Use64KBPages=use_64k),
            UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL,
            pPageTableEntries64KB=big,
        )
        status = self.driver.build_paging_buffer(DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=None, DmaSize=0))
        if status != NTSTATUS.STATUS_SUCCESS:
            raise VidMmError(f"forced CPU_VIRTUAL UpdatePageTable returned {_status_text(status)}")

    def _ensure_path(self, va: int) -> None:
        """Make every level above the leaf point down towards ``va`` (each entry written once: it never changes)."""
        for level in range(self.mmu.level_count - 1, 0, -1):
            below = (level - 1, self._key(level - 1, va))
            if below in self._pointed:
                continue
            child, _ = self._table(*below)
            entry = pte_array(1)
            entry["Flags"] = pte_flags(Valid=1, Segment=self.segment_id)
            entry["PageAddress"] = child >> PAGE_SHIFT
            _, mapping = self._table(level, self._key(level, va))
            big = pte_array(1) if self._dual(level) else None
            self._update(level, mapping, self.index(va, level), entry, big=big)
            self._pointed.add(below)

    def map(self, va: int, *, segment_id: int, page_numbers: npt.NDArray[np.uint64], read_only: bool = False) -> None:
        """Map consecutive 4 KiB pages from ``va`` onto pages of segment ``segment_id`` (0: system PFNs)."""
        self._write_leaves(va, int(page_numbers.shape[0]), segment_id, page_numbers, read_only)

    def unmap(self, va: int, pages: int) -> None:
        """Make ``pages`` leaf entries from ``va`` invalid (the caller flushes the TLB before reusing the pages)."""
        self._write_leaves(va, pages, 0, None, False)

    def _write_leaves(
        self, va: int, total: int, segment_id: int, page_numbers: npt.NDArray[np.uint64] | None, read_only: bool
    ) -> None:
        if va % PAGE_SIZE or va < 0 or va + total * PAGE_SIZE > 1 << self.mmu.caps.VirtualAddressBitCount:
            raise VidMmError(f"va={va:#x}: {total} page(s) from it leave the paging process's VA space")
        leaf_span = 1 << self.mmu.shift(1)
        done = 0
        while done < total:
            address = va + done * PAGE_SIZE
            self._ensure_path(address)
            count = min(total - done, (leaf_span - address % leaf_span) // PAGE_SIZE)
            leaf = pte_array(count)
            if page_numbers is not None:
                leaf["Flags"] = pte_flags(Valid=1, Segment=segment_id, ReadOnly=int(read_only))
                leaf["PageAddress"] = page_numbers[done : done + count]
            _, mapping = self._table(0, self._key(0, address))
            self._update(0, mapping, self.index(address, 0), leaf)
            done += count


def _status_text(status: object) -> str:
    """A driver's answer as a reader wants it: the status's name and code, or the value it was if not a number."""
    if not isinstance(status, int) or isinstance(status, bool):
        return repr(status)
    code = status & 0xFFFFFFFF
    name = status_name(code)
    return name if name.startswith("0x") else f"{name} {code:#010x}"
