"""``wddmsim reproduce`` (decision 0148): the classic results exit 0 with the published numbers printed beside ours,
a wrong expectation exits 1, bad usage exits 2 naming the option, its value and the rule."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner, Result

from wddmsim.cli import main
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

SURFACE = "cli"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["reproduce", *args], terminal_width=200)


def _rows(output: str) -> dict[tuple[str, str], tuple[str, str, str]]:
    """``(case, policy) -> (published, ours, verdict)`` from the printed table (a blank case repeats the last)."""
    out = {}
    case = ""
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) != 7:
            continue
        case = cells[0] or case
        out[(case, cells[1])] = (cells[2], cells[3], cells[5])
    return out


def test_belady_anomaly_exits_0_with_the_published_fault_counts_beside_ours() -> None:
    result = _invoke("belady-anomaly")
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    published = {"fifo": ("9", "10"), "lru": ("10", "8"), "opt": ("7", "6")}
    for policy, counts in published.items():
        for frames, faults in zip(("3 frames", "4 frames"), counts, strict=True):
            assert rows[(frames, policy)] == (faults, faults, "matched"), (frames, policy, rows)
    assert rows[("3 frames", "random")][2] == "printed only"
    assert "belady-anomaly: all 6 published numbers matched" in result.output
    campaign.record(SURFACE, Outcome.ACCEPTED)


def test_lru_cliff_exits_0_with_the_published_miss_rates_beside_ours() -> None:
    """Three passes (the whole sweep, every policy and eleven passes, runs under -m slow)."""
    result = _invoke("lru-cliff", "--loops", "3", "--published-only")
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    opt = {"1.01": "1.00", "1.1": "9.17", "1.25": "20.16", "1.5": "33.56", "2": "50.25", "4": "75.19"}
    for factor, rate in opt.items():
        case = f"n/k={factor}, n={round(100 * float(factor))}"
        for policy in ("lru", "fifo"):
            assert rows[(case, policy)] == ("100.00 %", "100.00 %", "matched"), (case, policy)
        published, ours, verdict = rows[(case, "opt")]
        assert published == f"{rate} %" and verdict == "matched", (case, rows[(case, "opt")])
        assert float(ours.rstrip(" %")) <= float(rate)  # a finite run approaches MIN's asymptote from below
    assert "lru-cliff: all 18 published numbers matched" in result.output
    campaign.record(SURFACE, Outcome.ACCEPTED)


def test_a_wrong_expectation_exits_1_naming_the_row() -> None:
    result = _invoke("belady-anomaly", "--published-only", "--expect", "fifo@4=9")
    assert result.exit_code == 1, result.output
    assert _rows(result.output)[("4 frames", "fifo")] == ("9", "10", "MISMATCH")
    assert "mismatch belady-anomaly fifo@4: published 9, ours 10" in result.output
    assert "belady-anomaly: 1 of 6 published numbers differ" in result.output
    campaign.record(SURFACE, Outcome.ACCEPTED)


def test_a_policy_written_outside_the_package_is_printed_beside_the_published_ones() -> None:
    """``--policy module:Class`` (the repository's CLOCK example): second chances, 9 then 10 faults."""
    result = _invoke("belady-anomaly", "--policy", "examples.policies.clock:Clock")
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert rows[("3 frames", "examples.policies.clock:Clock")] == ("-", "9", "printed only")
    assert rows[("4 frames", "examples.policies.clock:Clock")] == ("-", "10", "printed only")
    assert ("3 frames", "random") not in rows  # --policy chooses: the other registered ones are left out
    campaign.record(SURFACE, Outcome.ACCEPTED)


def test_list_names_every_reproduction() -> None:
    result = _invoke("--list")
    assert result.exit_code == 0 and "belady-anomaly" in result.output and "lru-cliff" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "NAME is missing"),
        (("nosuch",), "NAME='nosuch': known reproductions: belady-anomaly, lru-cliff"),
        (("lru-cliff", "--loops", "1"), "'--loops': 1 is not in the range 2<=x<=1000"),
        (("belady-anomaly", "--policy", "nosuch"), "--policy='nosuch': known policies:"),
        (("belady-anomaly", "--policy", "min:Nope"), "--policy='min:Nope': module min cannot be imported"),
        (("belady-anomaly", "--expect", "fifo4=9"), "--expect='fifo4=9': must be POLICY@CASE=VALUE"),
        (("belady-anomaly", "--expect", "fifo@4=nine"), "--expect='fifo@4=nine': must be POLICY@CASE=VALUE"),
        (("belady-anomaly", "--expect", "fifo@5=9"), "--expect='fifo@5': names no row of belady-anomaly"),
        (("belady-anomaly", "--driver-model", "wddm3"), "'--driver-model': 'wddm3' is not one of"),
        (("belady-anomaly", "--published-only", "--policy", "random"), "--published-only=True: runs no other policy"),
    ],
)
def test_bad_usage_exits_2_naming_the_option_value_and_rule(args: tuple[str, ...], message: str) -> None:
    with campaign.case(SURFACE) as box:
        result = _invoke(*args)
        assert result.exit_code == 2, result.output
        assert re.search(re.escape(message), " ".join(result.stderr.split())), result.stderr
        assert "Traceback" not in result.output
        box.append(Outcome.REFUSED)


@pytest.mark.slow
def test_the_whole_lru_cliff_with_every_registered_policy_exits_0() -> None:
    """The default: every registered policy, eleven passes (a few minutes)."""
    result = _invoke("lru-cliff")
    assert result.exit_code == 0, result.output
    assert "lru-cliff: all 18 published numbers matched" in result.output
    campaign.record(SURFACE, Outcome.ACCEPTED)
