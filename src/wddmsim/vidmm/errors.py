"""Errors VidMm raises."""

from __future__ import annotations

from wddmsim.core.errors import WddmsimError
from wddmsim.ddi.status import NTSTATUS, DdiError


class DeviceRemoved(DdiError):
    """The adapter was reset (TDR); the work that needed it did not complete.  ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(NTSTATUS.STATUS_DEVICE_REMOVED, f"adapter reset: {reason}")
        self.reason = reason


class VidMmError(WddmsimError):
    """VidMm cannot go on with what the driver gave it (a segment, a capability) -- a configuration problem."""
