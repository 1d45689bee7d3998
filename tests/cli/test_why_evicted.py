"""Each new policy runs the default scenario verified from the command line, its evictions name it in
``events.jsonl``, and ``wddmsim inspect RUN --why-evicted HANDLE`` says who chose a victim and why (decision 0140)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.viz.eventlog import read_jsonl

GOLDEN = Path(__file__).parent.parent / "golden" / "runs"
NEW = ("clock", "mru", "lfu", "arc", "gds")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The default scenario (default settings) under two of the new policies, saved."""
    out: dict[str, Path] = {}
    for name in ("lfu", "arc"):
        path = tmp_path_factory.mktemp(name)
        result = CliRunner().invoke(main, ["run", "--policy", name, "--out", str(path)])
        assert result.exit_code == 0, result.output
        assert "verified" in result.output
        out[name] = path
    return out


@pytest.mark.parametrize("name", NEW)
def test_the_default_scenario_runs_verified_and_every_eviction_says_who_and_why(name: str, tmp_path: Path) -> None:
    """``wddmsim run default --policy NAME`` is one of the golden runs (``test_event_log_goldens.py`` runs it and
    compares it byte for byte): here, what its recorded summary and events say."""
    run = GOLDEN / f"default-wddm2-{name}"
    summary = json.loads(lzma.decompress((run / "summary.json.xz").read_bytes()))
    assert summary["verified"] and summary["policy"] == name
    assert summary["traffic"]["Evictions.pressure"] > 0, "the policy chose victims"
    (tmp_path / "events.jsonl").write_bytes(lzma.decompress((run / "events.jsonl.xz").read_bytes()))
    evictions = [r for r in read_jsonl(tmp_path / "events.jsonl") if r["event"] == "VidMmEvict"]
    chosen = [r for r in evictions if r["Policy"]]
    assert chosen and {r["Policy"] for r in chosen} == {name}
    assert all(r["Reason"] for r in evictions), "every eviction says why"
    assert all(r["Reason"].startswith(("in no residency list", "in a residency list")) for r in chosen)


def _victim(run: Path, policy: bool) -> int:
    rows = read_jsonl(run / "events.jsonl")
    return next(int(r["pVidMmAlloc"]) for r in rows if r["event"] == "VidMmEvict" and bool(r["Policy"]) == policy)


def test_inspect_why_evicted_names_the_policy_and_its_reason(runs: dict[str, Path]) -> None:
    run = runs["arc"]
    handle = _victim(run, policy=True)
    result = CliRunner().invoke(main, ["inspect", str(run), "--why-evicted", hex(handle)], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"allocation {handle:#x} was evicted" in text
    assert "cause pressure" in text and "chosen by arc: in " in text and "target p " in text
    by_decimal = CliRunner().invoke(main, ["inspect", str(run), "--why-evicted", str(handle)], terminal_width=200)
    assert by_decimal.output == result.output


def test_inspect_why_evicted_says_when_the_cause_decided_and_when_nothing_was_evicted(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    run = runs["lfu"]
    handle = _victim(run, policy=False)
    result = CliRunner().invoke(main, ["inspect", str(run), "--why-evicted", hex(handle)], terminal_width=200)
    assert result.exit_code == 0 and "no policy chose it (the cause decided)" in result.output
    lines = (run / "events.jsonl").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"VidMmEvict"' in line)
    early = tmp_path / "early"  # the run up to its first eviction: created allocations, none evicted yet
    early.mkdir()
    (early / "events.jsonl").write_text("\n".join(lines[:first]) + "\n")
    kept = next(r["hVidMmGlobalAlloc"] for r in read_jsonl(early / "events.jsonl") if r["event"] == "AdapterAllocation")
    never = CliRunner().invoke(main, ["inspect", str(early), "--why-evicted", hex(kept)])
    assert never.exit_code == 0 and f"allocation {kept:#x} was never evicted in this run" in never.output


@pytest.mark.parametrize(
    ("value", "rule"),
    [("zz", "'zz' is not a handle (decimal or 0x...)"), ("0x7", "0x7 is no allocation of this run")],
)
def test_inspect_why_evicted_refuses_what_is_not_an_allocation_of_the_run(
    value: str, rule: str, runs: dict[str, Path]
) -> None:
    with campaign.case("cli") as box:
        result = CliRunner().invoke(main, ["inspect", str(runs["lfu"]), "--why-evicted", value], terminal_width=200)
        clean = result.exit_code == 2 and "--why-evicted" in result.output and rule in " ".join(result.output.split())
        box.append(Outcome.REFUSED if clean else Outcome.ACCEPTED_WRONGLY)
    assert clean, result.output
