"""The scenario runner: builds the adapter a configuration describes, runs its processes' frame loop through the
user-mode runtime only, verifies every byte, and gives back everything a view needs.

What it models: several applications sharing one GPU, interleaved frame by frame (process 0's frame, process
1's, ...), each through its own :class:`~wddmsim.scenarios.app.App`.  The runner never touches VidMm: the
applications see the adapter through :class:`~wddmsim.scenarios.record.TracedRuntime`, which also records the
calls when asked.  The result holds the adapter (its event log and state, for ``summary.json``, ``events.jsonl``,
``trace.json`` and the report), the checks, and a small summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import format_size
from wddmsim.scenarios.app import App
from wddmsim.scenarios.config import PolicyWrap, ScenarioConfig
from wddmsim.scenarios.fit import check_capture, check_fits, check_setup, check_timeline
from wddmsim.scenarios.model import Model
from wddmsim.scenarios.record import CallLog, TracedRuntime
from wddmsim.scenarios.result import Check
from wddmsim.scenarios.timeline_run import Timeline
from wddmsim.scenarios.traffic import Digest, Traffic
from wddmsim.scenarios.verify import verify_retiring
from wddmsim.scenarios.workload import frames, live_counts
from wddmsim.system import Adapter, build_adapter

Progress = Callable[[int, int, str], None]
"""``(steps done, steps in all, what is being done)``."""


@dataclass(frozen=True, slots=True)
class ProcessStats:
    """What one process had and did."""

    index: int
    resources: int
    bytes: int
    frames: int
    submissions: int


@dataclass(slots=True)
class RunResult:
    """A finished run."""

    config: ScenarioConfig
    adapter: Adapter
    checks: list[Check] = field(default_factory=list)
    processes: list[ProcessStats] = field(default_factory=list)
    counters: Traffic = field(default_factory=Traffic)
    """The paging traffic, folded as the run goes (the adapter need not keep its events)."""

    @property
    def verified(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def traffic(self) -> dict[str, int]:
        return self.counters.counters()

    def summary(self) -> dict[str, Any]:
        """The run in JSON terms (``summary.json`` adds the counters of the event log)."""
        c = self.config
        return {
            "verified": self.verified,
            "scenario": c.name,
            "seed": c.seed,
            "driver_model": c.adapter.driver_model,
            "policy": c.adapter.policy,
            "simulated_time_ns": self.adapter.clock.now,
            "workload": {
                "processes": len(self.processes),
                "allocations": sum(p.resources for p in self.processes),
                "bytes": sum(p.bytes for p in self.processes),
                "local_memory": c.adapter.vram,
                "oversubscription": c.workload.oversubscription,
                "frames": c.workload.frames,
                "submissions": sum(p.submissions for p in self.processes),
            },
            "config": c.to_dict(),
            "checks": [{"step": k.step, "operation": k.operation, "ok": k.ok, "detail": k.detail} for k in self.checks],
            "traffic": self.traffic,
        }

    def describe(self) -> str:
        c = self.config
        return (
            f"{c.name}: {len(self.processes)} processes, {sum(p.resources for p in self.processes)} allocations, "
            f"{sum(p.bytes for p in self.processes) / 2**20:.1f} MiB over {format_size(c.adapter.vram)} local memory "
            f"({c.adapter.driver_model}, policy {c.adapter.policy}, seed {c.seed})"
        )


def run_scenario(
    config: ScenarioConfig,
    *,
    progress: Progress | None = None,
    record: IO[str] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
    wrap_policy: PolicyWrap | None = None,
    future: Sequence[int] | None = None,
    uses: list[int] | None = None,
    on_frame: Callable[[], None] | None = None,
) -> RunResult:
    """Run ``config`` to the end and verify; ``record`` receives the call trace; ``on_adapter`` sees the adapter
    before the first call (to attach read-only observers such as a paging-buffer capture); ``wrap_policy`` puts
    an observer around the eviction policy (the reference-string recorder); ``future``: the uses of an earlier
    run, which an offline policy needs; ``uses``: a list this run's uses are appended to (see
    :meth:`~wddmsim.scenarios.config.ScenarioConfig.system_config`); ``on_frame`` is called at the start of each
    frame and once after the last (decision 0157: the frame marks of the research metrics), and the trace's
    trailer lists the calls made by then (``frames``), so that a replay marks the same frames."""
    if config.offline_policy and future is None and uses is None:
        raise ConfigurationError(
            "adapter.policy",
            config.adapter.policy,
            "is an offline policy: it needs the uses of a recorded run (wddmsim run records them first; "
            "run_scenario takes them as future=)",
        )
    adapter = build_adapter(config.system_config(future=future, uses=uses, wrap=wrap_policy))
    start = adapter.footprint()
    result = RunResult(config, adapter)
    result.counters.attach(adapter.events)
    digest = None if record is None else Digest()  # only a recording carries the digest of its events
    if digest is not None:
        adapter.events.follow(digest.see)
    if on_adapter is not None:
        on_adapter(adapter)
    log = None if record is None else CallLog(record, config.to_dict())
    runtime = TracedRuntime(adapter.runtime, log)
    model = Model()
    w = config.workload
    total = w.processes * (w.frames + 2) + sum(w.frames - e.frame + 1 for e in config.timeline if e.event == "start")
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, what)

    apps: list[App] = []
    for i in range(w.processes):
        apps.append(App(runtime, config, i, model, umd=adapter.umd, capabilities=adapter.capabilities))
        step(f"process {i}: setup")
    check_fits(adapter, apps)  # decisions 0166, 0168: before any frame, never GPU work on a non-resident buffer
    check_setup(adapter, apps)
    check_capture(adapter, config)
    check_timeline(adapter, config)
    plans = [
        frames(
            config,
            len(app.resources) if config.capture is None else live_counts(config, i),
            np.random.default_rng([config.seed, i, 1]),
        )
        for i, app in enumerate(apps)
    ]
    marks: list[int] = []

    def exited(app: App, checks: list[Check]) -> None:
        result.checks.extend(checks)
        stats = ProcessStats(
            app.index, len(app.created), sum(spec.size for spec in app.created), app.frames_done, app.gpu.submissions
        )
        result.processes.append(stats)

    timeline = Timeline(config, runtime, model, adapter, apps, plans, exited)

    def mark() -> None:
        marks.append(log.seq if log is not None else 0)
        if on_frame is not None:
            on_frame()

    for frame in range(w.frames):
        mark()
        if w.power != "none" and frame == w.frames // 2:
            runtime.power_transition(w.power)  # decision 0045
        timeline.at(frame)
        for app, plan in zip(apps, plans, strict=True):
            if not app.alive:
                continue
            chosen = next(plan)
            app.arrive(frame)  # decision 0180: a capture's allocations come and go with their frames, paused or not
            if not app.paused:
                app.frame(frame, chosen)
            for r in app.leaving(frame):  # decision 0182: read back before pfnDeallocateCb
                verify_retiring(app, r)
                app.retire(r)
            timeline.deliver()
            step(f"frame {frame + 1}/{w.frames}")
    mark()
    for app in apps:
        if app.alive:
            timeline.exit(app)
            step(f"process {app.index}: verified")
    result.processes.sort(key=lambda p: p.index)
    leaks = adapter.footprint().leaks(start)
    result.checks.append(
        Check(
            "teardown",
            "process exit",
            not leaks,
            "; ".join(leaks) or "every byte, page table, handle and fence is back to the adapter's start (I19)",
        )
    )
    if log is not None and digest is not None:
        count, sha = digest.value()
        log.end(
            {
                "traffic": result.traffic,
                "verified": result.verified,
                "events": count,
                "events_sha256": sha,
                "frames": marks,
            }
        )
    return result
