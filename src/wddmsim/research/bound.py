"""A certified lower bound on the bytes any policy pages in for a reference string (decisions 0144, 0145).

The relaxation is the interval LP behind the flow bound of Berger, Beckmann and Harchol-Balter ("Practical
Bounds on Optimal Caching with Variable Object Sizes", SIGMETRICS 2018): between two consecutive uses of an
object (an *interval*) a schedule keeps a fraction ``x`` of it, in ``[0, 1]``; the interval costs ``(1 - x)``
times the object's size (the page-in at its end); at every use ``k``, the intervals strictly spanning ``k`` plus
the object used at ``k`` fit in the capacity.  Every schedule VidMm can run -- any eviction policy, any
placement -- gives a 0/1 point of it (an object kept in place between two uses, or paged in again), so the LP
optimum plus the first-use (compulsory) bytes is a lower bound on bytes paged in.  With equal sizes the
constraint matrix is an interval matrix (totally unimodular): the LP optimum is integral and equals Belady's
MIN, the optimum in faults -- the check that the bound is tight where the optimum is known.

Two exact solvers of the same LP:

* ``highs``: the LP in its min-cost-flow form (one node per gap between uses, a path of capacity arcs, one
  bypass arc per interval at a cost of one per byte), solved by scipy's HiGHS -- the well-kept reference.
* ``greedy``: intervals in order of their end, each kept as much as the residual capacity on its span allows.
  Exact for this LP: with its columns in order of right end, an interval matrix has no Γ submatrix (it is in
  the standard greedy form of Hoffman, Kolen and Sakarovitch, 1985), and every kept byte is worth the same, so
  the greedy packing is optimal.  It is what the runs use (100 000 uses in about a second, where HiGHS takes a
  minute); tests check it equals HiGHS on random strings.

Sizes are counted in units of their greatest common divisor: a schedule keeps whole objects, so the capacity
left at a use rounds down to a whole unit (a valid cut for 0/1 schedules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from wddmsim.research.reference import ReferenceString

Solver = Literal["greedy", "highs"]
SOLVERS: Final[tuple[Solver, ...]] = ("greedy", "highs")

_TOLERANCE: Final = 1e-6
"""Relative distance within which a floating-point LP optimum is taken as the nearest whole number of units (the
exact optimum is one: a min-cost flow with integral capacities has an integral optimum); farther, it is rounded
down."""

_LARGEST: Final = 1 << 62
"""Units the bound counts in int64 (a sum of sizes, a capacity) stay below this: sums of two never overflow."""

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class LowerBound:
    """The bound and what it is made of, in bytes."""

    bytes: int
    """No policy pages in fewer bytes for this reference string and capacity."""
    compulsory: int
    """First uses: paged in by every policy."""
    uses: int
    capacity: int
    solver: Solver


@dataclass(frozen=True, slots=True)
class Intervals:
    """The reuse intervals of a string, in units of ``unit`` bytes, in order of their end."""

    unit: int
    sizes: Ints
    """Size of the object used at each position."""
    starts: Ints
    ends: Ints
    lengths: Ints
    """Size of each interval's object."""
    compulsory: int
    room: Ints
    """Per position: capacity left for what spans it, once the object used there is in (never below 0)."""


