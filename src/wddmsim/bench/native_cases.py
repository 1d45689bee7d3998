"""The benchmarks of a driver built in C (issue 21): the bridge's cost on the hot path, and check-driver's.

Each builds the example C driver (``examples/drivers/refgpu``) with the machine's C compiler into a temporary
directory; where there is no compiler or no checkout (an installed package), the record says so instead of a
number.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Final

import numpy as np

from wddmsim.bench.cases import BOTH, LOCAL, REGISTRY, Loc, roundtrip_rate
from wddmsim.bench.harness import best_of, result
from wddmsim.conformance import check_driver
from wddmsim.core.units import PAGE_SHIFT, GiB, MiB
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER
from wddmsim.drivers.native.build import find_compilers
from wddmsim.drivers.native.package import checked_package, native_package
from wddmsim.drivers.package import DriverModel, DriverPackage, DriverSettings
from wddmsim.drivers.reference import REFERENCE
from wddmsim.hw.gpu import GpuConfig
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig

EXAMPLE: Final = Path(__file__).resolve().parents[3] / "examples" / "drivers" / "refgpu" / "refgpu_paging.c"
_built: dict[str, Path] = {}


def _library() -> Path | None:
    """The example C driver, built once per process (None: no compiler, or not run from a checkout)."""
    if "refgpu" in _built:
        return _built["refgpu"]
    compiler = next((c for c in find_compilers() if c.language == "c"), None)
    if compiler is None or not EXAMPLE.is_file():
        return None
    out = Path(tempfile.mkdtemp(prefix="wddmsim-bench-")) / "librefgpu.so"
    _built["refgpu"] = compiler.shared_library(EXAMPLE.read_text(encoding="utf-8"), out, ("-O2",))
    return _built["refgpu"]


def _unavailable(name: str) -> dict[str, Any]:
    return result(name, 0.0, "n/a", skipped="no C compiler or no examples/ checkout to build the C driver from")


def _rig(package: DriverPackage, local: int, system: int) -> PagingRig:
    config = package.configure(DriverSettings(model=DriverModel.WDDM1))
    rig = PagingRig(
        SystemConfig(gpu=GpuConfig(local_size=local, system_size=system), driver_package=package, driver=config)
    )
    rig.adapter.events.enabled = False
    return rig


def _roundtrips(*packages: DriverPackage, rounds: int = 3) -> list[float]:
    """Each package's small round trips per second: the best of ``rounds`` measurements each, taken in turn
    (one package, the next, and again), so that a change of load on a shared machine reaches every package alike
    instead of the one measured while it lasts."""
    rigs = [_rig(package, 256 * MiB, 1 * GiB) for package in packages]
    best = [0.0] * len(rigs)
    for _ in range(rounds):
        for i, rig in enumerate(rigs):
            best[i] = max(best[i], roundtrip_rate(rig, 5000))
    return best


@REGISTRY.add(
    "cdriver_small_roundtrip",
    "small_roundtrip through the example C driver (WDDM 1.x), against the Python driver in the same run",
    "ratio >= 0.8 of the Python driver's rate",
)
def cdriver_small_roundtrip() -> dict[str, Any]:
    library = _library()
    if library is None:
        return _unavailable("cdriver_small_roundtrip")
    ours, theirs = _roundtrips(native_package(str(library)), REFERENCE)
    return result("cdriver_small_roundtrip", ours, "per second", baseline=theirs)


@REGISTRY.add(
    "cdriver_transfer_1gib",
    "1 GiB Transfer local->system pages->local through the example C driver",
    "ratio >= 0.80 of np.copyto",
)
def cdriver_transfer_1gib() -> dict[str, Any]:
    library = _library()
    if library is None:
        return _unavailable("cdriver_transfer_1gib")
    size = 1 * GiB
    rig = _rig(native_package(str(library)), 2 * GiB, 4 * GiB)
    backing = rig.backing(size)
    local, system = Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)), Loc.mdl(backing)
    base = rig.segment_address(LOCAL, 0)
    rig.gpu.local.data[base : base + size] = 7

    def round_trip() -> None:
        rig.execute(DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=size, Source=local, Destination=system, Flags=BOTH))
        rig.execute(DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=size, Source=system, Destination=local, Flags=BOTH))

    ours = best_of(3, round_trip)
    start = int(backing.pfns[0]) << PAGE_SHIFT
    sys_view, loc_view = rig.gpu.system.data[start : start + size], rig.gpu.local.data[base : base + size]

    def baseline() -> None:
        np.copyto(sys_view, loc_view)
        np.copyto(loc_view, sys_view)

    theirs = best_of(3, baseline)
    return result("cdriver_transfer_1gib", 2 * size / ours / 1e9, "GB/s", baseline=2 * size / theirs / 1e9)


@REGISTRY.add(
    "check_driver_suite",
    "the whole check-driver run on the example C driver, segment and GpuMmu models",
    "seconds <= 60 on 2 cores",
)
def check_driver_suite() -> dict[str, Any]:
    library = _library()
    if library is None:
        return _unavailable("check_driver_suite")
    # Both models: the library alone (the segment model) and with its GpuMmu description (decision 0125).
    reports = [
        check_driver(native_package(str(library))),
        check_driver(checked_package(str(library), EXAMPLE.with_name("refgpu-wddm2.toml"), None)),
    ]
    seconds = sum(r.seconds for r in reports)
    return result(
        "check_driver_suite",
        seconds,
        "s",
        seconds=round(seconds, 2),
        conformant=all(r.conformant for r in reports),
        cases=sum(len(o) for r in reports for o in r.outcomes.values()),
    )
