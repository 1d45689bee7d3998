"""A native driver as a driver package: ``--driver ./libmydriver.so`` or ``--driver ./mydriver.toml``.

The package composes the library with its base package (decision 0110): the base's configuration, user-mode half
and capabilities, and a :class:`~wddmsim.drivers.native.driver.NativeDriver` whose paging buffers the library
builds.  Each adapter loads its own instance of the library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final

from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.native.description import (
    AdapterDescription,
    ExecutorKind,
    ExecutorSpec,
    default_description,
    read_description,
    with_library,
)
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.native.pyexec import load_python_executor
from wddmsim.drivers.native.watchdog import TDR_DELAY
from wddmsim.drivers.package import (
    DriverCapabilities,
    DriverConfiguration,
    DriverModel,
    DriverPackage,
    DriverSettings,
    SimulatedDriver,
)
from wddmsim.hw.gpu import Gpu

DESCRIPTION_SUFFIX: Final = ".toml"


@final
@dataclass(frozen=True, slots=True)
class NativeConfig:
    """A native driver's configuration: its description and the base package's own configuration."""

    description: AdapterDescription
    base: Any

    @property
    def model(self) -> DriverModel:
        model: DriverModel = self.base.model
        return model

    def validate(self) -> None:
        self.base.validate()
        if not self.description.library.is_file():
            raise ConfigurationError("library", str(self.description.library), "no such file")
        if self.description.executor.kind is ExecutorKind.PYTHON:
            load_python_executor(self.description.executor)  # refused here, naming executor.class


def native_package(name: str, *, setting: str = "driver") -> DriverPackage:
    """The package of the library or adapter description at path ``name``."""
    path = Path(name)
    if path.suffix == DESCRIPTION_SUFFIX:
        description = read_description(path, setting=setting)
    elif path.is_file():
        description = default_description(path)
    else:
        raise ConfigurationError(setting, name, "must be a shared library or an adapter description (no such file)")
    return described_package(name, description)


def checked_package(library: str, adapter: Path | None, executor: ExecutorSpec | None) -> DriverPackage:
    """``check-driver LIB [--adapter FILE] [--executor SPEC]``: the library, described by FILE (its ``library``
    key replaced by LIB), its executor replaced by SPEC.  Every call into it is bounded in wall time -- the
    executor by ``tdr_delay`` (2 s when it is 0), the entry points by ``call_timeout``, else ``tdr_delay`` -- so that
    one that never returns is a finding, not a hang (decision 0132)."""
    path = Path(library)
    if not path.is_file():
        raise ConfigurationError("LIBRARY", library, "must be a shared library (no such file)")
    description = read_description(adapter, setting="--adapter") if adapter is not None else default_description(path)
    description = with_library(description, path)
    if executor is not None:
        description = dataclasses.replace(description, executor=executor)
    tdr_delay = description.tdr_delay or TDR_DELAY  # check-driver never waits for ever, even with tdr_delay = 0
    description = dataclasses.replace(
        description, tdr_delay=tdr_delay, call_timeout=description.call_timeout or tdr_delay
    )
    return described_package(library, description)


def described_package(name: str, description: AdapterDescription) -> DriverPackage:
    """The package of ``description`` over its built-in base."""
    from wddmsim.drivers.registry import BUILTIN, driver_package  # the registry imports this module on demand

    if description.base not in BUILTIN:
        raise ConfigurationError("base", description.base, f"must be a built-in driver package: {sorted(BUILTIN)}")
    base = driver_package(description.base, setting="base")
    return _package(name, description, base)


def _package(name: str, description: AdapterDescription, base: DriverPackage) -> DriverPackage:
    def settle(config: Any) -> NativeConfig:
        if description.model is not None and config.model is not description.model:
            config = base.configure(DriverSettings(model=description.model))
        return NativeConfig(description, config)

    def configure(settings: DriverSettings) -> DriverConfiguration:
        if description.model is not None:
            settings = dataclasses.replace(settings, model=description.model)
        return NativeConfig(description, base.configure(settings))

    def create(gpu: Gpu, config: NativeConfig) -> SimulatedDriver:
        library = NativeLibrary(description.library)
        driver = base.create(gpu, config.base)
        return NativeDriver(gpu, driver, config.model, library, description)

    def capabilities(config: NativeConfig) -> DriverCapabilities:
        found = base.capabilities(config.base)
        return dataclasses.replace(
            found,
            swizzling=found.swizzling and description.swizzling,
            special_lock_transfer=found.special_lock_transfer and description.claims_name("SpecialLockTransfer"),
        )

    return DriverPackage(
        name=name,
        description=f"native driver {description.library.name} over the {base.name} package",
        config_type=NativeConfig,
        default_config=lambda: settle(base.default_config()),
        configure=configure,
        create=create,
        umd=base.umd,
        capabilities=capabilities,
    )


__all__ = ["NativeConfig", "checked_package", "described_package", "native_package"]
