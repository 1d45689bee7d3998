"""Record and replay: a run's user-mode calls, written with symbolic handles, addresses and fences, replayed on
the same configuration give the same event log; under another policy or size, the difference in paging traffic
is the difference between the two runs; content survives either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.scenarios import catalog
from wddmsim.scenarios.callfmt import FORMAT, TraceFormatError
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.replay import read_trace, replay
from wddmsim.scenarios.runner import RunResult, run_scenario
from wddmsim.scenarios.traffic import difference, event_digest

SMALL = {"workload.frames": 5, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}


def record(tmp_path: Path, config: ScenarioConfig) -> tuple[Path, RunResult]:
    path = tmp_path / "calls.jsonl"
    with path.open("w") as f:
        result = run_scenario(config, record=f)
    return path, result


def test_the_trace_is_json_lines_with_symbols_not_handles(tmp_path: Path) -> None:
    path, result = record(tmp_path, catalog.load("default", SMALL))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["trace"] == FORMAT and lines[0]["scenario"] == result.config.to_dict()
    assert lines[-1]["end"]["verified"] is True
    assert lines[-1]["end"]["events_sha256"] == event_digest(result.adapter.events)[1]
    calls = {line["call"] for line in lines[1:-1]}
    assert {"allocate", "make_resident", "wait_for_paging_fence", "lock2", "cpu_write", "cpu_read"} <= calls
    assert {"map_gpu_va", "submit_command", "wait_for_context", "evict", "query_video_memory_info"} <= calls
    resident = next(line for line in lines if line.get("call") == "make_resident")
    assert all(isinstance(h, str) and h.startswith("A") for h in resident["args"]["AllocationList"])
    waits = [line for line in lines if line.get("call") == "wait_for_paging_fence"]
    assert all(isinstance(w["args"]["value"], dict) and "fence" in w["args"]["value"] for w in waits)
    submit = next(line for line in lines if line.get("call") == "submit_command")
    addresses = [p.get("dst") for p in submit["args"]["packets"]]
    assert all(isinstance(a, dict) and a["va"].startswith("V") for a in addresses), addresses
    write = next(line for line in lines if line.get("call") == "cpu_write")
    assert write["args"]["address"]["view"].startswith("A") and "pattern" in write["args"]


def test_a_replay_on_the_recorded_configuration_changes_nothing(tmp_path: Path) -> None:
    path, _ = record(tmp_path, catalog.load("default", SMALL))
    result = replay(read_trace(path))
    assert result.difference() == {}
    assert result.identical_events
    assert result.differing == 0 and result.reads > 0 and result.content_preserved


@pytest.mark.parametrize(
    ("scenario", "changes"),
    [
        ({"workload.frames": 6, "workload.oversubscription": 2.0}, {"adapter.policy": "random"}),
        (SMALL, {"adapter.paging_buffer": "8KiB"}),
    ],
    ids=["another-policy", "smaller-paging-buffers"],
)
def test_a_replay_elsewhere_differs_as_a_run_there_does(
    tmp_path: Path, scenario: dict[str, object], changes: dict[str, object]
) -> None:
    """The workload's calls do not depend on VidMm's choices, so replaying them elsewhere is running there."""
    config = catalog.load("default", scenario)
    path, recorded = record(tmp_path, config)
    replayed = replay(read_trace(path), changes)
    direct = run_scenario(config.with_changes(changes))
    assert replayed.difference(), "the change shows in the paging traffic"
    assert replayed.difference() == difference(recorded.traffic, direct.traffic)
    assert replayed.content_preserved and not replayed.identical_events


def test_a_replay_with_more_local_memory_pages_less(tmp_path: Path) -> None:
    path, _ = record(tmp_path, catalog.load("default", SMALL))
    replayed = replay(read_trace(path), {"adapter.vram": "64MiB", "adapter.cpu_visible": "16MiB"})
    change = replayed.difference()
    before, after, _ = change["BytesEvicted.pressure"]
    assert after < before, change
    assert replayed.content_preserved, "the same bytes are read back"


def test_a_wddm1_trace_replays_its_renders_and_locks(tmp_path: Path) -> None:
    path, _ = record(tmp_path, catalog.load("default", {**SMALL, "adapter.driver_model": "wddm1"}))
    calls = {json.loads(line).get("call") for line in path.read_text().splitlines()}
    assert {"render", "lock", "unlock"} <= calls
    assert replay(read_trace(path)).identical_events
    other = replay(read_trace(path), {"adapter.policy": "fifo"})
    assert other.content_preserved


def test_a_tiled_trace_replays_its_updates(tmp_path: Path) -> None:
    path, _ = record(tmp_path, catalog.load("tiles", {"workload.frames": 4}))
    calls = {json.loads(line).get("call") for line in path.read_text().splitlines()}
    assert {"reserve_gpu_va", "update_gpu_va", "wait_for_sync_object", "create_sync_object"} <= calls
    assert replay(read_trace(path)).identical_events
    assert replay(read_trace(path), {"adapter.policy": "random"}).content_preserved


def test_a_power_transition_is_recorded_and_replayed(tmp_path: Path) -> None:
    path, _ = record(tmp_path, catalog.load("default", {**SMALL, "workload.power": "hibernate"}))
    calls = [json.loads(line) for line in path.read_text().splitlines()]
    assert [c["kind"] for c in calls if c.get("call") == "power_transition"] == ["hibernate"]
    result = replay(read_trace(path))
    assert result.identical_events and result.content_preserved
    assert replay(read_trace(path), {"adapter.vram_kept": "hibernate"}).content_preserved


def test_a_replay_keeps_the_driver_model(tmp_path: Path) -> None:
    path, _ = record(tmp_path, catalog.load("default", {**SMALL, "workload.frames": 1}))
    with pytest.raises(ConfigurationError, match=r"adapter\.driver_model='wddm1': a trace replays on the driver model"):
        replay(read_trace(path), {"adapter.driver_model": "wddm1"})


def test_traces_that_are_not_traces_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    for text, message in [
        ("", "empty"),
        ("{not json\n", "line 1: not JSON"),
        ('{"trace": "other"}\n', "is not a wddmsim-calls header"),
        ('{"trace": "wddmsim-calls", "version": 99, "scenario": {}}\n', "version 99"),
        ('{"trace": "wddmsim-calls", "version": 1, "scenario": {}}\n{"seq": 0}\n{"end": {}}\n', "line 2 is not a call"),
    ]:
        bad.write_text(text)
        with pytest.raises(TraceFormatError, match=message):
            read_trace(bad)


def test_a_read_seen_where_it_lies_is_recorded_as_the_read_of_its_bytes() -> None:
    """``cpu_read_spans`` is recorded as the ``cpu_read`` of the same bytes (a replay reads and checks them): the
    digest runs over the views in order, and over zeros for a stretch that reads zero unmapped (longer than the
    zeros the recorder feeds a piece at a time)."""
    import hashlib
    import io
    from typing import Any, cast

    import numpy as np

    from wddmsim.scenarios.callfmt import Ranges
    from wddmsim.scenarios.record import CallLog, TracedProcess

    head, tail = np.arange(300, dtype=np.uint8), np.full(5, 7, dtype=np.uint8)
    hole = 3 * (1 << 16) + 11

    class Seen:
        def cpu_read_spans(self, address: int, size: int) -> list[np.ndarray | int]:
            assert (address, size) == (0x10010, 300 + hole + 5)
            return [head, hole, tail]

    stream = io.StringIO()
    log = CallLog(stream, {})
    log.views["p"] = Ranges("view")
    log.views["p"].add("A1", 0x10000, 1 << 20)
    spans = TracedProcess(cast(Any, Seen()), log, "p").cpu_read_spans(0x10010, 300 + hole + 5)
    assert spans[1] == hole
    call = json.loads(stream.getvalue().splitlines()[-1])
    whole = head.tobytes() + bytes(hole) + tail.tobytes()
    assert call["call"] == "cpu_read" and call["args"] == {"address": {"view": "A1", "offset": 16}, "size": len(whole)}
    assert call["out"] == {"sha256": hashlib.sha256(whole).hexdigest()}
