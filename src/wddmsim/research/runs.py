"""Reference strings of real runs, and the run metrics measured against them (decisions 0144, 0146).

* :func:`of_trace`: a recorded call trace replayed once on its recorded configuration, one request per call.
* :func:`observed_replay`: a replay (under another policy or configuration) observed the same way, one
  request per call.
* :func:`observed_run`: a scenario run with a :class:`~wddmsim.research.reference.ReferenceRecorder` around its
  eviction policy, one request per process frame (the run is unchanged: the recorder passes every hook on).
* :func:`record_future`: the uses of a scenario under the default policy, the future ``--policy opt`` is given
  (decision 0161).
* :func:`measured_run`: the one way a scenario run is executed and measured: ``wddmsim run`` and each run of
  ``wddmsim sweep`` call it (decision 0150).
* :func:`run_metrics`: bytes paged in (every ``VidMmPageIn``: transfers, zero fills and aperture maps alike --
  a placement the allocation needed), over the compulsory bytes and over the lower bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any

from wddmsim.core.events import Event
from wddmsim.research.bound import lower_bound
from wddmsim.research.frames import THRASH_WINDOW, Frame, FrameFold, FrameMarks, fed
from wddmsim.research.reference import ReferenceRecorder, ReferenceString
from wddmsim.scenarios.callfmt import TraceFormatError
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.runner import Progress, RunResult, run_scenario
from wddmsim.system import Adapter
from wddmsim.vidmm.events import VidMmPageIn
from wddmsim.vidmm.policy.interface import EvictionPolicy
from wddmsim.vidmm.policy.offline import Belady, Future
from wddmsim.vidmm.policy.registry import DEFAULT_EVICTION

if TYPE_CHECKING:  # a scenario run never replays: the replayer is imported where a trace is replayed
    from wddmsim.scenarios.replay import ReplayResult, Trace


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


def frame_calls(trace: Trace) -> list[int]:
    """Where the recorded run's frames start and its last one ends, in calls made (the trailer's ``frames``,
    decision 0157); a trace without them is one frame, from the first call to the last."""
    calls = len(trace.calls)
    given = (trace.trailer or {}).get("frames")
    if given is None:
        return [0, calls]
    if (
        not isinstance(given, list)
        or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= calls for v in given)
        or given != sorted(given)
    ):
        raise TraceFormatError(
            f"the trailer's frames={given!r}: must be call counts in increasing order, each between 0 and {calls}"
        )
    return [int(v) for v in given]


def observed_replay(
    trace: Trace, overrides: Mapping[str, object] | None = None, *, marks: FrameMarks | None = None
) -> tuple[ReplayResult, ReferenceString, Clairvoyance | None]:
    """Replay ``trace`` as :func:`~wddmsim.scenarios.replay.replay` does (under ``overrides``: another policy,
    another size ...) and return the replay's own reference string too, one request per call, and what ``opt``
    was given when it is the replay's policy (the replay records its future first).  ``marks`` receives the
    recorded run's frame boundaries (:func:`frame_calls`)."""
    holder = _Holder()
    bounds = frame_calls(trace) if marks is not None else []
    done = 0

    def attach(adapter: Adapter) -> None:
        if marks is not None:
            marks.attach(adapter)
            for _ in range(bounds.count(0)):
                marks.mark()

    def after_call() -> None:
        nonlocal done
        holder.close()
        done += 1
        if marks is not None:
            for _ in range(bounds.count(done)):
                marks.mark()

    from wddmsim.scenarios.replay import replay

    result = replay(trace, overrides, wrap=holder.wrap, after_call=after_call, on_adapter=attach)
    return result, holder.string(result.adapter), holder.clairvoyance()


def observed_run(
    config: ScenarioConfig,
    *,
    progress: Progress | None = None,
    record: IO[str] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
    marks: FrameMarks | None = None,
    future: Sequence[int] | None = None,
) -> tuple[RunResult, ReferenceString, Clairvoyance | None]:
    """Run ``config`` as :func:`~wddmsim.scenarios.runner.run_scenario` does, and return its reference string
    too (one request per step of the run: a process's setup, each of its frames, its verification).  ``marks``
    receives the run's frame boundaries (decision 0157).

    With an offline policy (``opt``) the scenario first runs, same seed, under the default policy to record its
    uses, unless ``future`` gives them; that run is not observed (no progress, trace, adapter hook or marks).
    The third value says what ``opt`` was given and how far the run kept to it (None for an online policy)."""
    if config.offline_policy and future is None:
        future = record_future(config)
    holder = _Holder()

    def step(done: int, total: int, what: str) -> None:
        holder.close()
        if progress is not None:
            progress(done, total, what)

    def attach(adapter: Adapter) -> None:
        if marks is not None:
            marks.attach(adapter)
        if on_adapter is not None:
            on_adapter(adapter)

    result = run_scenario(
        config,
        progress=step,
        record=record,
        on_adapter=attach,
        wrap_policy=holder.wrap,
        on_frame=marks.mark if marks is not None else None,
        future=future,
    )
    return result, holder.string(result.adapter), holder.clairvoyance()


