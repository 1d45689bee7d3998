"""The deterministic simulated clock: a tiny discrete-event kernel (after SimPy's ``Environment``).

Time is an integer number of nanoseconds.  Components schedule callbacks at absolute times; callbacks at the
same time run in the order they were scheduled, so a run with the same inputs gives the same event order.
Nothing here reads the wall clock.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import final

from wddmsim.core import liveness

Callback = Callable[[], None]
_LIVENESS = liveness.BUDGET


@final
class Clock:
    """Simulated time and the queue of pending callbacks."""

    __slots__ = ("_seq", "now", "queue")

    def __init__(self) -> None:
        self.now = 0
        self.queue: list[tuple[int, int, Callback]] = []
        """The pending callbacks, a heap of ``(time, sequence, callback)``: read by hot paths that inline
        :meth:`try_advance`; added to only through :meth:`schedule`."""
        self._seq = 0

    def schedule(self, at: int, callback: Callback) -> None:
        """Run ``callback`` when simulated time reaches ``at`` (never earlier than now)."""
        self._seq += 1
        heapq.heappush(self.queue, (at if at > self.now else self.now, self._seq, callback))

    @property
    def pending(self) -> int:
        return len(self.queue)

    @property
    def next_time(self) -> int | None:
        return self.queue[0][0] if self.queue else None

    def try_advance(self, time: int) -> bool:
        """Move straight to ``time`` if nothing is due at or before it; ``False`` (and no change) otherwise.

        Lets a component run a chain of its own actions without a round trip through the queue, exactly
        when no other callback could have run in between.
        """
        queue = self.queue
        if queue and queue[0][0] <= time:
            return False
        if time > self.now:  # a comparison, not max(): this runs once per packet
            self.now = time
        return True

    def step(self) -> bool:
        """Run the earliest pending callback; ``False`` when nothing is pending."""
        if not self.queue:
            return False
        if _LIVENESS.remaining is not None:  # a harness's liveness budget bounds every run of the clock
            liveness.charge("Clock.step")
        at, _, callback = heapq.heappop(self.queue)
        if at > self.now:
            self.now = at
        callback()
        return True

    def run_until(self, done: Callable[[], bool], *, max_steps: int | None = None) -> bool:
        """Advance until ``done()`` holds; ``False`` if the queue runs dry (or ``max_steps`` pass) first."""
        steps = 0
        while not done():
            if max_steps is not None and steps >= max_steps:
                return False
            if not self.step():
                return False
            steps += 1
        return True

    def advance_to(self, time: int) -> None:
        """Run every callback due at or before ``time``, then set the clock to ``time``."""
        while self.queue and self.queue[0][0] <= time:
            self.step()
        self.now = max(self.now, time)

    def run_all(self) -> None:
        """Run until nothing is pending."""
        while self.step():
            pass
