"""The sweep directory on disk: ``sweep.json``, and per run ``runs/<id>/`` with ``result.json`` last.

Every file is written to a temporary name in its directory and renamed into place, so a kill mid-write leaves
the previous file or none, never half of one; ``result.json`` is written after the run's other files, so a run
whose ``result.json`` says ``ok`` is complete and a rerun skips it (decision 0151).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wddmsim.research.sweep.job import ERROR, FRAMES, SUMMARY

RESULT = "result.json"
MANIFEST = "sweep.json"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it and a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def dump(value: object) -> str:
    return json.dumps(value, indent=2) + "\n"


class Store:
    """``OUT/``: where a sweep's runs are kept."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs = root / "runs"

    def prepare(self, manifest: Mapping[str, Any]) -> None:
        self.runs.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / MANIFEST, dump(dict(manifest)))

    def result(self, run_id: str) -> dict[str, Any] | None:
        """The run's ``result.json``, or None when there is none (or it cannot be read)."""
        try:
            data = json.loads((self.runs / run_id / RESULT).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def done(self, run_id: str) -> bool:
        """The run finished ``ok`` in an earlier (or this) sweep."""
        found = self.result(run_id)
        return found is not None and found.get("status") == "ok"

    def save(self, outcome: Mapping[str, Any]) -> None:
        """A worker's outcome (:func:`~wddmsim.research.sweep.job.run_one`): its files, then ``result.json``."""
        record = outcome["record"]
        out = self.runs / record["id"]
        out.mkdir(parents=True, exist_ok=True)
        for stale in (SUMMARY, FRAMES, ERROR):  # an earlier failed attempt's
            if stale not in outcome["files"]:
                (out / stale).unlink(missing_ok=True)
        for name, text in outcome["files"].items():
            write_atomic(out / name, text)
        write_atomic(out / RESULT, dump(record))


__all__ = ["MANIFEST", "RESULT", "Store", "write_atomic"]
