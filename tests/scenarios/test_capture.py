"""Captured GPGMM allocation traces as scenarios (issue 23 part 4, decisions 0180-0182): the reader, the scenario
form, its checks, and a run that creates and destroys the captured heaps, reading each back before it goes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import MiB
from wddmsim.scenarios.capture import gpgmm, scenario
from wddmsim.scenarios.config import ScenarioConfig, loads
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.workload import frames

DATA = Path(__file__).resolve().parents[1] / "data" / "gpgmm"
DAWN = DATA / "dawn_end2end_queuewritebuffertests_manywritebuffer.json"
DML = DATA / "directml_samples_directmlxsuperresolution.json"


def _capture(path: Path) -> gpgmm.Capture:
    return gpgmm.parse(path.read_text(encoding="utf-8"), path.name)


# --- the reader -------------------------------------------------------------------------------------------------


def test_the_dawn_capture_reads_as_four_local_cpu_visible_heaps_with_their_lifetimes() -> None:
    c = _capture(DAWN)
    assert c.events == 204 and c.processes == (35104,)
    assert [h.size for h in c.heaps] == [4 * MiB] * 4
    assert [h.created for h in c.heaps] == [71874, 72690, 73361, 73976]
    assert [h.destroyed for h in c.heaps] == [85015, 84831, 84635, 83863]
    assert all(h.local and h.resident and h.cpu_visible for h in c.heaps)
    assert [r.size for r in c.resources] == [4000000, 4194304, 4194304, 250000]
    assert (c.start, c.end) == (71874, 85015)


def test_the_directml_capture_reads_eight_heaps_and_46_placed_resources() -> None:
    c = _capture(DML)
    assert [h.size // MiB for h in c.heaps] == [4, 8, 4, 4, 16, 4, 1024, 4]
    assert len(c.resources) == 46 and all(r.destroyed is not None for r in c.resources)
    assert c.resources[0].size == 96, "the Width of the CreateResource call before it"
    assert (c.start, c.end) == (245621, 306076)


def test_the_scenario_maps_lifetimes_to_frames_and_sizes_the_adapter() -> None:
    doc = scenario.document(_capture(DAWN), frames=12)
    rows = doc["capture"]["resources"]
    assert [(r["first_frame"], r["last_frame"]) for r in rows] == [(0, 11), (0, 11), (1, 11), (1, 10)]
    assert [r["name"] for r in rows] == ["p0.heap0", "p0.heap1", "p0.heap2", "p0.heap3"]
    assert doc["adapter"] == {"vram": "64MiB", "cpu_visible": "16MiB", "aperture": "32MiB"}
    big = scenario.document(_capture(DML))
    assert big["adapter"] == {"vram": "4GiB", "cpu_visible": "2GiB", "aperture": "32MiB"}, "the 1 GiB heap fits"
    assert scenario.frame_of(0, 0, 100, 4) == 0 and scenario.frame_of(99, 0, 100, 4) == 3
    assert scenario.frame_of(100, 0, 100, 4) == 3, "the span's end falls in the last frame"


def _events(*events: Any) -> str:
    """A capture with one event a line: event i starts line i + 2, column 1."""
    return '{"traceEvents": [\n' + ",\n".join(json.dumps(e) for e in events) + "\n]}\n"


def _heap(ph: str, ident: str = "0x1", ts: int = 10, **snapshot: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"name": "Heap", "ph": ph, "id": ident, "ts": ts, "pid": 7}
    if ph == "O":
        event["args"] = {"snapshot": snapshot}
    return event


GOOD = (_heap("N"), _heap("O", SizeInBytes=65536, HeapSegment=1, IsResident=False), _heap("D", ts=20))


def test_a_small_capture_with_unknown_events_is_read() -> None:
    text = _events({"name": "Whatever", "ph": "X", "ts": 1}, *GOOD, {"name": "Pool", "ph": "O", "id": "0x1", "ts": 3})
    c = gpgmm.parse(text, "t.json")
    assert c.heaps == (gpgmm.CapturedHeap("0x1", 7, 65536, False, False, False, 10, 20),)
    row = scenario.document(c, frames=3)["capture"]["resources"][0]
    assert (row["group"], row["kind"], row["resident"]) == ("non-local", "gpu-only", False)


MALFORMED = [
    ("not JSON", "{traceEvents: []}", 1, 2, "is not JSON"),
    ("no traceEvents", '{"events": []}', 1, 1, "has no traceEvents array"),
    ("traceEvents not an array", '{"traceEvents": 5}', 1, 17, "must be an array of events"),
    ("no heap", _events({"name": "X", "ph": "i", "ts": 1}), 1, 1, "holds no Heap"),
    ("event not an object", _events(*GOOD, 5), 5, 1, "must be a JSON object"),
    ("no ph", _events({"name": "Heap", "ts": 1}), 2, 1, "string name and a string ph"),
    ("negative ts", _events(_heap("N", ts=-1)), 2, 1, "ts=-1: must be a time"),
    ("snapshot without size", _events(_heap("N"), _heap("O", HeapSegment=0)), 3, 1, "must give its size"),
    ("negative size", _events(_heap("N"), _heap("O", SizeInBytes=-4096)), 3, 1, "size -4096: must be a positive"),
    ("size over the limit", _events(_heap("N"), _heap("O", Size=3 << 30)), 3, 1, "exceeds 2 GiB"),
    ("bad segment group", _events(_heap("N"), _heap("O", Size=4096, HeapSegment=2)), 3, 1, "must be 0 (local)"),
    ("D of an unknown id", _events(*GOOD, _heap("D", "0x9")), 5, 1, "destroys Heap 0x9, which is not alive"),
    (
        "D timed before its N",
        _events(_heap("N", ts=100), _heap("O", ts=120, Size=4096), _heap("D", ts=50)),
        4,
        1,
        "destroys Heap 0x1 at ts=50, before its creation at ts=100",
    ),
    (
        "resource D timed before its N",
        _events(
            *GOOD,
            {"name": "ResourceAllocation", "ph": "N", "id": "0x5", "ts": 30},
            {"name": "ResourceAllocation", "ph": "D", "id": "0x5", "ts": 29.5},
        ),
        6,
        1,
        "destroys ResourceAllocation 0x5 at ts=29.5, before its creation at ts=30",
    ),
    ("O of an unknown id", _events(_heap("O", "0x9", Size=4096)), 2, 1, "snapshot of Heap 0x9"),
    ("created twice", _events(_heap("N"), _heap("N")), 3, 1, "created twice"),
    ("never snapshotted", _events({"name": "X", "ph": "M"}, _heap("N")), 3, 1, "never snapshotted"),
    ("bad id", _events({"name": "Heap", "ph": "N", "id": None, "ts": 1}), 2, 1, "id=None"),
    (
        "resource D of an unknown id",
        _events(*GOOD, {"name": "ResourceAllocation", "ph": "D", "id": "0x5", "ts": 30}),
        5,
        1,
        "destroys ResourceAllocation 0x5",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "rule"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_a_malformed_capture_is_refused_with_its_line_and_the_rule(
    text: str, line: int, column: int, rule: str
) -> None:
    with pytest.raises(gpgmm.CaptureError) as caught:
        gpgmm.parse(text, "bad.json")
    error = caught.value
    assert (error.setting, error.line, error.column) == ("bad.json", line, column), str(error)
    assert rule in error.rule
    assert str(error).startswith(f"bad.json: line {line}, column {column} (")
    assert isinstance(error, ConfigurationError), "the CLI maps it to exit 2"


# --- the scenario form ------------------------------------------------------------------------------------------


def test_the_scenario_round_trips_toml_config_toml() -> None:
    text = scenario.to_toml(scenario.document(_capture(DAWN)))
    config = loads(text)
    assert config.capture is not None and config.capture.source == DAWN.name
    assert [r.size for r in config.capture.resources] == [4 * MiB] * 4
    again = scenario.to_toml(config.to_dict())
    assert loads(again) == config
    assert scenario.to_toml(loads(again).to_dict()) == again, "a fixed point"
    assert config.workload_bytes == 16 * MiB


def test_a_scenario_without_capture_leaves_the_table_out() -> None:
    assert "capture" not in ScenarioConfig().to_dict()


TOML = """
[workload]
processes = 1
frames = 4
[capture]
source = "t.json"
start_us = 0.0
end_us = 10.0
[[capture.resources]]
name = "a"
size = "64KiB"
first_frame = 0
last_frame = 3
[[capture.resources]]
name = "b"
size = 131072
kind = "gpu-only"
resident = false
first_frame = 0
last_frame = 1
[[capture.resources]]
name = "c"
size = "1MiB"
group = "non-local"
first_frame = 2
last_frame = 3
[[capture.resources]]
name = "d"
size = 65536
kind = "cpu-visible"
first_frame = 1
last_frame = 2
"""


@pytest.mark.parametrize(
    ("override", "setting", "rule"),
    [
        ("size = 65536\n", "capture.resources[3].size", "must be a positive multiple of 4 KiB"),
        ("size = 65537\n", "capture.resources[3].size", "must be a positive multiple of 4 KiB"),
        ('size = "lots"\n', "capture.resources[3].size", "must be a size"),
        ("last_frame = 2\n", "capture.resources[3].last_frame", "must be below workload.frames (4)"),
        ("first_frame = 1\n", "capture.resources[3].last_frame", "must not precede first_frame (5)"),
        ("process = 1\n", "capture.resources[3].process", "must be below workload.processes (1)"),
        ('group = "far"\n', "capture.resources[3].group", "must be local or non-local"),
        ('name = "a"\n', "capture.resources[3].name", "is the name of capture.resources[0] too"),
        ("colour = 1\n", "capture.resources[3].colour", "is not a setting"),
    ],
)
def test_a_bad_captured_allocation_is_refused_naming_its_key(override: str, setting: str, rule: str) -> None:
    bad = {
        "size = 65536\n": 'size = "0KiB"\n',
        "last_frame = 2\n": "last_frame = 4\n",
        "first_frame = 1\n": "first_frame = 5\n",
        "process = 1\n": "process = 1\n",
    }.get(override, override)
    head, _, last = TOML.rpartition("[[capture.resources]]")
    key = override.split(" ")[0]
    kept = "".join(line + "\n" for line in last.strip().splitlines() if not line.startswith(key + " "))
    text = head + "[[capture.resources]]\n" + kept + bad
    with pytest.raises(ConfigurationError) as caught:
        loads(text)
    assert caught.value.setting == setting
    assert rule in caught.value.rule


def test_a_captured_allocation_without_a_size_is_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        loads(TOML.replace('size = "1MiB"\n', ""))
    assert (caught.value.setting, caught.value.rule) == ("capture.resources[2].size", "is required")


def test_a_heap_larger_than_every_segment_is_refused_before_the_first_frame() -> None:
    config = loads(TOML.replace('size = "1MiB"', 'size = "1GiB"'))
    with pytest.raises(ConfigurationError) as caught:
        run_scenario(config)
    assert caught.value.setting == "capture.resources[2].size" and caught.value.value == "1GiB"
    assert "larger than every segment of the adapter" in caught.value.rule


# --- the run ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("access", ["hot-cold", "sequential", "random", "streaming"])
def test_a_fixed_count_plans_the_frames_it_always_did(access: str) -> None:
    config = ScenarioConfig().with_changes({"workload.access": access, "workload.frames": 6})
    fixed = list(frames(config, 17, np.random.default_rng(3)))
    varying = list(frames(config, lambda _frame: 17, np.random.default_rng(3)))
    assert fixed == varying
    assert list(frames(config, lambda f: 0 if f % 2 else 3, np.random.default_rng(3)))[1::2] == [[]] * 3


def _calls(trace: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.splitlines()[1:] if '"call"' in line]


def test_the_dawn_capture_runs_verified_and_its_early_heap_is_read_back_before_it_goes() -> None:
    config = loads(scenario.to_toml(scenario.document(_capture(DAWN))))
    trace = io.StringIO()
    result = run_scenario(config, record=trace)
    assert result.verified, [c for c in result.checks if not c.ok]
    assert result.processes[0].resources == 4 and result.processes[0].bytes == 16 * MiB
    assert result.checks[0].detail == "12 frames; 5 of 5 allocations verified", "4 heaps and the staging buffer"
    calls = _calls(trace.getvalue())
    single = [i for i, c in enumerate(calls) if c["call"] == "deallocate" and len(c["args"]["HandleList"]) == 1]
    assert len(single) == 1, "p0.heap3 goes after frame 10, the others at the end"
    handle = calls[single[0]]["args"]["HandleList"][0]
    read = calls[single[0] - 2]
    assert read["call"] == "cpu_read" and read["args"]["address"]["view"] == handle
    assert read["args"]["size"] == 4 * MiB, "every byte of it, just before pfnDeallocateCb"
    assert not any(handle in json.dumps(c) for c in calls[single[0] + 1 :]), "never named again"


def test_gpu_only_allocations_that_go_mid_run_are_copied_out_before_they_go() -> None:
    result = run_scenario(loads(TOML))
    assert result.verified, [c for c in result.checks if not c.ok]
    assert result.checks[0].detail == "4 frames; 5 of 5 allocations verified"
    assert result.processes[0].resources == 4


@pytest.mark.slow
def test_the_directml_capture_runs_verified() -> None:
    """The 1 GiB heap costs about 4 GiB of RAM and a few seconds: slow."""
    result = run_scenario(loads(scenario.to_toml(scenario.document(_capture(DML)))))
    assert result.verified, [c for c in result.checks if not c.ok]
    assert result.processes[0].resources == 8 and result.processes[0].bytes == 1068 * MiB


def test_two_processes_of_a_capture_each_get_their_heaps() -> None:
    def heap(pid: int, ident: str, ts: int, size: int) -> list[dict[str, Any]]:
        return [
            {"name": "Heap", "ph": "N", "id": ident, "ts": ts, "pid": pid},
            {"name": "Heap", "ph": "O", "id": ident, "ts": ts, "pid": pid, "args": {"snapshot": {"Size": size}}},
        ]

    events = heap(9, "0xa", 0, 65536) + heap(4, "0xa", 50, 100000) + heap(9, "0xb", 99, 4096)
    events.append({"name": "Heap", "ph": "D", "id": "0xa", "ts": 60, "pid": 9})
    c = gpgmm.parse(_events(*events), "two.json")
    assert c.processes == (9, 4)
    doc = scenario.document(c, frames=4)
    rows = [
        (r["name"], r["process"], r["size"], r["first_frame"], r["last_frame"]) for r in doc["capture"]["resources"]
    ]
    assert rows == [("p0.heap0", 0, 65536, 0, 2), ("p1.heap0", 1, 102400, 2, 3), ("p0.heap1", 0, 4096, 3, 3)]
    result = run_scenario(loads(scenario.to_toml(doc)))
    assert result.verified, [c for c in result.checks if not c.ok]
    assert [(p.resources, p.bytes) for p in result.processes] == [(2, 69632), (1, 102400)]
