"""The quick factories (decision 0233): a function called with a class's keywords that makes the instance its
``__init__`` makes -- through a twin of its layout when it has one, else through the slot descriptors -- with the
same defaults, default factories and refusals, and no half-made instance when a default factory raises."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from tests.core.test_quick_init_twin import _Base, _frozen, _made_by
from wddmsim.core.quick_init import quick_factory
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import (
    DATACLASS_INITS,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGK_PAGETABLEUPDATEADDRESS,
    make_page_table_address,
    make_update_page_table,
)
from wddmsim.ddi.pte import pte_array


def _fields(instance: object) -> list[object]:
    return [getattr(instance, f.name) for f in dataclasses.fields(instance)]  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [1, 2, 5, 6, 14])
def test_a_factory_makes_the_dataclass_instance(count: int) -> None:
    cls: type[Any] = (
        _frozen(count)
        if count > 1
        else dataclasses.make_dataclass(
            "One", [("f0", int, dataclasses.field(default=4))], bases=(_Base,), frozen=True, slots=True, kw_only=True
        )
    )
    general = cls.__init__
    make = quick_factory(cls)
    kwargs_sets: list[dict[str, object]] = [{"f0": 7}, {f"f{i}": 100 + i for i in range(count)}]
    for kwargs in kwargs_sets:
        quick, reference = make(**kwargs), _made_by(general, cls, **kwargs)
        assert type(quick) is cls
        assert quick == reference and repr(quick) == repr(reference)
        with pytest.raises(dataclasses.FrozenInstanceError):
            quick.f0 = 1
    if count > 1:
        first, second = make(f0=1), make(f0=1)
        assert getattr(first, f"f{count - 1}") == [] and getattr(first, f"f{count - 1}") is not getattr(
            second, f"f{count - 1}"
        ), "a default factory runs per instance"
        with pytest.raises(TypeError):
            make()  # the required field
    with pytest.raises(TypeError):
        make(f0=1, nope=2)
    with pytest.raises(TypeError):
        make(1)  # keywords only, as the class


def test_a_default_factory_that_raises_leaves_no_instance() -> None:
    made: list[object] = []

    def refuse() -> list[int]:
        raise RuntimeError("no list today")

    spec: list[tuple[str, type, Any]] = [(f"f{i}", int, dataclasses.field(default=i)) for i in range(7)]
    spec.append(("last", list, dataclasses.field(default_factory=refuse)))
    cls: type[Any] = dataclasses.make_dataclass("Refusing", spec, bases=(_Base,), frozen=True, slots=True, kw_only=True)
    make = quick_factory(cls)
    with pytest.raises(RuntimeError, match="no list today") as caught:
        made.append(make(f0=5))
    assert made == []
    assert all("self" not in entry.frame.f_locals for entry in caught.traceback if entry.frame.code.name == "make")
    assert make(f0=5, last=[2]).last == [2]


def test_a_base_that_intercepts_assignment_takes_the_descriptors() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class FrozenBase:
        time: int = 0

    cls = _frozen(8, FrozenBase)
    general = cls.__init__
    make = quick_factory(cls)
    assert "_TWIN" not in make.__globals__
    assert make(f0=2, time=5) == _made_by(general, cls, f0=2, time=5)


def test_a_positional_field_or_a_post_init_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Positional:
        a: int

    with pytest.raises(TypeError, match="keyword-only"):
        quick_factory(Positional)


def test_the_update_page_table_payload_and_its_address() -> None:
    """The factories the paging benchmark builds its payloads with make the class's own instances."""
    entries = pte_array(4)
    physical = D3DGPU_PHYSICAL_ADDRESS(SegmentId=1, SegmentOffset=0x2000)
    for address in ({"GpuVirtual": 0x4000_0000}, {"GpuPhysical": physical}, {}):
        made, expected = make_page_table_address(**address), DXGK_PAGETABLEUPDATEADDRESS(**address)
        assert type(made) is DXGK_PAGETABLEUPDATEADDRESS and made == expected
    cls = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE
    where = make_page_table_address(GpuVirtual=0x4000_0000)
    for extra in ({}, {"DriverProtection": 3, "pPageTableEntries64KB": entries, "Reserved0": 1, "hProcess": 9}):
        kwargs: dict[str, Any] = {
            "PageTableLevel": 0,
            "PageTableAddress": where,
            "pPageTableEntries": entries,
            "StartIndex": 1,
            "NumPageTableEntries": 3,
            "Flags": DXGK_UPDATEPAGETABLEFLAGS(Use64KBPages=True),
            "UpdateMode": DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
            **extra,
        }
        quick, reference = make_update_page_table(**kwargs), _made_by(DATACLASS_INITS[cls], cls, **kwargs)
        assert type(quick) is cls
        assert _fields(quick) == _fields(reference)  # payloads compare by identity: their fields, one by one
        assert isinstance(quick.pPageTableEntries, np.ndarray)
        with pytest.raises(dataclasses.FrozenInstanceError):
            quick.StartIndex = 0  # type: ignore[misc]
