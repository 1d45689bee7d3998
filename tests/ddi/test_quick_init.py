"""The payloads' quick ``__init__`` (decision 0203) against the dataclass-made one it replaces: the same instance
from the same arguments, defaults and default factories, and the same refusal of a missing or unknown argument."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.core.quick_init_checks import assert_refuses_alike, field_values, made_by_dataclass
from wddmsim.ddi.paging import DATACLASS_INITS, PAYLOAD_TYPES, QUICK_INIT_TYPES


def _state(instance: object) -> list[tuple[str, object]]:
    return [(f.name, getattr(instance, f.name)) for f in dataclasses.fields(instance)]  # type: ignore[arg-type]


def _made_by_dataclass(kind: type[Any], kwargs: dict[str, object]) -> object:
    return made_by_dataclass(DATACLASS_INITS, kind, kwargs)


@pytest.mark.parametrize("kind", QUICK_INIT_TYPES, ids=lambda k: k.__name__)
@pytest.mark.parametrize("every", [False, True], ids=["required only", "every field"])
def test_the_quick_init_makes_what_the_dataclass_init_makes(kind: type[Any], every: bool) -> None:
    kwargs = field_values(kind, every=every)
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
    assert_refuses_alike(DATACLASS_INITS, kind)


def test_every_payload_type_has_the_quick_init_and_a_real_one_builds() -> None:
    assert set(PAYLOAD_TYPES) <= set(QUICK_INIT_TYPES) == set(DATACLASS_INITS)
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION

    source = DXGK_TRANSFER_LOCATION(SegmentId=2, SegmentAddress=0x1000)
    payload = DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=4096, Source=source, Destination=source)
    assert (payload.hAllocation, payload.TransferOffset, payload.Flags.Value, payload.MdlOffset) == (0, 0, 0, 0)
    assert payload == _made_by_dataclass(
        DXGK_BUILDPAGINGBUFFER_TRANSFER, {"TransferSize": 4096, "Source": source, "Destination": source}
    )
