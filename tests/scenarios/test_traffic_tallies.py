"""A plain run counts its paging operations and DDI calls without building their events (decision 0223): the
traffic of a run whose log keeps nothing equals the traffic of the events a kept run keeps, while neither a
``PagingOperation`` nor a ``BuildPagingBuffer`` event is made."""

from __future__ import annotations

import pytest

from wddmsim.scenarios import catalog
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.traffic import Traffic, traffic
from wddmsim.system import Adapter
from wddmsim.vidmm.events import BuildPagingBuffer, PagingOperation
from wddmsim.vidmm.paging.stream import TALLY_BYTES, TALLY_CALLS, TALLY_OPERATIONS


@pytest.mark.parametrize(
    ("scenario", "overrides"),
    [
        ("default", {"workload.frames": 4}),
        ("tiles", {"workload.frames": 3}),
        ("stress", {"workload.frames": 3}),
        ("default", {"workload.frames": 3, "adapter.driver_model": "wddm1"}),
    ],
    ids=["default", "tiles", "stress", "wddm1"],
)
def test_a_plain_runs_tallied_traffic_is_the_traffic_of_a_kept_runs_events(
    scenario: str, overrides: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = catalog.load(scenario, {"seed": 3, **overrides})
    kept = run_scenario(config)
    want = traffic(kept.adapter.events)
    assert want["BuildPagingBufferCalls"] > 0 and any(k.startswith("PagingOp.") for k in want)

    built: list[str] = []
    for kind in (PagingOperation, BuildPagingBuffer):
        original = kind.__init__

        def counting(self: object, *args: object, _original: object = original, **kwargs: object) -> None:
            built.append(type(self).__name__)
            _original(self, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(kind, "__init__", counting)

    def plain(adapter: Adapter) -> None:
        adapter.events.stop_keeping()  # as `wddmsim run` does: folds only

    run = run_scenario(config, on_adapter=plain)
    assert run.traffic == want
    assert run.adapter.events.emitted == len(kept.adapter.events), "the events not built are still counted"
    assert built == [], "a plain run built paging-operation or DDI-call events"


def test_the_tallies_count_what_the_events_say() -> None:
    """Each key against the events of one kept run: one per DDI call, one per operation by name, and the bytes
    of the transfers."""
    run = run_scenario(catalog.load("default", {"seed": 4, "workload.frames": 3}))
    events = list(run.adapter.events)
    tallies = run.adapter.events.tallies
    assert tallies[TALLY_CALLS] == sum(isinstance(e, BuildPagingBuffer) for e in events)
    operations = [e for e in events if isinstance(e, PagingOperation)]
    for op, key in TALLY_OPERATIONS.items():
        assert tallies[key] == sum(e.operation == op.name for e in operations), op.name
    for op, key in TALLY_BYTES.items():
        assert tallies[key] == sum(e.size for e in operations if e.operation == op.name), op.name
    assert tallies[TALLY_BYTES[next(iter(TALLY_BYTES))]] >= 0
    fold = Traffic()
    fold.attach(run.adapter.events)
    assert fold.counters() == traffic(events)
