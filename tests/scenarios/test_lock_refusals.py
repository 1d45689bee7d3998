"""A lock the runtime refuses with a documented failure (decision 0230): the application reports it and goes on
without that write, verification says which allocation could not be read back, and every other byte verifies.

The ``uploads`` scenario (WDDM 1.x, swizzled surfaces written level by level) on a card whose CPU-visible part is
too small: a swizzled surface paged out to system memory can only be unswizzled by the GPU from a memory segment,
and none can take it, so ``pfnLockCb`` returns ``E_OUTOFMEMORY``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.ddi.status import HRESULT, DdiError
from wddmsim.scenarios import catalog
from wddmsim.scenarios.app import LOCK_FAILURES, App
from wddmsim.scenarios.held import Resource
from wddmsim.scenarios.replay import read_trace, replay
from wddmsim.scenarios.runner import RunResult, run_scenario

TIGHT = {"seed": 1, "adapter.vram": "24MiB", "adapter.cpu_visible": "2MiB", "workload.oversubscription": 2.0}
UNSWIZZLE = "its swizzled bits need a memory segment to be unswizzled, and none can take it [E_OUTOFMEMORY"


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    path = tmp_path_factory.mktemp("refusals") / "calls.jsonl"
    with path.open("w") as f:
        result = run_scenario(catalog.load("uploads", TIGHT), record=f)
    return result, path


def test_a_refused_upload_lock_is_the_applications_reported_problem_and_the_run_goes_on(
    tight: tuple[RunResult, Path],
) -> None:
    result, _ = tight
    refused = [c for c in result.checks if c.operation == "pfnLockCb"]
    uploads = [c for c in refused if ": upload into " in c.step]
    assert uploads, "the tight card refuses some upload locks"
    assert all(not c.ok and UNSWIZZLE in c.detail for c in refused)
    frames = {int(c.step.split("frame ")[1].split(":")[0]) for c in uploads}
    assert max(frames) > min(frames), "the application kept rendering frames after a refusal"
    summaries = [c for c in result.checks if "allocations verified" in c.detail]
    assert len(summaries) == result.config.workload.processes
    assert all(c.detail.startswith(f"{result.config.workload.frames} frames") for c in summaries)
    assert not result.verified


def test_only_the_allocation_whose_lock_is_refused_goes_unverified(tight: tuple[RunResult, Path]) -> None:
    """Every other allocation holds what the model says: the refused writes were not put in the model."""
    result, _ = tight
    unread = [c for c in result.checks if c.detail.startswith("not read back: the lock was refused")]
    assert unread and all(not c.ok and UNSWIZZLE in c.detail for c in unread)
    mismatched = [c for c in result.checks if "byte(s) differ" in c.detail]
    assert mismatched == []
    for summary in (c for c in result.checks if "allocations verified" in c.detail):
        process = summary.step.split(":")[0]
        missing = [c for c in unread if c.step.startswith(process + ":")]
        verified, total = summary.detail.split("; ")[1].split(" allocations")[0].split(" of ")
        assert int(total) - int(verified) == len(missing)
        assert summary.ok == (not missing)


def test_a_replay_of_the_run_refuses_the_same_locks(tight: tuple[RunResult, Path]) -> None:
    _, path = tight
    replayed = replay(read_trace(path))
    assert replayed.difference() == {}
    assert replayed.identical_events and replayed.content_preserved


@pytest.mark.parametrize("status", [*sorted(LOCK_FAILURES), HRESULT.E_INVALIDARG], ids=lambda s: s.name)
def test_a_lock_failure_is_reported_and_a_misuse_still_stops_the_run(
    monkeypatch: pytest.MonkeyPatch, status: HRESULT
) -> None:
    """Each documented refusal of a well-formed lock is reported; ``E_INVALIDARG`` -- the application's own bug --
    is not one of them and stops the run."""
    lock = App._lock
    calls = 0

    def refuse_the_third(app: App, r: Resource, pages: tuple[int, ...] | None = None, level: int = 0) -> int:
        nonlocal calls
        calls += 1
        if calls == 3 and not r.held:
            raise DdiError(status, f"hAllocation={int(r.handle):#x}: refused by the test")
        return lock(app, r, pages, level)

    monkeypatch.setattr(App, "_lock", refuse_the_third)
    config = catalog.load("uploads", {"seed": 1, "workload.frames": 2, "workload.processes": 1})
    if status == HRESULT.E_INVALIDARG:
        with pytest.raises(DdiError, match="refused by the test"):
            run_scenario(config)
        return
    result = run_scenario(config)
    refused = [c for c in result.checks if c.operation == "pfnLockCb"]
    assert len(refused) == 1 and not refused[0].ok
    assert refused[0].detail.endswith(f"refused by the test [{status.name} {int(status):#010x}]")
    assert not [c for c in result.checks if "byte(s) differ" in c.detail]


def test_a_replay_granted_a_lock_the_recording_saw_refused_releases_it(tight: tuple[RunResult, Path]) -> None:
    """On a roomier card the refused locks succeed; the application never unlocked them, so the replay does, and
    the later locks of the same surfaces stay legal (no call refused that the recording saw succeed)."""
    _, path = tight
    replayed = replay(read_trace(path), {"adapter.cpu_visible": "8MiB"})
    granted = [e for e in replayed.examples if "succeeded; the recording was refused" in e]
    assert granted and all(" lock: " in e for e in granted)
    assert replayed.refused_now == 0
    assert replayed.reads > 0 and replayed.content_preserved
