"""User-mode CPU address spaces and the views VidMm maps into them for locks.

A process's CPU reaches an allocation only through a *view*: a range of its user virtual addresses that the OS
points either at bus addresses of the PCI BAR (an allocation in a CPU-visible memory segment, seen linearly --
or linearised by a detiling window the driver programmed for a swizzling range) or at system pages (the
allocation's backing store, or the pages an aperture range maps).  ``MmRotatePhysicalView`` is how Windows
re-points a view under a running application; :meth:`UserAddressSpace.map_view_pages` is that rotation here.

An access outside every mapped view -- an unlocked allocation, a byte past the end -- raises
:class:`CpuAccessViolation` (the access violation the application would take) and touches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

import numpy as np

from wddmsim.core.addresses import CpuVa
from wddmsim.core.errors import WddmsimError
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, pages_spanned
from wddmsim.ddi.memory import PfnArray
from wddmsim.hw.bar import BarAccessError, PciBar
from wddmsim.hw.memory import SystemMemory

USER_VA_BASE: Final = 0x0000_0100_0000_0000
"""Where the views of a process start (user half of a 48-bit CPU address space)."""


class CpuAccessViolation(WddmsimError):
    """The process's CPU touched an address no mapped view covers."""


@dataclass(slots=True, eq=False)
class _View:
    """One view of a process's user addresses: its range and what it points at (BAR bus addresses or system pages)."""

    base: CpuVa
    size: int
    bus: int | None = None
    """Linear bus addresses from here (a BAR range), or None."""
    pfns: PfnArray | None = None
    """System pages, one per 4 KiB of the view, or None."""

    @property
    def mapped(self) -> bool:
        return self.bus is not None or self.pfns is not None


