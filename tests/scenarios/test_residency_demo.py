"""The residency demo: a multi-process frame loop over more than local memory, every byte verified."""

from __future__ import annotations

from wddmsim.core.events import Event
from wddmsim.hw.events import DmaBufferCompleted
from wddmsim.scenarios.demos import SCENARIOS, run_scenario
from wddmsim.scenarios.residency import run_residency_demo
from wddmsim.system import Adapter
from wddmsim.vidmm.events import SegmentRange, VidMmEvict, VidMmPageIn


def test_the_demo_oversubscribes_local_memory_and_verifies_every_byte() -> None:
    adapter, result = run_residency_demo(seed=0)
    assert result.verified, [c for c in result.checks if not c.ok]
    evictions = adapter.events.of_type(VidMmEvict)
    assert any(e.cause == "pressure" and e.destination == "aperture" for e in evictions), "a needed victim demoted"
    assert any(e.cause == "pressure" and e.destination == "system" for e in evictions)
    assert any(e.cause == "evict" for e in evictions)
    hows = {e.how for e in adapter.events.of_type(VidMmPageIn)}
    assert {"fill", "transfer", "map"} <= hows
    assert len(result.checks) == 5


def test_a_corrupted_byte_fails_the_verification() -> None:
    """The check can fail: flip one byte of a resident buffer behind VidMm's back, between two frames' work."""
    placed: dict[tuple[int, int], SegmentRange] = {}
    done: list[int] = []

    def sabotage(adapter: Adapter) -> None:
        def listener(event: Event) -> None:
            if isinstance(event, SegmentRange) and event.owner == "allocation":
                if event.action == "allocate":
                    placed[(event.segment, event.offset)] = event
                else:
                    placed.pop((event.segment, event.offset), None)
            if isinstance(event, DmaBufferCompleted) and event.engine == 1:
                done.append(event.fence)
                if len(done) == 3:  # the third frame's work of a process is complete: all its bytes are in place
                    local = [r for r in placed.values() if not adapter.vidmm.spaces.get(r.segment).aperture]
                    victim = max(local, key=lambda r: (r.size, r.offset))  # a buffer, not a context image
                    base = adapter.vidmm.spaces.get(victim.segment).base
                    adapter.gpu.local.data[base + victim.offset + victim.size - 1] ^= 0xFF

        adapter.events.subscribe(listener)

    _, result = run_residency_demo(seed=0, on_adapter=sabotage)
    assert len(done) > 3
    assert not result.verified
    assert sum(not c.ok for c in result.checks) == 1


def test_the_built_in_scenarios_by_name() -> None:
    assert set(SCENARIOS) == {"tour", "residency"}
    run = run_scenario("tour", seed=3)
    assert run.verified and run.scenario == "tour" and run.seed == 3
