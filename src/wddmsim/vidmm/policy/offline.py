"""``opt`` (alias ``min``): the clairvoyant policy -- given the future, evict what is used furthest ahead.

An offline policy is given the sequence of uses of a recorded run (the allocation handles that
:meth:`~wddmsim.vidmm.policy.interface.EvictionPolicy.used` reported, in order): :class:`UseRecorder` takes it
from one run.  ``wddmsim run --policy opt`` runs the scenario twice (once under the default policy to record the
uses, once, same seed, under ``opt``) and ``wddmsim replay TRACE --policy opt`` replays the trace twice.
Handles repeat across runs of one scenario or trace (VidMm hands them out in call order), so the recorded uses
name this run's allocations.

As every shipped policy, ``opt`` ranks what no residency list needs first (VidMm pages a listed allocation back
in before its device runs, whether the work names it or not).  Within each class the candidate whose next use
is furthest ahead goes first; never used again is furthest.  Size enters only on ties (decision 0161): among
the never-used-again the larger goes first (room for free), among those next used together the smaller (what is
evicted is paged back in).  Furthest-first is Belady's MIN: optimal in faults with equal sizes and demand
paging (Belady, 1966), and the byte-for-byte rule of the bound's relaxation (decision 0145); with sizes that
differ, and VidMm's placement, it is a feasible schedule, so an upper bound on the optimum, not the optimum
(policies-and-clients.md).  If the run diverges from the recording, ``opt`` keeps its cursor on the recorded
sequence and counts the uses that did not match (:attr:`Belady.diverged`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import final

from wddmsim.vidmm.policy.interface import (
    BaseEviction,
    EvictionPolicy,
    MoveCause,
    Range,
    RoomPlan,
    RoomRequest,
    SegmentView,
    VidMmAllocation,
    listed,
    said_by,
)

NEVER = 1 << 62
"""The next use of an allocation the recording never uses again."""


class Future(list[int]):
    """Recorded uses (allocation handles, in use order) and the device of each handle: what an offline policy is
    given.  A plain list of handles serves too (then no allocation is known to be needed by its device)."""

    def __init__(self, uses: Iterable[int] = ()) -> None:
        super().__init__(uses)
        self.devices: dict[int, int] = {}
        """Allocation handle -> the handle of its device."""


@final
class Belady(BaseEviction):
    """Belady's MIN over the recorded uses ``future`` (allocation handles, in use order), size on ties."""

    name = "opt"

    def __init__(self, future: Sequence[int]) -> None:
        self.future = tuple(int(h) for h in future)
        self.positions: dict[int, list[int]] = {}
        for t, handle in enumerate(self.future):
            self.positions.setdefault(handle, []).append(t)
        devices: dict[int, int] = getattr(future, "devices", {})
        self.device_positions: dict[int, list[int]] = {}
        """Per device, the positions of the uses of its allocations (when the future says whose they are)."""
        for t, handle in enumerate(self.future):
            if handle in devices:
                self.device_positions.setdefault(devices[handle], []).append(t)
        self.now = 0
        """Uses seen so far: the position in the recording."""
        self.diverged = 0
        """Uses that were not the recorded one at their position."""

    def next_use(self, a: VidMmAllocation) -> int:
        """The position of ``a``'s next use; a listed allocation is needed again when its device next runs
        (VidMm pages the residency list in then, without a use), taken as the next use of any of its device's
        allocations."""
        own = self._after(self.positions.get(int(a.handle), ()))
        if a.residency_count > 0:
            return min(own, self._after(self.device_positions.get(int(a.device.handle), ())))
        return own

    def _after(self, times: Sequence[int]) -> int:
        i = bisect_right(times, self.now - 1)
        return times[i] if i < len(times) else NEVER

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return sorted(candidates, key=self._rank)

    def _rank(self, a: VidMmAllocation) -> tuple[bool, int, int]:
        use = self.next_use(a)
        return (a.residency_count > 0, -use, -a.size if use == NEVER else a.size)

    def explain(self, victim: VidMmAllocation) -> str:
        use = self.next_use(victim)
        ahead = "never used again" if use == NEVER else f"next used at recorded use {use}"
        return f"{listed(victim)}; {ahead}"

    def used(self, a: VidMmAllocation) -> None:
        if self.now >= len(self.future) or self.future[self.now] != int(a.handle):
            self.diverged += 1
        self.now += 1


@final
class UseRecorder(BaseEviction):
    """Another policy, unchanged, that also records every use (the future an offline policy is given)."""

    def __init__(self, inner: EvictionPolicy, uses: list[int] | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.uses: list[int] = Future() if uses is None else uses
        """Allocation handles, in use order (appended to the list given, if one was; a :class:`Future` also
        learns each handle's device)."""

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return self.inner.order(candidates)

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return self.inner.may_evict(victim, request)

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        return self.inner.scan(space, request, roster)

    def explain(self, victim: VidMmAllocation) -> str | None:
        return said_by(self.inner, victim)

    def used(self, a: VidMmAllocation) -> None:
        self.uses.append(int(a.handle))
        if isinstance(self.uses, Future):
            self.uses.devices[int(a.handle)] = int(a.device.handle)
        self.inner.used(a)

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.inner.placed(a, where)

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.inner.evicted(a, where, cause)

    def freed(self, a: VidMmAllocation) -> None:
        self.inner.freed(a)
