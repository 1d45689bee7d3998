"""Per-process accounting kept incrementally (decision 0175): each number moves at its transition, each change is
an event, ``CurrentUsage`` reads it, and the invariant checker catches a counter that drifts."""

from __future__ import annotations

from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP, D3DKMT_QUERYVIDEOMEMORYINFO
from wddmsim.testing.residency import check_accounts, check_residency, recount
from wddmsim.vidmm.accounting import Figures
from wddmsim.vidmm.events import (
    AdapterAllocation,
    VidMmProcessCommitmentChange,
    VidMmProcessDemotedCommitmentChange,
    VidMmProcessUsageChange,
)

from .world import KiB, MiB, World

LOCAL = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL


def _usage(w: World) -> int:
    info = D3DKMT_QUERYVIDEOMEMORYINFO(hProcess=w.process.handle, MemorySegmentGroup=LOCAL)
    w.rm.query_video_memory_info(info)
    return int(info.CurrentUsage)


def test_each_transition_moves_the_figures_and_says_so_in_the_log() -> None:
    w = World()
    pid = int(w.process.handle)
    a, b = w.buffer(256 * KiB), w.buffer(512 * KiB)
    assert w.process.account.figures(LOCAL) == Figures(0, 768 * KiB, 0, 0, 0)
    created = [e for e in w.adapter.events.of_type(AdapterAllocation) if e.allocation in (a.handle, b.handle)]
    assert [(e.process, e.group, e.action) for e in created] == [(pid, 0, "create")] * 2
    w.make_resident(a)
    w.make_resident(a)  # a second reference: listed already, no change
    w.make_resident(b)
    assert w.process.account.figures(LOCAL) == Figures(768 * KiB, 768 * KiB, 768 * KiB, 0, 0)
    assert _usage(w) == 768 * KiB
    w.evict(a)
    assert _usage(w) == 768 * KiB, "one reference of two dropped: still listed"
    w.evict(a)
    assert _usage(w) == 512 * KiB
    assert w.process.account.figures(LOCAL).evicted == 256 * KiB, "listed no more: paged out to system memory"
    w.rm.lifetimes.destroy_allocation(b.handle)
    assert w.process.account.figures(LOCAL) == Figures(0, 256 * KiB, 0, 0, 0), "a destroyed listed one unlists"
    usage = [e.bytes for e in w.adapter.events.of_type(VidMmProcessUsageChange) if e.process == pid]
    assert usage == [256 * KiB, 768 * KiB, 512 * KiB, 0]
    commitment = [e.bytes for e in w.adapter.events.of_type(VidMmProcessCommitmentChange) if e.process == pid]
    assert commitment == [256 * KiB, 768 * KiB, 256 * KiB]
    assert not check_residency(w.adapter)


def test_local_bytes_in_the_aperture_count_as_demoted() -> None:
    w = World()
    first = [w.buffer(1 * MiB) for _ in range(7)]
    for a in first:
        w.make_resident(a)
    before = w.process.account.figures(LOCAL)
    assert before == Figures(7 * MiB, 7 * MiB, 6 * MiB, 1 * MiB, 1 * MiB), "local memory full: one in the aperture"
    other = w.rm.create_device(w.rm.create_process())
    w.make_resident(w.buffer(3 * MiB + 64 * KiB, device=other), queue=w.new_queue(other))
    figures = w.process.account.figures(LOCAL)
    assert figures.aperture == figures.demoted == 4 * MiB, "three more victims still listed went to the aperture"
    assert figures.resident == 2 * MiB and figures.evicted == 1 * MiB, "and one to system memory"
    demoted = [e.bytes for e in w.adapter.events.of_type(VidMmProcessDemotedCommitmentChange)]
    assert demoted == [1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB]
    assert w.process.account.figures(LOCAL) == recount(w.adapter, w.process, LOCAL)
    w.check()


def test_the_checker_names_a_counter_that_drifted() -> None:
    w = World()
    a = w.buffer(256 * KiB)
    w.make_resident(a)
    assert check_accounts(w.adapter) == []
    w.process.account.resident[LOCAL] += 4096  # what a missed transition would leave
    problems = check_residency(w.adapter)
    assert (
        len(problems) == 1 and f"process {int(w.process.handle):#x} D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL" in (problems[0])
    )
    assert "resident=266240" in problems[0] and "resident=262144" in problems[0]
