"""Timeout detection for calls into a native driver's library (decision 0132): Windows' TDR, for C code.

Windows gives the GPU ``TdrDelay`` seconds (2 by default) to finish a piece of work; past it the OS resets the
adapter (``DxgkDdiResetFromTimeout``) instead of waiting forever.  A C function of a driver's library cannot be
interrupted from Python, so a bounded call runs on the watchdog's own thread while the simulator waits at most its
bound in wall time.  Two bounds (decision 0132): the GPU's work -- the executor ``WddmsimExecutePagingBuffer`` -- is
bounded by ``delay`` (``TdrDelay``, on by default, as on Windows); the driver's own entry points
(``DxgkDdiBuildPagingBuffer``, ``DxgkDdiResetFromTimeout``, ``DxgkDdiQueryAdapterInfo``), which Windows does not bound
at all, by ``driver_delay`` (``call_timeout``): off by default in runs, where a thread hand-over per call would cost
a C driver half its paging rate, and on in ``check-driver``, where a hung entry point is a finding.  A call
that does not return in time is abandoned where it is (its thread keeps what it was given alive, and ends if the
function ever returns), the library is *lost*: every later call and every callback from the abandoned thread is
refused, and the caller takes the reset path naming the entry point.

Callbacks into the simulator hold :attr:`Watchdog.lock` while they work, and the simulator takes it to declare the
library lost, so an abandoned thread never changes simulated state after the timeout.
"""

from __future__ import annotations

import _thread
import queue
import threading
from collections.abc import Callable
from typing import Final, final

from wddmsim.ddi.status import NTSTATUS, DdiError

TDR_DELAY: Final = 2.0
"""Seconds a call may take: Windows' default ``TdrDelay``."""


class DriverTimedOut(DdiError):
    """A call into the library did not return within ``TdrDelay``: the library is now lost."""

    def __init__(self, message: str) -> None:
        super().__init__(NTSTATUS.STATUS_DEVICE_REMOVED, message)
        self.reason = message


class LibraryLost(DdiError):
    """A call into a library that an earlier timeout lost: refused, nothing is called."""

    def __init__(self, entry: str, reason: str) -> None:
        super().__init__(NTSTATUS.STATUS_DEVICE_REMOVED, f"{entry}: the driver's library is lost ({reason})")
        self.reason = reason


@final
class Watchdog:
    """Bounds each call into one adapter's library (see the module docstring); a bound of None calls inline."""

    def __init__(self, delay: float | None = TDR_DELAY, driver_delay: float | None = None) -> None:
        self.delay = delay
        """Seconds the GPU's work (an executor call) may take: ``TdrDelay``."""
        self.driver_delay = driver_delay
        """Seconds a driver entry point may take: ``call_timeout`` (None: inline, no bound)."""
        self.lock = threading.Lock()
        """Held by every callback while it changes simulated state, and by the simulator to declare a loss."""
        self.lost: str | None = None
        """Why the library is lost (None: it is not)."""

    def check(self, entry: str) -> None:
        """:class:`LibraryLost` if an earlier call was abandoned."""
        if self.lost is not None:
            raise LibraryLost(entry, self.lost)

    @staticmethod
    def abandon(*given: object) -> None:
        """Keep what an abandoned call was given alive for the life of the process (its thread may still read or
        write it, whatever becomes of the adapter)."""
        _ABANDONED.extend(given)

    def call(self, entry: str, function: Callable[[], int], *keep: object) -> int:
        """``function()`` -- the GPU's work in the library, an executor call -- bounded by ``TdrDelay``; ``keep``:
        what the call was given."""
        return self._bounded(entry, function, self.delay, "TdrDelay", keep)

    def call_driver(self, entry: str, function: Callable[[], int], *keep: object) -> int:
        """``function()`` -- a driver entry point of the library -- bounded by ``call_timeout`` when one is set."""
        return self._bounded(entry, function, self.driver_delay, "call_timeout", keep)

    def _bounded(
        self, entry: str, function: Callable[[], int], delay: float | None, bound: str, keep: tuple[object, ...]
    ) -> int:
        self.check(entry)
        if delay is None or getattr(_here, "serving", False):
            return function()  # no bound, or a call made from a callback of a call already bounded
        job = _Call(function)
        work = _worker()
        work.put(job)
        if job.done.acquire(timeout=delay):
            return job.result()
        with self.lock:  # no callback is half-way through a change: from here on they are all refused
            if not job.done.acquire(blocking=False):
                self.lost = f"{entry} did not return within {bound}={delay:g} s"
                self.abandon(job, *keep)
        if self.lost is None:  # it returned while the lock was taken
            return job.result()
        _abandon(work)
        raise DriverTimedOut(f"{self.lost}: timeout detected, the library is lost")


@final
class _Call:
    __slots__ = ("_error", "_value", "done", "function")

    def __init__(self, function: Callable[[], int]) -> None:
        self.function = function
        self.done = _thread.allocate_lock()
        """Held until the call returned (a bare lock: the cheapest hand-over between two threads)."""
        self.done.acquire()
        self._value = 0
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._value = self.function()
        except BaseException as error:  # handed to the caller's thread, raised there
            self._error = error
        self.done.release()

    def result(self) -> int:
        if self._error is not None:
            raise self._error
        return self._value


_ABANDONED: Final[list[object]] = []
_here = threading.local()
_current: queue.SimpleQueue[_Call | None] | None = None
"""The queue of the thread that makes library calls (one for the process; replaced when a call is abandoned)."""


def _worker() -> queue.SimpleQueue[_Call | None]:
    global _current
    if _current is None:
        _current = queue.SimpleQueue()
        # A daemon: a library stuck for good must not keep the process from exiting (a hung GPU would not).
        threading.Thread(target=_serve, args=(_current,), name="wddmsim-driver-calls", daemon=True).start()
    return _current


def _abandon(work: queue.SimpleQueue[_Call | None]) -> None:
    """Its thread is stuck in a library: later calls get a new thread; the stuck one ends if it ever returns."""
    global _current
    if _current is work:
        _current = None
    work.put(None)


def _serve(work: queue.SimpleQueue[_Call | None]) -> None:
    """The calling thread: one call after another, until told to end."""
    _here.serving = True
    while (job := work.get()) is not None:
        job.run()


__all__ = ["TDR_DELAY", "DriverTimedOut", "LibraryLost", "Watchdog"]
