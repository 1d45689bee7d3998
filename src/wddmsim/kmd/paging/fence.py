"""``DXGK_OPERATION_SIGNAL_MONITORED_FENCE`` (16): a SIGNAL packet writes the 64-bit value at the fence's GPU VA."""

from __future__ import annotations

from wddmsim.core.units import U64_MAX
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.dma import single_packet
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState


def build_signal_monitored_fence(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_SIGNAL_MONITORED_FENCE``."""
    p = args.SignalMonitoredFence
    if not state.wddm2:
        raise DriverContractError("Operation", int(p.OPERATION), "SignalMonitoredFence is a WDDM 2.2 operation")
    if p.MonitoredFenceGpuVa % 8 or not 0 < p.MonitoredFenceGpuVa < 1 << 60:
        raise DriverContractError(
            "SignalMonitoredFence.MonitoredFenceGpuVa", p.MonitoredFenceGpuVa, "must be a non-null 8-byte-aligned VA"
        )
    if not 0 <= p.MonitoredFenceValue <= U64_MAX:
        raise DriverContractError("SignalMonitoredFence.MonitoredFenceValue", p.MonitoredFenceValue, "is a UINT64")
    return single_packet(args, cmd.Signal(hw_address(Space.GPU_VA, p.MonitoredFenceGpuVa), p.MonitoredFenceValue))
