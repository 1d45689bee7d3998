"""Classic results through the whole VidMm path (decision 0148): the counts are VidMm's own -- its event log and
the notifications it gives the policy agree --, the dedicated segment holds exactly k allocations and nothing else,
a configuration that lets anything else into the count is refused, and a published number is compared as stated."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.package import DriverModel
from wddmsim.scenarios import reproduce as classic
from wddmsim.scenarios.reproduce import BELADY_STRING, DEDICATED, Counts, Options, Row, reproduce, run_string
from wddmsim.scenarios.traffic import traffic
from wddmsim.system import Adapter
from wddmsim.testing.residency import check_residency
from wddmsim.vidmm.events import PagingBufferSubmitted, PagingOperation, VidMmEvict, VidMmPageIn
from wddmsim.vidmm.policy import EVICTION, BaseEviction, Fifo, Ladder, registry
from wddmsim.vidmm.policy.interface import MoveCause, Range, VidMmAllocation


class Told(BaseEviction):
    """FIFO's ranking; counts what VidMm tells the policy (a path to the counts other than the event log)."""

    name = "told"

    def __init__(self) -> None:
        self.placed_in: list[int] = []
        self.pressure = 0

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return Fifo().order(candidates)

    def placed(self, a: VidMmAllocation, where: Range) -> None:
        self.placed_in.append(where.segment_id)

    def evicted(self, a: VidMmAllocation, where: Range, cause: MoveCause) -> None:
        self.pressure += cause == MoveCause.PRESSURE


@pytest.mark.parametrize("model", [DriverModel.WDDM1, DriverModel.WDDM2])
def test_the_faults_are_vidmms_page_ins_and_every_one_past_k_evicted_one_allocation(model: DriverModel) -> None:
    """FIFO over three frames: 9 faults, as Belady counted them, in the event log, in VidMm's notifications to the
    policy and in the replay's traffic counters alike; 6 pressure evictions (9 - 3); paging buffers built and
    executed for them; the residency invariants hold."""
    told = Told()
    seen: list[Adapter] = []

    def inspect(adapter: Adapter) -> None:
        problems = check_residency(adapter)
        assert not problems, problems
        seen.append(adapter)

    counts = run_string(BELADY_STRING, 3, told, model=model, inspect=inspect)
    assert counts == Counts(references=12, faults=9, first_touches=5, evictions=6)
    events = seen[0].events
    page_ins = events.of_type(VidMmPageIn)
    assert len(page_ins) == 9 and {e.segment for e in page_ins} == {DEDICATED}
    assert [e.how for e in page_ins].count("fill") == 5  # first touches are zero fills; the rest come back
    evictions = [e for e in events.of_type(VidMmEvict) if e.cause == "pressure"]
    assert len(evictions) == 6 and {e.destination for e in evictions} == {"system"}
    assert told.placed_in == [DEDICATED] * 9 and told.pressure == 6
    counters = traffic(events)
    assert counters["PageIns"] == 9 and counters["Evictions.pressure"] == 6
    assert counters["BytesPagedIn"] == 4 * classic.ALLOCATION_SIZE  # the 4 faults that were not first touches
    assert counters["BytesPagedOut"] == 6 * classic.ALLOCATION_SIZE
    assert events.of_type(PagingOperation)
    assert events.of_type(PagingBufferSubmitted)


def test_the_dedicated_segment_is_sized_to_exactly_k_allocations() -> None:
    """k + 1 distinct allocations: the (k+1)-th makes the first eviction, never earlier."""
    for k in (1, 3, 7):
        assert run_string(range(1, k + 1), k, Fifo()).evictions == 0
        assert run_string(range(1, k + 2), k, Fifo()).evictions == 1


def test_a_configuration_that_counts_anything_else_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """With VidMm's default ladder the allocations spill into the CPU-visible segment once segment 2 is full:
    those faults are not the dedicated segment's, and the run says so instead of reporting a number."""
    monkeypatch.setattr(classic, "DedicatedSegment", Ladder)
    with pytest.raises(classic.ReproductionError, match=r"page-in of allocation 0x[0-9a-f]+ into segment 1"):
        run_string(BELADY_STRING, 3, Fifo())


