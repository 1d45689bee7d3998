"""A quick ``__init__`` for frozen, slotted, keyword-only dataclasses built on hot paths.

A frozen dataclass's own ``__init__`` stores each field through ``object.__setattr__`` (the class refuses plain
assignment), which costs about as much again as the rest of the call.  The payloads VidMm builds per paging
operation and the events a run emits are such classes; storing each field through its slot descriptor makes the
same instance for less (decisions 0203 and 0213).

A class with many fields goes further (decision 0225): for the time of its ``__init__`` the new instance is of a
*twin* -- a plain class with the same bases and the same slots, so the same memory layout -- whose fields take
plain assignments (a few nanoseconds each, against ~45 for a descriptor call), and then it is of its own class
again.  Two class switches cost about as much as four descriptor calls, so only classes of
:data:`TWIN_MIN_FIELDS` fields or more use it; an instance of a subclass always takes the descriptors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, Field, fields
from typing import Any, ParamSpec, TypeVar

_A = ParamSpec("_A")
_T = TypeVar("_T")


def _slot(cls: type[Any], name: str) -> Any:
    """The slot descriptor of field ``name``: on the class that declared it (a base's fields are its own)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise TypeError(f"{cls.__name__}.{name}: no slot to store the field in")


TWIN_MIN_FIELDS = 6
"""Fields from which a class's quick ``__init__`` stores them into its twin (below, the descriptors are cheaper)."""


def _twin(cls: type[Any]) -> type[Any] | None:
    """A plain class an instance of ``cls`` can be switched to and back (same bases, same slots), or None when
    there is none: a base that intercepts assignment, or a layout Python does not let an instance switch between."""
    slots = cls.__dict__.get("__slots__")
    if slots is None or "__dict__" in slots:
        return None
    twin: type[Any] = type(f"{cls.__name__}Twin", cls.__bases__, {"__slots__": slots, "__module__": cls.__module__})
    setter: object = twin.__setattr__
    if setter is not object.__setattr__:  # a base's own __setattr__ (a frozen base, say)
        return None  # would refuse, or make every store slower than a descriptor call (measured: events)
    probe = object.__new__(cls)
    try:
        object.__setattr__(probe, "__class__", twin)
        probe.__class__ = cls
    except TypeError:
        return None
    return twin


def quick_init(cls: type[Any]) -> Callable[..., None]:
    """Give ``cls`` an ``__init__`` that stores each field through its slot; returns the one it replaced.

    Same keyword-only signature, defaults and default factories as the dataclass-made one (tests hold the two
    to the same instances and the same refusals); refused for a class with a positional field or a
    ``__post_init__``, which this generator does not reproduce.
    """
    declared = _declared(cls)
    scope: dict[str, Any] = {"_MISSING": MISSING}
    params = _keywords(declared, scope)
    values = [f"_factory_{f.name}() if {f.name} is _MISSING else {f.name}" if _made(f) else f.name for f in declared]
    for f in declared:
        scope[f"_set_{f.name}"] = _slot(cls, f.name).__set__
    stores = [f"_set_{f.name}(self, {value})" for f, value in zip(declared, values, strict=True)]
    body = [f"    {store}" for store in stores] or ["    pass"]
    twin = _twin(cls) if len(declared) >= TWIN_MIN_FIELDS else None
    if twin is not None:  # plain stores into the twin's slots; a subclass's instance takes the descriptors
        scope.update(_CLS=cls, _TWIN=twin, _switch=object.__setattr__)
        body = [  # the class switched back in a finally: a default factory that raises leaves no twin behind
            "    if self.__class__ is _CLS:",
            '        _switch(self, "__class__", _TWIN)',
            "        try:",
            *(f"            self.{f.name} = {value}" for f, value in zip(declared, values, strict=True)),
            "        finally:",
            "            self.__class__ = _CLS",
            "    else:",
            *(f"        {store}" for store in stores),
        ]
    source = f"def __init__(self, *, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    replaced: Callable[..., None] = cls.__dict__["__init__"]
    cls.__init__ = init
    return replaced


def quick_factory(cls: Callable[_A, _T]) -> Callable[_A, _T]:
    """A function that builds an instance of ``cls`` as its quick ``__init__`` would, called with the same
    keywords -- for the few payloads built once per DDI call (decision 0233).

    Calling a class with keywords costs more than the work of most payloads: the interpreter packs the keywords
    into a dictionary for ``__init__`` and unpacks them again (~200-400 ns here), where a function takes them as
    they are.  The factory makes the instance itself -- of the twin, when the class has one (a single class
    switch then pays from two fields), else of ``cls`` through the slot descriptors -- after the default
    factories have run, so no half-made instance is left when one raises.  Same refusals as ``__init__``:
    a missing or unknown keyword is the interpreter's ``TypeError`` either way."""
    klass: type[Any] = cls  # type: ignore[assignment]  # a dataclass; the ParamSpec carries its signature
    declared = _declared(klass)
    scope: dict[str, Any] = {"_MISSING": MISSING, "_new": object.__new__, "_CLS": klass}
    params = _keywords(declared, scope)
    values = [f.name for f in declared]
    resolve = [f"    if {f.name} is _MISSING:\n        {f.name} = _factory_{f.name}()" for f in declared if _made(f)]
    twin = _twin(klass)
    if twin is not None:
        scope["_TWIN"] = twin
        body = ["    self = _new(_TWIN)", *(f"    self.{v} = {v}" for v in values), "    self.__class__ = _CLS"]
    else:
        for name in values:
            scope[f"_set_{name}"] = _slot(klass, name).__set__
        body = ["    self = _new(_CLS)", *(f"    _set_{v}(self, {v})" for v in values)]
    source = f"def make(*, {', '.join(params)}):\n" + "\n".join([*resolve, *body, "    return self"]) + "\n"
    exec(source, scope)
    make: Callable[_A, _T] = scope["make"]
    make.__qualname__ = make.__name__ = f"quick_{klass.__name__}"
    return make


def _keywords(declared: tuple[Field[Any], ...], scope: dict[str, Any]) -> list[str]:
    """The generated function's keyword parameters, one per field, their defaults put in ``scope``; a field with a
    default factory defaults to ``_MISSING`` (the factory runs per call, see :func:`_made`)."""
    params = []
    for f in declared:
        name = f.name
        if f.default is not MISSING:
            scope[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif _made(f):
            scope[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
        else:
            params.append(name)
    return params


def _made(f: Field[Any]) -> bool:
    """Whether the field's default is made per instance by a factory."""
    return f.default is MISSING and f.default_factory is not MISSING


def _declared(cls: type[Any]) -> tuple[Field[Any], ...]:
    """The fields of a keyword-only dataclass without ``__post_init__`` (what the generators reproduce)."""
    declared = fields(cls)
    if any(f.kw_only is not True for f in declared) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: only keyword-only dataclasses without __post_init__ get a quick __init__")
    return declared


__all__ = ["quick_factory", "quick_init"]
