"""``opt`` against the online policies and the lower bound, as properties over random runs (decisions 0161, 0162).

* On random recorded scenario runs (seed, processes, frames, oversubscription, sizes), every policy, ``opt``
  included, pages in at least the lower bound of its own reference string.
* In the class where the clairvoyant schedule is optimal -- equal sizes, one segment that holds exactly k
  allocations, one allocation per request (the reproduction's rig, decision 0148) -- ``opt`` through the whole
  VidMm path pages in exactly the bound, and no online policy pages in less.
* Outside that class ``opt`` is a feasible schedule, not the optimum: a run that leaves its future still runs.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.core.units import KiB, MiB
from wddmsim.research.bound import lower_bound
from wddmsim.research.reference import ReferenceString
from wddmsim.research.runs import observed_run, paged_in_bytes, record_future
from wddmsim.scenarios import catalog
from wddmsim.scenarios.reproduce import ALLOCATION_SIZE, run_string
from wddmsim.vidmm.policy import Belady, UseRecorder, registry

ONLINE = [name for name in registry.EVICTION if not registry.offline(name)]
EVERY = [*ONLINE, "opt"]


@st.composite
def scenario_runs(draw: st.DrawFn) -> dict[str, object]:
    """The settings of a small random workload shaped like the default scenario (a few processes and frames,
    256 KiB to 4 MiB allocations over 32 or 64 MiB of local memory) and one of the policies, ``opt`` included."""
    low = draw(st.sampled_from([256 * KiB, 512 * KiB]))
    return {
        "seed": draw(st.integers(0, 2**16)),
        "adapter.vram": draw(st.sampled_from([32 * MiB, 64 * MiB])),
        "adapter.policy": draw(st.sampled_from(EVERY)),
        "workload.processes": draw(st.integers(1, 2)),
        "workload.frames": draw(st.integers(1, 3)),
        "workload.oversubscription": draw(st.sampled_from([1.1, 1.25, 1.5, 2.0])),
        "workload.sizes.min": low,
        "workload.sizes.max": low * draw(st.sampled_from([1, 4, 8])),
    }


def _no_policy_pages_in_less_than_the_bound(overrides: dict[str, object]) -> None:
    # A workload too big for its memory (MakeResident refused) is a run too: its unmet uses are not in its string.
    result, refs, clairvoyance = observed_run(catalog.load(None, overrides))
    assert paged_in_bytes(result.adapter.events) >= lower_bound(refs).bytes >= refs.compulsory_bytes > 0
    assert (clairvoyance is not None) == (overrides["adapter.policy"] == "opt")


@settings(max_examples=6)
@given(scenario_runs())
def test_every_policy_pages_in_at_least_the_bound_on_random_runs(overrides: dict[str, object]) -> None:
    _no_policy_pages_in_less_than_the_bound(overrides)


@pytest.mark.slow
@settings(max_examples=60)
@given(scenario_runs())
def test_every_policy_pages_in_at_least_the_bound_on_many_random_runs(overrides: dict[str, object]) -> None:
    _no_policy_pages_in_less_than_the_bound(overrides)


strings = st.tuples(st.lists(st.integers(1, 6), min_size=1, max_size=24), st.integers(1, 4))


def _opt_is_exact_and_below_every_online_policy(case: tuple[list[int], int]) -> None:
    references, k = case
    uses: list[int] = []
    faults = {"lru": run_string(references, k, UseRecorder(registry.eviction_policy("lru"), uses)).faults}
    for name in ONLINE:
        faults.setdefault(name, run_string(references, k, registry.eviction_policy(name)).faults)
    opt = Belady(uses)
    faults["opt"] = run_string(references, k, opt).faults
    assert opt.diverged == 0
    bound = lower_bound(ReferenceString.of(((r, ALLOCATION_SIZE) for r in references), k * ALLOCATION_SIZE))
    assert faults["opt"] * ALLOCATION_SIZE == bound.bytes  # equal sizes: MIN is optimal and the bound is exact
    assert all(faults["opt"] <= n for n in faults.values()), faults


@settings(max_examples=20)
@given(strings)
def test_opt_pages_in_no_more_than_any_online_policy_with_equal_sizes_in_one_segment(
    case: tuple[list[int], int],
) -> None:
    _opt_is_exact_and_below_every_online_policy(case)


@pytest.mark.slow
@settings(max_examples=300)
@given(strings)
def test_opt_is_optimal_with_equal_sizes_in_one_segment_on_many_strings(case: tuple[list[int], int]) -> None:
    _opt_is_exact_and_below_every_online_policy(case)


def test_a_run_that_leaves_its_future_is_still_a_feasible_schedule() -> None:
    """``opt`` given a future that is not this run's (reversed): it keeps its cursor, counts every use that did
    not match, and the run completes, verified, paging in at least the bound of the uses it really made."""
    config = catalog.load(None, {"workload.frames": 2, "workload.processes": 1, "adapter.policy": "opt"})
    future = record_future(config)
    kept, _, told = observed_run(config)
    assert told is not None and told.diverged == 0 and told.future_uses == len(future)
    result, refs, clairvoyance = observed_run(config, future=future[::-1])
    assert result.verified
    assert clairvoyance is not None and clairvoyance.future_uses == len(future)
    assert 0 < clairvoyance.diverged <= len(refs)
    assert paged_in_bytes(result.adapter.events) >= lower_bound(refs).bytes
    assert paged_in_bytes(kept.adapter.events) >= lower_bound(refs).bytes
