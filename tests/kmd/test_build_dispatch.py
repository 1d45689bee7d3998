"""``DxgkDdiBuildPagingBuffer`` dispatches every operation (table-driven).

``kmd.driver.builder`` is a match over every ``DXGK_BUILDPAGINGBUFFER_OPERATION`` ending in ``assert_never``
(mypy names an operation added without a case); here, at run time: every modelled operation (0-17) has a builder
and one payload type, and the operations only named (18-25) have none (the driver refuses them with
``STATUS_NOT_SUPPORTED``: test_operations.py::test_operations_18_to_25_are_named_but_refused).
"""

from __future__ import annotations

from typing import get_args

import pytest

from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_UNMODELLED, MODELLED_OPERATIONS, Op, PagingPayload
from wddmsim.kmd.driver import BUILDERS, builder

PAYLOAD_TYPES = [t for t in get_args(PagingPayload) if t is not DXGK_BUILDPAGINGBUFFER_UNMODELLED]


@pytest.mark.parametrize("operation", list(Op), ids=lambda op: op.name)
def test_every_operation_has_a_builder_exactly_when_it_is_modelled(operation: Op) -> None:
    found = builder(operation)
    if operation in MODELLED_OPERATIONS:
        assert found is not None
        assert BUILDERS[operation] is found
    else:
        assert found is None
        assert operation not in BUILDERS


def test_every_modelled_operation_has_one_payload_type() -> None:
    operations = [t.OPERATION for t in PAYLOAD_TYPES]
    assert sorted(operations) == sorted(MODELLED_OPERATIONS)
    assert set(BUILDERS) == set(MODELLED_OPERATIONS)


def test_dispatch_by_payload_type_finds_the_builder_of_the_payloads_operation() -> None:
    """The driver looks a builder up by the payload's class first (decision 0203): the same builder as by
    ``Operation``, for every modelled payload type and no other."""
    from wddmsim.kmd.driver import BUILDERS_BY_PAYLOAD

    assert {kind: BUILDERS[kind.OPERATION] for kind in PAYLOAD_TYPES} == BUILDERS_BY_PAYLOAD
    assert DXGK_BUILDPAGINGBUFFER_UNMODELLED not in BUILDERS_BY_PAYLOAD
