"""pfnRenderCb in the segment model: allocation lists drive residency, DxgkDdiRender validates, DxgkDdiPatch writes
the physical addresses; locked allocations and rendering (CANTRENDERLOCKEDALLOCATION); the two-allocation pattern
of seed 004 for surfaces swizzled in an aperture segment yet read by the CPU."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCKFLAGS
from wddmsim.ddi.render import D3DDDI_ALLOCATIONLIST, D3DDDI_PATCHLOCATIONLIST, D3DDDICB_RENDER
from wddmsim.ddi.status import HRESULT, DdiError
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.swizzle import tile, untile
from wddmsim.kmd.allocations import AllocationDesc, AllocationUsage, ResourceKind
from wddmsim.kmd.config import DriverModel
from wddmsim.testing.residency import gpu_view
from wddmsim.vidmm.events import VidMmEvict

from .desk import APERTURE_ONLY, CPU, SWIZZLED, Desk, KiB, pattern


@dataclass
class Commands:
    """A command buffer of the reference user-mode driver: packets with their references as patch locations."""

    slots: list[D3DDDI_ALLOCATIONLIST] = field(default_factory=list)
    data: bytearray = field(default_factory=bytearray)
    patches: list[D3DDDI_PATCHLOCATIONLIST] = field(default_factory=list)

    def slot(self, handle: HANDLE, *, write: bool) -> int:
        for i, s in enumerate(self.slots):
            if s.hAllocation == handle:
                if write and not s.WriteOperation:
                    self.slots[i] = D3DDDI_ALLOCATIONLIST(hAllocation=handle, WriteOperation=True)
                return i
        self.slots.append(D3DDDI_ALLOCATIONLIST(hAllocation=handle, WriteOperation=write))
        return len(self.slots) - 1

    def _ref(self, at: int, handle: HANDLE, offset: int, *, write: bool) -> None:
        self.patches.append(
            D3DDDI_PATCHLOCATIONLIST(
                AllocationIndex=self.slot(handle, write=write), AllocationOffset=offset, PatchOffset=at
            )
        )

    def fill(self, dst: HANDLE, offset: int, size: int, value: int) -> Commands:
        at = len(self.data)
        self.data += cmd.encode(cmd.Fill(0, size, value))
        self._ref(at + 8, dst, offset, write=True)
        return self

    def copy(
        self, src: HANDLE, dst: HANDLE, size: int, *, src_offset: int = 0, dst_offset: int = 0, untile_pitch: int = 0
    ) -> Commands:
        at = len(self.data)
        transform = cmd.Transform.UNTILE if untile_pitch else cmd.Transform.NONE
        self.data += cmd.encode(cmd.Copy(0, 0, size, transform=transform, pitch=untile_pitch))
        self._ref(at + 8, src, src_offset, write=False)
        self._ref(at + 16, dst, dst_offset, write=True)
        return self

    def raw(self, packet: cmd.Packet) -> Commands:
        self.data += cmd.encode(packet)
        return self

    def args(self, context: HANDLE) -> D3DDDICB_RENDER:
        return D3DDDICB_RENDER(
            hContext=context,
            pCommandBuffer=bytes(self.data),
            CommandLength=len(self.data),
            NumAllocations=len(self.slots),
            pAllocationList=tuple(self.slots),
            NumPatchLocations=len(self.patches),
            pPatchLocationList=tuple(self.patches),
        )


class Renderer:
    def __init__(self) -> None:
        self.desk = Desk(model=DriverModel.WDDM1)
        self.context = self.desk.device.create_context()

    def run(self, commands: Commands, *, wait: bool = True) -> int:
        args = commands.args(self.context)
        assert self.desk.device.render(args) == HRESULT.S_OK
        if wait:
            self.desk.device.wait_for_context(self.context, args.SubmissionFenceId)
        return args.SubmissionFenceId

    def refused(self, commands: Commands, status: HRESULT, word: str) -> None:
        with pytest.raises(DdiError) as caught:
            self.desk.device.render(commands.args(self.context))
        assert caught.value.status == status, caught.value
        assert word in str(caught.value), str(caught.value)


@pytest.mark.any_driver
def test_render_makes_the_listed_allocations_resident_and_patches_their_addresses() -> None:
    r = Renderer()
    desk = r.desk
    a, b = desk.buffer(64 * KiB, usage=0), desk.buffer(64 * KiB, usage=0)
    assert desk.where(a) == 0, "nothing resident before the submission"
    r.run(Commands().fill(a, 0, 64 * KiB, 0x11223344).copy(a, b, 32 * KiB, dst_offset=16 * KiB))
    assert desk.where(a) and desk.where(b), "the allocation list made them resident"
    words = desk.gpu_bytes(b).view("<u4")
    assert (words[: 4 * 1024] == 0).all() and (words[4 * 1024 : 12 * 1024] == 0x11223344).all()
    assert (words[12 * 1024 :] == 0).all()
    desk.check()


@pytest.mark.any_driver
def test_render_evicts_what_the_submission_does_not_reference() -> None:
    r = Renderer()
    desk = r.desk
    size = (desk.vidmm.spaces.get(2).size // 2 - 256 * KiB) // (64 * KiB) * (64 * KiB)  # two fit, three do not
    first, second, third = (desk.buffer(size, usage=AllocationUsage.NO_APERTURE) for _ in range(3))
    r.run(Commands().fill(first, 0, 4096, 1))
    r.run(Commands().fill(second, 0, 4096, 2))
    r.run(Commands().fill(third, 0, 4096, 3))
    assert desk.where(third)
    evictions = [e for e in desk.adapter.events if isinstance(e, VidMmEvict)]
    assert evictions and evictions[-1].cause == "pressure"
    r.run(Commands().copy(first, third, 4096, dst_offset=8192))
    assert gpu_view(desk.adapter, desk.a(third), 8192, 4).view("<u4")[0] == 1, "paged back with its content"
    desk.check()


BAD = [
    (
        lambda h: Commands().raw(cmd.Fill(hw_address(Space.GPU_PHYS, 0), 4096, 0)),
        HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION,
        "no patch location",
    ),
    (
        lambda h: Commands().fill(h, 0, 4096, 0).raw(cmd.TlbInvalidate(0, 0, 0)),
        HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION,
        "kernel only",
    ),
    (
        lambda h: Commands().fill(h, 0, 4096, 0).raw(cmd.Signal(0, 1)),
        HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION,
        "kernel only",
    ),
    (lambda h: Commands().fill(h, 60 * KiB, 8 * KiB, 0), HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION, "leave the"),
    (lambda h: Commands().fill(h, -4096, 4096, 0), HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION, "leave the"),
]


@pytest.mark.any_driver
@pytest.mark.parametrize(("build", "status", "word"), BAD)
def test_dxgkddirender_refuses_what_user_mode_may_not_do(build: object, status: HRESULT, word: str) -> None:
    r = Renderer()
    h = r.desk.buffer(64 * KiB, usage=0)
    assert callable(build)
    before = r.desk.vidmm.work.in_flight[:]
    r.refused(build(h), status, word)
    assert r.desk.vidmm.work.in_flight == before, "nothing was submitted"


@pytest.mark.any_driver
def test_dxgkddirender_refuses_bad_packets_slots_and_lists() -> None:
    r = Renderer()
    h = r.desk.buffer(64 * KiB, usage=0)
    bad_opcode = Commands().fill(h, 0, 4096, 0)
    bad_opcode.data += bytes([0x7F, 0, 0, 0, 16, 0, 0, 0]) + bytes(8)
    r.refused(bad_opcode, HRESULT.D3DDDIERR_INVALIDINSTRUCTION, "opcode")
    truncated = Commands().fill(h, 0, 4096, 0)
    truncated.data[4:8] = (48).to_bytes(4, "little")  # the FILL claims 48 bytes; only 32 follow
    truncated.data += bytes(0)
    r.refused(truncated, HRESULT.D3DDDIERR_INVALIDUSERBUFFER, "past the buffer")
    wrong_slot = Commands().fill(h, 0, 4096, 0)
    wrong_slot.patches[0] = D3DDDI_PATCHLOCATIONLIST(AllocationIndex=5, PatchOffset=8)
    r.refused(wrong_slot, HRESULT.D3DDDIERR_INVALIDHANDLE, "slot 5")
    read_only = Commands().fill(h, 0, 4096, 0)
    read_only.slots[0] = D3DDDI_ALLOCATIONLIST(hAllocation=h, WriteOperation=False)
    r.refused(read_only, HRESULT.D3DDDIERR_INVALIDINSTRUCTION, "WriteOperation")
    stray = Commands().fill(h, 0, 4096, 0)
    stray.patches.append(D3DDDI_PATCHLOCATIONLIST(AllocationIndex=0, PatchOffset=16))
    r.refused(stray, HRESULT.D3DDDIERR_INVALIDINSTRUCTION, "address word")
    pages = Commands().raw(cmd.Copy(0, 0, 4096, dst_pages=True, extents=np.array([cmd.extent(5, 1)], dtype=np.uint64)))
    r.refused(pages, HRESULT.D3DDDIERR_PRIVILEGEDINSTRUCTION, "system pages")


@pytest.mark.any_driver
def test_another_process_allocation_cannot_be_listed() -> None:
    r = Renderer()
    _, device, _ = r.desk.other()
    foreign = r.desk.buffer(64 * KiB, usage=0, device=device)
    with pytest.raises(DdiError, match="not an allocation handle of this process"):
        r.desk.device.render(Commands().fill(foreign, 0, 4096, 0).args(r.context))


def test_pfnrendercb_is_the_segment_model() -> None:
    desk = Desk()
    context = desk.device.create_context()
    h = desk.buffer(64 * KiB, usage=0)
    with pytest.raises(DdiError, match=r"WDDM 1\.x model"):
        desk.device.render(Commands().fill(h, 0, 4096, 0).args(context))


# --- lock and render (wddm-spec 4.5) ------------------------------------------------------------------------


@pytest.mark.any_driver
def test_a_locked_allocation_in_local_memory_is_moved_to_the_aperture_before_it_is_rendered_from() -> None:
    r = Renderer()
    desk = r.desk
    h = desk.buffer(64 * KiB)
    out = desk.buffer(64 * KiB, usage=0)
    desk.resident(h)
    assert desk.where(h) == desk.cpu_segment
    lock = desk.lock(h)
    data = pattern(64 * KiB, 1)
    desk.cpu_write(lock.pData, data)
    r.run(Commands().copy(h, out, 64 * KiB))
    assert desk.where(h) == desk.aperture_segment, "evicted to system memory and mapped through the aperture"
    assert np.array_equal(desk.gpu_bytes(out), data), "the GPU read what the CPU wrote"
    assert np.array_equal(desk.cpu_read(lock.pData, 64 * KiB), data), "the lock still shows the same bytes"
    desk.cpu_write(lock.pData, data[::-1].copy())
    assert np.array_equal(desk.gpu_bytes(h), data[::-1])
    desk.unlock(h)
    desk.check()


@pytest.mark.any_driver
def test_a_locked_allocation_that_cannot_go_to_an_aperture_cannot_be_rendered() -> None:
    r = Renderer()
    desk = r.desk
    h = desk.buffer(64 * KiB, usage=CPU | AllocationUsage.NO_APERTURE)
    desk.resident(h)
    desk.lock(h)
    r.refused(Commands().fill(h, 0, 4096, 0), HRESULT.D3DDDIERR_CANTRENDERLOCKEDALLOCATION, "locked")
    assert desk.where(h) == desk.cpu_segment, "nothing moved"
    desk.unlock(h)
    r.run(Commands().fill(h, 0, 4096, 7))


@pytest.mark.any_driver
def test_a_lock_waits_for_rendering_and_donotwait_says_wasstilldrawing() -> None:
    r = Renderer()
    desk = r.desk
    h = desk.buffer(256 * KiB)
    r.run(Commands().fill(h, 0, 256 * KiB, 0x5A5A5A5A), wait=False)
    busy = D3DDDICB_LOCK(hAllocation=h, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, DonotWait=True))
    assert desk.device.lock(busy) == HRESULT.D3DERR_WASSTILLDRAWING
    lock = desk.lock(h)
    assert (desk.cpu_read(lock.pData, 256 * KiB).view("<u4") == 0x5A5A5A5A).all(), "the lock waited for the fill"
    desk.unlock(h)


# --- the two-allocation pattern (seed 004 rule 9) ------------------------------------------------------------


def test_two_allocation_pattern_unswizzle_copy_then_lock_the_linear_allocation() -> None:
    r = Renderer()
    desk = r.desk
    width, height = 512, 128
    descs = [
        AllocationDesc(ResourceKind.SURFACE, usage=SWIZZLED | APERTURE_ONLY, width_bytes=width, height=height),
        AllocationDesc(ResourceKind.SURFACE, usage=CPU | APERTURE_ONLY, width_bytes=width, height=height),
    ]
    infos = [D3DDDI_ALLOCATIONINFO(pPrivateDriverData=d.encode(), PrivateDriverDataSize=len(d.encode())) for d in descs]
    assert desk.device.allocate(D3DDDICB_ALLOCATE(NumAllocations=2, pAllocationInfo=infos)) == HRESULT.S_OK
    swizzled, linear = infos[0].hAllocation, infos[1].hAllocation
    size = width * height
    image = pattern(size, 2)
    # The GPU renders the image into the swizzled surface, in the aperture (its bits are system pages, tiled).
    desk.resident(swizzled)
    assert desk.where(swizzled) == desk.aperture_segment
    gpu_view(desk.adapter, desk.a(swizzled), 0, size, write=tile(image, width))
    desk.a(swizzled).content = type(desk.a(swizzled).content).DATA
    # (1) the UMD submits the unswizzle copy; (2) locks the linear allocation without DonotWait ...
    fence = r.run(Commands().copy(swizzled, linear, size, untile_pitch=width), wait=False)
    assert not desk.vidmm.scheduler.is_complete(1, fence), "the copy has not run yet"
    lock = desk.lock(linear)
    # (3) the lock waited for the unswizzle; (4) pData is the linear allocation's address.
    assert desk.vidmm.scheduler.is_complete(1, fence)
    assert np.array_equal(desk.cpu_read(lock.pData, size), image)
    assert np.array_equal(untile(desk.gpu_bytes(swizzled)[:size], width), image)
    desk.unlock(linear)
    desk.check()


@pytest.mark.any_driver
def test_allocation_busy_waits_only_for_the_work_that_references_the_allocation() -> None:
    from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGKARG_BUILDPAGINGBUFFER
    from wddmsim.ddi.status import NTSTATUS
    from wddmsim.testing.fakes import DelegatingDriver

    busy_for: list[int] = []

    class BusyOnce(DelegatingDriver):
        def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
            p = args.payload
            if (
                isinstance(p, DXGK_BUILDPAGINGBUFFER_TRANSFER)
                and p.hAllocation in busy_for
                and not p.Flags.AllocationIsIdle
            ):
                busy_for.remove(p.hAllocation)
                return NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
            return super().build_into_buffer(args)

    desk = Desk(model=DriverModel.WDDM1, wrap=BusyOnce)
    context = desk.device.create_context()
    _, other, _ = desk.other()
    other_context = other.create_context()
    x = desk.buffer(64 * KiB, usage=0)
    y = desk.buffer(1024 * KiB, usage=0, device=other)
    first = Commands().fill(x, 0, 64 * KiB, 1).args(context)
    desk.device.render(first)
    desk.device.wait_for_context(context, first.SubmissionFenceId)
    long_work = Commands()
    for i in range(200):  # ~200 us of fills on the compute engine; the transfer out of x takes a few
        long_work.fill(y, 0, 1024 * KiB, i)
    second = long_work.args(other_context)
    other.render(second)  # in flight, references y only
    node = desk.vidmm.work.nodes[other_context]
    busy_for.append(x)
    desk.vidmm.residency.servicing.evict_for_cpu(desk.a(x), discard=False)  # a Transfer out of x: BUSY, then idle retry
    assert not busy_for, "the driver answered BUSY once"
    assert not desk.vidmm.scheduler.is_complete(node, second.SubmissionFenceId), "work on y was not waited for"
    other.wait_for_context(other_context, second.SubmissionFenceId)
