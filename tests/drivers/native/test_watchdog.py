"""Timeout detection for a native driver's library (decision 0132): a C ``DxgkDdiBuildPagingBuffer`` or executor
that never returns ends, after ``tdr_delay`` seconds of wall time, in the adapter-reset path naming the entry
point; the library is lost (every later call refused with ``STATUS_DEVICE_REMOVED``) and the process goes on.

No test measures time: the bound is short so the suite stays fast, and the spinning function is released at the
end so its thread ends."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.native.description import parse_description
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.marshal import address_of
from wddmsim.drivers.native.package import NativeConfig, checked_package
from wddmsim.drivers.native.watchdog import TDR_DELAY, Watchdog
from wddmsim.drivers.package import DriverSettings
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.errors import DeviceRemoved

from .conftest import BuildDriver
from .test_lifetimes import SOFTLOG, softlog_description, transfer

SURFACE = "native driver: calls that never return"
BOUND = 0.2
"""Seconds: ``tdr_delay`` of these tests."""
EXECUTOR, BUILD = 1, 2
"""softlog.c's SOFTLOG_SPIN: which entry point never returns."""


@pytest.fixture
def spinning(build_driver: BuildDriver, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[PagingRig]:
    """A rig over softlog.c built with ``SOFTLOG_SPIN=request.param``; the spin is released afterwards."""
    library = build_driver(SOFTLOG, SOFTLOG_SPIN=request.param)
    toml = softlog_description(tmp_path, library, tdr_delay=BOUND, call_timeout=BOUND)
    rig = PagingRig(SystemConfig(driver_package=str(toml)))
    yield rig
    driver = rig.driver
    assert isinstance(driver, NativeDriver)
    release = driver.library.function("SoftlogRelease")
    assert release is not None
    ctypes.CFUNCTYPE(None)(address_of(release))()


@pytest.mark.parametrize(
    ("spinning", "entry"),
    [(EXECUTOR, "WddmsimExecutePagingBuffer TdrDelay"), (BUILD, "DxgkDdiBuildPagingBuffer call_timeout")],
    indirect=["spinning"],
    ids=["executor", "build"],
)
def test_a_call_that_never_returns_resets_the_adapter_and_loses_the_library(spinning: PagingRig, entry: str) -> None:
    """The executor (the GPU's work) is bounded by TdrDelay, the driver's entry point by call_timeout."""
    rig = spinning
    entry, bound = entry.split()
    driver = rig.driver
    assert isinstance(driver, NativeDriver)
    mdl = rig.backing(PAGE_SIZE)
    with campaign.case(SURFACE) as box:
        with pytest.raises(DeviceRemoved) as caught:
            rig.execute(transfer(rig, mdl, 0, to_system=True))
        message = str(caught.value)
        assert message.startswith("adapter reset:"), message
        assert f"{entry} did not return within {bound}={BOUND:g} s" in message, message
        assert rig.vidmm.reset.count == 1
        assert driver.watchdog.lost is not None
        box.append(Outcome.REFUSED)
    with campaign.case(SURFACE) as box:  # the library is lost: the next request is refused, nothing is called
        calls = driver.call.calls
        with pytest.raises(DeviceRemoved, match="the driver's library is lost") as again:
            rig.execute(transfer(rig, mdl, 0, to_system=True))
        assert again.value.status == NTSTATUS.STATUS_DEVICE_REMOVED
        assert driver.call.calls == calls
        now = driver.statistics()
        assert (now.mdl_images, now.bridge_views) == (0, 0)
        box.append(Outcome.REFUSED)


def test_tdr_delay_defaults_to_windows_two_seconds_and_zero_turns_it_off(tmp_path: Path) -> None:
    base: dict[str, object] = {"library": "lib.so"}
    assert parse_description(base, tmp_path / "d.toml").tdr_delay == TDR_DELAY == 2.0
    assert parse_description({**base, "tdr_delay": 0.5}, tmp_path / "d.toml").tdr_delay == 0.5
    assert parse_description({**base, "tdr_delay": 0}, tmp_path / "d.toml").tdr_delay is None


def test_driver_entry_points_run_inline_in_a_run_and_bounded_in_check_driver(
    build_driver: BuildDriver, tmp_path: Path
) -> None:
    """A thread hand-over per DxgkDdiBuildPagingBuffer would halve a C driver's paging rate: runs call the driver
    inline unless ``call_timeout`` is set; check-driver bounds it by call_timeout, else by TdrDelay."""
    base: dict[str, object] = {"library": "lib.so"}
    assert parse_description(base, tmp_path / "d.toml").call_timeout is None
    assert parse_description({**base, "call_timeout": 0.5}, tmp_path / "d.toml").call_timeout == 0.5
    library = build_driver(SOFTLOG)

    def bound_in_check_driver(toml: Path) -> float | None:
        config = checked_package(str(library), toml, None).configure(DriverSettings())
        assert isinstance(config, NativeConfig)
        return config.description.call_timeout

    assert bound_in_check_driver(softlog_description(tmp_path, library, tdr_delay=3)) == 3.0
    assert bound_in_check_driver(softlog_description(tmp_path, library, call_timeout=1.5)) == 1.5
    ran = PagingRig(SystemConfig(driver_package=str(softlog_description(tmp_path, library))))
    driver = ran.driver
    assert isinstance(driver, NativeDriver)
    assert (driver.watchdog.delay, driver.watchdog.driver_delay) == (TDR_DELAY, None)


@pytest.mark.parametrize("key", ["tdr_delay", "call_timeout"])
@pytest.mark.parametrize("value", [-1, "2s", True, float("nan"), float("inf"), 3601])
def test_a_bad_bound_is_refused_naming_the_key(tmp_path: Path, key: str, value: object) -> None:
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError, match=rf"{key}.*must be a number of seconds in \[0, 3600\]"):
            parse_description({"library": "lib.so", key: value}, tmp_path / "d.toml")
        box.append(Outcome.REFUSED)


def test_a_call_within_the_bound_returns_its_value_and_errors_cross_back() -> None:
    watchdog = Watchdog(5.0)
    assert watchdog.call("Entry", lambda: 7) == 7

    def fails() -> int:
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        watchdog.call("Entry", fails)
    assert watchdog.lost is None
