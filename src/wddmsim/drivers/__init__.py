"""Driver packages: the driver seam of the adapter (decision 0070).

:mod:`~wddmsim.drivers.package` is the interface (a package, its statistics, its user-mode half, its
capabilities), :mod:`~wddmsim.drivers.resources` the driver-neutral description of a resource an application
asks for, :mod:`~wddmsim.drivers.registry` the packages by name, :mod:`~wddmsim.drivers.reference` the reference
driver as one package.  Only the packages themselves and the composition root import a concrete driver.
"""

from wddmsim.drivers.package import (
    DriverCapabilities,
    DriverConfiguration,
    DriverModel,
    DriverPackage,
    DriverProbe,
    DriverSettings,
    DriverStatistics,
    SimulatedDriver,
    UserModeDriver,
)
from wddmsim.drivers.registry import driver_package, register
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage, SurfaceLevel

__all__ = [
    "DriverCapabilities",
    "DriverConfiguration",
    "DriverModel",
    "DriverPackage",
    "DriverProbe",
    "DriverSettings",
    "DriverStatistics",
    "ResourceDesc",
    "ResourceKind",
    "ResourceUsage",
    "SimulatedDriver",
    "SurfaceLevel",
    "UserModeDriver",
    "driver_package",
    "register",
]
