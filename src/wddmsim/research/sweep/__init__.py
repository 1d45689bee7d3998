"""``wddmsim sweep``: a grid of runs over any scenario keys, policies and seeds, on local processes or a Dask
cluster, resumable, into one tidy table (decisions 0150-0153).

* :mod:`.grid`: the plan (grid x seeds, fixed settings), its validation, and each run's id (a hash of it).
* :mod:`.job`: one run as a worker executes it (through :func:`~wddmsim.research.runs.measured_run`).
* :mod:`.backends`: local worker processes, or Dask distributed.
* :mod:`.store`: the sweep directory, written atomically; what a rerun skips.
* :mod:`.table`: ``results.csv`` (and ``results.parquet``), one row per run.
* :mod:`.runner`: all of it, with Ctrl-C handled.
"""

from wddmsim.research.sweep.backends import DASK_INSTALL, Backend, DaskBackend, LocalBackend
from wddmsim.research.sweep.grid import Plan, RunSpec, parse_fixed, parse_grid, parse_seeds
from wddmsim.research.sweep.runner import SweepOutcome, run_sweep

__all__ = [
    "DASK_INSTALL",
    "Backend",
    "DaskBackend",
    "LocalBackend",
    "Plan",
    "RunSpec",
    "SweepOutcome",
    "parse_fixed",
    "parse_grid",
    "parse_seeds",
    "run_sweep",
]
