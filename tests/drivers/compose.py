"""The simple driver composed into an adapter by hand, until the driver registry composes it by name.

The adapter still builds the reference driver first; :func:`simple` replaces it, as VidMm sees it, with a
:class:`SimpleDriver` on the same GPU (which takes over the interrupt line).  Workloads still encode the reference
driver's private data; :func:`through_simple_umd` makes that encoding go through the simple driver's user-mode
encoder instead, field for field.
"""

from __future__ import annotations

from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.drivers.simple import SimpleDriver, SimpleUmd
from wddmsim.drivers.simple.seam import ResourceDesc, ResourceKind
from wddmsim.kmd.allocations import AllocationDesc
from wddmsim.kmd.driver import ReferenceDriver
from wddmsim.system import Adapter


def simple(reference: ReferenceDriver) -> KernelModeDriver:
    return SimpleDriver(reference.gpu)


def driver_of(adapter: Adapter) -> SimpleDriver:
    driver = adapter.ddi
    assert isinstance(driver, SimpleDriver), f"the adapter runs {type(driver).__name__}"
    return driver


def _encode(desc: AllocationDesc) -> bytes:
    return SimpleUmd().encode(
        ResourceDesc(
            ResourceKind(int(desc.kind)), desc.size, desc.usage, desc.width_bytes, desc.height, desc.mip_levels
        )
    )


def through_simple_umd(monkeypatch: object) -> None:
    """Workloads' ``AllocationDesc.encode()`` -> the simple driver's encoder (for the test's duration)."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(AllocationDesc, "encode", _encode)
