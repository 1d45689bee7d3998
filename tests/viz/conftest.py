"""Runs shared by the view tests: the tour and the residency demo, each run once, with its four output files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from wddmsim.core.events import Event
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.scenarios.demos import run_scenario
from wddmsim.scenarios.result import ScenarioRun
from wddmsim.system import Adapter
from wddmsim.vidmm.device import Process
from wddmsim.vidmm.events import ProcessLifetime, VidMmMakeResident, VidMmProcessBudgetChange, VidMmTrimNotification
from wddmsim.viz.capture import PagingCapture
from wddmsim.viz.eventlog import Record, read_jsonl
from wddmsim.viz.outputs import Outputs, recorder, run_summary, write_outputs


@dataclass(frozen=True)
class SavedRun:
    run: ScenarioRun
    capture: PagingCapture
    outputs: Outputs

    @property
    def rows(self) -> list[Record]:
        return read_jsonl(self.outputs.events)


LOCAL = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL
SQUEEZE, RELEASE = 8, 24
"""The ``MakeResident`` calls at which :func:`apply_pressure` halves a budget and gives it back."""


def apply_pressure(adapter: Adapter) -> None:
    """A small rig for the pressure no built-in scenario applies yet (issue 23, the lead's part): the process of
    the first ``MakeResident`` is said to start; at call ``SQUEEZE`` its local budget is halved (imposed, as the OS
    does when it loses the foreground) and it is asked to trim; at ``RELEASE`` the budget is given back."""
    calls = 0
    rm = adapter.vidmm.residency
    squeezed: list[Process] = []

    def listen(e: Event) -> None:
        nonlocal calls
        if not isinstance(e, VidMmMakeResident):
            return
        calls += 1
        process = squeezed[0] if squeezed else rm.devices[HANDLE(e.device)].process
        pid, now = int(process.handle), adapter.clock.now
        if calls == 1:
            adapter.events.emit(ProcessLifetime(time=now, process=pid, action="start"))
        if calls not in (SQUEEZE, RELEASE):
            return
        squeezed.append(process)
        previous = process.budgets[LOCAL]
        budget = previous // 2 if calls == SQUEEZE else rm.budgets.capacity(LOCAL)
        rm.budgets.set_budget(process, LOCAL, budget)
        cause = "imposed" if calls == SQUEEZE else "released"
        adapter.events.emit(
            VidMmProcessBudgetChange(time=now, process=pid, group=0, budget=budget, previous=previous, cause=cause)
        )
        if calls == SQUEEZE:
            adapter.events.emit(VidMmTrimNotification(time=now, process=pid, flags=1, bytes_to_trim=4096, delivered=0))

    adapter.events.subscribe(listen)


def _saved(name: str, out: Path, *, pressure: bool = False) -> SavedRun:
    captures: list[PagingCapture] = []

    def attach(adapter: Adapter) -> None:
        captures.append(recorder(adapter))
        if pressure:
            apply_pressure(adapter)

    run = run_scenario(name, seed=0, on_adapter=attach)
    assert run.verified, [c for c in run.result.checks if not c.ok]
    return SavedRun(run, captures[0], write_outputs(out, run.adapter, run_summary(run), capture=captures[0]))


@pytest.fixture(scope="session")
def tour(tmp_path_factory: pytest.TempPathFactory) -> SavedRun:
    return _saved("tour", tmp_path_factory.mktemp("tour"))


@pytest.fixture(scope="session")
def residency(tmp_path_factory: pytest.TempPathFactory) -> SavedRun:
    return _saved("residency", tmp_path_factory.mktemp("residency"))


@pytest.fixture(scope="session")
def pressured(tmp_path_factory: pytest.TempPathFactory) -> SavedRun:
    """The residency demo under :func:`apply_pressure`."""
    return _saved("residency", tmp_path_factory.mktemp("pressured"), pressure=True)


@pytest.fixture(scope="session", params=["tour", "residency"])
def saved(request: pytest.FixtureRequest) -> SavedRun:
    found: SavedRun = request.getfixturevalue(request.param)
    return found
