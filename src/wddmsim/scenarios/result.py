"""What a scenario run gives back: its checks (each verified behaviour, passed or not) and the adapter it ran on.

Views (``wddmsim.viz``) read the adapter's event log and, at the end, read-only snapshots of its state; the
command line prints the checks and exits non-zero when one failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.system import Adapter


@dataclass(frozen=True, slots=True)
class Check:
    """One verified behaviour: what was checked, through which operation, and what was found."""

    step: str
    operation: str
    ok: bool
    detail: str


@dataclass(slots=True)
class Checks:
    """The checks of one run, in order."""

    checks: list[Check] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return all(c.ok for c in self.checks) and bool(self.checks)

    def check(self, step: str, operation: str, ok: bool, detail: str) -> None:
        self.checks.append(Check(step, operation, bool(ok), detail))


@dataclass(frozen=True, slots=True)
class ScenarioRun:
    """A finished run: which scenario, with which seed, on which adapter, and what it verified."""

    scenario: str
    seed: int
    adapter: Adapter
    result: Checks

    @property
    def verified(self) -> bool:
        return self.result.verified
