"""The reference model a workload is verified against: the bytes every resource should hold -- computed with numpy
from the workload's own description of each write, never from the simulator's output.

GPU work is described against *views*: a resource seen whole (what a ``MapGpuVirtualAddress`` of it shows), or a
tiled resource whose 64 KiB tiles each show a tile of a pool, read as zero (``Zero``), or are not to be touched
(``NoAccess``) -- what ``UpdateGpuVirtualAddress`` set up.  :class:`Model` applies a ``COPY`` or ``FILL`` by
resolving its views the way the application mapped them; a wrong page-table entry, a stale translation or a lost
page in the simulator then shows up as a difference at verification.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import ByteArray
from wddmsim.scenarios.config import TILE
from wddmsim.scenarios.patterns import fill_bytes


@dataclass(frozen=True, slots=True)
class Ref:
    """A byte of a view: ``offset`` into resource or tiled view ``view``."""

    view: str
    offset: int


@dataclass(frozen=True, slots=True)
class GpuCopy:
    """A ``COPY`` packet (source and destination never share a byte)."""

    src: Ref
    dst: Ref
    size: int


@dataclass(frozen=True, slots=True)
class GpuFill:
    """A ``FILL`` packet with a 32-bit pattern."""

    dst: Ref
    size: int
    value: int


GpuOp = GpuCopy | GpuFill


class TileState(Enum):
    MAPPED = "mapped"
    ZERO = "zero"
    NO_ACCESS = "no-access"


@dataclass(frozen=True, slots=True)
class Tile:
    """A 64 KiB tile of a tiled view: mapped to a tile of a pool, Zero, or NoAccess."""

    state: TileState
    pool: str = ""
    offset: int = 0
    """Byte offset of the pool tile (MAPPED)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """``size`` bytes at ``offset`` of resource ``name`` (None: a Zero tile)."""

    name: str | None
    offset: int
    size: int


MARK = 1 << 12
"""The granule in which the model remembers which bytes were ever written: a page of the host, so that the pages it
never marks are the model's own pages nothing ever touched (``np.zeros`` leaves them unmapped until read)."""


class Unreachable(Exception):
    """An access to a NoAccess tile or past a view (the workload never generates one on purpose)."""


@final
class Model:
    """Expected bytes per resource (zero at creation, as VidMm's first page-in fills them), which of them were ever
    written, and the tiled views."""

    def __init__(self) -> None:
        self.bytes: dict[str, ByteArray] = {}
        self.marks: dict[str, npt.NDArray[np.bool_]] = {}
        """Per resource, per :data:`MARK` bytes: whether a write (CPU or GPU) ever reached them."""
        self.tiles: dict[str, list[Tile]] = {}

    # --- resources and views ---------------------------------------------------------------------------------

    def create(self, name: str, size: int) -> None:
        self.bytes[name] = np.zeros(size, dtype=np.uint8)
        self.marks[name] = np.zeros(-(-size // MARK), dtype=np.bool_)

    def forget(self, name: str) -> None:
        """Resource ``name`` was destroyed: no view may name it again."""
        del self.bytes[name]
        del self.marks[name]

    def create_tiled(self, name: str, tiles: int) -> None:
        """A reserved VA range of ``tiles`` tiles, none accessible yet."""
        self.tiles[name] = [Tile(TileState.NO_ACCESS)] * tiles

    def set_tile(self, view: str, index: int, tile: Tile) -> None:
        self.tiles[view][index] = tile

    def size(self, view: str) -> int:
        if view in self.tiles:
            return len(self.tiles[view]) * TILE
        return int(self.bytes[view].shape[0])

    def pieces(self, ref: Ref, size: int) -> list[Piece]:
        """Where ``size`` bytes from ``ref`` land, in order."""
        if ref.offset < 0 or ref.offset + size > self.size(ref.view):
            raise Unreachable(f"{ref.view}+{ref.offset:#x}+{size:#x} leaves the view")
        tiles = self.tiles.get(ref.view)
        if tiles is None:
            return [Piece(ref.view, ref.offset, size)]
        out: list[Piece] = []
        at, end = ref.offset, ref.offset + size
        while at < end:
            index, within = divmod(at, TILE)
            n = min(end - at, TILE - within)
            tile = tiles[index]
            if tile.state == TileState.NO_ACCESS:
                raise Unreachable(f"tile {index} of {ref.view} is NoAccess")
            out.append(Piece(None, 0, n) if tile.state == TileState.ZERO else Piece(tile.pool, tile.offset + within, n))
            at += n
        return out

    # --- CPU and GPU writes ----------------------------------------------------------------------------------

    def write(self, name: str, offset: int, data: ByteArray) -> None:
        """A CPU write through a lock of resource ``name``."""
        self.bytes[name][offset : offset + data.shape[0]] = data
        self._mark(name, offset, int(data.shape[0]))

    def _mark(self, name: str, offset: int, size: int) -> None:
        if size > 0:
            self.marks[name][offset // MARK : -(-(offset + size) // MARK)] = True

    def blank(self, name: str, offset: int, size: int) -> list[tuple[int, int]]:
        """The stretches ``(start, end)``, relative to ``offset``, of ``size`` bytes of resource ``name`` that no
        write ever reached: they must read zero, which a reader can test without reading the model there."""
        first, last = offset // MARK, -(-(offset + size) // MARK)
        marks = self.marks[name][first:last]
        if marks.all():
            return []
        edges = np.flatnonzero(np.diff(marks.view(np.int8), prepend=1, append=1)) + first  # where runs begin/end
        out = []
        for begin, end in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
            start, stop = max(begin * MARK, offset), min(end * MARK, offset + size)
            out.append((start - offset, stop - offset))
        return out

    def read(self, ref: Ref, size: int) -> ByteArray:
        """The bytes ``size`` bytes from ``ref`` should hold: a view of the model where they lie in one resource
        (a copy would be one more pass over them; nothing writes the model while the view is used, as a copy's
        source and destination never share a byte)."""
        pieces = self.pieces(ref, size)
        only = pieces[0].name if len(pieces) == 1 else None
        if only is not None:
            return self.bytes[only][pieces[0].offset : pieces[0].offset + size]
        parts = [
            np.zeros(p.size, dtype=np.uint8) if p.name is None else self.bytes[p.name][p.offset : p.offset + p.size]
            for p in pieces
        ]
        out: ByteArray = np.concatenate(parts)
        return out

    def _store(self, ref: Ref, data: ByteArray) -> None:
        position = 0
        for p in self.pieces(ref, int(data.shape[0])):
            if p.name is not None:  # a write to a Zero tile is dropped
                self.bytes[p.name][p.offset : p.offset + p.size] = data[position : position + p.size]
                self._mark(p.name, p.offset, p.size)
            position += p.size

    def apply(self, op: GpuOp) -> None:
        """What the GPU does for ``op``."""
        if isinstance(op, GpuCopy):
            self._store(op.dst, self.read(op.src, op.size))
        else:
            self._store(op.dst, fill_bytes(op.value, op.size))

    def overlap(self, a: Ref, b: Ref, size: int) -> bool:
        """Whether ``size`` bytes from ``a`` and from ``b`` share a byte of some resource (aliased tiles too)."""
        left = [(p.name, p.offset, p.offset + p.size) for p in self.pieces(a, size) if p.name is not None]
        for q in self.pieces(b, size):
            for name, start, end in left:
                if name == q.name and start < q.offset + q.size and q.offset < end:
                    return True
        return False

    def total(self) -> int:
        return sum(int(b.shape[0]) for b in self.bytes.values())
