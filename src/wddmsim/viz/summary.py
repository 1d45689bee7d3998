"""End-of-run statistics, computed from the exported event log and named after ``D3DKMT_QUERYSTATISTICS``.

Decision 0026 says how each counter maps: the byte counters of ``D3DKMT_QUERYSTATISTICS_PAGING_TRANSFER``
(``BytesFilled``, ``BytesDiscarded``, ``BytesMappedIntoAperture``, ``BytesUnmappedFromAperture``,
``BytesTransferredFromMdlToMemory``, ``BytesTransferredFromMemoryToMdl``, ``BytesTransferredFromApertureToMemory``,
``BytesTransferredFromMemoryToAperture``) count both the physical operations and their WDDM 2.x virtual forms
(``FillVirtual`` is a fill; ``TransferVirtual`` counts by its ``TransferDirection``); the evictions of
``D3DKMT_QUERYSTATISTICS_PAGING_FAULT`` by cause; page-ins as faults; then paging buffers and passes.

Reading records (not model objects) means the same numbers come out of a saved ``events.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from wddmsim.viz.eventlog import Record

EVICTION_COUNTERS = {
    "pressure": "EvictionsDueToPreparation",
    "destroy": "EvictionsDueToClose",
    "offer": "EvictionsDueToPurge",
    "evict": "EvictionsDueToEvict",
    "trim": "EvictionsDueToTrim",
    "reset": "EvictionsDueToReset",
}
"""``VidMmEvict.Cause`` -> its counter; the first three are ``D3DKMT_QUERYSTATISTICS_PAGING_FAULT`` fields."""

BYTE_COUNTERS = (
    "BytesFilled",
    "BytesDiscarded",
    "BytesMappedIntoAperture",
    "BytesUnmappedFromAperture",
    "BytesTransferredFromMdlToMemory",
    "BytesTransferredFromMemoryToMdl",
    "BytesTransferredFromApertureToMemory",
    "BytesTransferredFromMemoryToAperture",
    "BytesTransferredWithinMemory",
)

_TRANSFERS = ("PagingOpTransfer", "PagingOpSpecialLockTransfer")
_VIRTUAL_DIRECTION = {
    "LOCAL_TO_SYSTEM": "BytesTransferredFromMemoryToMdl",
    "SYSTEM_TO_LOCAL": "BytesTransferredFromMdlToMemory",
    "LOCAL_TO_LOCAL": "BytesTransferredWithinMemory",
}


def byte_counter(record: Record, apertures: frozenset[int]) -> str | None:
    """Which byte counter a ``PagingOp*`` record adds its ``Size`` to (None: none)."""
    name = record["event"]
    if name in ("PagingOpFill", "PagingOpVirtualFill"):
        return "BytesFilled"
    if name == "PagingOpDiscard":
        return "BytesDiscarded"
    if name in ("PagingOpMapApertureSegment", "PagingOpMapApertureSegment2"):
        return "BytesMappedIntoAperture"
    if name == "PagingOpUnmapApertureSegment":
        return "BytesUnmappedFromAperture"
    if name == "PagingOpVirtualTransfer":
        return _VIRTUAL_DIRECTION.get(record.get("TransferDirection", ""))
    if name in _TRANSFERS:
        source, destination = record.get("SourceSegmentId", 0), record.get("DestinationSegmentId", 0)
        if source == 0:
            return "BytesTransferredFromMdlToMemory"
        if destination == 0:
            return "BytesTransferredFromMemoryToMdl"
        if source in apertures:
            return "BytesTransferredFromApertureToMemory"
        if destination in apertures:
            return "BytesTransferredFromMemoryToAperture"
        return "BytesTransferredWithinMemory"
    return None


class Statistics:
    """:func:`statistics` as a fold over records seen one at a time (the run need not keep them)."""

    def __init__(self) -> None:
        self.apertures: frozenset[int] = frozenset()
        self.out: Counter[str] = Counter(dict.fromkeys(BYTE_COUNTERS, 0))
        for key in ("Evictions", "TotalBytesEvicted", *EVICTION_COUNTERS.values()):
            self.out[key] = 0
        self.operations: Counter[str] = Counter()
        self.causes: Counter[str] = Counter()
        self.segments: dict[int, dict[str, int]] = {}
        self.last = 0

    def see(self, r: Record) -> None:
        out, name = self.out, r["event"]
        self.last = r["time"]
        if name.startswith("PagingOp"):
            self.operations[name] += 1
            out["PagingOperations"] += 1
            out["ExtraPasses"] += r["Passes"] - 1
            out["MultipassOperations"] += r["Passes"] > 1
            counter = byte_counter(r, self.apertures)
            if counter is not None:
                out[counter] += r["Size"]
        elif name == "VidMmEvict":
            out["Evictions"] += 1
            out["TotalBytesEvicted"] += r["Size"]
            out[EVICTION_COUNTERS.get(r["Cause"], "EvictionsDueToOther")] += 1
            out["EvictionsDemotedToAperture"] += r["Destination"] == "aperture"
            self.causes[r["Cause"]] += 1
        elif name == "PageInAllocation":
            out["Faults"] += 1
            out["FaultsFirstTimeAccess"] += r["How"] in ("fill", "init")
        elif name == "ReportSegment":
            self._segment(r)
        elif name == "TotalBytesResidentInSegment" and r["SegmentId"] in self.segments:
            seg = self.segments[r["SegmentId"]]
            seg["TotalBytesResident"] = r["TotalBytesResident"]
            seg["PeakBytesResident"] = max(seg["PeakBytesResident"], r["TotalBytesResident"])
        else:
            self._count(r, name)

    def _segment(self, r: Record) -> None:
        if r["Aperture"]:
            self.apertures = self.apertures | {r["ulSegmentId"]}
        self.segments[r["ulSegmentId"]] = {
            "Size": r["Size"],
            "Aperture": r["Aperture"],
            "TotalBytesResident": 0,
            "PeakBytesResident": 0,
        }

    def _count(self, r: Record, name: str) -> None:
        out = self.out
        if name == "GpuFaultReported":
            out["GpuPageFaults"] += 1
        elif name == "VidMmMakeResident":
            out["MakeResidentCalls"] += 1
            out["MakeResidentRefused"] += r["Result"] == "E_OUTOFMEMORY"
        elif name == "AdapterAllocation":
            out["AllocationsCreated"] += r["Action"] == "create"
        elif name == "BuildPagingBuffer":
            out["BuildPagingBufferCalls"] += 1
        elif name == "PagingBufferSubmitted":
            out["PagingBuffersSubmitted"] += 1
            out["PagingBufferBytes"] += r["DmaBufferSubmissionEndOffset"] - r["DmaBufferSubmissionStartOffset"]
        elif name == "PacketExecuted":
            out["PacketsExecuted"] += 1

    def result(self) -> dict[str, Any]:
        out = Counter(self.out)
        for key in ("Faults", "FaultsFirstTimeAccess", "GpuPageFaults", "MultipassOperations", "ExtraPasses"):
            out[key] += 0
        result: dict[str, Any] = {key: int(value) for key, value in sorted(out.items())}
        result["SimulatedTimeNs"] = self.last
        result["EvictionsByCause"] = dict(sorted(self.causes.items()))
        result["Operations"] = dict(sorted(self.operations.items()))
        result["Segments"] = {str(k): dict(v) for k, v in sorted(self.segments.items())}
        return result


def statistics(rows: Iterable[Record]) -> dict[str, Any]:
    """Every counter of one run, from its records."""
    fold = Statistics()
    for r in rows:
        fold.see(r)
    return fold.result()


__all__ = ["BYTE_COUNTERS", "EVICTION_COUNTERS", "Statistics", "byte_counter", "statistics"]
