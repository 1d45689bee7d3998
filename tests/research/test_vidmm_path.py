"""The bound against schedules VidMm really ran: every shipped eviction policy, and Belady's MIN, through the
whole path (``MakeResident``, the placement ladder, paging buffers, the driver, the GPU); and the reference
string of real runs, from a live run and from its recorded trace."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.research.loop import run_loop
from wddmsim.core.units import MiB
from wddmsim.research.bound import lower_bound
from wddmsim.research.runs import observed_run, of_trace, paged_in_bytes, run_metrics
from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.replay import read_trace
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.traffic import event_digest
from wddmsim.vidmm.policy import Belady, registry

SHIPPED = sorted(name for name, entry in registry.EVICTION.items() if entry.factory is not None)


@st.composite
def loops(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    count = draw(st.integers(4, 14))
    sizes = [s * MiB // 2 for s in draw(st.lists(st.integers(1, 10), min_size=count, max_size=count))]
    objects = draw(st.lists(st.integers(0, count - 1), min_size=4, max_size=40))
    return objects, sizes


@settings(max_examples=8, deadline=None)
@given(loops())
def test_every_policy_through_vidmm_pages_in_at_least_the_bound(loop: tuple[list[int], list[int]]) -> None:
    objects, sizes = loop
    runs = {name: run_loop(objects, sizes, registry.eviction_policy(name)) for name in SHIPPED}
    first = runs[SHIPPED[0]]
    runs["min"] = run_loop(objects, sizes, Belady(first.handles))
    for name, run in runs.items():
        # Every run sees the same string (the objects, their sizes, the segments they may use).
        assert run.recorded == first.recorded, name
        assert len(run.recorded) == len(objects)
        assert [u.size for u in run.recorded.uses()] == [sizes[o] for o in objects]
    bound = lower_bound(first.recorded)
    assert bound.compulsory == sum(sizes[o] for o in set(objects))
    for name, run in runs.items():
        assert run.paged_in >= bound.bytes, (name, run.paged_in, bound)


def small() -> ScenarioConfig:
    return catalog.load(None, {"workload.frames": 4, "workload.processes": 2})


def test_the_recorder_changes_nothing_and_a_trace_gives_the_same_uses(tmp_path: Path) -> None:
    """A live run observed through the recorder makes the event log the plain run makes, byte for byte; the
    recorded trace, replayed, gives the same uses and capacity (one request per call instead of per frame)."""
    config = small()
    trace = io.StringIO()
    observed, refs, clairvoyance = observed_run(config, record=trace)
    assert clairvoyance is None  # an online policy was given no future
    plain = run_scenario(config)
    assert observed.verified
    assert event_digest(observed.adapter.events) == event_digest(plain.adapter.events)
    assert len(refs) > 0 and refs.capacity > 0
    assert len(refs.requests) <= config.workload.processes * (config.workload.frames + 2)
    path = tmp_path / "calls.jsonl"
    path.write_text(trace.getvalue(), encoding="utf-8")
    replayed = of_trace(read_trace(path))
    assert replayed.uses() == refs.uses()
    assert replayed.capacity == refs.capacity
    metrics = run_metrics(observed.adapter.events, refs)
    assert metrics["paged_in_bytes"] == paged_in_bytes(observed.adapter.events) >= metrics["lower_bound_bytes"]
    assert metrics["lower_bound_bytes"] >= metrics["compulsory_bytes"] == refs.compulsory_bytes > 0
    assert metrics["paged_in_over_lower_bound"] <= metrics["paged_in_over_compulsory"]
    assert metrics["paged_in_over_lower_bound"] >= 1.0
    json.dumps(metrics)


def test_wddmsim_run_out_reports_the_ratios(tmp_path: Path) -> None:
    """``wddmsim run --out`` adds the research metrics to summary.json (decision 0146)."""
    from click.testing import CliRunner

    from wddmsim.cli import main

    done = CliRunner().invoke(main, ["run", "--set", "workload.frames=3", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["paged_in_bytes"] >= summary["lower_bound_bytes"] >= summary["compulsory_bytes"] > 0
    assert summary["paged_in_over_compulsory"] == round(summary["paged_in_bytes"] / summary["compulsory_bytes"], 4)
    assert summary["paged_in_over_lower_bound"] == round(summary["paged_in_bytes"] / summary["lower_bound_bytes"], 4)
    assert summary["reference_string"]["uses"] > 0


def test_wddmsim_replay_out_reports_the_ratios_of_the_replayed_policy(tmp_path: Path) -> None:
    """A replay under another policy measures that policy against the same string (its uses are the trace's)."""
    from click.testing import CliRunner

    from wddmsim.cli import main

    trace = tmp_path / "calls.jsonl"
    recorded = CliRunner().invoke(main, ["run", "--set", "workload.frames=3", "--record", str(trace)])
    assert recorded.exit_code == 0, recorded.output
    summaries = {}
    for policy in ("fifo", "min"):
        out = tmp_path / policy
        done = CliRunner().invoke(main, ["replay", str(trace), "--policy", policy, "--out", str(out)])
        assert done.exit_code == 0, done.output
        summaries[policy] = json.loads((out / "summary.json").read_text())
    fifo, opt = summaries["fifo"], summaries["min"]
    assert fifo["lower_bound_bytes"] == opt["lower_bound_bytes"] == lower_bound(of_trace(read_trace(trace))).bytes
    for summary in (fifo, opt):
        assert summary["paged_in_bytes"] >= summary["lower_bound_bytes"]
        assert summary["paged_in_over_lower_bound"] >= 1.0
