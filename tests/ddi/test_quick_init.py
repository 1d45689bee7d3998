"""The payloads' quick ``__init__`` (decision 0203) against the dataclass-made one it replaces: the same instance
from the same arguments, defaults and default factories, and the same refusal of a missing or unknown argument."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from wddmsim.ddi.paging import DATACLASS_INITS, PAYLOAD_TYPES, QUICK_INIT_TYPES


def _values(kind: type[Any], *, every: bool) -> dict[str, object]:
    """Keyword arguments for ``kind``: its required fields only, or every field (a distinct marker each)."""
    out: dict[str, object] = {}
    for number, f in enumerate(dataclasses.fields(kind), start=1):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required or every:
            out[f.name] = f"{kind.__name__}.{f.name}#{number}"  # a frozen dataclass stores what it is given
    return out


def _state(instance: object) -> list[tuple[str, object]]:
    return [(f.name, getattr(instance, f.name)) for f in dataclasses.fields(instance)]  # type: ignore[arg-type]


def _made_by_dataclass(kind: type[Any], kwargs: dict[str, object]) -> object:
    instance = object.__new__(kind)
    DATACLASS_INITS[kind](instance, **kwargs)
    return instance


@pytest.mark.parametrize("kind", QUICK_INIT_TYPES, ids=lambda k: k.__name__)
@pytest.mark.parametrize("every", [False, True], ids=["required only", "every field"])
def test_the_quick_init_makes_what_the_dataclass_init_makes(kind: type[Any], every: bool) -> None:
    kwargs = _values(kind, every=every)
    quick, general = kind(**kwargs), _made_by_dataclass(kind, kwargs)
    assert _state(quick) == _state(general)
    for f in dataclasses.fields(kind):
        if f.name in kwargs:
            assert getattr(quick, f.name) == kwargs[f.name]
        elif f.default_factory is not dataclasses.MISSING:  # made by the factory
            assert getattr(quick, f.name) == f.default_factory()
        else:
            assert getattr(quick, f.name) is f.default
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(quick, dataclasses.fields(kind)[0].name, 1)


@pytest.mark.parametrize("kind", QUICK_INIT_TYPES, ids=lambda k: k.__name__)
def test_the_quick_init_refuses_what_the_dataclass_init_refuses(kind: type[Any]) -> None:
    kwargs = _values(kind, every=False)
    for bad in ({**kwargs, "NoSuchField": 1}, *({k: v for k, v in kwargs.items() if k != name} for name in kwargs)):
        with pytest.raises(TypeError):
            kind(**bad)
        with pytest.raises(TypeError):
            _made_by_dataclass(kind, bad)
    with pytest.raises(TypeError):
        kind(*(list(kwargs.values()) or [1]))  # keyword-only, as declared


def test_every_payload_type_has_the_quick_init_and_a_real_one_builds() -> None:
    assert set(PAYLOAD_TYPES) <= set(QUICK_INIT_TYPES) == set(DATACLASS_INITS)
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION

    source = DXGK_TRANSFER_LOCATION(SegmentId=2, SegmentAddress=0x1000)
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=4096, Source=source, Destination=source)
    assert (payload.hAllocation, payload.TransferOffset, payload.Flags.Value, payload.MdlOffset) == (0, 0, 0, 0)
    assert payload == _made_by_dataclass(
        DXGK_BUILDPAGINGBUFFER_TRANSFER, {"TransferSize": 4096, "Source": source, "Destination": source}
    )
