"""How the OS shares a segment group's memory among processes: their budgets (decision 0169).

Windows documents the shape, not the formula: budgets are per process and per segment group, "generally only
imposed when the system is under memory pressure", they "fluctuate noticeably as background processes wake up
and sleep; and fluctuate dramatically when the user switches away to another application", and a reservation
names the memory a process cannot go without.  The model here:

* a process's **weight** is its scheduling priority class (``D3DKMT_SCHEDULINGPRIORITYCLASS``: each class weighs
  twice the one below) doubled while it has the foreground;
* its **demand** is its current usage (what its residency lists hold), at least its reservation;
* **no pressure** (the demands fit in the group): every budget is the group's capacity -- nothing is imposed;
* **under pressure** the capacity is water-filled by weight: the level ``L`` at which ``sum(min(demand, L x
  weight)) == capacity``; a process's budget is ``L x weight`` (at least its reservation).  A process that uses
  less than its share may grow up to the level; one that uses more is over its budget and is asked to trim;
* a budget the OS set outright (``imposed``) overrides the model, and the process's demand counts at most that.

The budgets may sum to more than the capacity (the small users' headroom): a budget is a target, not a grant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

FOREGROUND_BOOST: Final = 2
"""The foreground process weighs this many times its class."""


def weight(priority_class: int, foreground: bool) -> int:
    """``2 ** class`` (IDLE 1 ... REALTIME 32), doubled in the foreground."""
    return (1 << priority_class) * (FOREGROUND_BOOST if foreground else 1)


@dataclass(frozen=True, slots=True)
class Claim:
    """One process's claim on a segment group."""

    weight: int
    usage: int
    reservation: int = 0
    imposed: int | None = None


def budgets(capacity: int, claims: Sequence[Claim]) -> list[int]:
    """Each claim's budget out of ``capacity`` bytes (see the module's rules)."""
    demands = [
        min(max(c.usage, c.reservation), c.imposed) if c.imposed is not None else max(c.usage, c.reservation)
        for c in claims
    ]
    if sum(demands) <= capacity:
        shared = [capacity] * len(claims)
    else:
        level = _level(capacity, demands, [c.weight for c in claims])
        shared = [min(capacity, max(int(level * c.weight), c.reservation)) for c in claims]
    return [c.imposed if c.imposed is not None else b for c, b in zip(claims, shared, strict=True)]


def _level(capacity: int, demands: Sequence[int], weights: Sequence[int]) -> float:
    """The water level: demands met in order of ``demand / weight``; the rest share what is left by weight."""
    order = sorted(range(len(demands)), key=lambda i: demands[i] / weights[i])
    left = float(capacity)
    weight_left = float(sum(weights))
    for i in order:
        if demands[i] / weights[i] * weight_left > left:
            break
        left -= demands[i]
        weight_left -= weights[i]
    return left / weight_left
