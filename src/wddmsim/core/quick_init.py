"""A quick ``__init__`` for frozen, slotted, keyword-only dataclasses built on hot paths.

A frozen dataclass's own ``__init__`` stores each field through ``object.__setattr__`` (the class refuses plain
assignment), which costs about as much again as the rest of the call.  The payloads VidMm builds per paging
operation and the events a run emits are such classes; storing each field through its slot descriptor makes the
same instance for less (decisions 0203 and 0213).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any


def _slot(cls: type[Any], name: str) -> Any:
    """The slot descriptor of field ``name``: on the class that declared it (a base's fields are its own)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise TypeError(f"{cls.__name__}.{name}: no slot to store the field in")


def quick_init(cls: type[Any]) -> Callable[..., None]:
    """Give ``cls`` an ``__init__`` that stores each field through its slot; returns the one it replaced.

    Same keyword-only signature, defaults and default factories as the dataclass-made one (tests hold the two
    to the same instances and the same refusals); refused for a class with a positional field or a
    ``__post_init__``, which this generator does not reproduce.
    """
    declared = fields(cls)
    if any(f.kw_only is not True for f in declared) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: only keyword-only dataclasses without __post_init__ get a quick __init__")
    scope: dict[str, Any] = {"_MISSING": MISSING}
    params, body = [], []
    for f in declared:
        name = f.name
        scope[f"_set_{name}"] = _slot(cls, name).__set__
        if f.default is not MISSING:
            scope[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
            body.append(f"    _set_{name}(self, {name})")
        elif f.default_factory is not MISSING:
            scope[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            body.append(f"    _set_{name}(self, _factory_{name}() if {name} is _MISSING else {name})")
        else:
            params.append(name)
            body.append(f"    _set_{name}(self, {name})")
    source = f"def __init__(self, *, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    replaced: Callable[..., None] = cls.__dict__["__init__"]
    cls.__init__ = init
    return replaced


__all__ = ["quick_init"]
