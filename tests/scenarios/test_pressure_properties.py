"""Random timelines and residency clients (issue 23), as properties of the whole run (decision 0187).

Each example is a small valid scenario: one or two processes under a drawn client, a few frames, and a timeline
of every kind of event at drawn frames, naming only processes running then.  Whatever is drawn:

* the run completes -- a failed check names what failed, never an exception (a valid file is never refused);
* whenever VidMm never refused a working set or a readback (no failed ``MakeResident`` check), every byte
  verifies and every other check passes;
* the residency-library's promise (checked after each of its frames) holds;
* the teardown leaves nothing behind.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wddmsim.scenarios.clients import CLIENTS
from wddmsim.scenarios.config import from_dict
from wddmsim.scenarios.runner import run_scenario

SIZES = [0, "1MiB", "4MiB", "12MiB", "released"]
"""Budgets the OS may impose: nothing, a little, a lot, the model's again (within both groups of the adapter)."""
DRIVERS: list[dict[str, str]] = [
    {"driver": "reference", "driver_model": "wddm2"},
    {"driver": "reference", "driver_model": "wddm1"},
    {"driver": "simple"},
]
"""The reference driver as WDDM 2.x and 1.x, and the minimal segment-model driver."""


def _event(draw: st.DrawFn, frame: int, alive: list[int]) -> dict[str, Any]:
    kinds = ["start", "trim", "sleep"] + (["focus", "priority", "budget", "exit"] if alive else [])
    kind = draw(st.sampled_from(kinds))
    e: dict[str, Any] = {"frame": frame, "event": kind}
    who = draw(st.sampled_from(alive)) if alive else 0
    if kind == "focus":
        e |= {"process": who, "foreground": draw(st.booleans())}
    elif kind == "priority":
        e |= {"process": who, "priority": draw(st.integers(0, 5))}
    elif kind == "budget":
        e |= {"process": who, "local": draw(st.sampled_from(SIZES)), "non_local": draw(st.sampled_from(SIZES))}
    elif kind == "exit":
        e["process"] = who
    elif kind == "start":
        e |= {"bytes": draw(st.sampled_from(["64KiB", "2MiB", "8MiB"])), "foreground": draw(st.booleans())}
        e["client"] = draw(st.sampled_from(sorted(CLIENTS)))
    elif kind == "trim":
        e["flags"] = draw(st.sampled_from(["trim-to-budget", "periodic"]))
        named: bool = draw(st.booleans())
        if alive and named:
            e["process"] = who
    else:
        e["kind"] = draw(st.sampled_from(["standby", "hibernate", "hybrid_sleep"]))
    return e


@st.composite
def scenarios(draw: st.DrawFn, most_events: int = 6) -> dict[str, Any]:
    processes = draw(st.integers(1, 2))
    frames = draw(st.integers(1, 4))
    alive, started, timeline = list(range(processes)), processes, []
    for frame in sorted(draw(st.lists(st.integers(0, frames - 1), max_size=most_events))):
        e = _event(draw, frame, alive)
        if e["event"] == "start":
            alive.append(started)
            started += 1
        elif e["event"] == "exit":
            alive.remove(e["process"])
        timeline.append(e)
    return {
        "seed": draw(st.integers(0, 2**16)),
        "adapter": {
            "vram": "32MiB",
            "cpu_visible": "8MiB",
            "aperture": "16MiB",
            "budgets": draw(st.sampled_from(["capacity", "shared"])),
            **draw(st.sampled_from(DRIVERS)),
        },
        "workload": {
            "processes": processes,
            "frames": frames,
            "oversubscription": draw(st.sampled_from([0.5, 1.0, 1.5])),
            "working_set": draw(st.sampled_from([0.3, 0.6])),
            "client": draw(st.sampled_from(sorted(CLIENTS))),
            "sizes": {"distribution": "log-uniform", "min": "256KiB", "max": "2MiB"},
        },
        "timeline": timeline,
    }


def _holds(doc: dict[str, Any]) -> None:
    result = run_scenario(from_dict(doc))
    failed = [c for c in result.checks if not c.ok]
    assert all(c.step and c.operation and c.detail for c in failed), failed
    assert not [c for c in failed if c.operation == "budget"], "the residency-library's promise"
    assert [c.step for c in failed if c.step == "teardown"] == [], "the teardown left something behind"
    if not any(c.operation == "MakeResident" for c in failed):
        assert failed == [], "VidMm refused nothing, so every byte verifies"
    assert len(result.processes) == doc["workload"]["processes"] + sum(
        1 for e in doc["timeline"] if e["event"] == "start"
    ), "every process, started or exited, is summarised"


ZERO: dict[str, Any] = {
    "seed": 0,
    "adapter": {"vram": "32MiB", "cpu_visible": "8MiB", "aperture": "16MiB", "budgets": "shared"},
    "workload": {"processes": 1, "frames": 3, "oversubscription": 0.5, "working_set": 0.6},
    "timeline": [
        {"frame": 0, "event": "budget", "process": 0, "local": 0, "non_local": 0},
        {"frame": 1, "event": "sleep", "kind": "hibernate"},
    ],
}
"""A budget of 0 in both groups from the first frame (decision 0185): over it by the frame alone."""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(most_events=4))
@example({**ZERO, "workload": {**ZERO["workload"], "client": "residency-library"}})
def test_small_random_timelines_run_to_a_verdict(doc: dict[str, Any]) -> None:
    _holds(doc)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(most_events=10))
def test_random_timelines_run_to_a_verdict(doc: dict[str, Any]) -> None:
    _holds(doc)
