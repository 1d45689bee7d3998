"""The append-only event log.

Events are typed records with a simulated timestamp.  Models emit them and never print; views, exporters and
tests read them.  Where DxgKrnl has an ETW event for the concept, the event class is named after it
(``PagingOpTransfer``, ``VidMmMakeResident`` ...), so a trace reads like one taken on Windows.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeVar, final

from wddmsim.core.clock import Clock
from wddmsim.core.quick_init import quick_init


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event: ``time`` is simulated nanoseconds; ``NAME`` is the event's name in exports."""

    NAME: ClassVar[str] = "Event"
    time: int

    def fields(self) -> dict[str, Any]:
        """The event's fields (without ``time``), JSON-friendly."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name != "time":
                out[f.name] = _jsonable(getattr(self, f.name))
        return out

    def to_record(self) -> dict[str, Any]:
        return {"time": self.time, "event": self.NAME, **self.fields()}


def _jsonable(value: object) -> object:
    if isinstance(value, (bool, str, float)) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


EVENT_DATACLASS_INITS: Final[dict[type[Event], Callable[..., None]]] = {}
"""The dataclass-made ``__init__`` of each event class given a quick one (tests compare the two)."""


def quicken_events(namespace: dict[str, object], module: str) -> None:
    """Give every event class defined in ``module`` (its ``namespace``) the quick ``__init__`` of
    :mod:`wddmsim.core.quick_init`: a run builds an event per paging operation, submission, packet ... for its
    listeners (decision 0213).  Called once at the end of each module that defines events."""
    for value in list(namespace.values()):
        if isinstance(value, type) and issubclass(value, Event) and value.__module__ == module:
            EVENT_DATACLASS_INITS[value] = quick_init(value)


E = TypeVar("E", bound=Event)
Listener = Callable[[Event], None]


@final
class EventLog:
    """Events in emission order.  ``enabled = False`` drops events (benchmarks of hot paths).

    ``keep = False`` keeps none: listeners (:meth:`subscribe`) still see every event as it is emitted, so a run
    whose consumers are folds holds no structure that grows with its events (issue 24; decision 0189).
    ``emitted`` counts every event emitted, kept or not: the index the next event will have; ``latest`` is the
    latest simulated time of any of them (0 before the first).

    A listener may name the event classes it wants (``kinds``): it is then called for those (and their
    subclasses) only.  Each event class's listeners are worked out once, at its first emission after a
    subscription, so a fold that wants a tenth of the events costs nothing for the other nine (decision 0207).
    """

    __slots__ = ("_events", "_listeners", "_routes", "clock", "emitted", "enabled", "keep", "latest", "tallies")

    def __init__(self, clock: Clock, *, keep: bool = True) -> None:
        self.clock = clock
        self.enabled = True
        self.keep = keep
        self.emitted = 0
        self.latest = 0
        self._events: list[Event] = []
        self._listeners: list[tuple[Listener, tuple[type[Event], ...]]] = []
        self._routes: dict[type[Event], tuple[Listener, ...]] = {}
        self.tallies: Counter[tuple[type[Event], str]] = Counter()
        """``(event class, key) -> amount``: what an emitter counts of its events whether or not they are built
        (while the log is enabled), for the folds that only count them -- so that a run no one asks the events of
        builds none (decision 0223).  Each emitter documents its keys."""

    def emit(self, event: Event) -> None:
        if self.enabled:
            self.emitted += 1
            if event.time > self.latest:
                self.latest = event.time
            if self.keep:
                self._events.append(event)
            route = self._routes.get(type(event))
            if route is None:
                route = self._route(type(event))
            for listener in route:
                listener(event)

    def skips(self, kind: type[Event], time: int) -> bool:
        """Whether an event of ``kind`` at ``time`` would reach no one (not kept, no listener for it): it is then
        counted as emitted (``emitted``, ``latest``) and the caller need not build it.  For the emitters of the
        many events a plain ``wddmsim run`` has no consumer for (decision 0207)."""
        if not self.enabled:
            return True
        if not self.unheard(kind):
            return False
        self.emitted += 1
        if time > self.latest:
            self.latest = time
        return True

    def unheard(self, kind: type[Event]) -> bool:
        """Whether events of ``kind`` would reach no one now (the log off, or keeping nothing with no listener for
        them): an emitter may then run a stretch of its own work without calling out, and answer :meth:`skips`
        for each event of it.  Nothing is counted here."""
        if not self.enabled:
            return True
        if self.keep:
            return False
        route = self._routes.get(kind)
        if route is None:
            route = self._route(kind)
        return not route

    def _route(self, kind: type[Event]) -> tuple[Listener, ...]:
        route = tuple(listener for listener, kinds in self._listeners if not kinds or issubclass(kind, kinds))
        self._routes[kind] = route
        return route

    def subscribe(self, listener: Listener, kinds: tuple[type[Event], ...] = ()) -> None:
        """Call ``listener`` with every later event, or with those of ``kinds`` only (empty: every one)."""
        self._listeners.append((listener, kinds))
        self._routes.clear()

    def follow(self, listener: Listener, kinds: tuple[type[Event], ...] = ()) -> None:
        """Give ``listener`` the events kept so far, then every later one (a fold attached after the adapter
        was built still sees its ``ReportSegment`` events); ``kinds`` as for :meth:`subscribe`."""
        for event in self._events:
            if not kinds or isinstance(event, kinds):
                listener(event)
        self.subscribe(listener, kinds)

    def stop_keeping(self) -> None:
        """Drop the events kept so far and keep no more (listeners keep seeing them)."""
        self.keep = False
        self._events.clear()

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def of_type(self, kind: type[E]) -> list[E]:
        return [e for e in self._events if isinstance(e, kind)]

    def since(self, index: int) -> list[Event]:
        return self._events[index:]

    def clear(self) -> None:
        self._events.clear()
