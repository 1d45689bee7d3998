"""Driver packages the tests name by ``module:NAME`` (``adapter.driver = "tests.drivers.native.packages:X"``)."""

from __future__ import annotations

import dataclasses

from wddmsim.drivers.package import DriverCapabilities, DriverConfiguration
from wddmsim.drivers.registry import driver_package

_REFERENCE = driver_package("reference")


def _linear(config: DriverConfiguration) -> DriverCapabilities:
    """The reference driver's capabilities, less what a native driver over it does not claim by default: swizzled
    surfaces and SpecialLockTransfer (so the workload makes the same resources on both)."""
    return dataclasses.replace(_REFERENCE.capabilities(config), swizzling=False, special_lock_transfer=False)


REFERENCE_LINEAR = dataclasses.replace(_REFERENCE, name="reference-linear", capabilities=_linear)
"""The Python reference driver with linear surfaces only: what the softlog example is compared with."""
