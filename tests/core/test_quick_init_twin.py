"""The quick ``__init__``'s twin path (decision 0225): a class of many fields stores them into a twin of its
layout and is switched back; an instance of a subclass, a class of few fields and a class whose base intercepts
assignment take the slot descriptors.  Every path gives the dataclass-made instance."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from wddmsim.core.quick_init import TWIN_MIN_FIELDS, quick_init
from wddmsim.ddi.paging import DATACLASS_INITS, DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE


class _Base:
    __slots__ = ()


def _frozen(count: int, base: type[Any] = _Base) -> type[Any]:
    """A frozen, slotted, keyword-only dataclass of ``count`` fields: the first required, one with a factory."""
    names = [f"f{i}" for i in range(count)]
    spec: list[tuple[str, type, Any]] = [(names[0], int, dataclasses.field())]
    spec += [(name, int, dataclasses.field(default=i)) for i, name in enumerate(names[1:-1], start=1)]
    spec.append((names[-1], list, dataclasses.field(default_factory=list)))
    return dataclasses.make_dataclass(f"Made{count}", spec, bases=(base,), frozen=True, slots=True, kw_only=True)


def _twin_of(cls: type[Any]) -> object:
    return cls.__init__.__globals__.get("_TWIN")


def _made_by(init: Any, cls: type[Any], **kwargs: object) -> object:
    instance = object.__new__(cls)
    init(instance, **kwargs)
    return instance


@pytest.mark.parametrize("count", [2, TWIN_MIN_FIELDS - 1, TWIN_MIN_FIELDS, 14])
def test_many_fields_take_the_twin_and_every_path_makes_the_dataclass_instance(count: int) -> None:
    cls = _frozen(count)
    general = cls.__init__
    quick_init(cls)
    assert (_twin_of(cls) is not None) == (count >= TWIN_MIN_FIELDS)
    for kwargs in ({"f0": 7}, {f"f{i}": 100 + i for i in range(count)}):
        quick, reference = cls(**kwargs), _made_by(general, cls, **kwargs)
        assert type(quick) is cls
        assert quick == reference and repr(quick) == repr(reference)
        with pytest.raises(dataclasses.FrozenInstanceError):
            quick.f0 = 1
    defaults = cls(f0=1)
    assert getattr(defaults, f"f{count - 1}") == [] and (count == 2 or defaults.f1 == 1)  # a factory's, a default
    with pytest.raises(TypeError):
        cls()  # the required field
    with pytest.raises(TypeError):
        cls(f0=1, nope=2)


def test_a_default_factory_that_raises_leaves_the_instance_of_its_own_class() -> None:
    """The half-made instance a traceback still holds is of the frozen class, not a mutable twin."""

    def refuse() -> list[int]:
        raise RuntimeError("no list today")

    spec: list[tuple[str, type, Any]] = [(f"f{i}", int, dataclasses.field(default=i)) for i in range(7)]
    spec.append(("last", list, dataclasses.field(default_factory=refuse)))
    cls: type[Any] = dataclasses.make_dataclass("Refusing", spec, bases=(_Base,), frozen=True, slots=True, kw_only=True)
    quick_init(cls)
    assert _twin_of(cls) is not None
    with pytest.raises(RuntimeError, match="no list today") as caught:
        cls(f0=5)
    frames = [entry.frame for entry in caught.traceback if entry.frame.code.name == "__init__"]
    assert len(frames) == 1
    half_made: Any = frames[0].f_locals["self"]
    assert type(half_made) is cls and half_made.f0 == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        half_made.f0 = 6
    assert cls(f0=5, last=[2]).last == [2]  # the class still makes instances through its twin


def test_an_instance_of_a_subclass_takes_the_descriptors_and_keeps_its_class() -> None:
    cls = _frozen(8)
    quick_init(cls)
    assert _twin_of(cls) is not None

    class Sub(cls):  # type: ignore[misc, valid-type]
        __slots__ = ("extra",)

    made = Sub(f0=3, f7=[1])
    assert type(made) is Sub
    assert (made.f0, made.f1, made.f6, made.f7) == (3, 1, 6, [1])


def test_a_base_that_intercepts_assignment_takes_the_descriptors() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class FrozenBase:
        time: int = 0

    cls = _frozen(8, FrozenBase)
    general = cls.__init__
    quick_init(cls)
    assert _twin_of(cls) is None  # its twin would go through the frozen base's __setattr__
    assert cls(f0=2, time=5) == _made_by(general, cls, f0=2, time=5)


def test_the_update_page_table_payload_takes_the_twin() -> None:
    cls = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE
    assert _twin_of(cls) is not None
    kwargs: dict[str, Any] = {
        "PageTableLevel": 1,
        "PageTableAddress": None,
        "pPageTableEntries": None,
        "StartIndex": 2,
        "NumPageTableEntries": 3,
        "UpdateMode": 2,
    }
    quick, reference = cls(**kwargs), _made_by(DATACLASS_INITS[cls], cls, **kwargs)
    assert type(quick) is cls
    assert [getattr(quick, f.name) for f in dataclasses.fields(cls)] == [
        getattr(reference, f.name) for f in dataclasses.fields(cls)
    ]  # payloads compare by identity: their fields, one by one
