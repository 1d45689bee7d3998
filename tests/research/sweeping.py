"""Helpers of the sweep tests: a backend that runs in this process, short runs, tables read back."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from wddmsim.research.sweep.grid import RunSpec
from wddmsim.research.sweep.job import run_one

SHORT = {"workload.frames": 1, "workload.processes": 1, "adapter.vram": "16MiB", "adapter.cpu_visible": "4MiB"}
"""A run of a few tenths of a second."""


class SerialBackend:
    """The backend protocol, one run after another in this process (the sweep's logic without process start-up);
    ``interrupt_after``: raise KeyboardInterrupt when that many runs were handed out, as Ctrl-C would."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.todo: list[RunSpec] = []
        self.given: list[str] = []
        self.interrupt_after = interrupt_after
        self.stopped = False
        self.closed = False

    def start(self, specs: Sequence[RunSpec]) -> None:
        self.todo = list(specs)

    def results(self) -> Iterator[dict[str, Any]]:
        while self.todo and not self.stopped:
            if self.interrupt_after is not None and len(self.given) == self.interrupt_after:
                self.interrupt_after = None
                raise KeyboardInterrupt
            spec = self.todo.pop(0)
            self.given.append(spec.id)
            yield run_one(spec.to_json())

    def stop(self) -> None:
        self.stopped = True

    def describe(self) -> str:
        return "this process"

    def close(self) -> None:
        self.closed = True


def read_csv(path: Path, drop: Callable[[str], bool] = lambda _: False) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return [{k: v for k, v in row.items() if not drop(k)} for row in csv.DictReader(f)]


def header(path: Path) -> list[str]:
    return path.read_text().splitlines()[0].split(",")
