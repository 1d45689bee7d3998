"""Reference strings of real runs, and the run metrics measured against them (decisions 0144, 0146).

* :func:`of_trace`: a recorded call trace replayed once on its recorded configuration, one request per call.
* :func:`observed_replay`: a replay (under another policy or configuration) observed the same way, one
  request per call.
* :func:`observed_run`: a scenario run with a :class:`~wddmsim.research.reference.ReferenceRecorder` around its
  eviction policy, one request per process frame (the run is unchanged: the recorder passes every hook on).
* :func:`record_future`: the uses of a scenario under the default policy, the future ``--policy opt`` is given
  (decision 0161).
* :func:`run_metrics`: bytes paged in (every ``VidMmPageIn``: transfers, zero fills and aperture maps alike --
  a placement the allocation needed), over the compulsory bytes and over the lower bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
from wddmsim.vidmm.policy.offline import Belady, Future
from wddmsim.vidmm.policy.registry import DEFAULT_EVICTION


@dataclass(frozen=True, slots=True)
class Clairvoyance:
    """What the clairvoyant policy (``opt``) of a run was given, and how far the run kept to it (decision 0161)."""

    future_uses: int
    """Uses of the recording run: the future ``opt`` was given."""
    diverged: int
    """Uses of this run that were not the recorded one at their position (0: the run kept to its future)."""

    def to_dict(self) -> dict[str, int]:
        return {"future_uses": self.future_uses, "diverged": self.diverged}


class _Holder:
    """The recorder a run's policy was wrapped in (built when the adapter is)."""

    def __init__(self) -> None:
        self.recorder: ReferenceRecorder | None = None

    def clairvoyance(self) -> Clairvoyance | None:
        """What ``opt`` was given, if the run's policy was ``opt``."""
        inner = None if self.recorder is None else self.recorder.inner
        return Clairvoyance(len(inner.future), inner.diverged) if isinstance(inner, Belady) else None

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
) -> tuple[ReplayResult, ReferenceString, Clairvoyance | None]:
    """Replay ``trace`` as :func:`~wddmsim.scenarios.replay.replay` does (under ``overrides``: another policy,
    another size ...) and return the replay's own reference string too, one request per call, and what ``opt``
    was given when it is the replay's policy (the replay records its future first)."""
    holder = _Holder()
    result = replay(trace, overrides, wrap=holder.wrap, after_call=holder.close)
    return result, holder.string(result.adapter), holder.clairvoyance()


def observed_run(
    config: ScenarioConfig,
    *,
    progress: Progress | None = None,
    record: IO[str] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
    future: Sequence[int] | None = None,
) -> tuple[RunResult, ReferenceString, Clairvoyance | None]:
    """Run ``config`` as :func:`~wddmsim.scenarios.runner.run_scenario` does, and return its reference string
    too (one request per step of the run: a process's setup, each of its frames, its verification).

    With an offline policy (``opt``) the scenario first runs, same seed, under the default policy to record its
    uses, unless ``future`` gives them; that run is not observed (no progress, trace or adapter hook).  The
    third value says what ``opt`` was given and how far the run kept to it (None for an online policy)."""
    if config.offline_policy and future is None:
        future = record_future(config)
    holder = _Holder()

    def step(done: int, total: int, what: str) -> None:
        holder.close()
        if progress is not None:
            progress(done, total, what)

    result = run_scenario(
        config, progress=step, record=record, on_adapter=on_adapter, wrap_policy=holder.wrap, future=future
    )
    return result, holder.string(result.adapter), holder.clairvoyance()


def record_future(config: ScenarioConfig) -> list[int]:
    """The uses (allocation handles, in order) of ``config`` run under the default eviction policy, same seed:
    the future the clairvoyant policy is given (decision 0161)."""
    uses = Future()
    run_scenario(replace(config, adapter=replace(config.adapter, policy=DEFAULT_EVICTION)), uses=uses)
    return uses


def paged_in_bytes(events: Iterable[Event]) -> int:
    """Bytes VidMm placed in a segment (``VidMmPageIn``: transfer, fill or aperture map)."""
    return sum(e.size for e in events if isinstance(e, VidMmPageIn))


def run_metrics(
    events: Iterable[Event], refs: ReferenceString, clairvoyance: Clairvoyance | None = None
) -> dict[str, Any]:
    """The research metrics of a run, for ``summary.json``: ratios are None when their denominator is 0;
    ``opt`` (what the clairvoyant policy was given) when the run's policy was ``opt``."""
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
        **({} if clairvoyance is None else {"opt": clairvoyance.to_dict()}),
    }


__all__ = [
    "Clairvoyance",
    "observed_replay",
    "observed_run",
    "of_trace",
    "paged_in_bytes",
    "record_future",
    "run_metrics",
]
