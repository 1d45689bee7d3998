"""Residency clients under pressure on a timeline (issue 23): the built-in stories, the timeline's checking, the
library's promise, and replay of what the OS did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import from_dict
from wddmsim.scenarios.replay import read_trace, replay
from wddmsim.scenarios.runner import RunResult, run_scenario
from wddmsim.vidmm.events import (
    ProcessLifetime,
    VidMmEvict,
    VidMmPageIn,
    VidMmProcessBudgetChange,
    VidMmProcessPriorityChange,
    VidMmTrimNotification,
)

SHORT = {"workload.frames": 13}


def run(name: str, **changes: object) -> RunResult:
    result = run_scenario(catalog.load(name, changes))
    failed = [c for c in result.checks if not c.ok]
    assert not failed, failed
    return result


def _times(result: RunResult) -> tuple[int, int]:
    focus = result.adapter.events.of_type(VidMmProcessPriorityChange)
    assert [f.foreground for f in focus] == [False, True]
    return focus[0].time, focus[1].time


@pytest.mark.parametrize("client", ["residency-library", "careless"])
def test_focus_loss_pages_out_only_under_the_library_and_back_on_return(client: str) -> None:
    result = run("focus-loss", **{"workload.client": client})
    events = list(result.adapter.events)
    lost = next(i for i, e in enumerate(events) if isinstance(e, VidMmProcessPriorityChange))
    back = next(i for i, e in enumerate(events) if isinstance(e, VidMmProcessPriorityChange) and e.foreground)
    released = sum(e.size for e in events[lost:back] if isinstance(e, VidMmEvict) and e.cause == "evict")
    returned = sum(e.size for e in events[back:] if isinstance(e, VidMmPageIn))
    if client == "careless":
        assert released == 0, "a careless game keeps everything when it loses the foreground"
    else:
        assert released > 16 << 20, "the library gives back what it holds (its own budget is 0)"
        assert returned > 8 << 20, "its working set comes back on return"


def test_a_newcomer_shrinks_the_budget_of_the_first_process_until_it_exits() -> None:
    result = run("newcomer")
    events = result.adapter.events
    first, second = (e.process for e in events.of_type(ProcessLifetime) if e.action == "start")
    capacity = result.adapter.vidmm.residency.budgets.capacity(0)  # type: ignore[arg-type]
    local = [e for e in events.of_type(VidMmProcessBudgetChange) if e.process == first and e.group == 0]
    assert min(e.budget for e in local) < capacity * 3 // 4, "pressure imposed a share on the first process"
    assert local[-1].budget == capacity, "the newcomer exited: nothing is imposed any more"
    notices = [e for e in events.of_type(VidMmTrimNotification) if e.process == first]
    assert notices and all(e.delivered == 1 and e.bytes_to_trim > 0 for e in notices)
    exits = [e.process for e in events.of_type(ProcessLifetime) if e.action == "exit"]
    assert exits[0] == second, "the newcomer exits at frame 12, before the run's end"
    assert [p.index for p in result.processes] == [0, 1]
    assert result.processes[1].frames == 8  # frames 4 to 11


def test_the_careless_scenario_verifies_both_processes() -> None:
    result = run("careless")
    assert len(result.processes) == 2 and result.verified
    notices = result.adapter.events.of_type(VidMmTrimNotification)
    assert {e.delivered for e in notices} <= {0, 1}
    careless = [e for e in notices if e.delivered == 0]
    assert careless, "the OS's trim reached the careless process, which never registered"


def test_a_timeline_run_replays_with_the_same_events(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with path.open("w") as f:
        run_scenario(catalog.load("newcomer", SHORT), record=f)
    calls = {json.loads(line).get("call") for line in path.read_text().splitlines()}
    assert {"set_focus", "register_trim_notification", "deliver_trim_notifications"} <= calls
    again = replay(read_trace(path))
    assert again.identical_events and again.content_preserved and again.differing == 0


def test_the_timeline_reads_back_from_its_document() -> None:
    config = catalog.load("newcomer")
    doc = config.to_dict()
    assert doc["timeline"] == [
        {"frame": 4, "event": "start", "bytes": 32 << 20, "foreground": True},
        {"frame": 12, "event": "exit", "process": 1},
    ]
    assert from_dict(doc) == config
    assert "timeline" not in catalog.load("default").to_dict()


BASE = {"workload": {"processes": 1, "frames": 8}}


@pytest.mark.parametrize(
    ("timeline", "key", "rule"),
    [
        ({"frame": 1}, "timeline[0].event", "must be one of"),
        ({"frame": 8, "event": "exit", "process": 0}, "timeline[0].frame", "between 0 and 7"),
        ({"frame": 1, "event": "focus", "process": 0}, "timeline[0].foreground", "is required"),
        ({"frame": 1, "event": "focus", "process": 3, "foreground": False}, "timeline[0].process", "not running"),
        ({"frame": 1, "event": "budget", "process": 0}, "timeline[0].local", "sets local, non_local or both"),
        ({"frame": 1, "event": "budget", "process": 0, "local": "lots"}, "timeline[0].local", "a size"),
        ({"frame": 1, "event": "start", "bytes": "1MiB", "client": "polite"}, "timeline[0].client", "one of"),
        ({"frame": 1, "event": "sleep", "kind": "nap"}, "timeline[0].kind", "standby"),
        ({"frame": 1, "event": "trim", "flags": "all"}, "timeline[0].flags", "trim-to-budget"),
        ({"frame": 1, "event": "exit", "process": 0, "bytes": 1}, "timeline[0].bytes", "not a key of a exit"),
        ("soon", "timeline[0]", "must be a table"),
    ],
)
def test_a_bad_timeline_entry_is_refused_naming_its_key(timeline: object, key: str, rule: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        from_dict({**BASE, "timeline": [timeline]})
    assert error.value.setting == key and rule in str(error.value)


def test_a_process_that_exited_cannot_be_named_later() -> None:
    with pytest.raises(ConfigurationError) as error:
        from_dict(
            {
                **BASE,
                "timeline": [
                    {"frame": 2, "event": "exit", "process": 0},
                    {"frame": 3, "event": "trim", "process": 0},
                ],
            }
        )
    assert error.value.setting == "timeline[1].process"
