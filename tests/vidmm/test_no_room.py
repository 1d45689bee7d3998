"""When VidMm cannot make room, the failure says why (decision 0158): a ``VidMmNoRoom`` event naming the request,
each candidate segment's free bytes and largest hole, and every range there with why it was not a victim; a run
that ends on it prints the paragraph and leaves its event log for ``wddmsim inspect``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.core.units import MiB
from wddmsim.ddi.status import HRESULT
from wddmsim.scenarios import catalog
from wddmsim.vidmm.events import VidMmNoRoom

from .test_policy_seam import Vetoing, _filled
from .world import World


def test_a_final_refusal_names_each_blocking_allocation_and_its_reason() -> None:
    policy = Vetoing()
    w = World(policy=policy)
    filled = _filled(w)  # six 1 MiB allocations fill local memory, none listed
    w.rm.lifetimes.pin(filled[0].handle)
    w.rm.lifetimes.pin(filled[1].handle)
    w.rm.lifetimes.pin(filled[1].handle)
    policy.vetoed |= {int(filled[2].handle), int(filled[3].handle)}
    big = w.buffer(5 * MiB)  # more than the aperture: only evictions could make room
    result, args = w.make_resident(big, filled[4], filled[5], CantTrimFurther=True)
    assert result == HRESULT.E_OUTOFMEMORY and args.NumBytesToTrim > 0
    (event,) = w.adapter.events.of_type(VidMmNoRoom)
    assert (event.allocation, event.size, event.device) == (int(big.handle), 5 * MiB, int(w.device.handle))
    assert event.operation == "MakeResident"
    why = {handle: reasons for handle, _, _, _, reasons in event.blockers if handle}
    assert why == {
        int(filled[0].handle): "pinned (1)",
        int(filled[1].handle): "pinned (2)",
        int(filled[2].handle): "vetoed by vetoing",
        int(filled[3].handle): "vetoed by vetoing",
        int(filled[4].handle): "needed by this request",
        int(filled[5].handle): "needed by this request",
    }
    assert all(size == 1 * MiB for handle, _, _, size, _ in event.blockers if handle)
    for segment, size, free, hole, run in event.segments:
        space = w.rm.placement.segments.get(segment)
        assert (size, free) == (space.size, space.ranges.free_bytes)
        assert hole <= free and run == hole, "nothing evictable: the longest run is the largest hole"
    assert f"no room for allocation {int(big.handle):#x} (5 MiB)" in event.diagnosis
    assert f"{int(filled[0].handle):#x} (1 MiB: pinned (1))" in event.diagnosis
    w.check()


def test_a_refusal_the_caller_may_still_trim_records_nothing() -> None:
    """Without CantTrimFurther the application trims and retries (the default workload does): no diagnostic."""
    w = World()
    for a in _filled(w):
        w.rm.lifetimes.pin(a.handle)
    result, _ = w.make_resident(w.buffer(5 * MiB))
    assert result == HRESULT.E_OUTOFMEMORY
    assert w.adapter.events.of_type(VidMmNoRoom) == []


def test_evictable_ranges_that_are_not_side_by_side_are_named_evictable() -> None:
    w = World()
    filled = _filled(w)
    for a in filled[::2]:
        w.rm.lifetimes.pin(a.handle)
    result, _ = w.make_resident(w.buffer(5 * MiB), CantTrimFurther=True)
    assert result == HRESULT.E_OUTOFMEMORY
    (event,) = w.adapter.events.of_type(VidMmNoRoom)
    reasons = {handle: why for handle, _, _, _, why in event.blockers if handle}
    assert [reasons[int(a.handle)] for a in filled] == ["pinned (1)", "evictable"] * 3
    assert max(run for *_, run in event.segments) < 5 * MiB


@pytest.mark.slow
def test_a_run_that_ends_for_want_of_room_says_why_and_leaves_its_log(tmp_path: Path) -> None:
    """A card too small for what a process needs before its first GPU work: the focus-loss scenario on 4 MiB (a
    1 MiB BAR, 956 KiB of it free beside VidMm's page tables, and a 1 MiB readback buffer that may live only
    there or in the aperture the rest of its list fills).  (The hostile review's fragmentation case that used to
    end this way now completes: decision 0172.)"""
    out = tmp_path / "out"
    small = catalog.builtin_text("focus-loss")
    for big, little in (('vram = "64MiB"', 'vram = "4MiB"'), ('cpu_visible = "16MiB"', 'cpu_visible = "1MiB"'),
                        ('aperture = "32MiB"', 'aperture = "2MiB"')):  # fmt: skip
        small = small.replace(big, little)
    scenario = tmp_path / "small.toml"
    scenario.write_text(small)
    args = ["run", str(scenario), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "STATUS_GRAPHICS_NO_VIDEO_MEMORY" in result.stderr and "needed by this request" in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verified"] is False and "does not fit the segments it may use" in summary["error"]
    rows = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    (record,) = [r for r in rows if r["event"] == "VidMmNoRoom"]
    assert record["Operation"] == "its residency list, before a context runs"
    assert record["Diagnosis"] in summary["error"]
    shown = CliRunner().invoke(main, ["inspect", str(out), "--rows", "2"])
    assert shown.exit_code == 0 and "no room (event" in shown.output
