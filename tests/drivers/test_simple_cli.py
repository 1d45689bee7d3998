"""``wddmsim run --driver simple`` from the command line (decisions 0075, 0076): the default scenario verifies every
byte on the simple driver; with no ``--driver-model`` the package's only model is taken; naming one it cannot
present is refused naming ``--driver-model``; the tour runs the steps the driver supports."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

SURFACE = "simple driver: the command line"


def test_run_driver_simple_wddm1_verifies_every_byte_of_the_default_scenario(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--driver", "simple", "--driver-model", "wddm1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verified"] is True
    adapter = summary["config"]["adapter"]
    assert (adapter["driver"], adapter["driver_model"]) == ("simple", "wddm1")
    assert summary["workload"]["bytes"] > adapter["vram"], "the default scenario oversubscribes local memory"


def test_run_driver_simple_without_a_model_takes_the_package_s_own() -> None:
    result = CliRunner().invoke(main, ["run", "--driver", "simple", "--frames", "2", "--processes", "1"])
    assert result.exit_code == 0, result.output
    assert "verified" in result.output


def test_run_driver_simple_driver_model_wddm2_is_refused_naming_the_option() -> None:
    with campaign.case(SURFACE) as box:
        for args in (["run"], ["run", "tour"]):
            refused = CliRunner().invoke(main, [*args, "--driver", "simple", "--driver-model", "wddm2"])
            assert refused.exit_code == 2, refused.output
            lines = refused.stderr.splitlines()
            assert len(lines) == 1 and "Traceback" not in refused.output, refused.output
            assert "--driver-model='wddm2'" in lines[0] and "driver package simple presents only wddm1" in lines[0]
            box.append(Outcome.REFUSED)


def test_run_tour_driver_simple_runs_the_steps_it_supports() -> None:
    result = CliRunner().invoke(main, ["run", "tour", "--driver", "simple"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "wddm1" in text and "MapApertureSegment" in text and "Transfer(multipass)" in text
    assert "TransferVirtual" not in text and "InitContextResource" not in text, "skipped by capability and probe"
