"""``resize_paging_buffers`` in the middle of a build is refused (the driver is writing a buffer of the pool in use,
``DxgkDdiBuildPagingBuffer``'s ``pDmaBuffer``/``MultipassOffset`` belong to it) and changes nothing."""

from __future__ import annotations

import numpy as np

from wddmsim.core.units import PAGE_SIZE, KiB
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.scenarios.rig import PagingRig
from wddmsim.testing import campaign, fakes
from wddmsim.testing.campaign import Outcome

LOCAL = 2


class ResizingDriver(fakes.DelegatingDriver):
    """Asks VidMm to resize its paging buffers from inside a BuildPagingBuffer call (what it answered is kept)."""

    def __init__(self, inner: KernelModeDriver) -> None:
        super().__init__(inner)
        self.resize: object = None
        self.refusals: list[InvalidArgument] = []

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if callable(self.resize):
            try:
                self.resize()
            except InvalidArgument as error:
                self.refusals.append(error)
        return self.inner.build_paging_buffer(args)


def test_a_resize_during_a_build_is_refused_and_the_transfer_completes() -> None:
    drivers: list[ResizingDriver] = []

    def wrap(driver: KernelModeDriver) -> KernelModeDriver:
        drivers.append(ResizingDriver(driver))
        return drivers[0]

    rig = PagingRig(wrap_driver=wrap)
    rig.vidmm.resize_paging_buffers(512)  # several passes: the resize is tried at each
    pool = rig.vidmm.pool
    drivers[0].resize = lambda: rig.vidmm.resize_paging_buffers(64 * KiB)
    data = rig.pattern(16 * PAGE_SIZE, seed=3)
    mdl = rig.backing(16 * PAGE_SIZE, scatter_seed=5)
    rig.write_mdl(mdl, data)
    transfer = DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=16 * PAGE_SIZE,
        Source=Loc.mdl(mdl),
        Destination=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
    )
    with campaign.case("vidmm.resize_paging_buffers") as box:
        rig.execute(transfer)
        refusals = drivers[0].refusals
        assert refusals, "refused from inside the build"
        assert all(r.argument == "size" and r.value == 64 * KiB for r in refusals)
        assert "while an operation is being built" in str(refusals[0])
        assert rig.vidmm.pool is pool, "the pool in use stayed"
        box.append(Outcome.REFUSED)
    drivers[0].resize = None
    assert np.array_equal(rig.read_segment(LOCAL, 0, 16 * PAGE_SIZE), data)
    rig.vidmm.resize_paging_buffers(64 * KiB)  # once the build is over, the resize goes through
    assert rig.vidmm.pool is not pool and rig.vidmm.pool.size == 64 * KiB
