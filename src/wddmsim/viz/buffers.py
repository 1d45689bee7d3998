"""DMA buffers as the event log tells them: what each paging buffer carried and when its packets ran.

Every ``DxgkDdiBuildPagingBuffer`` call writes a chunk of the current paging buffer (``BuildPagingBuffer``:
offset, bytes, status); every chunk built since the last submission goes with the next
``PagingBufferSubmitted`` -- VidMm submits all it built, in order.  A call that returned
``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER`` continues in the next buffer: its operation is split over several
(``part k``).  The engine's ``DmaBufferStarted``, ``PacketExecuted`` and ``DmaBufferCompleted`` give each
buffer's packets their times.  The trace and the report's disassembly both read this.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from wddmsim.vidmm.events import PAGING_OP_NAMES
from wddmsim.viz.eventlog import Record

INSUFFICIENT = "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER"


@dataclass(frozen=True, slots=True)
class Chunk:
    """Bytes ``[start, end)`` of a paging buffer that one driver call wrote for one operation."""

    start: int
    end: int
    operation: str
    """The ETW name (``PagingOpTransfer`` ...)."""
    part: int
    """1 for an operation's first pass; k for the k-th pass of a multipass operation."""
    continues: bool
    """The call returned ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER``: the operation goes on in the next buffer."""

    @property
    def name(self) -> str:
        return f"{self.operation} (part {self.part})" if self.part > 1 or self.continues else self.operation


@dataclass(slots=True)
class DmaBuffer:
    """One submission on one node, and what happened to it."""

    node: int
    fence: int
    paging: bool = False
    submitted: int | None = None
    start_offset: int = 0
    end_offset: int = 0
    chunks: list[Chunk] = field(default_factory=list)
    started: int | None = None
    completed: int | None = None
    size: int = 0
    packets: list[tuple[int, int, int]] = field(default_factory=list)
    """(start ns, end ns, submission-relative offset) of each executed packet, in execution (= offset) order."""
    offsets: list[int] = field(default_factory=list)
    """The packets' offsets (for lookups)."""

    @property
    def split(self) -> bool:
        """It ends in the middle of an operation (a multipass split)."""
        return bool(self.chunks) and self.chunks[-1].continues

    def packet_spans(self, chunk: Chunk) -> list[tuple[int, int, int]]:
        """The executed packets that ``chunk`` wrote."""
        lo = bisect.bisect_left(self.offsets, chunk.start - self.start_offset)
        hi = bisect.bisect_left(self.offsets, chunk.end - self.start_offset)
        return self.packets[lo:hi]

    def chunk_at(self, offset: int) -> Chunk | None:
        """The chunk holding buffer byte ``offset`` (None: padding, or not a paging buffer)."""
        for chunk in self.chunks:
            if chunk.start <= offset < chunk.end:
                return chunk
        return None


class BufferTracker:
    """:func:`dma_buffers` as a fold: ``see`` each record; ``live`` holds every submission seen (by (node, fence),
    in submission order) until :meth:`take` removes it -- what a streamed trace does once a buffer completed."""

    def __init__(self) -> None:
        self.live: dict[tuple[int, int], DmaBuffer] = {}
        self.nodes: set[int] = set()
        self.paging_nodes: set[int] = set()
        self._pending: list[Chunk] = []
        self._previous: Chunk | None = None

    def get(self, node: int, fence: int) -> DmaBuffer:
        found = self.live.get((node, fence))
        if found is None:
            found = self.live[(node, fence)] = DmaBuffer(node, fence)
            self.nodes.add(node)
        return found

    def take(self, node: int, fence: int) -> DmaBuffer | None:
        return self.live.pop((node, fence), None)

    def see(self, r: Record) -> None:
        name = r["event"]
        if name == "BuildPagingBuffer":
            start, previous = r["DmaBufferWriteOffset"], self._previous
            part = previous.part + 1 if previous is not None and previous.continues else 1
            operation = str(PAGING_OP_NAMES.get(r["Operation"], r["Operation"]))
            self._previous = Chunk(start, start + r["BytesWritten"], operation, part, r["Status"] == INSUFFICIENT)
            self._pending.append(self._previous)
        elif name == "PagingBufferSubmitted":
            buffer = self.get(r["NodeOrdinal"], r["SubmissionFenceId"])
            self.paging_nodes.add(buffer.node)
            buffer.paging = True
            buffer.submitted = r["time"]
            buffer.start_offset = r["DmaBufferSubmissionStartOffset"]
            buffer.end_offset = r["DmaBufferSubmissionEndOffset"]
            buffer.chunks, self._pending = self._pending, []
        elif name == "AdapterReset":  # what was built but not submitted is gone with the reset
            self._pending, self._previous = [], None
        elif name == "DmaBufferStarted":
            buffer = self.get(r["NodeOrdinal"], r["SubmissionFenceId"])
            buffer.started, buffer.size = r["time"], r["Size"]
            buffer.packets, buffer.offsets = [], []
        elif name == "PacketExecuted":
            buffer = self.get(r["NodeOrdinal"], r["SubmissionFenceId"])
            begin = buffer.packets[-1][1] if buffer.packets else (buffer.started or r["time"])
            buffer.packets.append((begin, r["time"], r["Offset"]))
            buffer.offsets.append(r["Offset"])
        elif name == "DmaBufferCompleted":
            self.get(r["NodeOrdinal"], r["SubmissionFenceId"]).completed = r["time"]


def dma_buffers(rows: Sequence[Record]) -> dict[tuple[int, int], DmaBuffer]:
    """Every submission of the log by (node, fence), in submission order."""
    tracker = BufferTracker()
    for r in rows:
        tracker.see(r)
    return tracker.live


__all__ = ["INSUFFICIENT", "BufferTracker", "Chunk", "DmaBuffer", "dma_buffers"]
