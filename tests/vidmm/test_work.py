"""Work through VAs: processes' DMA buffers run on the compute engine through their own page tables; the
residency list gates them; allocations are pinned while work is in flight; a fault removes only the faulting
device and resets only its engine."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.residency import D3DDDI_TRIMRESIDENCYSET_FLAGS, D3DDDIARG_TRIMRESIDENCYSET
from wddmsim.ddi.status import HRESULT, DdiError
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device

from .world import World, pattern


def va(address: int) -> int:
    return hw_address(Space.GPU_VA, address)


class Proc:
    """A process with a device, a paging queue, a compute context and mapped allocations."""

    def __init__(self, w: World, device: Device | None = None) -> None:
        self.w = w
        self.device = device or w.rm.create_device(w.rm.create_process())
        self.queue = w.new_queue(self.device)
        self.context = w.vidmm.create_context(self.device)
        assert w.vidmm.va is not None
        self.space = w.vidmm.va.create_space(self.device.process)

    def buffer(self, size: int, *, write: bool = True) -> tuple[VidMmAllocation, int]:
        a = self.w.buffer(size, device=self.device)
        self.w.make_resident(a, queue=self.queue)
        assert self.w.vidmm.va is not None
        mapped = self.w.vidmm.va.mappings.map(self.space, a, write=write).va
        self.w.settle()  # the UMD waits for the mapping's paging fence before any work uses the VA
        return a, mapped

    def run(self, *packets: cmd.Packet) -> int:
        fence = self.w.vidmm.work.submit(self.context, b"".join(cmd.encode(p) for p in packets))
        self.w.vidmm.work.wait(self.context, fence)
        return fence


def test_a_copy_and_a_fill_run_through_the_process_page_tables() -> None:
    w = World()
    p = Proc(w, w.device)
    src, src_va = p.buffer(64 * KiB)
    dst, dst_va = p.buffer(64 * KiB)
    w.write(src, pattern(src.size, 1))
    p.run(cmd.Copy(va(src_va), va(dst_va), 32 * KiB), cmd.Fill(va(dst_va + 32 * KiB), 32 * KiB, 0x01020304))
    got = w.read(dst)
    assert np.array_equal(got[: 32 * KiB], pattern(src.size, 1)[: 32 * KiB])
    assert np.array_equal(got[32 * KiB :].view("<u4"), np.full(8 * 1024, 0x01020304, dtype=np.uint32))


def test_work_runs_only_once_the_residency_list_is_back() -> None:
    w = World()
    a = Proc(w)
    data, data_va = a.buffer(2 * MiB)
    out, out_va = a.buffer(64 * KiB)
    w.write(data, pattern(data.size, 2))
    b = Proc(w)
    hog = w.buffer(w.vidmm.spaces.get(2).size - 2 * MiB, device=b.device)
    w.make_resident(hog, queue=b.queue)  # pressure: a's allocations leave local memory
    a.run(cmd.Copy(va(data_va + 1 * MiB), va(out_va), 64 * KiB))
    assert np.array_equal(w.read(out), pattern(data.size, 2)[1 * MiB : 1 * MiB + 64 * KiB])
    w.check()


def test_an_allocation_with_work_in_flight_moves_only_after_the_work_completes() -> None:
    w = World()
    a = Proc(w)
    src, src_va = a.buffer(1 * MiB)
    dst, dst_va = a.buffer(1 * MiB)
    w.write(src, pattern(src.size, 3))
    fence = w.vidmm.work.submit(a.context, cmd.encode(cmd.Copy(va(src_va), va(dst_va), 1 * MiB)))
    b = Proc(w)
    hog = w.buffer(w.vidmm.spaces.get(2).size - 1 * MiB, device=b.device)
    w.make_resident(hog, queue=b.queue)  # needs a's ranges: VidMm waits for a's copy before moving them
    w.vidmm.work.wait(a.context, fence)
    w.rm.servicing.ensure_resident(a.device)
    assert np.array_equal(w.read(dst), pattern(src.size, 3)), "the copy read and wrote the bytes where they were"


def test_a_fault_removes_the_faulting_device_only_and_other_work_still_runs() -> None:
    w = World()
    bad = Proc(w)
    good = Proc(w)
    _, ro_va = bad.buffer(64 * KiB, write=False)
    src, src_va = good.buffer(64 * KiB)
    dst, dst_va = good.buffer(64 * KiB)
    w.write(src, pattern(src.size, 4))
    faulting = w.vidmm.work.submit(bad.context, cmd.encode(cmd.Fill(va(ro_va), 4096, 7)))
    innocent = w.vidmm.work.submit(good.context, cmd.encode(cmd.Copy(va(src_va), va(dst_va), 64 * KiB)))
    with pytest.raises(
        DdiError, match=r"was removed: GPU fault in its work: DXGK_GENERAL_ERROR_PAGE_FAULT at VA"
    ) as error:
        w.vidmm.work.wait(bad.context, faulting)
    assert error.value.status == HRESULT.D3DDDIERR_DEVICEREMOVED
    w.vidmm.work.wait(good.context, innocent)
    assert np.array_equal(w.read(dst), pattern(src.size, 4)), "the other process's work ran after the engine reset"
    assert w.vidmm.reset.count == 0, "no adapter reset"
    assert good.device.removed is None and bad.device.removed is not None
    with pytest.raises(DdiError, match="was removed"):
        w.vidmm.work.submit(bad.context, cmd.encode(cmd.Nop()))
    fresh = w.buffer(64 * KiB, device=good.device)
    w.make_resident(fresh, queue=good.queue)  # the paging engine never stopped
    w.check()


def test_a_va_of_another_process_is_not_reachable_from_a_context() -> None:
    w = World()
    owner, thief = Proc(w), Proc(w)
    secret, secret_va = owner.buffer(64 * KiB)
    w.write(secret, np.full(secret.size, 0x5A, dtype=np.uint8))
    loot, loot_va = thief.buffer(64 * KiB)
    fence = w.vidmm.work.submit(thief.context, cmd.encode(cmd.Copy(va(secret_va), va(loot_va), 4096)))
    if secret_va == loot_va:  # the same VA in two spaces: it maps the thief's own pages
        w.vidmm.work.wait(thief.context, fence)
        assert not (w.read(loot) == 0x5A).any()
        return
    with pytest.raises(DdiError, match="was removed"):
        w.vidmm.work.wait(thief.context, fence)
    assert not (w.read(loot) == 0x5A).any()


def test_bad_submissions_are_refused() -> None:
    w = World()
    p = Proc(w, w.device)
    from wddmsim.ddi.base import HANDLE
    from wddmsim.ddi.status import InvalidArgument

    with pytest.raises(InvalidArgument, match="DmaBufferSize=0x7: must be a positive multiple of 16"):
        w.vidmm.work.submit(p.context, b"\0" * 7)
    with pytest.raises(InvalidArgument, match="hContext=0x99: is not a live context"):
        w.vidmm.work.submit(HANDLE(0x99), cmd.encode(cmd.Nop()))


def test_a_user_buffer_cannot_name_physical_memory_or_flush_a_tlb() -> None:
    w = World()
    owner, thief = Proc(w), Proc(w)
    secret, _ = owner.buffer(64 * KiB)
    w.write(secret, np.full(secret.size, 0x5A, dtype=np.uint8))
    assert secret.placement is not None
    physical = w.vidmm.spaces.get(secret.placement.segment_id).base + secret.placement.offset
    loot, loot_va = thief.buffer(64 * KiB)
    attacks: list[cmd.Packet] = [
        cmd.Copy(hw_address(Space.GPU_PHYS, physical), va(loot_va), 4096),
        cmd.Fill(hw_address(Space.GPU_PHYS, physical), 4096, 0),
        cmd.Copy(hw_address(Space.SYSTEM, 0), va(loot_va), 4096),
        cmd.TlbInvalidate(hw_address(Space.GPU_PHYS, physical), 0, 0),
    ]
    for packet in attacks:
        victim = Proc(w)  # each attack costs its device
        fence = w.vidmm.work.submit(victim.context, cmd.encode(packet))
        with pytest.raises(
            DdiError, match="was removed: GPU fault in its work: DXGK_GENERAL_ERROR_INVALID_INSTRUCTION"
        ):
            w.vidmm.work.wait(victim.context, fence)
    assert (w.read(secret) == 0x5A).all(), "nothing written"
    assert not (w.read(loot) == 0x5A).any(), "nothing read"
    assert w.vidmm.reset.count == 0


@pytest.mark.parametrize("seed", range(4))
def test_bit_flipped_user_buffers_stay_inside_their_own_va_space(seed: int) -> None:
    """Reliability plan 5.3: every mutation of a user DMA buffer runs inside the submitter's VAs or faults."""
    w = World()
    owner = Proc(w)
    secret, _ = owner.buffer(256 * KiB)
    w.write(secret, np.full(secret.size, 0x5A, dtype=np.uint8))
    rng = np.random.default_rng(seed)
    for trial in range(40):
        attacker = Proc(w)
        src, src_va = attacker.buffer(64 * KiB)
        dst, dst_va = attacker.buffer(64 * KiB)
        data = bytearray(
            cmd.encode(cmd.Copy(va(src_va), va(dst_va), 4096)) + cmd.encode(cmd.Fill(va(dst_va + 8192), 4096, 1))
        )
        for _ in range(int(rng.integers(1, 4))):
            bit = int(rng.integers(0, len(data) * 8))
            data[bit // 8] ^= 1 << (bit % 8)
        fence = w.vidmm.work.submit(attacker.context, bytes(data))
        try:
            w.vidmm.work.wait(attacker.context, fence)
        except DdiError as error:
            if error.status != HRESULT.D3DDDIERR_DEVICEREMOVED:
                raise
        assert (w.read(secret) == 0x5A).all(), f"trial {trial}: another process's bytes changed"
        for a in (src, dst):
            if a.placement is not None:
                assert not (w.read(a) == 0x5A).any(), f"trial {trial}: another process's bytes leaked"
        for a in (src, dst):
            w.evict(a)
        w.rm.trim_residency_set(attacker.device, _trim_all())
    assert w.vidmm.reset.count == 0
    w.check()


def _trim_all() -> D3DDDIARG_TRIMRESIDENCYSET:
    return D3DDDIARG_TRIMRESIDENCYSET(
        TrimFlags=D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True), NumBytesToTrim=1 << 40
    )
