"""summary.json: the D3DKMT_QUERYSTATISTICS-named counters agree with the event log they are computed from."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from wddmsim.core.units import MiB
from wddmsim.viz.eventlog import Record
from wddmsim.viz.summary import BYTE_COUNTERS, byte_counter, statistics

from .conftest import SavedRun


def _independent_byte_counters(rows: list[Record]) -> Counter[str]:
    """The byte counters recomputed from each PagingOp record's own ETW size fields (not its ``Size``)."""
    apertures = {r["ulSegmentId"] for r in rows if r["event"] == "ReportSegment" and r["Aperture"]}
    out: Counter[str] = Counter()
    for r in rows:
        name = r["event"]
        if name in ("PagingOpFill", "PagingOpVirtualFill"):
            out["BytesFilled"] += r["FillSize"]
        elif name == "PagingOpDiscard":
            out["BytesDiscarded"] += r["Size"]  # ETW's PagingOpDiscard carries no size: the allocation's
        elif name in ("PagingOpMapApertureSegment", "PagingOpMapApertureSegment2"):
            out["BytesMappedIntoAperture"] += r["NumberOfPages"] * 4096
        elif name == "PagingOpUnmapApertureSegment":
            out["BytesUnmappedFromAperture"] += r["NumberOfPages"] * 4096
        elif name == "PagingOpVirtualTransfer":
            key = {
                "LOCAL_TO_SYSTEM": "BytesTransferredFromMemoryToMdl",
                "SYSTEM_TO_LOCAL": "BytesTransferredFromMdlToMemory",
                "LOCAL_TO_LOCAL": "BytesTransferredWithinMemory",
            }[r["TransferDirection"]]
            out[key] += r["TransferSize"]
        elif name in ("PagingOpTransfer", "PagingOpSpecialLockTransfer"):
            src, dst = r["SourceSegmentId"], r["DestinationSegmentId"]
            if src == 0:
                out["BytesTransferredFromMdlToMemory"] += r["TransferSize"]
            elif dst == 0:
                out["BytesTransferredFromMemoryToMdl"] += r["TransferSize"]
            elif src in apertures:
                out["BytesTransferredFromApertureToMemory"] += r["TransferSize"]
            elif dst in apertures:
                out["BytesTransferredFromMemoryToAperture"] += r["TransferSize"]
            else:
                out["BytesTransferredWithinMemory"] += r["TransferSize"]
    return out


def test_the_byte_counters_are_the_sums_of_the_paging_op_events(saved: SavedRun) -> None:
    summary = json.loads(saved.outputs.summary.read_text())
    expected = _independent_byte_counters(saved.rows)
    for key in BYTE_COUNTERS:
        assert summary[key] == expected[key], key
    assert sum(summary[k] for k in BYTE_COUNTERS) > 0


def test_evictions_faults_and_buffers_are_counts_of_their_events(saved: SavedRun) -> None:
    rows = saved.rows
    summary = json.loads(saved.outputs.summary.read_text())
    evictions = [r for r in rows if r["event"] == "VidMmEvict"]
    assert summary["Evictions"] == len(evictions)
    assert summary["EvictionsByCause"] == dict(sorted(Counter(r["Cause"] for r in evictions).items()))
    assert summary["TotalBytesEvicted"] == sum(r["Size"] for r in evictions)
    assert summary["Faults"] == sum(r["event"] == "PageInAllocation" for r in rows)
    assert summary["PagingBuffersSubmitted"] == sum(r["event"] == "PagingBufferSubmitted" for r in rows)
    ops = [r for r in rows if r["event"].startswith("PagingOp")]
    assert summary["ExtraPasses"] == sum(r["Passes"] - 1 for r in ops)
    assert summary["MultipassOperations"] == sum(r["Passes"] > 1 for r in ops) > 0
    assert summary["verified"] is True


def test_the_residency_demo_evicts_under_pressure_and_demotes_to_the_aperture(residency: SavedRun) -> None:
    summary = json.loads(residency.outputs.summary.read_text())
    assert summary["EvictionsDueToPreparation"] > 0
    assert summary["EvictionsDemotedToAperture"] > 0
    assert summary["BytesTransferredFromMemoryToMdl"] > 0 and summary["BytesTransferredFromMdlToMemory"] > 0
    assert summary["BytesMappedIntoAperture"] > 0 and summary["BytesFilled"] > 0
    segments = summary["Segments"]
    assert segments["3"]["Aperture"] is True
    assert all(s["PeakBytesResident"] <= s["Size"] for s in segments.values())


