"""Power states (``DxgkDdiSetPowerState``, dispmprt.h; ``DEVICE_POWER_STATE`` and ``POWER_ACTION``, wdm.h).

VidMm puts the adapter in ``PowerDeviceD3`` before the system sleeps or hibernates and back in
``PowerDeviceD0`` when it wakes; in between, memory segments the driver did not report as preserved
(``DXGK_SEGMENTFLAGS.PreservedDuringStandby`` / ``PreservedDuringHibernate`` /
``PartiallyPreservedDuringHibernate``) lose their contents.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

DISPLAY_ADAPTER_HW_ID: Final = 0xFFFF_FFFF
"""``DeviceUid`` naming the display adapter itself (video.h); any other value names a child device."""


class DEVICE_POWER_STATE(IntEnum):
    PowerDeviceUnspecified = 0
    PowerDeviceD0 = 1
    PowerDeviceD1 = 2
    PowerDeviceD2 = 3
    PowerDeviceD3 = 4


class POWER_ACTION(IntEnum):
    PowerActionNone = 0
    PowerActionReserved = 1
    PowerActionSleep = 2
    PowerActionHibernate = 3
    PowerActionShutdown = 4
    PowerActionShutdownReset = 5
    PowerActionShutdownOff = 6
    PowerActionWarmEject = 7
    PowerActionDisplayOff = 8
