"""The reference string of a run: which allocations each request used, with their sizes, and the capacity they
compete for (decision 0144).

What it models: the paging problem a run poses, whatever the policy -- the sequence of uses VidMm reported to its
eviction policy (``EvictionPolicy.used``: an allocation listed by ``pfnMakeResidentCb`` or referenced by GPU work,
``pfnRenderCb``), grouped in requests, and the bytes of the segments those allocations may be placed in
(``DXGK_SEGMENTDESCRIPTOR``: memory and aperture segments alike, since a placement in either is a page-in).

Two sources: a recorded call trace (``wddmsim run --record``), replayed once on its recorded configuration with
one request per call; or a live run, observed through a :class:`ReferenceRecorder` wrapped around its policy,
one request per process frame (or whatever the driver of the run marks with :meth:`ReferenceRecorder.close`).
An allocation handle freed and handed out again names a new allocation: every use names an *object*, numbered
in order of first use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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
)


@dataclass(frozen=True, slots=True)
class Use:
    """One reference: an object (numbered in order of first use) and its size in bytes."""

    obj: int
    size: int


@dataclass(frozen=True, slots=True)
class ReferenceString:
    """The uses of a run, request by request, and the bytes they compete for.

    ``requests``: one tuple of uses per request (a call, or a process frame), in order.  ``capacity``: bytes of
    the segments the used allocations may be placed in.  Every use of one object has the object's size.
    """

    requests: tuple[tuple[Use, ...], ...]
    capacity: int
    handles: tuple[int, ...] = field(default=(), compare=False)
    """The allocation handle of each object (index: the object), for messages and for VidMm's own offline
    policy (Belady's MIN takes handles)."""

    def __post_init__(self) -> None:
        if self.capacity < 0:
            raise ValueError(f"capacity={self.capacity}: must be >= 0")
        sizes: dict[int, int] = {}
        for use in self.uses():
            if use.size <= 0:
                raise ValueError(f"object {use.obj}: size {use.size} must be > 0")
            if sizes.setdefault(use.obj, use.size) != use.size:
                raise ValueError(f"object {use.obj}: used with sizes {sizes[use.obj]} and {use.size}")

    @classmethod
    def of(cls, uses: Iterable[tuple[int, int]], capacity: int) -> ReferenceString:
        """A string of one-use requests from ``(object, size)`` pairs (the textbook form)."""
        return cls(tuple((Use(int(o), int(s)),) for o, s in uses), int(capacity))

    def uses(self) -> list[Use]:
        """Every use, in order (requests flattened)."""
        return [u for request in self.requests for u in request]

    def __len__(self) -> int:
        return sum(len(r) for r in self.requests)

    def sizes(self) -> dict[int, int]:
        """Object -> size, for every object used."""
        return {u.obj: u.size for u in self.uses()}

    @property
    def compulsory_bytes(self) -> int:
        """Bytes every policy pages in: each object's first use (a cold miss)."""
        return sum(self.sizes().values())

    @property
    def footprint(self) -> int:
        """Bytes of every object used (equal to :attr:`compulsory_bytes`; named for the oversubscription factor)."""
        return self.compulsory_bytes


@final
class ReferenceRecorder(BaseEviction):
    """Another eviction policy, unchanged, that also records the reference string of the run it serves.

    Every hook is passed on to ``inner`` first, so the run is the run ``inner`` makes (its event log is the same
    byte for byte).  ``used`` appends to the open request; ``freed`` retires the handle (a later allocation with
    the same handle is a new object); ``close`` ends the open request.
    """

    def __init__(self, inner: EvictionPolicy) -> None:
        self.inner = inner
        self.name = inner.name
        self._requests: list[list[int]] = []
        """Each closed request: indices into ``_uses``."""
        self._open: list[int] = []
        self._uses: list[Use] = []
        self._met: list[bool] = []
        """Per use: VidMm placed the allocation (it was resident when used, or placed before its next use)."""
        self._waiting: dict[int, int] = {}
        """Live handle -> its latest use not yet met."""
        self._objects: dict[int, int] = {}
        """Live handle -> its object number."""
        self._handles: list[int] = []
        self.segment_set = 0
        """The union of the used allocations' usable segment sets (bit ``id - 1``)."""

    # --- what is recorded ----------------------------------------------------------------------------------

    def used(self, a: VidMmAllocation) -> None:
        self.inner.used(a)
        handle = int(a.handle)
        obj = self._objects.get(handle)
        if obj is None:
            obj = self._objects[handle] = len(self._handles)
            self._handles.append(handle)
        self._open.append(len(self._uses))
        self._met.append(a.placement is not None)
        if a.placement is None:
            self._waiting[handle] = len(self._uses)
        self._uses.append(Use(obj, int(a.size)))
        self.segment_set |= a.usable_set

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.inner.placed(a, where)
        waiting = self._waiting.pop(int(a.handle), None)
        if waiting is not None:
            self._met[waiting] = True

    def freed(self, a: VidMmAllocation) -> None:
        self.inner.freed(a)
        self._objects.pop(int(a.handle), None)
        self._waiting.pop(int(a.handle), None)

    def close(self) -> None:
        """End the open request (nothing happens if it is empty)."""
        if self._open:
            self._requests.append(self._open)
            self._open = []

    def reference_string(self, segments: Sequence[SegmentView]) -> ReferenceString:
        """The string recorded so far, its capacity the bytes of those of ``segments`` the used allocations may
        be placed in.  A use VidMm never met (the allocation was not resident and was not placed before its
        next use: a policy that gave no victim) is left out: no schedule paged it in (decision 0163)."""
        self.close()
        capacity = sum(s.size for s in segments if self.segment_set >> (s.id - 1) & 1)
        requests = (tuple(self._uses[i] for i in r if self._met[i]) for r in self._requests)
        met = tuple(r for r in requests if r)
        objects = list(dict.fromkeys(u.obj for r in met for u in r))  # numbered again in order of first use
        renumber = {obj: new for new, obj in enumerate(objects)}
        strings = tuple(tuple(Use(renumber[u.obj], u.size) for u in r) for r in met)
        return ReferenceString(strings, capacity, tuple(self._handles[o] for o in objects))

    # --- passed on, unchanged ------------------------------------------------------------------------------

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return self.inner.order(candidates)

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return self.inner.may_evict(victim, request)

    def scan(self, space: SegmentView, request: RoomRequest, roster: Sequence[VidMmAllocation]) -> RoomPlan:
        return self.inner.scan(space, request, roster)

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.inner.evicted(a, where, cause)

    def explain(self, victim: VidMmAllocation) -> str | None:
        """Why the inner policy chose ``victim``, if it says (an optional hook: asked only where VidMm records
        eviction reasons)."""
        explain = getattr(self.inner, "explain", None)
        said = explain(victim) if callable(explain) else None
        return said if isinstance(said, str) else None
