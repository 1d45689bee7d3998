"""UpdatePageTable's hand-written ``__init__`` (decision 0199) against its declared fields: the same names, order,
defaults and keyword-only rule the dataclass would generate, and the instance as frozen as the others."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE, DXGK_UPDATEPAGETABLEFLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, DXGK_PAGETABLEUPDATEADDRESS
from wddmsim.ddi.pte import pte_array

U = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE


def test_the_signature_is_the_fields() -> None:
    params = list(inspect.signature(U.__init__).parameters.values())[1:]
    fields = dataclasses.fields(U)
    assert [p.name for p in params] == [f.name for f in fields]
    assert all(p.kind == inspect.Parameter.KEYWORD_ONLY for p in params)
    for p, f in zip(params, fields, strict=True):
        expected = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        assert p.default is expected, p.name


def test_every_field_is_set_and_the_payload_stays_frozen() -> None:
    entries = pte_array(3)
    flags = DXGK_UPDATEPAGETABLEFLAGS(Repeat=True)
    payload = U(
        PageTableLevel=1,
        PageTableAddress=DXGK_PAGETABLEUPDATEADDRESS(GpuVirtual=0x5000),
        pPageTableEntries=entries,
        StartIndex=7,
        NumPageTableEntries=3,
        Flags=flags,
        DriverProtection=9,
        UpdateMode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL,
    )
    values = {f.name: getattr(payload, f.name) for f in dataclasses.fields(U)}
    assert values["PageTableAddress"].GpuVirtual == 0x5000
    assert values["pPageTableEntries"] is entries
    assert (values["StartIndex"], values["NumPageTableEntries"], values["DriverProtection"]) == (7, 3, 9)
    assert values["Flags"] is flags
    assert (values["Reserved0"], values["hProcess"], values["pPageTableEntries64KB"]) == (0, 0, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        payload.StartIndex = 8  # type: ignore[misc]
    moved = dataclasses.replace(payload, StartIndex=8)
    assert (moved.StartIndex, payload.StartIndex, moved.pPageTableEntries is entries) == (8, 7, True)
    with pytest.raises(TypeError):
        U(PageTableLevel=0)  # type: ignore[call-arg]
    assert np.array_equal(moved.pPageTableEntries, entries)
