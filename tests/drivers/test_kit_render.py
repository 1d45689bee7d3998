"""``DxgkDdiRender`` of the driver kit (decision 0095), on both driver packages: a refused command buffer changes
no argument -- not ``pDmaBuffer``, not ``MultipassOffset``, not the patch-location list out -- even when the
refusal comes after the last packet was copied (a patch location that points at no address word)."""

from __future__ import annotations

import pytest

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGKARG_CREATEALLOCATION
from wddmsim.ddi.context import DXGKARG_CREATECONTEXT
from wddmsim.ddi.render import D3DDDI_PATCHLOCATIONLIST, DXGK_ALLOCATIONLIST, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.drivers import DriverModel, DriverSettings, driver_package
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw import commands as cmd
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .bench import GPU

SURFACE = "driver kit: DxgkDdiRender"


def _adapter(name: str) -> Adapter:
    package = driver_package(name)
    config = package.configure(DriverSettings(model=DriverModel.WDDM1))
    return build_adapter(SystemConfig(gpu=GPU, driver_package=name, driver=config))


def _render_args(adapter: Adapter, patches: list[tuple[int, int]]) -> DXGKARG_RENDER:
    """A COPY between two fresh buffers of the adapter's driver, with ``(slot, PatchOffset)`` patch locations."""
    data = adapter.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=PAGE_SIZE))
    infos = [DXGK_ALLOCATIONINFO(pPrivateDriverData=data, PrivateDriverDataSize=len(data)) for _ in range(2)]
    adapter.driver.create_allocation(DXGKARG_CREATEALLOCATION(NumAllocations=2, pAllocationInfo=infos))
    command = cmd.encode(cmd.Copy(0, 0, 256))
    _, mapping = adapter.mm.allocate_contiguous(PAGE_SIZE)
    slots = [
        DXGK_ALLOCATIONLIST(hDeviceSpecificAllocation=info.hAllocation, WriteOperation=True, SegmentId=0)
        for info in infos
    ]
    listed = tuple(D3DDDI_PATCHLOCATIONLIST(AllocationIndex=s, PatchOffset=at) for s, at in patches)
    return DXGKARG_RENDER(
        pCommand=command,
        CommandLength=len(command),
        pDmaBuffer=mapping.pointer(0),
        DmaSize=PAGE_SIZE,
        pAllocationList=slots,
        AllocationListSize=2,
        pPatchLocationListIn=listed,
        PatchLocationListInSize=len(listed),
    )


@pytest.mark.parametrize("name", ["reference", "simple"])
def test_a_stray_patch_location_is_refused_and_leaves_every_argument_as_it_was(name: str) -> None:
    adapter = _adapter(name)
    context = DXGKARG_CREATECONTEXT(NodeOrdinal=len(adapter.gpu.engines) - 1)
    adapter.driver.create_context(context)
    stray = _render_args(adapter, [(0, cmd.COPY_SRC_WORD), (1, cmd.COPY_DST_WORD), (1, 32)])
    start = stray.pDmaBuffer
    with campaign.case(SURFACE) as box:
        with pytest.raises(DdiError, match="does not point at an address word") as refused:
            adapter.driver.render(context.hContext, stray)
        assert refused.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
        assert (stray.pDmaBuffer, stray.MultipassOffset, stray.pPatchLocationListOut) == (start, 0, [])
        box.append(Outcome.REFUSED)
    whole = _render_args(adapter, [(0, cmd.COPY_SRC_WORD), (1, cmd.COPY_DST_WORD)])
    assert adapter.driver.render(context.hContext, whole) == NTSTATUS.STATUS_SUCCESS
    assert whole.MultipassOffset == whole.CommandLength and len(whole.pPatchLocationListOut) == 2
    campaign.record(SURFACE, Outcome.ACCEPTED)
