"""Timing and reporting for the benchmarks (wall clock is allowed here, and only here)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    what: str
    goal: str
    run: Callable[[], dict[str, Any]]


@dataclass(slots=True)
class Registry:
    benchmarks: dict[str, Benchmark] = field(default_factory=dict)

    def add(
        self, name: str, what: str, goal: str
    ) -> Callable[[Callable[[], dict[str, Any]]], Callable[[], dict[str, Any]]]:
        def register(fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
            self.benchmarks[name] = Benchmark(name, what, goal, fn)
            return fn

        return register


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs, in seconds (the minimum is the least noisy estimate)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """One run of ``fn``: ``(wall seconds, CPU seconds of this thread)``.  CPU time leaves out the time other
    processes had the core, the largest noise on a shared machine; differences of small costs use it."""
    wall, cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - wall, time.thread_time() - cpu


def result(name: str, value: float, unit: str, *, baseline: float | None = None, **extra: Any) -> dict[str, Any]:
    """A benchmark record: ``ratio`` = value / baseline when a baseline applies (higher is better)."""
    out: dict[str, Any] = {"name": name, "value": round(value, 3), "unit": unit}
    if baseline is not None:
        out["baseline"] = round(baseline, 3)
        out["ratio"] = round(value / baseline, 3) if baseline else None
    out.update(extra)
    return out


def rss_bytes() -> int:
    """Resident set size of this process (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
