"""The event log's listeners (decision 0207): a listener that names the event classes it wants sees exactly those
(and their subclasses), in emission order, whatever was subscribed before or after it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from wddmsim.core.clock import Clock
from wddmsim.core.events import Event, EventLog


@dataclass(frozen=True, slots=True, kw_only=True)
class Alpha(Event):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class Beta(Event):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class BetaPrime(Beta):
    pass


def _names(events: list[Event]) -> list[str]:
    return [f"{type(e).__name__}@{e.time}" for e in events]


def test_a_listener_with_kinds_sees_those_and_their_subclasses_only() -> None:
    log = EventLog(Clock())
    everything: list[Event] = []
    betas: list[Event] = []
    log.subscribe(everything.append)
    log.subscribe(betas.append, (Beta,))
    for t, kind in enumerate((Alpha, Beta, BetaPrime, Event, Beta)):
        log.emit(kind(time=t))
    assert _names(everything) == ["Alpha@0", "Beta@1", "BetaPrime@2", "Event@3", "Beta@4"]
    assert _names(betas) == ["Beta@1", "BetaPrime@2", "Beta@4"]


def test_a_later_subscription_is_routed_for_classes_already_emitted() -> None:
    log = EventLog(Clock())
    first: list[Event] = []
    log.subscribe(first.append, (Alpha,))
    log.emit(Alpha(time=1))
    log.emit(Beta(time=2))  # Beta's route is worked out now: nobody
    late: list[Event] = []
    log.subscribe(late.append, (Beta, Alpha))
    log.emit(Beta(time=3))
    log.emit(Alpha(time=4))
    assert _names(first) == ["Alpha@1", "Alpha@4"]
    assert _names(late) == ["Beta@3", "Alpha@4"]


def test_follow_with_kinds_replays_the_kept_events_of_those_kinds_in_order() -> None:
    log = EventLog(Clock())
    for t, kind in enumerate((Alpha, Beta, Alpha, BetaPrime)):
        log.emit(kind(time=t))
    seen: list[Event] = []
    log.follow(seen.append, (Beta,))
    log.emit(Alpha(time=9))
    log.emit(Beta(time=10))
    assert _names(seen) == ["Beta@1", "BetaPrime@3", "Beta@10"]


def test_latest_is_the_latest_time_of_any_event_emitted_kept_or_not() -> None:
    log = EventLog(Clock(), keep=False)
    assert log.latest == 0
    for t in (5, 9, 7):
        log.emit(Alpha(time=t))
    assert log.latest == 9 and log.emitted == 3 and len(log) == 0
    log.enabled = False
    log.emit(Alpha(time=100))
    assert log.latest == 9 and log.emitted == 3


def test_skips_counts_an_event_no_one_would_see_and_only_then() -> None:
    log = EventLog(Clock(), keep=False)
    alphas: list[Event] = []
    log.subscribe(alphas.append, (Alpha,))
    assert not log.skips(Alpha, 3), "a listener wants it"
    log.emit(Alpha(time=3))
    assert log.skips(Beta, 8) and log.emitted == 2 and log.latest == 8, "counted, with its time"
    assert not log.skips(Alpha, 9) and log.emitted == 2, "not counted: the caller emits it"
    log.keep = True
    assert not log.skips(Beta, 10), "a log that keeps its events wants every one"
    log.enabled = False
    assert log.skips(Alpha, 11) and log.emitted == 2, "a disabled log drops every event, uncounted"


@pytest.mark.parametrize("keep", [True, False])
def test_a_listener_added_while_an_event_is_delivered_sees_the_later_events_only(keep: bool) -> None:
    """The event being delivered when a listener subscribes is not a later one: neither ``subscribe`` nor
    ``follow`` gives it (``follow`` gives it once, as a kept event, when the log keeps its events)."""
    log = EventLog(Clock(), keep=keep)
    late: list[int] = []
    followed: list[int] = []

    def join(event: Event) -> None:
        if event.time == 1:
            log.subscribe(lambda e: late.append(e.time))
            log.follow(lambda e: followed.append(e.time))

    log.subscribe(join)
    log.emit(Alpha(time=1))
    log.emit(Alpha(time=2))
    assert late == [2]
    assert followed == ([1, 2] if keep else [2])
