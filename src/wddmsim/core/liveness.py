"""The liveness budget: a bound, armed by a test harness, on how long the model may run before it must return.

Every step of the simulated clock (:meth:`wddmsim.core.clock.Clock.step`) and every turn of a VidMm wait loop
charges one unit.  While no budget is armed nothing is counted and nothing can fail (the library's own
behaviour never depends on it).  A harness arms one (:func:`armed`, or ``wddmsim.testing.liveness``); once the
units charged since then exceed it, the next charge raises :class:`LivenessBudgetExceeded` -- so a wait that
would never return fails loudly, naming where it was spinning, instead of stalling the run.

``LivenessBudgetExceeded`` derives from ``BaseException`` on purpose: VidMm catches ``Exception`` around driver
calls (a crashing driver goes to the reset path), and a spent budget must not be mistaken for a driver crash and
"recovered" from.  It is never a domain result; a test that meets one has found a hang.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, final


class LivenessBudgetExceeded(BaseException):
    """The armed liveness budget ran out: something in the model did not return (a hang)."""

    def __init__(self, budget: int, where: str) -> None:
        super().__init__(f"liveness budget of {budget} steps exceeded in {where}: a wait that does not return")
        self.budget = budget
        self.where = where


@final
class _Budget:
    __slots__ = ("budget", "remaining")

    def __init__(self) -> None:
        self.budget = 0
        self.remaining: int | None = None
        """Units left (None: no budget armed)."""


_BUDGET = _Budget()
BUDGET: Final = _BUDGET
"""The budget's state, read by the clock's step to skip :func:`charge` while none is armed (one call less per
step of every run); charged, armed and disarmed only through the functions below."""


def charge(where: str) -> None:
    """One unit of progress-without-return at ``where``; raises once the armed budget is spent."""
    left = _BUDGET.remaining
    if left is None:
        return
    if left <= 0:
        raise LivenessBudgetExceeded(_BUDGET.budget, where)
    _BUDGET.remaining = left - 1


def arm(steps: int) -> None:
    """Allow ``steps`` more units from now (replaces any budget armed before)."""
    if steps < 0:
        raise ValueError(f"steps={steps}: a liveness budget is a number of steps >= 0")
    _BUDGET.budget = steps
    _BUDGET.remaining = steps


def disarm() -> None:
    """No budget: nothing is counted."""
    _BUDGET.remaining = None


def used() -> int | None:
    """Units charged since the budget was armed (None: none is armed)."""
    left = _BUDGET.remaining
    return None if left is None else _BUDGET.budget - left


@contextmanager
def armed(steps: int) -> Iterator[None]:
    """Run the body under a budget of ``steps``; the budget armed before (if any) comes back after, charged with
    what the body used."""
    outer_budget, outer_left = _BUDGET.budget, _BUDGET.remaining
    arm(steps)
    try:
        yield
    finally:
        spent = _BUDGET.budget - (_BUDGET.remaining or 0)
        _BUDGET.budget = outer_budget
        _BUDGET.remaining = None if outer_left is None else max(outer_left - spent, 0)
