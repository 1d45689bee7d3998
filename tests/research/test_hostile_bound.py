"""Hostile review of the research metrics (issue 22): reference strings a user can build, and a run whose policy
leaves a used allocation out of memory.  Each test here is a defect found by review, now fixed (decision 0163)."""

from __future__ import annotations

import pytest

from wddmsim.core.units import GiB, MiB
from wddmsim.ddi.status import HRESULT
from wddmsim.hw.gpu import GpuConfig
from wddmsim.research.bound import lower_bound
from wddmsim.research.reference import ReferenceString
from wddmsim.research.rig import LoopRig
from wddmsim.scenarios.reproduce import BELADY_STRING
from wddmsim.testing.fakes import RanksNobody, VetoEveryVictim
from wddmsim.vidmm.policy.interface import BaseEviction


def test_highs_equals_greedy_when_a_million_units_are_refetched() -> None:
    # Object 0 (3 000 001 bytes) spans a use of object 1 (1 000 001 bytes): 1 000 001 of its units cannot stay.
    refs = ReferenceString.of([(0, 3_000_001), (1, 1_000_001), (0, 3_000_001)], 3_000_001)
    greedy = lower_bound(refs, solver="greedy")
    assert greedy.bytes == 4_000_002 + 1_000_001  # compulsory + the part of object 0 that cannot stay
    assert lower_bound(refs, solver="highs").bytes == greedy.bytes


def test_huge_sizes_never_give_a_negative_bound() -> None:
    sizes = [2**62 + 1, 2**62 + 2, 2**62 + 3]
    refs = ReferenceString.of(list(enumerate(sizes)), 2**62 + 5)
    try:
        bound = lower_bound(refs)
    except ValueError:
        return  # refusing sizes the bound cannot count is an answer too
    assert bound.bytes >= refs.compulsory_bytes == sum(sizes)


def test_a_capacity_past_int64_is_answered_or_refused_by_name() -> None:
    refs = ReferenceString.of([(0, 4096), (1, 4097), (0, 4096)], 2**64)  # coprime sizes: the unit is one byte
    try:
        answer: int | str = lower_bound(refs).bytes
    except ValueError as error:
        answer = str(error)
    assert answer == 4096 + 4097 or (isinstance(answer, str) and "capacity" in answer)


@pytest.mark.parametrize("policy", [VetoEveryVictim, RanksNobody], ids=["veto", "empty-order"])
def test_the_bound_of_a_run_never_exceeds_what_it_paged_in(policy: type[BaseEviction]) -> None:
    # Five 6 MiB buffers over 16 MiB of local memory and an 8 MiB aperture: some are never placed, as the policy
    # gives no victim; their uses are left out of the string (no schedule paged them in).
    rig = LoopRig(GpuConfig(local_size=16 * MiB, bar_size=8 * MiB, aperture_size=8 * MiB, system_size=GiB), policy())
    buffers = [rig.buffer(6 * MiB) for _ in range(5)]
    for r in BELADY_STRING:
        refused = rig.make_resident([buffers[r - 1]]) == HRESULT.E_OUTOFMEMORY
        rig.recorder.close()
        if not refused:  # a refused MakeResident holds nothing to evict
            rig.evict_lazily([buffers[r - 1]])
    rig.finish()
    refs = rig.reference_string()
    unplaced = [int(a.handle) for a in buffers if a.placement is None]
    assert unplaced, "the rig must leave a buffer out for this test to mean anything"
    assert not set(unplaced) & set(refs.handles)
    assert refs.compulsory_bytes == 6 * MiB * (5 - len(unplaced))
    assert lower_bound(refs).bytes <= rig.paged_in()
