"""A sweep from start to table: write ``sweep.json``, skip the runs already ``ok``, run the rest on a backend,
save each as it completes, and rebuild the table from every result (decisions 0151, 0152).

Ctrl-C stops it cleanly: the runs not started are cancelled, those running finish and are kept, the table is
rebuilt from what finished, and a rerun picks up the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wddmsim.research.sweep import table
from wddmsim.research.sweep.backends import Backend
from wddmsim.research.sweep.grid import Plan
from wddmsim.research.sweep.store import Store

OnResult = Callable[[dict[str, Any]], None]
"""Called with each run's ``result.json`` record as it is saved."""


@dataclass(slots=True)
class SweepOutcome:
    """What a sweep did: runs in the grid, skipped (done earlier), run now, failed now, interrupted."""

    total: int
    skipped: int
    ran: int = 0
    failed: int = 0
    interrupted: bool = False
    tables: list[Path] = field(default_factory=list)

    @property
    def missing(self) -> int:
        """Runs of the grid with no ``ok`` result yet (failed, or never run because of an interrupt)."""
        return self.total - self.skipped - (self.ran - self.failed)


def run_sweep(
    plan: Plan,
    out: Path,
    backend: Backend,
    *,
    on_start: Callable[[SweepOutcome], None] | None = None,
    on_result: OnResult | None = None,
) -> SweepOutcome:
    """Run ``plan`` into ``out`` on ``backend`` (closed at the end); see the module's docstring."""
    store = Store(out)
    try:
        store.prepare(plan.manifest())
    except OSError:
        backend.close()
        raise
    specs = plan.runs()
    todo = [s for s in specs if not store.done(s.id)]
    outcome = SweepOutcome(total=len(specs), skipped=len(specs) - len(todo))
    if on_start is not None:
        on_start(outcome)
    try:
        backend.start(todo)
        _collect(backend, store, outcome, on_result)
    except KeyboardInterrupt:
        outcome.interrupted = True
        backend.stop()
        _collect(backend, store, outcome, on_result)  # the runs already going finish and are kept
    finally:
        backend.close()
        outcome.tables = table.write(store, specs, list(plan.grid))
    return outcome


def _collect(backend: Backend, store: Store, outcome: SweepOutcome, on_result: OnResult | None) -> None:
    for result in backend.results():
        store.save(result)
        record = result["record"]
        outcome.ran += 1
        outcome.failed += record["status"] != "ok"
        if on_result is not None:
            on_result(record)


__all__ = ["SweepOutcome", "run_sweep"]
