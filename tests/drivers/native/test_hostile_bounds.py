"""Hostile review of the native bridge's timeout split (decision 0132): check-driver is to make a library function
that never returns a finding, not a hang, and its own output options are to be refused by name.  Each test here
is a defect found by review (stop 19), fixed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.conformance import check_driver as run_checks
from wddmsim.conformance.run import configuration
from wddmsim.drivers.native.package import NativeConfig, checked_package
from wddmsim.drivers.package import DriverSettings

from .conftest import BuildDriver
from .test_lifetimes import SOFTLOG, softlog_description

STARTSPIN = Path(__file__).with_name("startspin.c")
GUARD = 10.0
"""Seconds the test waits for check-driver before it releases the spinning entry point: a guard against a hang of
the suite, not a measurement (a bounded check-driver returns after its 0.2 s bound plus the checks)."""


def test_check_driver_bounds_a_start_device_that_never_returns(
    build_driver: BuildDriver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = tmp_path / "release"
    monkeypatch.setenv("STARTSPIN_RELEASE", str(release))
    library = build_driver(STARTSPIN)
    toml = tmp_path / "startspin.toml"
    toml.write_text(
        f'library = "{library}"\nmodel = "wddm1"\noperations = ["Transfer"]\ntdr_delay = 0.2\ncall_timeout = 0.2\n',
        encoding="utf-8",
    )
    outcome: list[object] = []

    def check() -> None:
        try:
            package = checked_package(str(library), toml, None)
            outcome.append(run_checks(package, configuration(package, None)))
        except Exception as error:  # a refusal or a DeviceRemoved naming the entry point: an answer, not a hang
            outcome.append(error)

    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(GUARD)
    answered = not worker.is_alive()
    release.touch()  # the spinning start returns: its thread (and this test's) ends either way
    worker.join()
    assert answered, "check-driver was still inside WddmsimStartDevice"
    assert "WddmsimStartDevice" in str(outcome[0]) or not getattr(outcome[0], "conformant", True)


def test_check_driver_bounds_the_executor_even_when_tdr_delay_is_off(build_driver: BuildDriver, tmp_path: Path) -> None:
    library = build_driver(SOFTLOG)
    config = checked_package(str(library), softlog_description(tmp_path, library, tdr_delay=0), None).configure(
        DriverSettings()
    )
    assert isinstance(config, NativeConfig)
    assert config.description.call_timeout is not None  # the entry points are bounded (decision 0132) ...
    assert config.description.tdr_delay is not None  # ... and so must the executor be


@pytest.mark.parametrize("option", ["--junit", "--out"])
def test_an_unwritable_report_path_is_refused_naming_the_option(option: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    target = tmp_path / "missing" / "report.xml" if option == "--junit" else tmp_path / "a-file" / "report"
    result = CliRunner().invoke(main, ["check-driver", "reference", option, str(target)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert option in result.output