def intervals(refs: ReferenceString) -> Intervals:
    """The string's intervals: two consecutive uses of one object with at least one use between them (adjacent
    uses cost nothing, whatever the capacity)."""
    uses = refs.uses()
    footprint = refs.footprint
    unit = math.gcd(*refs.sizes().values()) if uses else 1
    if footprint // unit >= _LARGEST:
        raise ValueError(
            f"sizes: the objects total {footprint} bytes, {footprint // unit} units of {unit}: the bound counts "
            f"in 64-bit integers, below 2**62 units"
        )
    capacity = min(refs.capacity // unit, _LARGEST)  # past every object's units, more room changes nothing
    objs = np.fromiter((u.obj for u in uses), dtype=np.int64, count=len(uses))
    sizes = np.fromiter((u.size // unit for u in uses), dtype=np.int64, count=len(uses))
    previous = np.full(len(uses), -1, dtype=np.int64)
    order = np.lexsort((np.arange(len(uses)), objs))
    same = objs[order[1:]] == objs[order[:-1]]
    previous[order[1:][same]] = order[:-1][same]
    spans = (previous >= 0) & (np.arange(len(uses)) - previous > 1)
    ends = np.flatnonzero(spans).astype(np.int64)
    room = np.maximum(0, capacity - sizes)
    return Intervals(
        unit, sizes, previous[ends], ends, sizes[ends], int(sizes[previous < 0].sum()), room.astype(np.int64)
    )


def lower_bound(refs: ReferenceString, *, solver: Solver = "greedy") -> LowerBound:
    """The lower bound on bytes paged in for ``refs`` (the LP of this module's docstring)."""
    if solver not in SOLVERS:
        raise ValueError(f"solver={solver!r}: must be one of {', '.join(SOLVERS)}")
    iv = intervals(refs)
    refetched = _greedy(iv) if solver == "greedy" else _highs(iv)
    return LowerBound((iv.compulsory + refetched) * iv.unit, iv.compulsory * iv.unit, len(refs), refs.capacity, solver)


def _greedy(iv: Intervals) -> int:
    """Units paged in again: each interval, by end, keeps what the least residual room on its span allows."""
    room = iv.room.copy()
    missed = 0
    for s, e, z in zip(iv.starts.tolist(), iv.ends.tolist(), iv.lengths.tolist(), strict=True):
        span = room[s + 1 : e]
        kept = min(z, int(span.min()))
        if kept > 0:
            span -= kept
        missed += z - kept
    return missed


def _highs(iv: Intervals) -> int:
    """Units paged in again, by HiGHS on the min-cost-flow form: node ``g`` is the gap after use ``g``; arc
    ``g-1 -> g`` carries the kept bytes spanning use ``g`` (capacity: its room); interval ``(s, e)`` supplies its
    size at gap ``s``, demands it at gap ``e - 1``, and may bypass the path at a cost of one per unit."""
    from scipy.optimize import linprog  # the research extra (decision 0145): only this solver needs it
    from scipy.sparse import coo_matrix

    m = len(iv.starts)
    if m == 0:
        return 0
    n = len(iv.sizes)
    path = n - 2  # arcs through uses 1 .. n-2 (the first and last are never strictly spanned)
    arcs = np.arange(path)
    bypass = path + np.arange(m)
    rows = np.concatenate([arcs, arcs + 1, iv.starts, iv.ends - 1])
    cols = np.concatenate([arcs, arcs, bypass, bypass])
    ones = np.ones(path + m)
    values = np.concatenate([ones[:path], -ones[:path], ones[:m], -ones[:m]])
    flow = coo_matrix((values, (rows, cols)), shape=(n - 1, path + m)).tocsr()
    supply = np.zeros(n - 1)
    np.add.at(supply, iv.starts, iv.lengths.astype(float))
    np.add.at(supply, iv.ends - 1, -iv.lengths.astype(float))
    cost = np.concatenate([np.zeros(path), np.ones(m)])
    upper = np.concatenate([iv.room[1 : n - 1], iv.lengths]).astype(float)
    bounds = np.column_stack([np.zeros(path + m), upper])
    result = linprog(cost, A_eq=flow, b_eq=supply, bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the bound's LP: {result.message}")
    value = float(result.fun)
    nearest = round(value)
    if abs(value - nearest) <= _TOLERANCE * max(1.0, value):
        return max(0, nearest)
    return max(0, math.floor(value))  # never above the LP value: a lower bound must not overstate


__all__ = ["SOLVERS", "Intervals", "LowerBound", "Solver", "intervals", "lower_bound"]
