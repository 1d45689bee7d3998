"""The adversarial campaign's tally: what each public surface was given, and how it answered.

Every adversarial test (bad-input tables, impolite stateful clients, fuzzers) records one :class:`Outcome` per case
it tries against a *surface* (``runtime``, ``stateful``, ``decoder``, ``cli``, ``scenario``, ``replay`` ...).  The
tests assert on their own cases; this module only counts, so that CI can print one line per surface at the end of
its run::

    campaign runtime: 4210 tried, 3987 refused cleanly, 0 accepted wrongly, 0 crashed, 0 hung, 0 leaked, 0 mismatched

Counts are kept per test process and written, when the process ends, to a JSON file in the directory named by
``WDDMSIM_CAMPAIGN_DIR`` (nothing is written when it is unset); ``python -m wddmsim.testing.campaign DIR`` adds the
files up and prints the lines (exit 1 if any bad count is not zero).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from enum import Enum
from pathlib import Path
from typing import final

from wddmsim.core.liveness import LivenessBudgetExceeded


class Outcome(Enum):
    """How one tried case ended."""

    ACCEPTED = "accepted"
    """A valid request, carried out (and checked)."""
    REFUSED = "refused"
    """A bad request refused with the documented status, naming the argument, nothing changed."""
    ACCEPTED_WRONGLY = "accepted_wrongly"
    """A bad request that was carried out, or refused with the wrong status or unnamed argument."""
    CRASHED = "crashed"
    """A Python exception that is not a domain error (a traceback, an exit status other than 0/1/2)."""
    HUNG = "hung"
    """A call that exceeded the liveness budget."""
    LEAKED = "leaked"
    """The adapter's footprint changed where it must not have (a refused call, or after teardown)."""
    MISMATCHED = "mismatched"
    """A byte read through some CPU or GPU view differs from the shadow model."""


@final
@dataclass(slots=True)
class Tally:
    """One surface's counts."""

    surface: str
    tried: int = 0
    refused: int = 0
    accepted_wrongly: int = 0
    crashed: int = 0
    hung: int = 0
    leaked: int = 0
    mismatched: int = 0

    def record(self, outcome: Outcome, count: int = 1) -> None:
        """One case (or ``count`` of them) tried, ending in ``outcome``."""
        self.tried += count
        if outcome is not Outcome.ACCEPTED:
            name = outcome.value
            setattr(self, name, getattr(self, name) + count)

    def add(self, other: Tally) -> None:
        for f in fields(self):
            if f.name != "surface":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def bad(self) -> int:
        return self.accepted_wrongly + self.crashed + self.hung + self.leaked + self.mismatched

    def line(self) -> str:
        return (
            f"campaign {self.surface}: {self.tried} tried, {self.refused} refused cleanly, "
            f"{self.accepted_wrongly} accepted wrongly, {self.crashed} crashed, {self.hung} hung, "
            f"{self.leaked} leaked, {self.mismatched} mismatched"
        )


_TALLIES: dict[str, Tally] = {}


def tally(surface: str) -> Tally:
    """The running tally of ``surface`` in this process."""
    found = _TALLIES.get(surface)
    if found is None:
        found = _TALLIES[surface] = Tally(surface)
    return found


def record(surface: str, outcome: Outcome, count: int = 1) -> None:
    tally(surface).record(outcome, count)


@contextmanager
def case(surface: str, raised: Mapping[type[BaseException], Outcome] | None = None) -> Iterator[list[Outcome]]:
    """Count one case: the body appends its outcome (``ACCEPTED`` if it appends none).  An exception escaping the
    body is counted and goes on (the test fails): as ``raised`` maps its type (a test's own mismatch or leak
    errors, say), ``HUNG`` for a spent liveness budget, ``CRASHED`` for anything else."""
    box: list[Outcome] = []
    try:
        yield box
    except BaseException as error:
        record(surface, _outcome_of(error, raised or {}))
        raise
    record(surface, box[-1] if box else Outcome.ACCEPTED)


def _outcome_of(error: BaseException, raised: Mapping[type[BaseException], Outcome]) -> Outcome:
    for kind, outcome in raised.items():
        if isinstance(error, kind):
            return outcome
    return Outcome.HUNG if isinstance(error, LivenessBudgetExceeded) else Outcome.CRASHED


def tallies() -> list[Tally]:
    return [_TALLIES[k] for k in sorted(_TALLIES)]


def write(directory: str | os.PathLike[str]) -> Path | None:
    """Write this process's tallies to a new file in ``directory`` (None if there is nothing to write)."""
    if not _TALLIES:
        return None
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"tally-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
    path.write_text(json.dumps([asdict(t) for t in tallies()], indent=1))
    return path


def merged(directory: str | os.PathLike[str]) -> list[Tally]:
    """The tallies of every file in ``directory``, added up per surface."""
    total: dict[str, Tally] = {}
    for path in sorted(Path(directory).glob("tally-*.json")):
        for raw in json.loads(path.read_text()):
            one = Tally(**raw)
            total.setdefault(one.surface, Tally(one.surface)).add(one)
    return [total[k] for k in sorted(total)]


def report(items: Iterable[Tally]) -> tuple[list[str], int]:
    """The lines to print and the number of bad outcomes among them."""
    listed = list(items)
    return [t.line() for t in listed], sum(t.bad for t in listed)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    directory = args[0] if args else os.environ.get("WDDMSIM_CAMPAIGN_DIR", ".campaign")
    lines, bad = report(merged(directory))
    if not lines:
        print(f"campaign: no tallies in {directory}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
