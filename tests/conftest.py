"""Shared fixtures: a fresh adapter per test (the tour's rig), in either driver model."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign

settings.register_profile("default", deadline=None, max_examples=100)
settings.register_profile("ci", deadline=None, max_examples=300, derandomize=True)
settings.load_profile("default")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite tests/golden/* from the current output")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture
def rig() -> PagingRig:
    return PagingRig()


@pytest.fixture
def rig_wddm1() -> PagingRig:
    return PagingRig(SystemConfig(driver=DriverConfig(model=DriverModel.WDDM1)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The adversarial campaign's counts of this run, for CI's summary lines (wddmsim.testing.campaign)."""
    directory = os.environ.get("WDDMSIM_CAMPAIGN_DIR")
    if directory:
        campaign.write(directory)
