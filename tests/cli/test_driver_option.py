"""``--driver`` on ``replay``, ``vm-decode``, ``inspect`` and ``disasm`` (decision 0096): the package by name or
``module:attribute`` as on ``run``; an unknown name, or a package the command cannot use, is bad input -- exit
status 2, one line on stderr naming ``--driver``, its value and the rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wddmsim.cli import main
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

SURFACE = "command line: --driver"
SMALL = ["--frames", "2", "--processes", "1"]


def _refused(result: Result, value: str, rule: str) -> None:
    """Exit 2, one line naming ``--driver=value`` and the rule, no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert f"--driver='{value}'" in lines[0] and rule in lines[0], lines[0]
    campaign.record(SURFACE, Outcome.REFUSED)


@pytest.fixture(scope="module")
def simple_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small run on the simple driver: its ``--out`` directory and its ``--record`` trace."""
    where = tmp_path_factory.mktemp("simple")
    out, trace = where / "out", where / "calls.jsonl"
    args = ["run", "--driver", "simple", *SMALL, "--out", str(out), "--record", str(trace)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out, trace


@pytest.mark.parametrize("command", [["vm-decode", "0x1001000"], ["disasm"], ["replay"], ["inspect"]])
def test_an_unknown_driver_is_refused_naming_the_option(command: list[str], simple_run: tuple[Path, Path]) -> None:
    out, trace = simple_run
    given = {"replay": [*command, str(trace)], "inspect": [*command, str(out)]}.get(command[0], command)
    _refused(CliRunner().invoke(main, [*given, "--driver", "nosuch"]), "nosuch", "must name a driver package")


def test_replay_runs_on_a_package_sharing_the_recorded_user_mode_driver(simple_run: tuple[Path, Path]) -> None:
    _, trace = simple_run
    same = CliRunner().invoke(main, ["replay", str(trace), "--driver", "simple"])
    assert same.exit_code == 0, same.output
    text = " ".join(same.output.split())
    assert "the event log is identical to the recorded run's" in text and "content preserved" in text
    campaign.record(SURFACE, Outcome.ACCEPTED)
    other = CliRunner().invoke(main, ["replay", str(trace), "--driver", "reference"])
    _refused(other, "reference", "format of the user-mode driver it was recorded with (driver package simple)")


def test_replay_on_a_wrapping_package_named_from_outside(tmp_path: Path) -> None:
    """A test double wrapping the reference driver shares its user-mode half: the calls replay unchanged."""
    trace = tmp_path / "calls.jsonl"
    recorded = CliRunner().invoke(main, ["run", *SMALL, "--record", str(trace)])
    assert recorded.exit_code == 0, recorded.output
    wrapped = CliRunner().invoke(main, ["replay", str(trace), "--driver", "wddmsim.testing.fakes:RECORDING"])
    assert wrapped.exit_code == 0, wrapped.output
    assert "content preserved" in " ".join(wrapped.output.split())
    campaign.record(SURFACE, Outcome.ACCEPTED)


def test_vm_decode_walks_on_the_named_package_and_refuses_one_without_gpu_vas() -> None:
    plain = CliRunner().invoke(main, ["vm-decode", "0x1001000"])
    named = CliRunner().invoke(main, ["vm-decode", "0x1001000", "--driver", "reference"])
    assert plain.exit_code == named.exit_code == 0, named.output
    assert named.output == plain.output and "level 3" in named.output
    campaign.record(SURFACE, Outcome.ACCEPTED)
    simple = CliRunner().invoke(main, ["vm-decode", "0x1001000", "--driver", "simple"])
    _refused(simple, "simple", "WDDM 2.x model only; driver package simple presents only wddm1")


def test_inspect_checks_the_package_the_run_was_made_on(simple_run: tuple[Path, Path]) -> None:
    out, _ = simple_run
    same = CliRunner().invoke(main, ["inspect", str(out), "--driver", "simple", "--segment", "1"])
    assert same.exit_code == 0, same.output
    assert "segment 1 (aperture" in " ".join(same.output.split())
    campaign.record(SURFACE, Outcome.ACCEPTED)
    other = CliRunner().invoke(main, ["inspect", str(out), "--driver", "reference"])
    _refused(other, "reference", "was made on driver package simple")


def test_disasm_prints_the_paging_buffers_of_the_named_package() -> None:
    result = CliRunner().invoke(main, ["disasm", "--driver", "simple"])
    assert result.exit_code == 0, result.output
    assert "paging buffer fence 1" in result.output and "TLB_INVALIDATE" not in result.output, "no page tables on wddm1"
    campaign.record(SURFACE, Outcome.ACCEPTED)
    wddm2 = CliRunner().invoke(main, ["disasm", "--driver", "simple", "--driver-model", "wddm2"])
    assert wddm2.exit_code == 2 and "driver package simple presents only wddm1" in wddm2.stderr, wddm2.output
    campaign.record(SURFACE, Outcome.REFUSED)
