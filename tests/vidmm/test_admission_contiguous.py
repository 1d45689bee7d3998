"""``MakeResident`` admission asks for one range, not for enough bytes (decision 0090): a request whose
allocation no segment can give a contiguous range -- even with every allocation the policy may evict gone -- is
refused at the call (``E_OUTOFMEMORY``, atomic, ``NumBytesToTrim`` the missing bytes), rather than admitted
(``E_PENDING``) and left unplaced when the paging worker services it."""

from __future__ import annotations

from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.status import HRESULT
from wddmsim.hw.gpu import GpuConfig

from .world import World

TINY_GPU = GpuConfig(local_size=4 * MiB, bar_size=1 * MiB, aperture_size=1 * MiB, system_size=256 * MiB)
"""Local: a 1 MiB CPU-visible segment and a ~3 MiB one; a 1 MiB aperture."""
LOCAL = 2


def test_a_request_with_enough_free_bytes_but_no_contiguous_range_is_refused_atomically() -> None:
    w = World(gpu=TINY_GPU)
    low, gap, high, other = w.buffer(512 * KiB), w.buffer(512 * KiB), w.buffer(1 * MiB), w.buffer(1 * MiB)
    for a in (low, gap, high, other):
        assert w.make_resident(a)[0] == HRESULT.E_PENDING
    assert [a.placement.segment_id for a in (low, gap, high) if a.placement] == [LOCAL] * 3
    w.evict(gap)  # the local segment: [low][512 KiB free][high][~960 KiB free] -- 1472 KiB free, none 1088 KiB long
    big = w.buffer(1088 * KiB)  # too big for the CPU-visible segment and the aperture; local only in two pieces
    before = {a.handle: a.residency_count for a in (low, high, big)}
    result, args = w.make_resident(low, high, big)
    assert result == HRESULT.E_OUTOFMEMORY, "no segment can give big one range: refused, not admitted"
    assert args.NumBytesToTrim == 64 * KiB and args.NumAllocations == 0 and args.PagingFenceValue == 0
    assert {a.handle: a.residency_count for a in (low, high, big)} == before, "atomic"
    assert big.placement is None
    w.check()
