"""The events' quick ``__init__`` (decision 0213) against the dataclass-made one it replaces: for every event
class, the same instance from the same arguments and defaults, and the same refusal of a missing, unknown or
positional argument."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import wddmsim.hw.events
import wddmsim.vidmm.events
from tests.core.quick_init_checks import assert_refuses_alike, field_values, made_by_dataclass
from wddmsim.core.events import EVENT_DATACLASS_INITS, Event

_KINDS = sorted(EVENT_DATACLASS_INITS, key=lambda kind: (kind.__module__, kind.__name__))


def _defined_events() -> set[type[Event]]:
    modules = (wddmsim.hw.events, wddmsim.vidmm.events)
    return {
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Event) and value.__module__ == module.__name__
    }


def _made_by_dataclass(kind: type[Any], kwargs: dict[str, object]) -> object:
    return made_by_dataclass(EVENT_DATACLASS_INITS, kind, kwargs)


def test_every_event_class_of_the_event_modules_has_the_quick_init() -> None:
    assert set(_KINDS) == _defined_events()
    assert len(_KINDS) >= 30
    for kind in _KINDS:
        assert kind.__init__ is not EVENT_DATACLASS_INITS[kind]


@pytest.mark.parametrize("kind", _KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("every", [False, True], ids=["required only", "every field"])
def test_the_quick_init_makes_what_the_dataclass_init_makes(kind: type[Any], every: bool) -> None:
    kwargs = field_values(kind, every=every)
    quick, general = kind(**kwargs), _made_by_dataclass(kind, kwargs)
    assert quick == general
    assert repr(quick) == repr(general)
    assert quick.to_record() == general.to_record()  # type: ignore[attr-defined]
    for f in dataclasses.fields(kind):
        expected = kwargs.get(f.name, f.default)
        assert getattr(quick, f.name) == expected
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.time = 1


@pytest.mark.parametrize("kind", _KINDS, ids=lambda k: k.__name__)
def test_the_quick_init_refuses_what_the_dataclass_init_refuses(kind: type[Any]) -> None:
    assert_refuses_alike(EVENT_DATACLASS_INITS, kind)
