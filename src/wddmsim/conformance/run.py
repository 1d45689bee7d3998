"""``wddmsim check-driver``: every claimed paging operation through every check, on a fresh rig.

The operations checked are those the driver claims: a native driver's adapter description names them; a built-in
package is asked for every operation the cases cover in its model.  Each operation's cases run on one rig (one
adapter); a case that breaks the adapter (a GPU fault) leaves the next case a reset engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from wddmsim.conformance.cases import CASES, Case
from wddmsim.conformance.checks import CHECKS, Finding, Outcome, run_case
from wddmsim.conformance.gpummu import GPUMMU_CASES
from wddmsim.conformance.rig import Rig
from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.package import DriverConfiguration, DriverModel, DriverPackage, DriverSettings

SEGMENT_MODEL = (
    "Transfer",
    "Fill",
    "DiscardContent",
    "ReadPhysical",
    "WritePhysical",
    "MapApertureSegment",
    "UnmapApertureSegment",
)
GPUMMU_MODEL = (
    "Transfer",
    "Fill",
    "DiscardContent",
    "MapApertureSegment",
    "UnmapApertureSegment",
    "TransferVirtual",
    "FillVirtual",
    "UpdatePageTable",
    "FlushTlb",
    "CopyPageTableEntries",
    "SignalMonitoredFence",
)
"""What a built-in package is asked in the GpuMmu model: the operations VidMm issues there that have cases
(ReadPhysical and WritePhysical are WDDM 1.x only; decision 0125)."""
ALL_CASES: Final[dict[str, Callable[[Rig], list[Case]]]] = {**CASES, **GPUMMU_CASES}


@dataclass(slots=True)
class Report:
    """What ``check-driver`` found: per operation, its cases' outcomes."""

    driver: str
    model: str
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)
    unchecked: list[str] = field(default_factory=list)
    """Claimed operations no case covers yet (listed, never counted as passed)."""
    seconds: float = 0.0

    @property
    def findings(self) -> list[Finding]:
        return [f for outcomes in self.outcomes.values() for o in outcomes for f in o.findings]

    @property
    def conformant(self) -> bool:
        return not self.findings

    def status(self, operation: str, check: str) -> str:
        """``pass``, ``FAIL`` or ``-`` (not reached: an earlier check of a case failed)."""
        outcomes = self.outcomes.get(operation, [])
        if any(o.failed(check) for o in outcomes):
            return "FAIL"
        return "pass" if any(check in o.ran for o in outcomes) else "-"


def claimed_operations(package: DriverPackage, config: DriverConfiguration) -> list[str]:
    """What ``package`` claims: its adapter description's operations, or every covered one of its model."""
    description = getattr(config, "description", None)
    names = getattr(description, "operation_names", None)
    if isinstance(names, list):
        return names
    return list(SEGMENT_MODEL) if config.model is DriverModel.WDDM1 else list(GPUMMU_MODEL)


def configuration(package: DriverPackage, model: DriverModel | None = None) -> DriverConfiguration:
    """``package`` configured for ``model`` (None: the segment model, unless the package's description fixes
    its own); a model the package cannot present is a :class:`ConfigurationError` naming ``--model``."""
    config = package.default_config()
    if model is None:
        return (
            config if config.model is DriverModel.WDDM1 else package.configure(DriverSettings(model=DriverModel.WDDM1))
        )
    models = package.capabilities(config).driver_models
    if model not in models:
        shown = ", ".join(sorted(m.value for m in models))
        raise ConfigurationError("--model", model.value, f"the {package.name} package presents {shown} only")
    return package.configure(DriverSettings(model=model))


def _cases(
    make: Callable[[Rig], list[Case]], package: DriverPackage, config: DriverConfiguration, operation: str
) -> list[Case]:
    return [c for c in make(Rig(package, config)) if c.operation == operation]


def check_driver(
    package: DriverPackage,
    config: DriverConfiguration | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Run every check on every claimed operation of ``package`` (configured as ``config``, else its default)."""
    started = time.perf_counter()
    if config is None:
        config = configuration(package)
    report = Report(package.name, config.model.value)
    for operation in claimed_operations(package, config):
        make = ALL_CASES.get(operation)
        if make is None:
            report.unchecked.append(operation)
            continue
        outcomes = []
        for index in range(len(_cases(make, package, config, operation))):
            # Each case on an adapter of its own: a driver left mid-operation by a failed case cannot spoil the next.
            rig = Rig(package, config)
            case = [c for c in make(rig) if c.operation == operation][index]
            if progress is not None:
                progress(f"{operation}: {case.name}")
            outcomes.append(run_case(rig, case))
        report.outcomes[operation] = outcomes
    report.seconds = time.perf_counter() - started
    return report


__all__ = ["CHECKS", "GPUMMU_MODEL", "SEGMENT_MODEL", "Report", "check_driver", "claimed_operations", "configuration"]
