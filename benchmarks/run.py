"""Run every benchmark and compare with the goals of design.md section 5.

    python benchmarks/run.py            # a table: value, baseline, ratio, goal, met?
    python benchmarks/run.py --json     # one JSON object per line (same as `wddmsim bench --json`)

Ratios are measured against a baseline timed in the same process (shared machines drift +-20 % between
runs); nothing here is a test, and CI only prints it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from wddmsim.bench.catalog import REGISTRY

GOALS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "transfer_1gib": lambda r: r["ratio"] >= 0.80,
    "fill_1gib": lambda r: r["ratio"] >= 0.80,
    "fill_zero_1gib": lambda r: r["ratio"] >= 1.0,
    "gather_4k_pages": lambda r: r["ratio"] >= 0.65,
    "gather_64k_runs": lambda r: r["ratio"] >= 0.90,
    "small_roundtrip": lambda r: r["value"] >= 50_000,
    "sparse_80gib": lambda r: r["create_ms"] <= 1 and r["rss_over_written_mib"] <= 64,
    "pte_map_1gib_4k": lambda r: r["value"] >= 50_000_000,
    "pte_map_1gib_64k": lambda r: r["fixed_us_per_call"] <= 8,
    "seg_alloc_100k": lambda r: r["value"] >= 500_000 and r["slowdown_10k_to_100k"] <= 2.0,
    "cdriver_small_roundtrip": lambda r: r.get("ratio", 0) >= 0.8,
    "cdriver_transfer_1gib": lambda r: r.get("ratio", 0) >= 0.80,
    "check_driver_suite": lambda r: "seconds" in r and r["seconds"] <= 60,
    "opt_bound_100k": lambda r: r["seconds"] <= 10 and r["exact_on_equal_sizes"],
    "sweep_scaleout": lambda r: r["speedup_2_workers"] >= 1.7,
    "oversub_frames": lambda r: r["goal_met"],
    "run_default": lambda r: r.get("ratio") is not None and r["ratio"] >= 2.0,
    "run_stress": lambda r: r.get("ratio") is not None and r["ratio"] >= 2.0,
    "run_long": lambda r: r["per_frame_ratio"] <= 1.2 and r["rss_ratio"] <= 1.2,
}


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    names = [a for a in argv if not a.startswith("--")] or list(REGISTRY.benchmarks)
    for name in names:
        record = REGISTRY.benchmarks[name].run()
        record["goal"] = REGISTRY.benchmarks[name].goal
        record["met"] = GOALS[name](record) if name in GOALS else None
        if as_json:
            print(json.dumps(record))
        else:
            extra = {k: v for k, v in record.items() if k not in ("name", "value", "unit", "goal", "met")}
            head = f"{name:18} {record['value']:>12} {record['unit']:10} met={record['met']!s:5}"
            print(f"{head} goal: {record['goal']}  {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
