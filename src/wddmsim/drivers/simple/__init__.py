"""The simple driver: a minimal WDDM 1.x segment-model kernel-mode driver for the simulated GPU (decision 0075).

It proves the driver seam: VidMm, the workloads and the invariant checkers run over it exactly as over the
reference driver, and it imports nothing of the reference driver (an import-linter contract keeps it so).
"""

from wddmsim.drivers.simple.allocations import SimpleUmd
from wddmsim.drivers.simple.config import SimpleDriverConfig
from wddmsim.drivers.simple.driver import SimpleDriver
from wddmsim.drivers.simple.package import SIMPLE

__all__ = ["SIMPLE", "SimpleDriver", "SimpleDriverConfig", "SimpleUmd"]
