"""The object table: every handle VidMm gave out, and the object it names.

Processes, devices, paging queues, monitored-fence sync objects, contexts and allocations live here, and so does
the one handle counter they share (decision 0052: a handle is never given twice, and no two kinds of object share
one).  The VA spaces, the lock and submission paths and teardown look objects up here -- not in the residency
manager, which only decides where allocations live (decision 0060).

A handle that names no live object of the wanted kind is refused with ``E_INVALIDARG`` naming the argument (stale,
forged and wrong-type handles alike), as the user-mode callbacks do.
"""

from __future__ import annotations

from typing import TypeVar, final

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, PagingQueue, Process, SyncObject

T = TypeVar("T")

FIRST_HANDLE = 0x4000_0000
"""VidMm's handles begin above this (the first one given is ``FIRST_HANDLE + 4``)."""
CONTEXT_HANDLES = 0x8000_0000
"""Where the driver's context handles begin: VidMm's own handles stay below."""


def bad(argument: str, value: object, rule: str) -> InvalidArgument:
    """``E_INVALIDARG`` naming the argument, its value and the rule it breaks."""
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def live(table: dict[HANDLE, T], handle: HANDLE, argument: str, what: str) -> T:
    """The object a handle names, or ``E_INVALIDARG`` naming the argument (stale, forged or wrong-type handles)."""
    found = table.get(handle) if isinstance(handle, int) else None
    if found is None:
        raise bad(argument, handle, f"is not a live {what}")
    return found


@final
class ObjectTable:
    """Handle -> process, device, paging queue, sync object, context, allocation."""

    def __init__(self) -> None:
        self.processes: dict[HANDLE, Process] = {}
        self.devices: dict[HANDLE, Device] = {}
        self.queues: dict[HANDLE, PagingQueue] = {}
        self.allocations: dict[HANDLE, VidMmAllocation] = {}
        self.sync_objects: dict[HANDLE, SyncObject] = {}
        self.contexts: dict[HANDLE, Device] = {}
        """Context (the driver's handle) -> the device it belongs to."""
        self._next_handle = FIRST_HANDLE

    def new_handle(self) -> HANDLE:
        """A handle never given before: one counter for processes, devices, queues, fences and allocations, so a
        destroyed object's handle is never reused and no two kinds of object share one (decision 0052)."""
        if self._next_handle + 4 >= CONTEXT_HANDLES:
            raise DdiError(NTSTATUS.STATUS_NO_MEMORY, "every VidMm handle has been used")
        self._next_handle += 4
        return HANDLE(self._next_handle)

    # --- look-ups (refused with E_INVALIDARG naming the argument) --------------------------------------------

    def process(self, handle: HANDLE, argument: str = "hProcess") -> Process:
        return live(self.processes, handle, argument, "process")

    def device(self, handle: HANDLE, argument: str = "hDevice") -> Device:
        return live(self.devices, handle, argument, "device")

    def allocation(self, handle: HANDLE, argument: str = "hAllocation") -> VidMmAllocation:
        return live(self.allocations, handle, argument, "allocation")

    def queue(self, handle: HANDLE, argument: str = "hPagingQueue") -> PagingQueue:
        return live(self.queues, handle, argument, "paging queue")

    def sync_object(self, handle: HANDLE, argument: str = "hFenceObject") -> SyncObject:
        return live(self.sync_objects, handle, argument, "monitored fence")

    def context_device(self, handle: HANDLE, argument: str = "hContext") -> Device:
        return live(self.contexts, handle, argument, "context")

    # --- who belongs to whom ---------------------------------------------------------------------------------

    def register_context(self, context: HANDLE, device: Device) -> None:
        self.contexts[context] = device

    def devices_of(self, process: Process) -> list[Device]:
        return [d for d in self.devices.values() if d.process is process]

    def contexts_of(self, process: Process) -> list[HANDLE]:
        return [c for c, d in self.contexts.items() if d.process is process]

    def allocations_of(self, device: Device) -> list[VidMmAllocation]:
        return [a for a in self.allocations.values() if a.device is device]
