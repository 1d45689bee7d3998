"""Sweep directories built by hand, per the sweep contract (sweep.json, results.csv, runs/<id>/...), for the
figure and report tests: they do not need ``wddmsim sweep`` to exist."""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

FRAME_HEADER = (
    "frame,paged_in_bytes,paged_out_bytes,paging_stall_ns,faults,evictions,resident_local_bytes,resident_aperture_bytes"
)
MIB = 1024 * 1024


def run_id(scenario: str, seed: int, settings: dict[str, object]) -> str:
    text = json.dumps({"scenario": scenario, "seed": seed, "settings": settings}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_metric(policy: str, x: float, seed: int) -> float:
    """A made-up ratio: grows with oversubscription, differs per policy and per seed."""
    return {"lru": 2.0, "clock": 1.5, "opt": 1.0}.get(policy, 1.2) * x + 0.1 * seed


def default_stall(policy: str, x: float, seed: int, frame: int) -> int:
    return int(1000 * (frame + 1) * x * (2 if policy == "lru" else 1) + seed)


@dataclass
class SweepSpec:
    policies: tuple[str, ...] = ("lru", "clock", "opt")
    xs: tuple[float, ...] = (1.1, 1.5, 2.0)
    seeds: tuple[int, ...] = (1, 2, 3)
    scenario: str = "default"
    frames: int | None = 6
    """Frames per run in frames.csv; None: no run has a frames.csv."""
    failed: set[tuple[str, float, int]] = field(default_factory=set)
    """(policy, x, seed) of runs that fail."""
    metric: Callable[[str, float, int], float] = default_metric
    stall: Callable[[str, float, int, int], int] = default_stall


def make_sweep(root: Path, spec: SweepSpec | None = None) -> dict[tuple[str, float, int], str]:
    """Write the sweep directory; returns each run's id by (policy, x, seed)."""
    spec = spec or SweepSpec()
    root.mkdir(parents=True, exist_ok=True)
    grid = {"policy": list(spec.policies), "workload.oversubscription": list(spec.xs)}
    (root / "sweep.json").write_text(
        json.dumps({"scenario": spec.scenario, "grid": grid, "seeds": list(spec.seeds), "settings": {}, "version": 1})
    )
    header = [
        "id", "scenario", "seed", "policy", "workload.oversubscription", "status", "error", "seconds",
        "paged_in_bytes", "paged_in_over_lower_bound", "evictions_by_cause.pressure", "driver_model",
    ]  # fmt: skip
    ids = {}
    with (root / "results.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for policy in spec.policies:
            for x in spec.xs:
                for seed in spec.seeds:
                    settings = {"policy": policy, "workload.oversubscription": x}
                    rid = run_id(spec.scenario, seed, settings)
                    ids[(policy, x, seed)] = rid
                    failed = (policy, x, seed) in spec.failed
                    value = spec.metric(policy, x, seed)
                    metrics: list[object] = (
                        ["", "", "", ""]
                        if failed
                        else ["" if math.isnan(value) else int(value * 64 * MIB), value, 3 * seed, "wddm2"]
                    )
                    error = f"RuntimeError: no victim for {policy}" if failed else ""
                    writer.writerow(
                        [rid, spec.scenario, seed, policy, x, "failed" if failed else "ok", error, 0.5, *metrics]
                    )
                    _run_dir(root / "runs" / rid, spec, policy, x, seed, rid, failed, settings)
    return ids


def _run_dir(
    where: Path,
    spec: SweepSpec,
    policy: str,
    x: float,
    seed: int,
    rid: str,
    failed: bool,
    settings: dict[str, object],
) -> None:
    where.mkdir(parents=True)
    result = {
        "id": rid,
        "scenario": spec.scenario,
        "seed": seed,
        "settings": settings,
        "status": "failed" if failed else "ok",
        "error": "RuntimeError: no victim" if failed else None,
        "seconds": 0.5,
        "metrics": {} if failed else {"paged_in_over_lower_bound": spec.metric(policy, x, seed)},
    }
    (where / "result.json").write_text(json.dumps(result))
    if failed or spec.frames is None:
        return
    lines = [FRAME_HEADER]
    for frame in range(spec.frames):
        local = (100 + 10 * frame) * MIB if policy != "opt" else 150 * MIB
        aperture = frame * MIB
        lines.append(f"{frame},{MIB},{MIB},{spec.stall(policy, x, seed, frame)},1,1,{local},{aperture}")
    (where / "frames.csv").write_text("\n".join(lines) + "\n")
