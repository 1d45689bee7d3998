"""Errors VidMm raises."""

from __future__ import annotations

from wddmsim.ddi.status import NTSTATUS, DdiError


class DeviceRemoved(DdiError):
    """The adapter was reset (TDR); the work that needed it did not complete.  ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(NTSTATUS.STATUS_DEVICE_REMOVED, f"adapter reset: {reason}")
        self.reason = reason
