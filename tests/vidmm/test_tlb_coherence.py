"""Reliability-plan I4, TLB coherence: work never runs with a translation its page tables no longer give, nothing
stale is left once the engines are idle, and no allocation leaves its range while its device's work is in flight.

The watch (:class:`wddmsim.testing.tlb.TlbWatch`) is first shown to hold over work interleaved with moves under
pressure, then shown to catch each breach it exists for: a TLB that ignores invalidations, and a move that does
not wait for the device's work."""

from __future__ import annotations

import pytest

from wddmsim.core.units import KiB, MiB
from wddmsim.hw import commands as cmd
from wddmsim.hw.mmu import Mmu
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.testing.tlb import TlbWatch, check_tlb
from wddmsim.vidmm.allocation import VidMmAllocation

from .test_work import Proc, va
from .world import World, pattern


def _hot(w: World, p: Proc, count: int) -> list[tuple[VidMmAllocation, int]]:
    """``count`` mapped 1 MiB buffers, each touched by work (their translations are in the TLB)."""
    out = [p.buffer(1 * MiB) for _ in range(count)]
    for _, address in out:
        p.run(cmd.Fill(va(address), 4 * KiB, 0x11223344))
    return out


def _pressure(w: World, p: Proc) -> None:
    """Another process fills local memory: the first one's buffers move (demoted or evicted)."""
    other = Proc(w)
    for _ in range(8):
        other.buffer(1 * MiB)


def test_work_interleaved_with_moves_under_pressure_never_sees_a_stale_translation() -> None:
    w = World()
    watch = TlbWatch(w.adapter)
    p = Proc(w)
    hot = _hot(w, p, 4)
    _pressure(w, p)
    for a, address in hot:  # the device's list comes back before its work runs; the VAs follow the moves
        p.run(cmd.Fill(va(address), 64 * KiB, 0x55667788))
        assert bytes(w.read(a, 0, 4)) == bytes.fromhex("88776655")
    w.settle()
    assert watch.checked_buffers >= 8 and watch.checked_moves > 0
    assert watch.problems == [] and check_tlb(w.adapter) == []


def test_the_watch_catches_a_tlb_that_ignores_invalidations(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World()
    watch = TlbWatch(w.adapter)
    p = Proc(w)
    hot = _hot(w, p, 4)

    assert w.vidmm.va is not None
    address = w.vidmm.va.root_address(p.space)
    process_root = TablePointer(Target.LOCAL, w.vidmm.spaces.get(address.SegmentId).base + address.SegmentOffset)
    honoured = Mmu.invalidate

    def ignore(self: Mmu, root: TablePointer, start: int, end: int) -> int:
        """The breach: flushes of the process's address space do nothing (the paging process's still work)."""
        return 0 if root == process_root else honoured(self, root, start, end)

    monkeypatch.setattr(Mmu, "invalidate", ignore)
    _pressure(w, p)
    w.settle()
    assert check_tlb(w.adapter), "moved pages' old translations are still cached"
    p.run(cmd.Fill(va(hot[0][1]), 4 * KiB, 0))
    assert any("stale" in problem for problem in watch.problems)


def test_the_watch_catches_a_range_left_while_the_device_s_work_is_in_flight() -> None:
    w = World()
    watch = TlbWatch(w.adapter)
    p = Proc(w)
    (a, address), (b, _) = p.buffer(1 * MiB), p.buffer(1 * MiB)
    w.write(a, pattern(a.size, 1))
    # the breach: VidMm no longer waits for the device's work before moving
    w.rm.placement.observers = tuple(o for o in w.rm.placement.observers if o is not w.vidmm.work)
    fence = w.vidmm.work.submit(p.context, cmd.encode(cmd.Fill(va(address), 1 * MiB, 0)))
    w.evict(b)
    assert any("while work of its device was in flight" in problem for problem in watch.problems)
    w.vidmm.work.wait(p.context, fence)


def test_check_tlb_refuses_to_judge_busy_engines() -> None:
    w = World()
    p = Proc(w)
    _, address = p.buffer(64 * KiB)
    w.vidmm.work.submit(p.context, cmd.encode(cmd.Fill(va(address), 64 * KiB, 0)))
    assert check_tlb(w.adapter) == ["check_tlb needs idle engines; compute still have work"]
