"""User mode never allocates what only the kernel may: a context image (issue 19 defect 6).

Context images are made by ``DxgkDdiCreateContext`` through ``DxgkCbCreateContextAllocation``; a
``pfnAllocateCb`` whose private data describes one is refused by the driver's ``DxgkDdiCreateAllocation``
(``E_INVALIDARG``, the argument named) and changes nothing.  On the main of 2026-11-22 it was accepted.
"""

from __future__ import annotations

import pytest

from tests.api.desk import Desk, KiB
from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.drivers.reference import reference_driver
from wddmsim.kmd.allocations import AllocationDesc, ResourceKind
from wddmsim.kmd.config import DriverModel
from wddmsim.testing.residency import check_residency


@pytest.mark.parametrize("model", [DriverModel.WDDM1, DriverModel.WDDM2])
def test_user_mode_cannot_allocate_a_context_image(model: DriverModel) -> None:
    desk = Desk(model=model)
    before = desk.adapter.footprint()
    data = [
        AllocationDesc(ResourceKind.BUFFER, size=64 * KiB).encode(),
        AllocationDesc(ResourceKind.CONTEXT, size=16 * KiB).encode(),
    ]
    infos = [D3DDDI_ALLOCATIONINFO(pPrivateDriverData=d, PrivateDriverDataSize=len(d)) for d in data]
    with pytest.raises(InvalidArgument) as refused:
        desk.device.allocate(D3DDDICB_ALLOCATE(NumAllocations=2, pAllocationInfo=infos))
    assert refused.value.status == HRESULT.E_INVALIDARG
    assert refused.value.argument == "pAllocationInfo[1].pPrivateDriverData"
    assert "DxgkCbCreateContextAllocation" in str(refused.value)
    assert [info.hAllocation for info in infos] == [0, 0], "all or none: the buffer beside it was not made either"
    assert desk.adapter.footprint() == before
    assert not check_residency(desk.adapter)


def test_contexts_still_get_their_images_the_kernel_way() -> None:
    desk = Desk()
    before = len(reference_driver(desk.adapter.driver).state.allocations)
    context = desk.device.create_context()
    assert len(reference_driver(desk.adapter.driver).state.allocations) > before, "DxgkDdiCreateContext made its image"
    desk.device.destroy_context(context)
    assert len(reference_driver(desk.adapter.driver).state.allocations) == before
