"""The campaign tally: counting, writing per process, adding up, and the line CI prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.core.liveness import LivenessBudgetExceeded
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome, Tally


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """These probes count into a registry of their own: CI's summary shows only the real surfaces."""
    monkeypatch.setattr(campaign, "_TALLIES", {})


def test_a_tally_counts_every_case_as_tried_and_each_bad_outcome_once() -> None:
    t = Tally("probe")
    for outcome in Outcome:
        t.record(outcome)
    t.record(Outcome.REFUSED, 3)
    assert (t.tried, t.refused, t.accepted_wrongly, t.crashed, t.hung, t.leaked, t.mismatched) == (10, 4, 1, 1, 1, 1, 1)
    assert t.bad == 5
    assert t.line() == (
        "campaign probe: 10 tried, 4 refused cleanly, 1 accepted wrongly, 1 crashed, 1 hung, 1 leaked, 1 mismatched"
    )


def test_case_counts_an_escaping_exception_as_a_crash() -> None:
    surface = "probe-case"
    with campaign.case(surface) as box:
        box.append(Outcome.REFUSED)
    with campaign.case(surface):
        pass
    with pytest.raises(ZeroDivisionError), campaign.case(surface):
        _ = 1 // 0
    t = campaign.tally(surface)
    assert (t.tried, t.refused, t.crashed) == (3, 1, 1)


def test_files_of_several_processes_add_up_per_surface(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for n in (1, 2):
        (tmp_path / f"tally-{n}.json").write_text(
            f'[{{"surface": "s", "tried": {n}, "refused": {n}, "accepted_wrongly": 0, "crashed": 0, "hung": 0, '
            '"leaked": 0, "mismatched": 0}]'
        )
    assert [t.tried for t in campaign.merged(tmp_path)] == [3]
    assert campaign.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == (
        "campaign s: 3 tried, 3 refused cleanly, 0 accepted wrongly, 0 crashed, 0 hung, 0 leaked, 0 mismatched"
    )
    (tmp_path / "tally-3.json").write_text(
        '[{"surface": "s", "tried": 1, "refused": 0, "accepted_wrongly": 0, "crashed": 1, "hung": 0, "leaked": 0, '
        '"mismatched": 0}]'
    )
    assert campaign.main([str(tmp_path)]) == 1, "a bad count fails the summary"
    assert campaign.main([str(tmp_path / "none")]) == 1, "no tallies at all is a failure too"


def test_write_puts_this_process_tallies_in_a_new_file(tmp_path: Path) -> None:
    campaign.record("probe-write", Outcome.ACCEPTED)
    path = campaign.write(tmp_path)
    assert path is not None
    assert any(t.surface == "probe-write" and t.tried >= 1 for t in campaign.merged(tmp_path))


def test_case_counts_a_mapped_exception_and_a_spent_liveness_budget_as_what_they_are() -> None:
    class Mismatch(AssertionError):
        pass

    surface = "probe-raised"
    with pytest.raises(Mismatch), campaign.case(surface, {Mismatch: Outcome.MISMATCHED}):
        raise Mismatch
    with pytest.raises(LivenessBudgetExceeded), campaign.case(surface):
        raise LivenessBudgetExceeded(10, "a probe")
    t = campaign.tally(surface)
    assert (t.tried, t.mismatched, t.hung, t.crashed) == (2, 1, 1, 0)
