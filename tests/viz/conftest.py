"""Runs shared by the view tests: the tour and the residency demo, each run once, with its four output files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.research.frames import FrameMarks, frame_metrics
from wddmsim.research.runs import observed_run
from wddmsim.scenarios import catalog
from wddmsim.scenarios.demos import run_scenario
from wddmsim.scenarios.result import ScenarioRun
from wddmsim.system import Adapter
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


@dataclass(frozen=True)
class WorkloadRun:
    """A workload scenario run as ``wddmsim run NAME --out`` runs it (frames included)."""

    adapter: Adapter
    outputs: Outputs

    @property
    def rows(self) -> list[Record]:
        return read_jsonl(self.outputs.events)


def _saved(name: str, out: Path) -> SavedRun:
    captures: list[PagingCapture] = []

    def attach(adapter: Adapter) -> None:
        captures.append(recorder(adapter))

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
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> WorkloadRun:
    """The built-in ``newcomer``: a second process starts and takes half of local memory, budgets shared (issue
    23's pressure: budget changes, trim notifications, a priority change, process start and exit)."""
    marks = FrameMarks()
    result, _, _ = observed_run(catalog.load("newcomer"), marks=marks)
    assert result.verified, [c for c in result.checks if not c.ok]
    summary, frames = frame_metrics(result.adapter.events, marks.marks)
    out = tmp_path_factory.mktemp("newcomer")
    values = {"verified": True, "scenario": "newcomer", **summary}
    return WorkloadRun(result.adapter, write_outputs(out, result.adapter, values, frames=frames))


@pytest.fixture(scope="session", params=["tour", "residency"])
def saved(request: pytest.FixtureRequest) -> SavedRun:
    found: SavedRun = request.getfixturevalue(request.param)
    return found
