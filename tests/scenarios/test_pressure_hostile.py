"""Hostile timelines (issue 23): budgets nothing fits, a budget no segment group holds, and what the per-process
summary counts when a client's promise -- not a byte -- failed."""

from __future__ import annotations

from typing import Any

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.scenarios.config import from_dict
from wddmsim.scenarios.runner import run_scenario

MiB = 1 << 20


def scenario(*timeline: dict[str, Any], client: str = "residency-library", frames: int = 6) -> dict[str, Any]:
    """Two processes over 1.2x a 32 MiB card, sharing budgets, with ``timeline``."""
    return {
        "seed": 1,
        "adapter": {"vram": "32MiB", "cpu_visible": "8MiB", "aperture": "16MiB", "budgets": "shared"},
        "workload": {
            "processes": 2,
            "frames": frames,
            "oversubscription": 1.2,
            "working_set": 0.5,
            "client": client,
            "sizes": {"distribution": "log-uniform", "min": "256KiB", "max": "2MiB"},
        },
        "timeline": list(timeline),
    }


def zero(process: int, frame: int) -> dict[str, Any]:
    return {"frame": frame, "event": "budget", "process": process, "local": 0, "non_local": 0}


@pytest.mark.parametrize("client", ["residency-library", "careless", "trim-to-share"])
def test_a_budget_of_zero_for_every_process_runs_verified(client: str) -> None:
    """The library trims all it may and makes the rest resident anyway: over a budget of 0 by a whole frame, which
    is the most it can do -- not a broken promise (decision 0185)."""
    result = run_scenario(from_dict(scenario(zero(0, 0), zero(1, 0), client=client)))
    assert [c for c in result.checks if not c.ok] == []
    assert [p.frames for p in result.processes] == [6, 6]


def test_the_library_still_breaks_its_promise_when_it_keeps_what_it_could_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check still bites: a library that never trims is over its budget of 0 by more than its frame."""
    from wddmsim.scenarios.clients import library

    class Hoarder(library.ResidencyLibrary):
        def prepare(self, working: list[Any], frame: int) -> list[Any]:
            hoard = [r for r in self.host.resources if not r.resident]
            assert not hoard or self.host.make_resident(hoard, cant_trim=True)
            for r in hoard + working:
                r.last_use = frame
            self.working = working
            return []

    monkeypatch.setattr(library.ResidencyLibrary, "prepare", Hoarder.prepare)
    result = run_scenario(from_dict(scenario(zero(0, 1), frames=3)))
    broken = [c.step for c in result.checks if not c.ok and c.operation == "budget"]
    assert broken == [f"process 0, frame {f}: the residency-library client's promise" for f in (1, 2)]


def test_a_failed_promise_is_not_counted_as_an_unverified_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-process summary counts allocations: a client's broken promise is its own failed check."""
    from wddmsim.scenarios.clients import library

    monkeypatch.setattr(library.ResidencyLibrary, "check", lambda self, frame: "broken on purpose")
    result = run_scenario(from_dict(scenario(frames=2)))
    summaries = [c for c in result.checks if "match the reference model" in c.step]
    assert [(c.ok, c.detail.split("; ")[1]) for c in summaries] == [
        (True, "23 of 23 allocations verified"),
        (True, "23 of 23 allocations verified"),
    ]
    assert sum(1 for c in result.checks if not c.ok and c.operation == "budget") == 4
    assert not result.verified


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"frame": 1, "event": "budget", "process": 0, "local": "1TiB"}, "timeline[1].local"),
        ({"frame": 2, "event": "budget", "process": 1, "non_local": "32MiB"}, "timeline[1].non_local"),
    ],
)
def test_a_budget_larger_than_its_group_is_refused_before_the_first_frame(entry: dict[str, Any], key: str) -> None:
    config = from_dict(scenario({"frame": 0, "event": "trim"}, entry))
    with pytest.raises(ConfigurationError) as error:
        run_scenario(config)
    assert error.value.setting == key
    assert "capacity" in str(error.value) and "adapter." in str(error.value)
