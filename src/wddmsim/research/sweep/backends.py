"""Where a sweep's runs execute: local worker processes, or a Dask distributed cluster.

Both take plain data (a run's spec as JSON) and give back each run's outcome as it completes; the sweep orders
the table itself.  Local: one ``concurrent.futures`` pool of ``spawn``-started processes for the whole sweep (no
fork of a process that may hold threads; each worker imports wddmsim once and runs many runs).  Dask:
``distributed.Client`` on a scheduler's address, imported only when asked for.

``stop`` (Ctrl-C) cancels the runs not started; ``results`` then still gives the outcomes of those already
running (local) or finished (Dask), so the sweep keeps every run that completed.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol

from wddmsim.core.errors import ConfigurationError
from wddmsim.research.sweep.grid import RunSpec
from wddmsim.research.sweep.job import lost, run_one

DASK_INSTALL = "pip install 'wddmsim[dask]'"


class Backend(Protocol):
    """Runs a sweep's specs; see the module's docstring."""

    def start(self, specs: Sequence[RunSpec]) -> None: ...

    def results(self) -> Iterator[dict[str, Any]]: ...

    def stop(self) -> None: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the sweep's own process, which stops the sweep cleanly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _nothing(_: int) -> None:
    return None


class LocalBackend:
    """``jobs`` local worker processes, one pool for every run."""

    def __init__(self, jobs: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_ignore_interrupts)
        self.jobs = jobs
        self.specs: dict[Future[dict[str, Any]], RunSpec] = {}
        self.pending: set[Future[dict[str, Any]]] = set()

    def warm(self) -> None:
        """Start every worker now (a benchmark times runs, not process start-up)."""
        list(self.pool.map(_nothing, range(self.jobs * 4)))

    def start(self, specs: Sequence[RunSpec]) -> None:
        for spec in specs:
            future = self.pool.submit(run_one, spec.to_json())
            self.specs[future] = spec
            self.pending.add(future)

    def results(self) -> Iterator[dict[str, Any]]:
        while self.pending:
            finished, _ = wait(self.pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: self.specs[f].id):
                self.pending.discard(future)
                if not future.cancelled():
                    yield _outcome(future, self.specs[future])

    def stop(self) -> None:
        for future in self.pending:
            future.cancel()

    def describe(self) -> str:
        return f"{self.jobs} local worker process(es)"

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _outcome(future: Future[dict[str, Any]], spec: RunSpec) -> dict[str, Any]:
    error = future.exception()
    if error is None:
        return future.result()
    return lost(spec, f"worker lost: {type(error).__name__}: {error}")


def require_dask() -> Any:
    """The ``distributed`` module (untyped: its calls are checked by the tests), or bad input naming the extra."""
    try:
        import distributed
    except ImportError:
        raise ConfigurationError(
            "--backend", "dask", f"needs Dask distributed, which is not installed: {DASK_INSTALL}"
        ) from None
    return distributed


class DaskBackend:
    """The runs as tasks on a Dask distributed cluster: ``address`` is its scheduler (tcp://host:8786); None
    starts a local cluster of ``jobs`` worker processes (tests, a try on one machine)."""

    def __init__(self, address: str | None, jobs: int) -> None:
        distributed = require_dask()
        self.distributed = distributed
        self.cluster: Any = None
        if address is None:
            self.cluster = distributed.LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
            )
            address = self.cluster.scheduler_address
        try:
            self.client: Any = distributed.Client(address, timeout="10s")
        except OSError as error:
            self._close_cluster()
            raise ConfigurationError("--scheduler", address, f"no Dask scheduler answers there: {error}") from None
        self.specs: dict[Any, RunSpec] = {}
        self.pending: set[Any] = set()

    def start(self, specs: Sequence[RunSpec]) -> None:
        for spec in specs:
            future = self.client.submit(run_one, spec.to_json(), key=f"wddmsim-run-{spec.id}", pure=False)
            self.specs[future] = spec
            self.pending.add(future)

    def results(self) -> Iterator[dict[str, Any]]:
        for future in self.distributed.as_completed(list(self.pending)):
            if future not in self.pending:
                continue
            self.pending.discard(future)
            if future.status == "finished":
                yield future.result()
            elif future.status != "cancelled":
                yield lost(self.specs[future], f"worker lost: {future.status}: {future.exception()}")

    def stop(self) -> None:
        """Cancel what has not finished (Dask does not tell queued from running)."""
        running = [f for f in self.pending if f.status != "finished"]
        self.client.cancel(running)
        self.pending.difference_update(running)

    def describe(self) -> str:
        workers = len(self.client.scheduler_info().get("workers", {}))
        return f"the Dask cluster at {self.client.scheduler.address} ({workers} worker(s))"

    def close(self) -> None:
        self.client.close()
        self._close_cluster()

    def _close_cluster(self) -> None:
        if self.cluster is not None:
            self.cluster.close()


__all__ = ["DASK_INSTALL", "Backend", "DaskBackend", "LocalBackend", "require_dask"]
