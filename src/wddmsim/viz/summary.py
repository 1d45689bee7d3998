"""Counters from the event log, named after ``D3DKMT_QUERYSTATISTICS`` where the concept exists."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from wddmsim.core.events import Event
from wddmsim.vidmm.events import PAGING_OP_NAMES, BuildPagingBuffer, PagingBufferSubmitted, PagingOperation


def counters(events: Iterable[Event], *, aperture_segments: frozenset[int] = frozenset()) -> dict[str, Any]:
    """Byte counters, operation counts, DDI calls and passes, from one run's events."""
    out: Counter[str] = Counter()
    operations: Counter[str] = Counter()
    for event in events:
        if isinstance(event, PagingOperation):
            name = PAGING_OP_NAMES.get(event.operation, event.operation)
            operations[name] += 1
            out["PagingOperations"] += 1
            out["ExtraPasses"] += event.passes - 1
            if name == "PagingOpFill":
                out["BytesFilled"] += event.size
            elif name == "PagingOpDiscard":
                out["BytesDiscarded"] += event.size
            elif name in ("PagingOpMapApertureSegment", "PagingOpMapApertureSegment2"):
                out["BytesMappedIntoAperture"] += event.size
            elif name == "PagingOpUnmapApertureSegment":
                out["BytesUnmappedFromAperture"] += event.size
            elif name in ("PagingOpTransfer", "PagingOpSpecialLockTransfer"):
                if event.source_segment == 0:
                    out["BytesTransferredFromMdlToMemory"] += event.size
                elif event.destination_segment == 0:
                    out["BytesTransferredFromMemoryToMdl"] += event.size
                else:
                    out["BytesTransferredWithinMemory"] += event.size
        elif isinstance(event, BuildPagingBuffer):
            out["BuildPagingBufferCalls"] += 1
        elif isinstance(event, PagingBufferSubmitted):
            out["PagingBuffersSubmitted"] += 1
            out["PagingBufferBytes"] += event.end - event.start
        elif type(event).__name__ == "PacketExecuted":
            out["PacketsExecuted"] += 1
    result: dict[str, Any] = dict(sorted(out.items()))
    result["Operations"] = dict(sorted(operations.items()))
    return result
