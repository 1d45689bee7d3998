"""The adapter-reset path (TDR; design decision D6), where every fatal driver error goes.

``trigger`` records why, calls ``DxgkDdiResetFromTimeout`` (on return the GPU touches no memory) and
``DxgkDdiRestartFromTimeout``, retires every submitted fence, and raises :class:`~.errors.DeviceRemoved`.
VidMm assumes a reset loses every memory segment's bytes (decision 0055): the paging process's tables, which VidMm
writes by CPU alone, are copied out before and written back after; every process's page-table tree is treated as
evicted and rebuilt from VidMm's records before the process next runs.
What happens to allocations (contents of memory segments lost, evictions reported as zero-size Transfers,
aperture mappings unmapped) is the residency manager's part of the path.  Every part's steps are handed to the path
at construction, in the order they run (the parts built after it are reached through the composition's late
calls); nothing is added to it later.
A reset whose own recovery fails -- a paging call of those steps takes the reset path again -- ends recovery
(decision 0239, a TDR that cannot recover is a bugcheck on Windows): the adapter is left removed, every later reset
is refused at once with both reasons, and nothing recurses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NoReturn, final

from wddmsim.core.events import EventLog
from wddmsim.ddi.driver import DXGKARG_COLLECTDBGINFO, CollectsDbgInfo, KernelModeDriver
from wddmsim.ddi.status import NTSTATUS
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import AdapterReset
from wddmsim.vidmm.gpu.scheduler import GpuScheduler


@final
class ResetPath:
    """``DxgkDdiResetFromTimeout`` / ``DxgkDdiRestartFromTimeout`` and what VidMm's parts do around them."""

    def __init__(
        self,
        driver: KernelModeDriver,
        scheduler: GpuScheduler,
        events: EventLog,
        *,
        before: Sequence[Callable[[], None]] = (),
        after: Sequence[Callable[[str], None]] = (),
    ) -> None:
        self.driver = driver
        self.scheduler = scheduler
        self.events = events
        self.count = 0
        self.reasons: list[str] = []
        self.removed: str | None = None
        """Why the adapter is gone for good (a reset's recovery failed, decision 0239); None while it works."""
        self._recovering: str | None = None
        """The reason of the reset whose steps are running: a reset asked for meanwhile ends recovery."""
        self.before = tuple(before)
        """Called before ``DxgkDdiResetFromTimeout`` (VidMm keeps a copy of what it wrote itself by CPU)."""
        self.after = tuple(after)
        """Called after ``DxgkDdiRestartFromTimeout``, in order: the paging process's tables come back first."""

    def trigger(self, reason: str) -> NoReturn:
        """Reset the adapter because of ``reason`` (with what the driver's ``DxgkDdiCollectDbgInfo`` reports, when
        it exports it) and raise ``DeviceRemoved``.  Asked for while a reset's steps run, or once the adapter is
        removed, no driver is called and nothing runs again (decision 0239)."""
        if self.removed is not None:
            raise DeviceRemoved(self.removed)
        if self._recovering is not None:
            self._end_recovery(self._recovering, reason)
        reason = self._with_driver_info(reason)
        self.count += 1
        self.reasons.append(reason)
        self.events.emit(AdapterReset(time=self.scheduler.clock.now, reason=reason))
        self._recovering = reason
        try:
            self._recover(reason)
        finally:
            self._recovering = None
        raise DeviceRemoved(self.removed or reason)

    def _recover(self, reason: str) -> None:
        for prepare in self.before:
            prepare()
        try:
            self.driver.reset_from_timeout()
            self.driver.restart_from_timeout()
        except Exception as error:  # a driver that cannot even reset: record it, the device is gone anyway
            self.reasons.append(f"DxgkDdiResetFromTimeout failed: {error}")
        self.scheduler.abandon()
        for listener in self.after:
            listener(reason)

    def _end_recovery(self, reset: str, failure: str) -> NoReturn:
        """A reset asked for by the steps of the reset for ``reset``: recovery failed, the adapter stays removed.
        The steps catch this ``DeviceRemoved`` and stop; the outer reset raises the same reason."""
        self.removed = f"{reset}; recovery failed, the adapter is removed: {failure}"
        self.reasons.append(f"recovery failed: {failure}")
        raise DeviceRemoved(self.removed)

    def _with_driver_info(self, reason: str) -> str:
        """``reason``, and the text of ``DxgkDdiCollectDbgInfo`` (decision 0133): the driver, not VidMm, knows why
        its engine stopped (an executor's status, a call that timed out)."""
        if not isinstance(self.driver, CollectsDbgInfo):
            return reason
        args = DXGKARG_COLLECTDBGINFO(pBuffer=bytearray(DEBUG_INFO_SIZE), BufferSize=DEBUG_INFO_SIZE)
        try:
            status = self.driver.collect_dbg_info(args)
        except Exception as error:  # the driver's failure to report must not hide the reset's own reason
            return f"{reason}; DxgkDdiCollectDbgInfo raised {type(error).__name__}: {error}"
        text = bytes(args.pBuffer[:DEBUG_INFO_SIZE]).split(b"\0", 1)[0].decode("utf-8", "replace").strip()
        if status != NTSTATUS.STATUS_SUCCESS or not text:
            return reason
        return f"{reason}; the driver reports: {text}"


DEBUG_INFO_SIZE = 4096
"""``BufferSize`` VidMm gives ``DxgkDdiCollectDbgInfo``."""