def test_bytes_discarded_is_the_discarded_allocation_s_size(tour: SavedRun) -> None:
    summary = json.loads(tour.outputs.summary.read_text())
    assert summary["BytesDiscarded"] == 4 * MiB, "the tour discards its 4 MiB allocation once"
    assert summary["BytesTransferredFromApertureToMemory"] > 0, "the tour reads backing pages through the aperture"


def _op(event: str, **fields: Any) -> Record:
    return {"time": 0, "event": event, "Passes": 1, "Size": 4096, **fields}


@pytest.mark.parametrize(
    ("record", "counter"),
    [
        (_op("PagingOpFill"), "BytesFilled"),
        (_op("PagingOpVirtualFill"), "BytesFilled"),
        (_op("PagingOpDiscard"), "BytesDiscarded"),
        (_op("PagingOpMapApertureSegment"), "BytesMappedIntoAperture"),
        (_op("PagingOpMapApertureSegment2"), "BytesMappedIntoAperture"),
        (_op("PagingOpUnmapApertureSegment"), "BytesUnmappedFromAperture"),
        (_op("PagingOpVirtualTransfer", TransferDirection="LOCAL_TO_SYSTEM"), "BytesTransferredFromMemoryToMdl"),
        (_op("PagingOpVirtualTransfer", TransferDirection="SYSTEM_TO_LOCAL"), "BytesTransferredFromMdlToMemory"),
        (_op("PagingOpVirtualTransfer", TransferDirection="LOCAL_TO_LOCAL"), "BytesTransferredWithinMemory"),
        (_op("PagingOpTransfer", SourceSegmentId=0, DestinationSegmentId=2), "BytesTransferredFromMdlToMemory"),
        (_op("PagingOpTransfer", SourceSegmentId=2, DestinationSegmentId=0), "BytesTransferredFromMemoryToMdl"),
        (_op("PagingOpTransfer", SourceSegmentId=3, DestinationSegmentId=2), "BytesTransferredFromApertureToMemory"),
        (_op("PagingOpTransfer", SourceSegmentId=2, DestinationSegmentId=3), "BytesTransferredFromMemoryToAperture"),
        (_op("PagingOpTransfer", SourceSegmentId=1, DestinationSegmentId=2), "BytesTransferredWithinMemory"),
        (
            _op("PagingOpSpecialLockTransfer", SourceSegmentId=1, DestinationSegmentId=0),
            "BytesTransferredFromMemoryToMdl",
        ),
        (_op("PagingOpUpdatePageTable"), None),
        (_op("PagingOpFlushTlb"), None),
        (_op("PagingOpNotifyResidency"), None),
    ],
)
def test_which_counter_each_operation_adds_to(record: Record, counter: str | None) -> None:
    assert byte_counter(record, frozenset({3})) == counter


@pytest.mark.parametrize(
    ("cause", "counter"),
    [
        ("pressure", "EvictionsDueToPreparation"),
        ("destroy", "EvictionsDueToClose"),
        ("offer", "EvictionsDueToPurge"),
        ("evict", "EvictionsDueToEvict"),
        ("trim", "EvictionsDueToTrim"),
        ("reset", "EvictionsDueToReset"),
    ],
)
def test_evictions_by_cause(cause: str, counter: str) -> None:
    rows = [
        {"time": 0, "event": "VidMmEvict", "Cause": cause, "Size": 8192, "Destination": "system"},
        {"time": 5, "event": "VidMmEvict", "Cause": cause, "Size": 4096, "Destination": "aperture"},
    ]
    stats = statistics(rows)
    assert stats[counter] == 2 and stats["Evictions"] == 2 and stats["TotalBytesEvicted"] == 12288
    assert stats["EvictionsDemotedToAperture"] == 1
    assert stats["EvictionsByCause"] == {cause: 2}
    assert stats["SimulatedTimeNs"] == 5


def test_an_empty_log_gives_zero_counters() -> None:
    stats = statistics([])
    assert all(stats[k] == 0 for k in BYTE_COUNTERS)
    assert stats["Evictions"] == 0 and stats["SimulatedTimeNs"] == 0 and stats["Segments"] == {}
