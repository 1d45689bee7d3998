"""VidMm's paging worker: requests admitted to paging queues, serviced highest queue priority first.

wddm-spec section 3.7: every device's paging queues are serviced by VidMm's worker threads, and
"higher-priority queues are processed first".  A ``MakeResident`` that has paging to do is *admitted* at the call
(validated, budgeted, its reference counts taken, the queue's next fence value handed out: ``E_PENDING``) and
*serviced* later, when the worker runs: placements are decided, victims evicted and the paging buffers built then,
against the state the requests serviced before it left (decision 0043).

The worker runs before VidMm does anything else that reads or changes residency -- an ``Evict``, a lock, a
submission, a wait on a paging fence -- as a thread pool would have caught up by then; requests that pile up
between those calls are serviced in priority order, each queue's in the order they were admitted (its fence
values must signal in order).  The paging engine runs buffers in the order they are built, so a request on an
above-normal queue admitted after a large below-normal one completes first, and a CPU wait on its fence returns
without waiting for the other's transfers.

This module is the ordering mechanism only; what servicing one request means is the residency manager's.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from wddmsim.core.addresses import FenceValue
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import PagingQueue

BACKLOG_LIMIT: Final = 128
"""Admitted requests the worker lets wait before it services them without being asked (bounded memory)."""


@dataclass(slots=True, eq=False)
class PagingRequest:
    """One admitted ``MakeResident``: what to make resident, and the fence value that says it is."""

    queue: PagingQueue
    value: FenceValue
    """The value the queue's monitored fence takes once the request's paging has run."""
    allocations: tuple[VidMmAllocation, ...]
    sequence: int = field(default=0)
    """Admission order (the tie-break between queues of equal priority)."""


@final
class PagingWorker:
    """The backlog of admitted requests, and the order they are serviced in."""

    def __init__(self, run: Callable[[PagingRequest], None], *, limit: int = BACKLOG_LIMIT) -> None:
        self._run = run
        self.limit = limit
        self._heap: list[tuple[int, int, PagingRequest]] = []
        self._sequence = 0
        self._servicing = False
        self.serviced = 0
        """Requests serviced so far (statistics)."""

    def __len__(self) -> int:
        return len(self._heap)

    def admit(self, request: PagingRequest) -> None:
        """Queue ``request``; service the backlog once it reaches :attr:`limit`."""
        self._sequence += 1
        request.sequence = self._sequence
        heapq.heappush(self._heap, (-int(request.queue.priority), request.sequence, request))
        if len(self._heap) >= self.limit:
            self.service()

    def service(self) -> int:
        """Run every admitted request: the highest priority first, admission order between equals.  Returns how
        many ran.  Re-entrant calls (a request's paging asks for the worker again) return 0 at once."""
        if not self._heap or self._servicing:
            return 0
        self._servicing = True
        ran = 0
        try:
            while self._heap:
                _, _, request = heapq.heappop(self._heap)
                self._run(request)
                ran += 1
        finally:
            self._servicing = False
        self.serviced += ran
        return ran

    def cancel(self, queues: set[int]) -> list[PagingRequest]:
        """Forget the requests of the paging queues ``queues`` (their device is being destroyed); returns them."""
        kept = [entry for entry in self._heap if entry[2].queue.handle not in queues]
        dropped = [r for _, _, r in sorted(self._heap) if r.queue.handle in queues]
        self._heap[:] = kept
        heapq.heapify(self._heap)
        return dropped

    def drop(self) -> list[PagingRequest]:
        """Forget every request (an adapter reset: their devices are removed); returns them."""
        dropped = [r for _, _, r in sorted(self._heap)]
        self._heap.clear()
        return dropped


__all__ = ["BACKLOG_LIMIT", "PagingRequest", "PagingWorker"]
