"""Driver packages by name: the one place the composition root, scenario files, the CLI and ``--list`` read.

Built-in packages are named here and imported only when asked for (a package imports its concrete driver).
Others register themselves (:func:`register`: the shipped fakes of :mod:`wddmsim.testing.fakes` do, on import)
or are named from outside as ``module:attribute`` -- an attribute holding a :class:`DriverPackage` -- or, for a
driver built as a shared library, by its path (``./libmydriver.so`` or ``./mydriver.toml``: the native bridge,
:mod:`wddmsim.drivers.native`).
"""

from __future__ import annotations

import importlib
import re
from typing import Final

from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.package import DriverPackage

BUILTIN: Final[dict[str, str]] = {
    "reference": "wddmsim.drivers.reference:REFERENCE",
    "simple": "wddmsim.drivers.simple:SIMPLE",
}
"""Name -> ``module:attribute`` of the packages shipped with the library."""

DEFAULT: Final = "reference"

_registered: dict[str, DriverPackage] = {}

_DOTTED: Final = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def register(package: DriverPackage) -> DriverPackage:
    """Make ``package`` known by its name (registering the same package again is harmless)."""
    known = _registered.get(package.name)
    if package.name in BUILTIN or (known is not None and known is not package):
        raise ConfigurationError("driver", package.name, "is already the name of another driver package")
    _registered[package.name] = package
    return package


def names() -> list[str]:
    """Every package known by name: the built-in ones, then those registered."""
    return [*BUILTIN, *sorted(n for n in _registered if n not in BUILTIN)]


def described() -> list[tuple[str, str]]:
    """``(name, description)`` of every package known by name (for ``--list``)."""
    return [(name, driver_package(name).description) for name in names()]


def driver_package(name: str | DriverPackage, *, setting: str = "driver") -> DriverPackage:
    """The package called ``name`` (a registered name or ``module:attribute``); a package is returned as is.

    An unknown name, a module that does not import or an attribute that is not a package is refused with a
    :class:`ConfigurationError` naming ``setting``, the value and the rule.
    """
    if isinstance(name, DriverPackage):
        return name
    if not isinstance(name, str) or not name:
        raise ConfigurationError(setting, name, f"must name a driver package: {_choices()}")
    found = _registered.get(name)
    if found is not None:
        return found
    if name in BUILTIN:
        return _load(BUILTIN[name], setting, name)
    if _names_native(name):
        from wddmsim.drivers.native.package import native_package  # ctypes and the bridge: only when asked for

        return native_package(name, setting=setting)
    if ":" in name:
        return _load(name, setting, name)
    raise ConfigurationError(setting, name, f"must name a driver package: {_choices()}")


def _choices() -> str:
    return (
        f"one of {', '.join(names())}, module:attribute for a package from outside, or the path of a native "
        "driver (a .so library, or the .toml adapter description beside it)"
    )


def _names_native(name: str) -> bool:
    """A path to a shared library or an adapter description (kept here so the bridge loads only when named)."""
    return name.endswith((".so", ".dylib", ".toml")) or ".so." in name


def _load(path: str, setting: str, value: str) -> DriverPackage:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(setting, value, "module:attribute needs both a module and an attribute")
    if not _DOTTED.fullmatch(module_name):
        raise ConfigurationError(
            setting, value, f"module {module_name!r} must be a dotted Python name (no relative import)"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # a module that fails as it is imported is bad input here, not a crash
        raise ConfigurationError(
            setting, value, f"module {module_name} cannot be imported ({type(error).__name__}: {error})"
        ) from None
    package = getattr(module, attribute, None)
    if not isinstance(package, DriverPackage):
        raise ConfigurationError(
            setting, value, f"{module_name}.{attribute} must be a DriverPackage (wddmsim.drivers.package)"
        )
    return package


__all__ = ["BUILTIN", "DEFAULT", "described", "driver_package", "names", "register"]
