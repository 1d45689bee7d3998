"""Checks shared by the tests of the quick ``__init__`` (``core/quick_init.py``): events (decision 0213) and paging
payloads (decision 0203) each compare it with the dataclass-made ``__init__`` it replaces."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pytest

DataclassInit = Callable[..., None]


def field_values(kind: type[Any], *, every: bool) -> dict[str, object]:
    """Keyword arguments for ``kind``: its required fields only, or every field (a distinct marker each; a frozen
    dataclass stores what it is given)."""
    out: dict[str, object] = {}
    for number, f in enumerate(dataclasses.fields(kind), start=1):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required or every:
            out[f.name] = f"{kind.__name__}.{f.name}#{number}"
    return out


def made_by_dataclass(inits: Mapping[type[Any], DataclassInit], kind: type[Any], kwargs: dict[str, object]) -> object:
    """An instance of ``kind`` made by the dataclass-made ``__init__`` kept in ``inits``."""
    instance = object.__new__(kind)
    inits[kind](instance, **kwargs)
    return instance


def assert_refuses_alike(inits: Mapping[type[Any], DataclassInit], kind: type[Any]) -> None:
    """The quick ``__init__`` of ``kind`` refuses, as the dataclass one does, an unknown argument, each missing
    required one, and positional arguments (every field is keyword-only)."""
    kwargs = field_values(kind, every=False)
    for bad in ({**kwargs, "NoSuchField": 1}, *({k: v for k, v in kwargs.items() if k != name} for name in kwargs)):
        with pytest.raises(TypeError):
            kind(**bad)
        with pytest.raises(TypeError):
            made_by_dataclass(inits, kind, bad)
    with pytest.raises(TypeError):
        kind(*(list(kwargs.values()) or [1]))
