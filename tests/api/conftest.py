"""The desk on every driver package (``@pytest.mark.any_driver``): a marked test runs once per package in
:data:`PACKAGES`, with that package as :attr:`~tests.api.desk.Desk.default_package`; a desk whose model the
package cannot present skips itself (``tests/api/desk.py``)."""

from __future__ import annotations

import pytest

from .desk import Desk

PACKAGES = ("reference", "simple")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "any_driver: run this desk test on every driver package (tests/api/conftest.py)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("any_driver") is not None:
        metafunc.parametrize("desk_package", PACKAGES, indirect=True)


@pytest.fixture(autouse=True)
def desk_package(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The package a desk of this test runs on (the reference driver unless the test is ``any_driver``)."""
    name = str(getattr(request, "param", Desk.default_package))
    monkeypatch.setattr(Desk, "default_package", name)
    return name
