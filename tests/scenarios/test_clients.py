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
    SegmentRange,
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


def _paged(result: RunResult, process: int | None = None) -> int:
    """Bytes paged in (transfers and aperture maps, not first-touch fills) and out to system memory."""
    owner = {r.allocation: r.process for r in result.adapter.events.of_type(SegmentRange) if r.allocation}
    total = 0
    for e in result.adapter.events:
        mine = process is None or owner.get(getattr(e, "allocation", 0)) == process
        if (isinstance(e, VidMmPageIn) and e.how != "fill" and mine) or (
            isinstance(e, VidMmEvict) and e.destination == "system" and mine
        ):
            total += e.size
    return total


def test_under_the_same_pressure_the_library_pages_less_than_a_careless_game() -> None:
    library = run("newcomer", **{"workload.client": "residency-library"})
    careless = run("newcomer", **{"workload.client": "careless"})
    assert _paged(library) < _paged(careless) * 0.8, (_paged(library), _paged(careless))
    game = next(e.process for e in library.adapter.events.of_type(ProcessLifetime))
    careless_game = next(e.process for e in careless.adapter.events.of_type(ProcessLifetime))
    assert _paged(library, game) < _paged(careless, careless_game)


def test_a_careless_neighbour_costs_the_well_behaved_process(tmp_path: Path) -> None:
    careless = run("careless")
    assert len(careless.processes) == 2 and careless.verified
    notices = careless.adapter.events.of_type(VidMmTrimNotification)
    assert [e for e in notices if e.delivered == 0], "the OS's trim reached the careless process, unregistered"
    polite_toml = tmp_path / "polite.toml"
    polite_toml.write_text(
        catalog.builtin_text("careless").replace('client = "careless"', 'client = "residency-library"')
    )
    polite = run_scenario(catalog.load(str(polite_toml)))
    assert polite.verified
    first = next(e.process for e in careless.adapter.events.of_type(ProcessLifetime))
    first_polite = next(e.process for e in polite.adapter.events.of_type(ProcessLifetime))
    assert _paged(careless, first) > _paged(polite, first_polite), "the same process pages more beside a careless one"


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
        {"frame": 4, "event": "start", "share": 0.5, "client": "residency-library", "foreground": True},
        {"frame": 12, "event": "exit", "process": 1},
    ]
    assert from_dict(doc) == config
    assert "timeline" not in catalog.load("default").to_dict()
    assert config.timeline[0].bytes == 32 << 20
    bigger = catalog.load("newcomer", {"adapter.vram": "128MiB"})
    assert bigger.timeline[0].bytes == 64 << 20, "a share scales with local memory"


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
        ({"frame": 1, "event": "start"}, "timeline[0].bytes", "bytes or share"),
        ({"frame": 1, "event": "start", "bytes": "1MiB", "share": 0.5}, "timeline[0].bytes", "bytes or share"),
        ({"frame": 1, "event": "start", "share": 20}, "timeline[0].share", "(0, 16]"),
        ({"frame": 1, "event": "start", "bytes": 100}, "timeline[0].bytes", "at least 4 KiB"),
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


def test_a_process_given_the_foreground_takes_it_from_the_one_that_had_it() -> None:
    config = from_dict(
        {
            "workload": {"processes": 2, "frames": 3, "oversubscription": 0.5},
            "timeline": [
                {"frame": 0, "event": "focus", "process": 0, "foreground": True},
                {"frame": 1, "event": "focus", "process": 1, "foreground": True},
            ],
        }
    )
    result = run_scenario(config)
    assert result.verified
    first, second = (e.process for e in result.adapter.events.of_type(ProcessLifetime) if e.action == "start")
    focus = [(e.process, e.foreground) for e in result.adapter.events.of_type(VidMmProcessPriorityChange)]
    assert focus == [(first, True), (first, False), (second, True)], "one foreground at a time"
