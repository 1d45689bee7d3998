"""Workload runs: every built-in scenario verifies every byte, the same seed gives the same event log, and a
wrong expectation is reported, not hidden."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import TILE
from wddmsim.scenarios.model import GpuCopy, GpuFill, Model, Ref, Tile, TileState, Unreachable
from wddmsim.scenarios.patterns import fill_bytes, pattern
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.traffic import event_digest
from wddmsim.testing.tlb import TlbWatch, check_tlb
from wddmsim.vidmm.events import (
    AdapterPowerState,
    CpuLockEvent,
    PageTablesEvicted,
    VidMmEvict,
    VidMmMakeResident,
    VidMmPageIn,
)

SMALL = {"workload.frames": 4, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}


def test_the_default_run_verifies_and_shows_the_whole_path() -> None:
    result = run_scenario(catalog.load("default"))
    assert result.verified, [c for c in result.checks if not c.ok]
    events = result.adapter.events
    causes = {e.cause for e in events.of_type(VidMmEvict)}
    assert {"evict", "pressure"} <= causes, causes
    assert {e.how for e in events.of_type(VidMmPageIn)} >= {"fill", "transfer", "map"}, "zero-fill, page back, aperture"
    assert {e.action for e in events.of_type(CpuLockEvent)} >= {"lock2", "unlock"}
    assert any(e.result == "E_PENDING" for e in events.of_type(VidMmMakeResident))
    traffic = result.traffic
    assert traffic["BytesPagedIn"] > 0 and traffic["BytesPagedOut"] > 0
    assert result.summary()["workload"]["bytes"] > result.config.adapter.vram, "oversubscribed"


def test_under_the_ladder_pressure_demotes_needed_victims_to_the_aperture() -> None:
    """The former default placement (D7's ladder) evicts in local memory before it takes free aperture room, so its
    pressure meets victims a residency list still needs and demotes them; ``free-first`` (decision 0165) fills the
    aperture first and evicts fewer."""
    default = run_scenario(catalog.load("default"))
    ladder = run_scenario(catalog.load("default", {"adapter.placement": "ladder", "adapter.policy": "priority-lru"}))
    assert ladder.verified and default.verified
    evicted = ladder.adapter.events.of_type(VidMmEvict)
    assert any(e.destination == "aperture" and e.cause == "pressure" for e in evicted), "pressure demoted"
    pressure = [
        len([e for e in r.adapter.events.of_type(VidMmEvict) if e.cause == "pressure"]) for r in (default, ladder)
    ]
    assert 0 < pressure[0] < pressure[1], pressure


@pytest.mark.parametrize("model", ["wddm1", "wddm2"])
def test_a_run_with_paging_buffers_in_the_aperture_verifies_and_fetches_every_buffer_through_it(model: str) -> None:
    """``PagingBufferSegmentId`` = the aperture segment: the same workload, every paging buffer submitted at its
    aperture address (decision 0044), every byte verified."""
    changes = {**SMALL, "adapter.driver_model": model, "adapter.paging_buffer_segment": "aperture"}
    result = run_scenario(catalog.load("default", changes))
    assert result.verified, [c for c in result.checks if not c.ok]
    vidmm = result.adapter.vidmm
    assert vidmm.paging_home is not None
    assert {b.segment_id for b in vidmm.pool.buffers} == {vidmm.paging_home.space.id}
    assert result.adapter.events.of_type(VidMmPageIn), "the workload paged"


@pytest.mark.parametrize(
    ("power", "kept", "moved"),
    [("hibernate", "none", True), ("hybrid_sleep", "standby", True), ("standby", "standby", False)],
)
def test_a_run_that_sleeps_halfway_verifies_every_byte(power: str, kept: str, moved: bool) -> None:
    """``workload.power``: the system goes through a power transition before frame frames/2 (decision 0045); the
    workload's bytes survive it, and VidMm moved out exactly when the GPU's memory does not keep them."""
    changes = {**SMALL, "workload.frames": 4, "workload.power": power, "adapter.vram_kept": kept}
    result = run_scenario(catalog.load("default", changes))
    assert result.verified, [c for c in result.checks if not c.ok]
    events = result.adapter.events
    states = [(e.state, e.kind) for e in events.of_type(AdapterPowerState)]
    assert states == [("D3", power), ("D0", power)]
    assert any(e.cause == "power" for e in events.of_type(VidMmEvict)) == moved
    assert any(isinstance(e, PageTablesEvicted) for e in events) == moved, "the processes' trees left too"


@pytest.mark.parametrize(
    ("name", "changes"),
    [("default", SMALL), ("stress", {"workload.frames": 3})],
    ids=["default", "stress"],
)
def test_no_work_runs_with_a_stale_translation_and_no_range_is_left_under_running_work(
    name: str, changes: dict[str, object]
) -> None:
    """Reliability-plan I4 over a whole workload: every process DMA buffer and every move is checked as it
    happens (:class:`~wddmsim.testing.tlb.TlbWatch`), and nothing stale is cached at the end."""
    watches: list[TlbWatch] = []
    result = run_scenario(catalog.load(name, changes), on_adapter=lambda adapter: watches.append(TlbWatch(adapter)))
    (watch,) = watches
    assert result.verified
    result.adapter.vidmm.scheduler.wait_idle()
    assert watch.checked_buffers > 0 and watch.checked_moves > 0
    assert watch.problems == [] and check_tlb(result.adapter) == []


def test_the_same_scenario_and_seed_give_the_same_event_log() -> None:
    config = catalog.load("default", SMALL)
    first, second = run_scenario(config), run_scenario(config)
    assert event_digest(first.adapter.events) == event_digest(second.adapter.events)
    other = run_scenario(config.with_changes({"seed": config.seed + 1}))
    assert event_digest(other.adapter.events) != event_digest(first.adapter.events)


@pytest.mark.parametrize("name", ["uploads", "tiles"])
def test_built_in_scenarios_verify(name: str) -> None:
    result = run_scenario(catalog.load(name))
    assert result.verified, [c for c in result.checks if not c.ok]


@pytest.mark.slow
def test_the_stress_scenario_verifies_under_constant_pressure() -> None:
    result = run_scenario(catalog.load("stress"))
    assert result.verified, [c for c in result.checks if not c.ok]
    assert result.traffic["Evictions.pressure"] > result.traffic.get("Evictions.evict", 0)


@pytest.mark.parametrize(
    "changes",
    [
        {"adapter.driver_model": "wddm1"},
        {"adapter.policy": "random", "workload.access": "streaming"},
        {"adapter.policy": "fifo", "workload.access": "sequential", "adapter.paging_buffer": "8KiB"},
        {
            "adapter.page_table_levels": [9, 10, 10],
            "adapter.dual_pte": False,
            "workload.tiles": 8,
            "workload.tile_pool": 4,
        },
        {"workload.persistent_locks": 3, "workload.cpu_visible": 0.6, "workload.sizes.distribution": "fixed"},
    ],
    ids=["wddm1", "random-streaming", "fifo-small-paging-buffers", "three-level-tables-tiles", "held-locks"],
)
def test_variations_verify(changes: dict[str, object]) -> None:
    result = run_scenario(catalog.load("default", {**SMALL, **changes}))
    assert result.verified, [c for c in result.checks if not c.ok]


def test_a_wrong_expectation_fails_the_run_and_names_the_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    from wddmsim.scenarios import timeline_run as runner
    from wddmsim.scenarios.app import App
    from wddmsim.scenarios.result import Check
    from wddmsim.scenarios.verify import verify

    def corrupted(app: App) -> list[Check]:
        if app.index == 1:
            wrong = app.model.bytes["p1.r2"][100:101].copy()  # one byte of one expectation, written the model's way
            wrong ^= 0x5A
            app.model.write("p1.r2", 100, wrong)
        return verify(app)

    monkeypatch.setattr(runner, "verify", corrupted)
    result = run_scenario(catalog.load("default", SMALL))
    assert not result.verified
    failed = [c for c in result.checks if not c.ok]
    assert len(failed) == 2, failed  # the allocation, and process 1's verdict
    assert "p1.r2" in failed[0].step and "1 byte(s) differ, first at offset 0x64" in failed[0].detail
    assert result.summary()["verified"] is False


def test_progress_reports_every_step() -> None:
    seen: list[tuple[int, int]] = []
    run_scenario(catalog.load("default", SMALL), progress=lambda done, total, _: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == 2 * (4 + 2)
    assert [d for d, _ in seen] == list(range(1, len(seen) + 1))


# --- the reference model -------------------------------------------------------------------------------------


def test_the_model_resolves_tiles_zero_and_aliases() -> None:
    m = Model()
    m.create("pool", 2 * TILE)
    m.create("buf", TILE)
    m.create_tiled("t", 4)
    m.set_tile("t", 0, Tile(TileState.MAPPED, "pool", TILE))
    m.set_tile("t", 1, Tile(TileState.MAPPED, "pool", TILE))  # aliases tile 0
    m.set_tile("t", 2, Tile(TileState.ZERO))
    m.apply(GpuFill(Ref("t", TILE - 8), 16, 0x11223344))  # across tiles 0 and 1: the same pool bytes
    assert list(m.bytes["pool"][TILE : TILE + 8]) == list(fill_bytes(0x11223344, 16)[8:])
    assert list(m.bytes["pool"][2 * TILE - 8 :]) == list(fill_bytes(0x11223344, 8))
    assert m.overlap(Ref("t", 0), Ref("t", TILE), 16), "two tiles on one pool tile alias"
    m.apply(GpuFill(Ref("t", 2 * TILE), 64, 0xFFFFFFFF))  # a Zero tile drops writes
    m.write("buf", 0, pattern(1, 64))
    m.apply(GpuCopy(Ref("t", 2 * TILE), Ref("buf", 0), 32))  # and reads zero
    assert not m.bytes["buf"][:32].any() and np.array_equal(m.bytes["buf"][32:64], pattern(1, 64)[32:])
    with pytest.raises(Unreachable, match="NoAccess"):
        m.read(Ref("t", 3 * TILE), 4)
    with pytest.raises(Unreachable, match="leaves the view"):
        m.read(Ref("buf", TILE - 2), 4)


def test_patterns_are_the_pcg64_raw_stream() -> None:
    assert pattern(5, 12).tobytes() == np.random.PCG64(5).random_raw(2).astype("<u8").tobytes()[:12]
    assert fill_bytes(0x04030201, 6, phase=1).tolist() == [2, 3, 4, 1, 2, 3]
