"""``DxgkDdiSetPowerState`` for this GPU: the request checked, and the driver's hidden memory kept across a
power-down.

Local memory above the segments a driver reports (the aperture table) is the driver's own: VidMm never pages
it, so the driver saves it before a power-down that loses it and writes it back in D0.  What a power-down
loses is the GPU's (``Gpu.lost_in``: all of local memory, or what a hibernate does not keep).  What else a
driver forgets when the GPU goes down (a pending transfer, patched buffers) is its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from wddmsim.ddi.power import DEVICE_POWER_STATE, DISPLAY_ADAPTER_HW_ID, POWER_ACTION
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.hw.gpu import Gpu


@dataclass(frozen=True, slots=True)
class PowerRequest:
    """A ``DxgkDdiSetPowerState`` call for the adapter itself: the state, and whether the action hibernates."""

    state: DEVICE_POWER_STATE
    hibernate: bool


def power_request(
    DeviceUid: int, DevicePowerState: DEVICE_POWER_STATE, ActionType: POWER_ACTION
) -> PowerRequest | None:
    """The request, checked; None for a child device (this adapter has none: the call changes nothing and
    succeeds, the OS may still name a departed child).  Values outside ``DEVICE_POWER_STATE`` and
    ``POWER_ACTION``, or ``PowerDeviceUnspecified`` for the adapter, are ``STATUS_INVALID_PARAMETER``."""
    try:
        state = DEVICE_POWER_STATE(DevicePowerState)
        action = POWER_ACTION(ActionType)
    except ValueError:
        raise DdiError(
            NTSTATUS.STATUS_INVALID_PARAMETER,
            f"DevicePowerState={DevicePowerState!r}, ActionType={ActionType!r}: not DEVICE_POWER_STATE and "
            "POWER_ACTION values",
        ) from None
    if DeviceUid != DISPLAY_ADAPTER_HW_ID:
        return None
    if state == DEVICE_POWER_STATE.PowerDeviceUnspecified:
        raise DdiError(NTSTATUS.STATUS_INVALID_PARAMETER, "DevicePowerState=PowerDeviceUnspecified: name a state")
    return PowerRequest(state, action == POWER_ACTION.PowerActionHibernate)


@final
class HiddenMemory:
    """The local memory ``[base, local_size)`` the driver owns and never reports, across power states."""

    __slots__ = ("base", "gpu", "powered_down", "saved")

    def __init__(self, gpu: Gpu, base: int) -> None:
        self.gpu = gpu
        self.base = base
        self.powered_down = False
        """The adapter is in a D1-D3 state."""
        self.saved: bytes | None = None
        """The hidden memory, saved before a power-down that loses it."""

    def apply(self, request: PowerRequest) -> bool:
        """Go to ``request.state``: D0 writes the saved bytes back; D1-D3 saves them if the power-down loses
        them, then powers the GPU down.  True when this call powered the GPU down (the driver forgets then what
        the GPU forgot); a second power-down is nothing."""
        if request.state == DEVICE_POWER_STATE.PowerDeviceD0:
            if self.saved is not None:
                self.gpu.local.write(self.base, self.saved)
                self.saved = None
            self.powered_down = False
            return False
        if self.powered_down:
            return False
        size = self.gpu.config.local_size
        if self.gpu.lost_in(request.hibernate)[0] < size:
            self.saved = self.gpu.local.read(self.base, size - self.base)
        self.gpu.power_down(request.hibernate)
        self.powered_down = True
        return True


__all__ = ["HiddenMemory", "PowerRequest", "power_request"]
