"""Every benchmark, registered: import ``REGISTRY`` from here, not from the modules that fill it."""

from __future__ import annotations

from wddmsim.bench import native_cases as _native_cases  # noqa: F401 - registers its benchmarks
from wddmsim.bench import run_cases as _run_cases  # noqa: F401 - registers its benchmarks
from wddmsim.bench import sweep_cases as _sweep_cases  # noqa: F401 - registers its benchmarks
from wddmsim.bench import vidmm_cases as _vidmm_cases  # noqa: F401 - registers its benchmarks
from wddmsim.bench.cases import REGISTRY

__all__ = ["REGISTRY"]