@final
class UserAddressSpace:
    """One process's user-mode views (implements ``ddi.driver.CpuAddressSpace``)."""

    __slots__ = ("_bar", "_next", "_ram", "_views")

    def __init__(self, ram: SystemMemory, bar: PciBar | None) -> None:
        self._ram = ram
        self._bar = bar
        self._views: dict[int, _View] = {}
        self._next = USER_VA_BASE

    # --- what VidMm does -----------------------------------------------------------------------------------

    def reserve_view(self, size: int) -> CpuVa:
        if size <= 0:
            raise ValueError(f"size={size}: a view holds at least one byte")
        base = CpuVa(self._next)
        pages = pages_spanned(size)
        self._next += (pages + 1) * PAGE_SIZE  # an unmapped guard page after every view
        self._views[base] = _View(base, pages * PAGE_SIZE)
        return base

    def map_view_bus(self, va: CpuVa, bus_address: int) -> None:
        view = self._view(va)
        if self._bar is None or not (
            self._bar.bus_base <= bus_address and bus_address + view.size <= self._bar.bus_base + self._bar.size
        ):
            raise ValueError(f"bus range {bus_address:#x}+{view.size:#x} is not inside the device's BAR")
        view.bus, view.pfns = bus_address, None

    def map_view_pages(self, va: CpuVa, pfns: PfnArray) -> None:
        view = self._view(va)
        if pfns.shape[0] < view.size >> PAGE_SHIFT:
            raise ValueError(f"{pfns.shape[0]} page(s) cannot back a {view.size:#x}-byte view")
        view.bus, view.pfns = None, np.array(pfns[: view.size >> PAGE_SHIFT], dtype=np.uint64)

    def unmap_view(self, va: CpuVa) -> None:
        view = self._view(va)
        view.bus, view.pfns = None, None

    def free_view(self, va: CpuVa) -> None:
        self._view(va)
        del self._views[va]

    def _view(self, va: CpuVa) -> _View:
        view = self._views.get(va)
        if view is None:
            raise ValueError(f"{va:#x} is not the base of a view")
        return view

    # --- what the process's CPU does -----------------------------------------------------------------------

    def read(self, va: CpuVa, size: int) -> bytes:
        view, offset = self._find(va, size)
        if view.bus is not None:
            assert self._bar is not None
            return self._read_bar(view.bus + offset, size)
        ram = self._ram.view
        runs = self._runs(view, offset, size)
        if len(runs) == 1:
            start, _, length = runs[0]
            return bytes(ram[start : start + length])
        return b"".join([ram[start : start + length] for start, _, length in runs])  # one copy of each byte

    def read_into(self, va: CpuVa, out: memoryview) -> None:
        size = len(out)
        view, offset = self._find(va, size)
        if view.bus is not None:
            assert self._bar is not None
            try:
                self._bar.read_into(view.bus + offset, out)
            except BarAccessError as error:  # cannot happen for a checked view; kept as the CPU's own fault
                raise CpuAccessViolation(str(error)) from None
            return
        ram = self._ram
        for start, position, length in self._runs(view, offset, size):
            ram.read_into(start, out[position : position + length])  # pages never written read as zeros unread

    def read_spans(self, va: CpuVa, size: int) -> list[ByteArray | int]:
        """:meth:`read` of ``size`` bytes where they lie, through the same view (BAR range, detiling window or
        pages): read-only views laid end to end, a length for a stretch that reads zero unmapped
        (:meth:`PhysicalMemory.spans`)."""
        view, offset = self._find(va, size)
        if view.bus is not None:
            assert self._bar is not None
            try:
                return self._bar.spans(view.bus + offset, size)
            except BarAccessError as error:  # cannot happen for a checked view; kept as the CPU's own fault
                raise CpuAccessViolation(str(error)) from None
        out: list[ByteArray | int] = []
        for start, _, length in self._runs(view, offset, size):
            out += self._ram.spans(start, length)
        return out

    def write(self, va: CpuVa, payload: bytes | bytearray | memoryview) -> None:
        data = memoryview(payload).cast("B")
        view, offset = self._find(va, len(data))
        if view.bus is not None:
            assert self._bar is not None
            self._bar.write(view.bus + offset, data)
            return
        for start, position, length in self._runs(view, offset, len(data)):
            self._ram.view[start : start + length] = data[position : position + length]

    def _read_bar(self, bus: int, size: int) -> bytes:
        assert self._bar is not None
        try:
            return self._bar.read(bus, size)
        except BarAccessError as error:  # cannot happen for a checked view; kept as the CPU's own fault
            raise CpuAccessViolation(str(error)) from None

    def _find(self, va: int, size: int) -> tuple[_View, int]:
        """The mapped view holding ``[va, va + size)`` and the offset of ``va`` in it."""
        if size < 0:
            raise ValueError(f"size={size}: must not be negative")
        for base, view in self._views.items():
            if base <= va < base + view.size:
                if va + size > base + view.size:
                    raise CpuAccessViolation(
                        f"CPU access {va:#x}+{size:#x} runs past the view [{base:#x}, {base + view.size:#x})"
                    )
                if not view.mapped:
                    raise CpuAccessViolation(f"CPU access at {va:#x}: the view at {base:#x} is not mapped (unlocked)")
                return view, va - base
        raise CpuAccessViolation(f"CPU access at {va:#x}: no view of this process maps it")

    @staticmethod
    def _runs(view: _View, offset: int, size: int) -> list[tuple[int, int, int]]:
        """``(RAM byte offset, position in the access, length)`` runs, physically contiguous pages merged."""
        assert view.pfns is not None
        if size <= 0:
            return []
        first, within = divmod(offset, PAGE_SIZE)
        pfns = view.pfns[first : (offset + size - 1) // PAGE_SIZE + 1].astype(np.int64)
        if pfns.shape[0] == 1:
            return [((int(pfns[0]) << PAGE_SHIFT) + within, 0, size)]
        starts = [0, *(np.flatnonzero(np.diff(pfns) != 1) + 1).tolist()]
        frames = pfns[starts].tolist()
        runs: list[tuple[int, int, int]] = []
        position = 0
        for page, frame, stop in zip(starts, frames, [*starts[1:], pfns.shape[0]], strict=True):
            skip = within if page == 0 else 0
            length = min((stop - page) * PAGE_SIZE - skip, size - position)
            runs.append(((frame << PAGE_SHIFT) + skip, position, length))
            position += length
        return runs

    def views(self) -> list[tuple[CpuVa, int, str]]:
        """``(base, size, what backs it)`` of every view (for the inspector)."""
        return [
            (v.base, v.size, "bus" if v.bus is not None else ("pages" if v.pfns is not None else "unmapped"))
            for v in self._views.values()
        ]
