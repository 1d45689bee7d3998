"""The PCI BAR: a CPU-visible window of bus addresses onto local memory, with detiling windows.

Bus address ``bus_base + o`` reaches local memory offset ``local_offset + o`` (linear access through the PCI
aperture).  A *detiling window* is a register that makes a BAR range show tiled memory as linear bytes -- the
hardware behind WDDM swizzling ranges.  Registers are MMIO: a write takes effect at once, not in packet order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import ByteArray
from wddmsim.hw.memory import LocalMemory
from wddmsim.hw.swizzle import TILE_HEIGHT, TILE_SIZE, TILE_WIDTH, check_surface


@dataclass(frozen=True, slots=True)
class DetileWindow:
    """BAR bytes ``[offset, offset + size)`` show a tiled surface of ``pitch``-byte rows as linear."""

    offset: int
    size: int
    pitch: int


class BarAccessError(Exception):
    """A CPU access outside the BAR."""


@final
class PciBar:
    """The BAR window; ``windows`` are the detiling registers (``None`` = free)."""

    __slots__ = ("bus_base", "local", "local_offset", "size", "windows")

    def __init__(self, bus_base: int, size: int, local: LocalMemory, local_offset: int, window_count: int) -> None:
        self.bus_base = bus_base
        self.size = size
        self.local = local
        self.local_offset = local_offset
        self.windows: list[DetileWindow | None] = [None] * window_count
        if not local.contains(local_offset, size):
            raise ValueError(f"BAR of {size:#x} bytes at local offset {local_offset:#x} leaves local memory")

    def program_window(self, index: int, window: DetileWindow | None) -> None:
        """MMIO: set or clear detiling register ``index``."""
        if window is not None:
            problem = check_surface(window.pitch, window.size)
            if problem or window.offset < 0 or window.offset + window.size > self.size:
                raise ValueError(f"detile window {window}: {problem or 'leaves the BAR'}")
        self.windows[index] = window

    def _local_indices(self, offset: int, length: int) -> npt.NDArray[np.int64]:
        """Local-memory offsets of BAR bytes ``[offset, offset + length)``, through any detiling window."""
        linear = np.arange(offset, offset + length, dtype=np.int64)
        out = linear + self.local_offset
        for window in self.windows:
            if window is None:
                continue
            inside = (linear >= window.offset) & (linear < window.offset + window.size)
            if not inside.any():
                continue
            rel = linear[inside] - window.offset
            row, col = np.divmod(rel, window.pitch)
            tile_row, row_in_tile = np.divmod(row, TILE_HEIGHT)
            tile_col, col_in_tile = np.divmod(col, TILE_WIDTH)
            tiled = (
                (tile_row * (window.pitch // TILE_WIDTH) + tile_col) * TILE_SIZE
                + row_in_tile * TILE_WIDTH
                + col_in_tile
            )
            out[inside] = self.local_offset + window.offset + tiled
        return out

    def _check(self, bus_address: int, length: int) -> int:
        offset = bus_address - self.bus_base
        if offset < 0 or offset + length > self.size:
            raise BarAccessError(f"bus address {bus_address:#x}+{length:#x} is outside the BAR")
        return offset

    def _is_linear(self, offset: int, length: int) -> bool:
        return all(w is None or offset + length <= w.offset or w.offset + w.size <= offset for w in self.windows)

    def read(self, bus_address: int, length: int) -> bytes:
        offset = self._check(bus_address, length)
        if self._is_linear(offset, length):
            start = self.local_offset + offset
            return self.local.read(start, length)
        return self.local.data[self._local_indices(offset, length)].tobytes()

    def read_into(self, bus_address: int, out: memoryview) -> None:
        """:meth:`read` of ``len(out)`` bytes into ``out``."""
        length = len(out)
        offset = self._check(bus_address, length)
        if self._is_linear(offset, length):
            start = self.local_offset + offset
            out[:] = self.local.view[start : start + length]
            return
        np.frombuffer(out, dtype=np.uint8)[:] = self.local.data[self._local_indices(offset, length)]

    def spans(self, bus_address: int, length: int) -> list[ByteArray | int]:
        """:meth:`read` of ``length`` bytes where they lie (:meth:`PhysicalMemory.spans`): linearly, local memory
        itself; through a detiling window, the bytes gathered in linear order (the detiling is the read)."""
        offset = self._check(bus_address, length)
        if self._is_linear(offset, length):
            return self.local.spans(self.local_offset + offset, length)
        return [self.local.data[self._local_indices(offset, length)]]

    def write(self, bus_address: int, payload: bytes | bytearray | memoryview) -> None:
        offset = self._check(bus_address, len(payload))
        if self._is_linear(offset, len(payload)):
            self.local.write(self.local_offset + offset, payload)
            return
        self.local.data[self._local_indices(offset, len(payload))] = np.frombuffer(payload, dtype=np.uint8)
