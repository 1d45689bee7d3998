"""``DxgkDdiRender`` of the driver kit (decision 0095), on both driver packages: a refused command buffer changes
no argument -- not ``pDmaBuffer``, not ``MultipassOffset``, not the patch-location list out -- even when the
refusal comes after the last packet was copied (a patch location that points at no address word)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGKARG_CREATEALLOCATION
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARG_CREATECONTEXT
from wddmsim.ddi.power import DEVICE_POWER_STATE, DISPLAY_ADAPTER_HW_ID, POWER_ACTION
from wddmsim.ddi.render import D3DDDI_PATCHLOCATIONLIST, DXGK_ALLOCATIONLIST, DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.ddi.submit import DXGKARG_RESETENGINE, DXGKARG_SUBMITCOMMAND
from wddmsim.drivers import DriverModel, DriverSettings, driver_package
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.drivers.simple import SimpleDriver
from wddmsim.hw import commands as cmd
from wddmsim.kmd.driver import ReferenceDriver
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
    mdl, mapping = adapter.mm.allocate_contiguous(PAGE_SIZE)
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
        DmaBufferPhysicalAddress=int(mdl.pfns[0]) * PAGE_SIZE,
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


# --- DxgkDdiPatch's privilege ends with the buffer's context, a reset, and a power loss ---------------------------


def _patched_buffer(adapter: Adapter, hContext: HANDLE) -> DXGKARG_SUBMITCOMMAND:
    """A COPY rendered and patched in ``hContext`` (its words name GPU physical memory), and its submission."""
    args = _render_args(adapter, [(0, cmd.COPY_SRC_WORD), (1, cmd.COPY_DST_WORD)])
    assert adapter.driver.render(hContext, args) == NTSTATUS.STATUS_SUCCESS
    address = args.DmaBufferPhysicalAddress
    slots = [DXGK_ALLOCATIONLIST(SegmentId=1, PhysicalAddress=PAGE_SIZE * i) for i in range(2)]
    adapter.driver.patch(
        hContext,
        DXGKARG_PATCH(
            DmaBufferPhysicalAddress=address,
            pDmaBuffer=args.pDmaBuffer,
            DmaBufferSize=args.MultipassOffset,
            pAllocationList=slots,
            pPatchLocationList=list(args.pPatchLocationListOut),
            PatchLocationListSubmissionLength=2,
        ),
    )
    return DXGKARG_SUBMITCOMMAND(
        hContext=hContext,
        DmaBufferPhysicalAddress=address,
        DmaBufferSize=PAGE_SIZE,
        DmaBufferSubmissionStartOffset=0,
        DmaBufferSubmissionEndOffset=args.MultipassOffset,
        SubmissionFenceId=1,
    )


def _runs_privileged(adapter: Adapter, submit: DXGKARG_SUBMITCOMMAND, engine: int) -> bool:
    """Submit, run the GPU: a buffer naming physical memory runs only if privileged (else the engine faults)."""
    assert adapter.driver.submit_command(submit) == NTSTATUS.STATUS_SUCCESS
    adapter.clock.run_all()
    fault = adapter.gpu.engines[engine].fault
    adapter.driver.reset_engine(DXGKARG_RESETENGINE(NodeOrdinal=engine, EngineOrdinal=0))
    return fault is None


def _reset(adapter: Adapter, _context: HANDLE) -> None:
    adapter.driver.reset_from_timeout()
    adapter.driver.restart_from_timeout()


def _power_loss(adapter: Adapter, _context: HANDLE) -> None:
    d3, d0 = DEVICE_POWER_STATE.PowerDeviceD3, DEVICE_POWER_STATE.PowerDeviceD0
    adapter.driver.set_power_state(DISPLAY_ADAPTER_HW_ID, d3, POWER_ACTION.PowerActionHibernate)
    adapter.driver.set_power_state(DISPLAY_ADAPTER_HW_ID, d0, POWER_ACTION.PowerActionNone)


@pytest.mark.parametrize("name", ["reference", "simple"])
@pytest.mark.parametrize("event", [_reset, _power_loss], ids=["ResetFromTimeout", "power loss"])
def test_a_patched_buffer_the_gpu_never_ran_is_not_privileged_after_the_gpu_forgot_it(
    name: str, event: Callable[[Adapter, HANDLE], None]
) -> None:
    adapter = _adapter(name)
    engine = len(adapter.gpu.engines) - 1
    context = DXGKARG_CREATECONTEXT(NodeOrdinal=engine)
    adapter.driver.create_context(context)
    assert _runs_privileged(adapter, _patched_buffer(adapter, context.hContext), engine), "patched, then submitted"
    stale = _patched_buffer(adapter, context.hContext)
    event(adapter, context.hContext)
    with campaign.case(SURFACE) as box:
        assert not _runs_privileged(adapter, stale, engine), "the patch outlived what the GPU forgot"
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize("name", ["reference", "simple"])
def test_a_destroyed_context_takes_its_patched_buffers_with_it(name: str) -> None:
    adapter = _adapter(name)
    context = DXGKARG_CREATECONTEXT(NodeOrdinal=len(adapter.gpu.engines) - 1)
    adapter.driver.create_context(context)
    for _ in range(3):
        _patched_buffer(adapter, context.hContext)
    adapter.driver.destroy_context(context.hContext)
    driver = adapter.driver
    assert isinstance(driver, ReferenceDriver | SimpleDriver)
    assert len(driver.patched) == 0, "patched buffers of a destroyed context were kept"
