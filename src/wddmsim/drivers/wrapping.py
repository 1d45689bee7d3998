"""A driver made of another: every DDI entry point forwarded, for wrappers to override the ones they change.

Used where one driver stands in front of another: the native bridge (a C library's ``DxgkDdiBuildPagingBuffer``
in front of a built-in base driver) and the test kit's breach drivers (one contract broken in front of the
reference driver).
"""

from __future__ import annotations

from wddmsim.ddi.allocation import (
    DXGKARG_ACQUIRESWIZZLINGRANGE,
    DXGKARG_CREATEALLOCATION,
    DXGKARG_DESTROYALLOCATION,
    DXGKARG_RELEASESWIZZLINGRANGE,
)
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.context import DXGKARG_CREATECONTEXT
from wddmsim.ddi.driver import (
    DXGKARG_GETROOTPAGETABLESIZE,
    DXGKARG_QUERYADAPTERINFO,
    DXGKARG_SETROOTPAGETABLE,
    DxgkrnlInterface,
    KernelModeDriver,
)
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.power import DEVICE_POWER_STATE, POWER_ACTION
from wddmsim.ddi.render import DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.ddi.submit import DXGKARG_RESETENGINE, DXGKARG_SUBMITCOMMAND
from wddmsim.drivers.package import DriverStatistics, SimulatedDriver


class WrappedDriver:
    """Forwards every ``KernelModeDriver`` entry point, and ``statistics()``, to ``inner``."""

    def __init__(self, inner: KernelModeDriver) -> None:
        self.inner = inner

    def statistics(self) -> DriverStatistics:
        """The wrapped driver's (``SimulatedDriver.statistics``): a wrapper holds nothing of its own."""
        if not isinstance(self.inner, SimulatedDriver):
            raise TypeError(f"{type(self.inner).__name__} gives no statistics()")
        return self.inner.statistics()

    def start_device(self, dxgkrnl: DxgkrnlInterface) -> NTSTATUS:
        return self.inner.start_device(dxgkrnl)

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        return self.inner.query_adapter_info(args)

    def create_allocation(self, args: DXGKARG_CREATEALLOCATION) -> NTSTATUS:
        return self.inner.create_allocation(args)

    def destroy_allocation(self, args: DXGKARG_DESTROYALLOCATION) -> NTSTATUS:
        return self.inner.destroy_allocation(args)

    def create_context(self, args: DXGKARG_CREATECONTEXT) -> NTSTATUS:
        return self.inner.create_context(args)

    def destroy_context(self, hContext: HANDLE) -> NTSTATUS:
        return self.inner.destroy_context(hContext)

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        return self.inner.build_paging_buffer(args)

    def submit_command(self, args: DXGKARG_SUBMITCOMMAND) -> NTSTATUS:
        return self.inner.submit_command(args)

    def render(self, hContext: HANDLE, args: DXGKARG_RENDER) -> NTSTATUS:
        return self.inner.render(hContext, args)

    def patch(self, hContext: HANDLE, args: DXGKARG_PATCH) -> NTSTATUS:
        return self.inner.patch(hContext, args)

    def acquire_swizzling_range(self, args: DXGKARG_ACQUIRESWIZZLINGRANGE) -> NTSTATUS:
        return self.inner.acquire_swizzling_range(args)

    def release_swizzling_range(self, args: DXGKARG_RELEASESWIZZLINGRANGE) -> NTSTATUS:
        return self.inner.release_swizzling_range(args)

    def set_root_page_table(self, args: DXGKARG_SETROOTPAGETABLE) -> None:
        self.inner.set_root_page_table(args)

    def get_root_page_table_size(self, args: DXGKARG_GETROOTPAGETABLESIZE) -> int:
        return self.inner.get_root_page_table_size(args)

    def reset_engine(self, args: DXGKARG_RESETENGINE) -> NTSTATUS:
        return self.inner.reset_engine(args)

    def reset_from_timeout(self) -> NTSTATUS:
        return self.inner.reset_from_timeout()

    def restart_from_timeout(self) -> NTSTATUS:
        return self.inner.restart_from_timeout()

    def set_power_state(
        self, DeviceUid: int, DevicePowerState: DEVICE_POWER_STATE, ActionType: POWER_ACTION
    ) -> NTSTATUS:
        return self.inner.set_power_state(DeviceUid, DevicePowerState, ActionType)


__all__ = ["WrappedDriver"]
