"""The liveness half of the campaign: a step budget a test arms so that a call that never returns fails as HUNG.

How to use it (the library counts, this module arms and reports -- see :mod:`wddmsim.core.liveness`):

- Every test of this repository already runs under :data:`DEFAULT_BUDGET` (an autouse fixture in
  ``tests/conftest.py``); a test that needs more asks with ``@pytest.mark.liveness_budget(steps)``.
- Around one call that must return, ``with liveness.bounded(steps): ...`` arms a tighter budget; a spent budget
  raises :class:`LivenessBudgetExceeded` (a ``BaseException``: it fails the test, it is never swallowed as a
  driver crash).
- For the campaign tally, ``with liveness.case(SURFACE, steps) as box: ...`` counts a spent budget as
  ``Outcome.HUNG`` (and re-raises it, so the test fails), anything else like :func:`campaign.case`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from wddmsim.core.liveness import LivenessBudgetExceeded, armed, used
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

DEFAULT_BUDGET = 10_000_000
"""Clock steps and wait-loop turns one test may use: a hundred times what the hungriest test of the default run
needs (about 100 000), and reached within a minute by a loop that never ends."""


@contextmanager
def bounded(steps: int) -> Iterator[None]:
    """Run the body under a liveness budget of ``steps``."""
    with armed(steps):
        yield


@contextmanager
def case(surface: str, steps: int = DEFAULT_BUDGET) -> Iterator[list[Outcome]]:
    """One campaign case under a budget of ``steps``: a spent budget counts as ``HUNG`` and is raised again."""
    with campaign.case(surface) as box, armed(steps):
        yield box


__all__ = ["DEFAULT_BUDGET", "LivenessBudgetExceeded", "bounded", "case", "used"]
