"""Reference strings of real runs, and the run metrics measured against them (decisions 0144, 0146).

* :func:`of_trace`: a recorded call trace replayed once on its recorded configuration, one request per call.
* :func:`observed_replay`: a replay (under another policy or configuration) observed the same way, one
  request per call.
* :func:`observed_run`: a scenario run with a :class:`~wddmsim.research.reference.ReferenceRecorder` around its
  eviction policy, one request per process frame (the run is unchanged: the recorder passes every hook on).
* :func:`measured_run`: the one way a scenario run is executed and measured: ``wddmsim run`` and each run of
  ``wddmsim sweep`` call it (decision 0150).
* :func:`run_metrics`: bytes paged in (every ``VidMmPageIn``: transfers, zero fills and aperture maps alike --
  a placement the allocation needed), over the compulsory bytes and over the lower bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import IO, Any

from wddmsim.core.events import Event
from wddmsim.research.bound import lower_bound
from wddmsim.research.reference import ReferenceRecorder, ReferenceString
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.replay import ReplayResult, Trace, replay
from wddmsim.scenarios.runner import Progress, RunResult, run_scenario
from wddmsim.system import Adapter
from wddmsim.vidmm.events import VidMmPageIn
from wddmsim.vidmm.policy.interface import EvictionPolicy


class _Holder:
    """The recorder a run's policy was wrapped in (built when the adapter is)."""

    def __init__(self) -> None:
        self.recorder: ReferenceRecorder | None = None

    def wrap(self, inner: EvictionPolicy) -> EvictionPolicy:
        self.recorder = ReferenceRecorder(inner)
        return self.recorder

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()

    def string(self, adapter: Adapter) -> ReferenceString:
        assert self.recorder is not None, "the adapter was built without the recorder"
        return self.recorder.reference_string(adapter.vidmm.spaces.spaces)


def of_trace(trace: Trace) -> ReferenceString:
    """The reference string of a recorded run: its uses, one request per call, and its capacity (the trace
    replayed once on its recorded configuration)."""
    return observed_replay(trace)[1]


def observed_replay(
    trace: Trace, overrides: Mapping[str, object] | None = None
) -> tuple[ReplayResult, ReferenceString]:
    """Replay ``trace`` as :func:`~wddmsim.scenarios.replay.replay` does (under ``overrides``: another policy,
    another size ...) and return the replay's own reference string too, one request per call."""
    holder = _Holder()
    result = replay(trace, overrides, wrap=holder.wrap, after_call=holder.close)
    return result, holder.string(result.adapter)


def observed_run(
    config: ScenarioConfig,
    *,
    progress: Progress | None = None,
    record: IO[str] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
) -> tuple[RunResult, ReferenceString]:
    """Run ``config`` as :func:`~wddmsim.scenarios.runner.run_scenario` does, and return its reference string
    too (one request per step of the run: a process's setup, each of its frames, its verification)."""
    holder = _Holder()

    def step(done: int, total: int, what: str) -> None:
        holder.close()
        if progress is not None:
            progress(done, total, what)

    result = run_scenario(config, progress=step, record=record, on_adapter=on_adapter, wrap_policy=holder.wrap)
    return result, holder.string(result.adapter)


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    """A finished scenario run and its research metrics (empty when they were not asked for)."""

    result: RunResult
    metrics: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        """The run in JSON terms with its metrics and its evictions by cause (lower-case cause names, from its
        traffic): what ``summary.json`` holds before the views add theirs (decision 0150)."""
        return {**self.result.summary(), "evictions_by_cause": evictions_by_cause(self.result.traffic), **self.metrics}


def evictions_by_cause(traffic: Mapping[str, int]) -> dict[str, int]:
    """``{cause: evictions}`` from a run's traffic counters (``Evictions.pressure`` ...), causes sorted."""
    prefix = "Evictions."
    return {key.removeprefix(prefix): n for key, n in sorted(traffic.items()) if key.startswith(prefix)}


def measured_run(
    config: ScenarioConfig,
    *,
    metrics: bool = True,
    progress: Progress | None = None,
    record: IO[str] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
) -> MeasuredRun:
    """Run ``config`` (a pure function of it: same configuration, same event log) and, with ``metrics``, measure
    it against its reference string (:func:`run_metrics`)."""
    result, refs = observed_run(config, progress=progress, record=record, on_adapter=on_adapter)
    return MeasuredRun(result, run_metrics(result.adapter.events, refs) if metrics else {})


def paged_in_bytes(events: Iterable[Event]) -> int:
    """Bytes VidMm placed in a segment (``VidMmPageIn``: transfer, fill or aperture map)."""
    return sum(e.size for e in events if isinstance(e, VidMmPageIn))


def run_metrics(events: Iterable[Event], refs: ReferenceString) -> dict[str, Any]:
    """The research metrics of a run, for ``summary.json``: ratios are None when their denominator is 0."""
    paged = paged_in_bytes(events)
    bound = lower_bound(refs)

    def ratio(denominator: int) -> float | None:
        return round(paged / denominator, 4) if denominator else None

    return {
        "paged_in_bytes": paged,
        "compulsory_bytes": refs.compulsory_bytes,
        "lower_bound_bytes": bound.bytes,
        "paged_in_over_compulsory": ratio(refs.compulsory_bytes),
        "paged_in_over_lower_bound": ratio(bound.bytes),
        "reference_string": {"uses": len(refs), "requests": len(refs.requests), "capacity": refs.capacity},
    }


__all__ = [
    "MeasuredRun",
    "evictions_by_cause",
    "measured_run",
    "observed_replay",
    "observed_run",
    "of_trace",
    "paged_in_bytes",
    "run_metrics",
]