def record_future(config: ScenarioConfig) -> list[int]:
    """The uses (allocation handles, in order) of ``config`` run under the default eviction policy, same seed:
    the future the clairvoyant policy is given (decision 0161)."""
    uses = Future()
    run_scenario(
        replace(config, adapter=replace(config.adapter, policy=DEFAULT_EVICTION)),
        uses=uses,
        on_adapter=lambda adapter: adapter.events.stop_keeping(),  # nothing reads its events (decision 0189)
    )
    return uses


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    """A finished scenario run, its research metrics and its frames (``frames.csv``'s rows)."""

    result: RunResult
    metrics: dict[str, Any]
    frames: list[Frame]

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
    progress: Progress | None = None,
    record: IO[str] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
) -> MeasuredRun:
    """Run ``config`` (a pure function of it: same configuration, same event log) and measure it against its
    reference string, frame by frame (:func:`run_research`)."""
    fold = FrameFold(config.workload.frames + 1, window=config.research.thrash_window)
    result, refs, clairvoyance = observed_run(
        config, progress=progress, record=record, on_adapter=on_adapter, marks=FrameMarks(fold)
    )
    metrics, frames = research(fold, refs, clairvoyance)
    return MeasuredRun(result, metrics, frames)


def paged_in_bytes(events: Iterable[Event]) -> int:
    """Bytes VidMm placed in a segment (``VidMmPageIn``: transfer, fill or aperture map)."""
    return sum(e.size for e in events if isinstance(e, VidMmPageIn))


def run_metrics(
    events: Iterable[Event], refs: ReferenceString, clairvoyance: Clairvoyance | None = None
) -> dict[str, Any]:
    """The research metrics of a run, for ``summary.json``: ratios are None when their denominator is 0;
    ``opt`` (what the clairvoyant policy was given) when the run's policy was ``opt``."""
    return run_research(events, refs, clairvoyance=clairvoyance)[0]


def run_research(
    events: Iterable[Event],
    refs: ReferenceString,
    marks: FrameMarks | None = None,
    *,
    window: int = THRASH_WINDOW,
    clairvoyance: Clairvoyance | None = None,
) -> tuple[dict[str, Any], list[Frame]]:
    """The research metrics of a run (decisions 0146, 0157) and, with its frame marks, its frames
    (``frames.csv``); without marks the run has no frame and the per-frame keys are None; ``opt`` (what the
    clairvoyant policy was given, decision 0161) when the run's policy was ``opt``."""
    fold = fed(events, marks.marks if marks is not None else [], window=window)
    return research(fold, refs, clairvoyance)


def research(
    fold: FrameFold, refs: ReferenceString, clairvoyance: Clairvoyance | None = None
) -> tuple[dict[str, Any], list[Frame]]:
    """:func:`run_research` from a fold that saw the run's events and marks as they came (decision 0189)."""
    frames_summary, frames = fold.result()
    paged = fold.paged_in_bytes()
    bound = lower_bound(refs)

    def ratio(denominator: int) -> float | None:
        return round(paged / denominator, 4) if denominator else None

    summary = {
        "paged_in_bytes": paged,
        "compulsory_bytes": refs.compulsory_bytes,
        "lower_bound_bytes": bound.bytes,
        "paged_in_over_compulsory": ratio(refs.compulsory_bytes),
        "paged_in_over_lower_bound": ratio(bound.bytes),
        "reference_string": {"uses": len(refs), "requests": len(refs.requests), "capacity": refs.capacity},
        **frames_summary,
        **({} if clairvoyance is None else {"opt": clairvoyance.to_dict()}),
    }
    return summary, frames


__all__ = [
    "Clairvoyance",
    "MeasuredRun",
    "evictions_by_cause",
    "frame_calls",
    "measured_run",
    "observed_replay",
    "observed_run",
    "of_trace",
    "paged_in_bytes",
    "record_future",
    "research",
    "run_metrics",
    "run_research",
]
