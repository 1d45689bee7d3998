"""A Python executor named by an adapter description: ``[executor] kind = "python"``, ``class = "module:Class"``
(issue 21 item 3(b); decision 0111).

The class is loaded like ``--policy module:Class``: imported, instantiated without arguments, and it must be
callable as :class:`wddmsim.hw.engine.Executor` -- ``(buffer, private_data, services) -> None | nanoseconds``.
"""

from __future__ import annotations

import importlib

from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.native.description import ExecutorSpec
from wddmsim.hw.engine import Executor

SETTING = "executor.class"


def load_python_executor(spec: ExecutorSpec) -> Executor:
    """The executor ``spec.target`` names, or :class:`ConfigurationError` naming ``executor.class``."""
    module_name, _, class_name = spec.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:  # the module itself, or one it imports, is missing
        raise ConfigurationError(SETTING, spec.target, f"does not import: {error}") from error
    target = getattr(module, class_name, None)
    if not isinstance(target, type):
        raise ConfigurationError(SETTING, spec.target, f"module {module_name} has no class {class_name!r}")
    try:
        executor = target()
    except Exception as error:  # a user's constructor may fail in any way; refuse it as configuration
        raise ConfigurationError(SETTING, spec.target, f"cannot be constructed without arguments: {error}") from error
    if not callable(executor):
        raise ConfigurationError(
            SETTING, spec.target, "must be an executor: callable as (buffer, private_data, services)"
        )
    return executor  # type: ignore[no-any-return]


__all__ = ["load_python_executor"]