@pytest.mark.parametrize("model", [DriverModel.WDDM1, DriverModel.WDDM2])
def test_beladys_anomaly_is_reproduced_in_both_driver_models(model: DriverModel) -> None:
    rep = reproduce("belady-anomaly", Options(others=(), model=model))
    assert rep.matched, rep.mismatches
    ours = {(r.case, r.policy): r.ours for r in rep.rows}
    assert ours == {
        ("3", "fifo"): 9,
        ("3", "lru"): 10,
        ("3", "opt"): 7,
        ("4", "fifo"): 10,
        ("4", "lru"): 8,
        ("4", "opt"): 6,
    }


def test_every_registered_online_policy_is_printed_beside_the_published_ones() -> None:
    """Policies added to the registry appear without a change here; offline ones other than MIN do not."""
    rep = reproduce("belady-anomaly")
    online = [n for n, e in EVICTION.items() if e.factory is not None]
    assert {r.policy for r in rep.rows} == {*online, "opt"}
    assert all(r.published is None for r in rep.rows if r.policy not in classic.PUBLISHED_POLICIES)


def test_a_row_is_compared_as_published() -> None:
    counts = Counts(1, 1, 1, 0)
    assert Row("3", "", "fifo", 9, 9, counts).matched
    assert not Row("3", "", "fifo", 10, 9, counts).matched
    assert Row("3", "", "random", 10, None, counts).matched is None
    # MIN's finite run may lie under the asymptote by its tolerance, never over it
    assert Row("2", "", "opt", 0.5, 0.5025, counts, below=0.01).matched
    assert not Row("2", "", "opt", 0.49, 0.5025, counts, below=0.01).matched
    assert not Row("2", "", "opt", 0.51, 0.5025, counts, below=0.01).matched


def test_bad_options_are_refused_naming_the_option_before_anything_runs() -> None:
    cases: list[tuple[str, Options, str, str]] = [
        ("nosuch", Options(), "NAME", "known reproductions"),
        ("lru-cliff", Options(loops=1), "--loops", "must lie between 2"),
        ("lru-cliff", Options(loops=1001), "--loops", "and 1000"),
        ("belady-anomaly", Options(others=("nosuch",)), "--policy", "known policies"),
        ("belady-anomaly", Options(others=("min",)), "--policy", "~"),  # opt (alias min) always runs: not an error
        ("belady-anomaly", Options(others=("opt",)), "--policy", "~"),
        ("belady-anomaly", Options(expect={("fifo", "5"): 9}), "--expect", "names no row"),
        ("belady-anomaly", Options(others=(), expect={("random", "3"): 9}), "--expect", "names no row"),
    ]
    for name, options, setting, rule in cases:
        if rule == "~":
            assert reproduce(name, options).matched
            continue
        with pytest.raises(ConfigurationError) as error:
            reproduce(name, options)
        assert error.value.setting == setting and rule in error.value.rule, error.value
    assert registry.offline("min") and registry.offline("opt")


def _min_faults(references: Sequence[int], k: int) -> int:
    """Belady's MIN on a reference string, by hand (the check of the tolerance rule below, not of our counts)."""
    following: list[int] = []
    seen: dict[int, int] = {}
    for t in range(len(references) - 1, -1, -1):
        following.append(seen.get(references[t], 1 << 60))
        seen[references[t]] = t
    following.reverse()
    held: dict[int, int] = {}
    faults = 0
    for t, r in enumerate(references):
        if r not in held:
            faults += 1
            if len(held) == k:
                del held[max(held, key=held.__getitem__)]
        held[r] = following[t]
    return faults


def test_mins_finite_cyclic_rate_lies_within_one_phase_under_the_asymptote() -> None:
    """The rule ``lru-cliff`` compares MIN with: over L passes, the steady-state rate lies in
    [(n-k)/(n-1) - (n-k)/((L-1)n), (n-k)/(n-1)] -- checked on every small cyclic string."""
    for k in (1, 2, 3, 5, 8):
        for n in range(k + 1, 4 * k + 2):
            for loops in range(2, 25):
                faults = _min_faults(list(range(n)) * loops, k)
                rate = (faults - n) / ((loops - 1) * n)
                asymptote = (n - k) / (n - 1)
                assert asymptote - (n - k) / ((loops - 1) * n) - 1e-12 <= rate <= asymptote + 1e-12, (k, n, loops)
