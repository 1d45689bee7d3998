"""``UpdateGpuVirtualAddress`` checks every operation type (table-driven).

``update_checks.check_operation`` matches the payload exhaustively (``assert_never``: mypy names a payload type added
without a case); here, at run time: every ``D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE`` selects one union
member, and every union member is selected by one operation type.
"""

from __future__ import annotations

from typing import get_args

import pytest

from wddmsim.ddi.va import D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE as UpdateType
from wddmsim.ddi.va import UpdateOperationPayload
from wddmsim.vidmm.vaspace.update_checks import PAYLOADS


@pytest.mark.parametrize("operation", list(UpdateType), ids=lambda op: op.name)
def test_every_operation_type_selects_its_union_member(operation: UpdateType) -> None:
    payload = PAYLOADS[operation]
    assert payload.__name__ == operation.name  # D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP selects ..._MAP, and so on


def test_every_union_member_is_selected_by_one_operation_type() -> None:
    assert sorted(PAYLOADS) == sorted(UpdateType)
    assert sorted(t.__name__ for t in PAYLOADS.values()) == sorted(t.__name__ for t in get_args(UpdateOperationPayload))
