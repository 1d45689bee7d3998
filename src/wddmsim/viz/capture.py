"""Keeping the bytes of submitted paging buffers, for disassembly (``wddmsim disasm``, the report).

The event log says what was built and submitted but not the bytes; :class:`PagingCapture` observes the
paging stream's submissions (its ``capture`` hook, which must not mutate) and keeps copies -- all of them, or a
bounded selection for a report: the first ``first`` buffers, plus buffers a multipass operation was split
over (the one that ended mid-operation and the one that continued it), up to ``splits`` of those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.core.events import Event
from wddmsim.system import Adapter
from wddmsim.vidmm.events import BuildPagingBuffer, PagingBufferSubmitted

INSUFFICIENT = "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER"


@dataclass(frozen=True, slots=True)
class CapturedBuffer:
    fence: int
    start: int
    """Offset of the first submitted byte in the paging buffer."""
    end: int
    operations: int
    """Operations completed in this submission."""
    data: bytes
    split: bool
    """It ends in the middle of an operation (``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER``)."""
    continued: bool
    """It begins with the rest of an operation split over the previous one."""


@dataclass(slots=True)
class PagingCapture:
    """Copies of submitted paging buffers: every one (``first=None``) or a bounded selection."""

    first: int | None = None
    splits: int = 16
    buffers: list[CapturedBuffer] = field(default_factory=list)
    seen: int = 0
    _last_status: str = ""
    _previous_split: bool = False
    _kept_splits: int = 0

    def attach(self, adapter: Adapter) -> None:
        """Observe ``adapter``'s paging stream from now on (read-only hooks)."""
        adapter.events.subscribe(self._on_event)
        adapter.vidmm.paging.capture = self._on_submit

    def _on_event(self, event: Event) -> None:
        if isinstance(event, BuildPagingBuffer):
            self._last_status = event.status

    def _on_submit(self, event: PagingBufferSubmitted, data: bytes) -> None:
        split = self._last_status == INSUFFICIENT
        continued = self._previous_split
        self._previous_split = split
        self.seen += 1
        keep = self.first is None or self.seen <= self.first
        if not keep and (split or continued) and self._kept_splits < self.splits:
            keep = True
            self._kept_splits += 1
        if keep:
            self.buffers.append(
                CapturedBuffer(event.fence, event.start, event.end, event.operations, data, split, continued)
            )


__all__ = ["CapturedBuffer", "PagingCapture"]
