"""Shared fixtures: a fresh adapter per test (the tour's rig), in either driver model."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from wddmsim.core import liveness as budget
from wddmsim.kmd.config import DriverConfig, DriverModel
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign, liveness

settings.register_profile("default", deadline=None, max_examples=100)
settings.register_profile("ci", deadline=None, max_examples=100, derandomize=True)
"""CI's runs are reproducible: the same examples every run (a developer's runs keep exploring new ones)."""
settings.load_profile(os.environ.get("WDDMSIM_HYPOTHESIS_PROFILE", "default"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite tests/golden/* from the current output")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "liveness_budget(steps): this test's liveness budget (wddmsim.testing.liveness)")


@pytest.fixture(autouse=True)
def liveness_budget(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test runs under a liveness budget: a wait that never returns fails the test as a hang (raising
    ``LivenessBudgetExceeded``) instead of stalling the run.  ``@pytest.mark.liveness_budget(steps)`` changes it."""
    marker = request.node.get_closest_marker("liveness_budget")
    steps = int(marker.args[0]) if marker is not None else liveness.DEFAULT_BUDGET
    budget.arm(steps)
    try:
        yield
    finally:
        spent = budget.used()
        budget.disarm()
        log = os.environ.get("WDDMSIM_LIVENESS_LOG")
        if log:
            with open(log, "a") as out:
                out.write(f"{spent} {request.node.nodeid}\n")


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
