"""The root of the error hierarchy.

Each layer defines its own subclasses next to the code that raises them.  Expected outcomes of a protocol
(``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER`` from ``DxgkDdiBuildPagingBuffer``) are return values, not
exceptions.
"""

from __future__ import annotations


class WddmsimError(Exception):
    """Base class of every error wddmsim raises on purpose."""


class ConfigurationError(WddmsimError):
    """A configuration value breaks a rule; the message names the setting, its value and the rule."""

    def __init__(self, setting: str, value: object, rule: str) -> None:
        super().__init__(f"{setting}={value!r}: {rule}")
        self.setting = setting
        self.value = value
        self.rule = rule


class UnfitArgument(WddmsimError):
    """A value the caller of a driver entry point passes does not fit the member the driver's ABI gives it (a C
    bridge's structure): refused before the driver runs, naming the member path, the value and the rule.  The fault
    is the caller's value, never the driver's (decision 0237)."""
