"""Processes and devices as user mode sees them: the runtime callbacks of one device, over VidMm.

A :class:`UserProcess` is one process's view of the adapter: its handles and its CPU.  A :class:`UserDevice`
is a device it created, with the ``pfn*Cb`` callbacks a user-mode driver calls (``D3DDDI_DEVICECALLBACKS``).
Before VidMm sees a call, every handle in it is checked to be one this process (and, where the DDI says so,
this device) owns: handles are per process in Windows, so another process's handle is as invalid as a random
number -- the first wall of isolation between processes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

from wddmsim.core.addresses import CpuVa, FenceValue
from wddmsim.core.pointer import ByteArray
from wddmsim.ddi.allocation import (
    D3DDDI_ALLOCATIONINFO,
    D3DDDICB_ALLOCATE,
    D3DDDICB_DEALLOCATE,
    D3DDDICB_SETPRIORITY,
)
from wddmsim.ddi.base import HANDLE, NULL
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCK2, D3DDDICB_UNLOCK, D3DDDICB_UNLOCK2
from wddmsim.ddi.render import D3DDDI_ALLOCATIONLIST, D3DDDICB_RENDER
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_MAKERESIDENT,
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DDDICB_EVICT,
    D3DKMT_CHANGEVIDEOMEMORYRESERVATION,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_RECLAIMALLOCATIONS2,
    D3DKMT_REGISTERTRIMNOTIFICATION,
    D3DKMT_TRIMNOTIFICATION,
    D3DKMT_UNREGISTERTRIMNOTIFICATION,
)
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
)
from wddmsim.vidmm.device import Device, Process
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.manager import VideoMemoryManager
from wddmsim.vidmm.vaspace import GpuVaSpaces


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def _uint(argument: str, value: object, bits: int = 64) -> int:
    """``value`` as a C unsigned integer of ``bits`` bits, or ``E_INVALIDARG`` naming the argument (a Python
    error must never escape a callback: None, a float or a negative count is a bad argument like any other)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << bits:
        raise _bad(argument, value, f"must be a {bits}-bit unsigned integer")
    return value


def _integer(argument: str, value: object) -> None:
    """``E_INVALIDARG`` naming the argument unless ``value`` is an integer (its range is the callee's to check)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(argument, value, "must be a 64-bit unsigned integer")


def _user_mode(error: DdiError) -> DdiError:
    """A kernel refusal as ``pfnAllocateCb`` returns it: ``E_OUTOFMEMORY`` for no memory, ``E_INVALIDARG``
    (the same argument named) for what the driver or VidMm refused.  An adapter reset is no refusal of the
    caller's arguments: ``DeviceRemoved`` goes up as it is (decision 0239)."""
    if isinstance(error.status, HRESULT) or isinstance(error, DeviceRemoved):
        return error
    if error.status == NTSTATUS.STATUS_NO_MEMORY or error.status == NTSTATUS.STATUS_GRAPHICS_NO_VIDEO_MEMORY:
        return DdiError(HRESULT.E_OUTOFMEMORY, str(error).rsplit(" [", 1)[0])
    if isinstance(error, InvalidArgument):
        return InvalidArgument(error.argument, error.value, error.rule, HRESULT.E_INVALIDARG)
    return InvalidArgument("pAllocationInfo", None, str(error), HRESULT.E_INVALIDARG)


def _struct(args: object, kind: type, argument: str = "pData") -> None:
    """The callback's argument structure is the one the DDI names (not None, not another structure)."""
    if not isinstance(args, kind):
        raise _bad(argument, type(args).__name__, f"must be a {kind.__name__}")


def _bytes(argument: str, value: object) -> None:
    """A buffer argument: bytes (not None, a string or a number)."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise _bad(argument, type(value).__name__, "must be a byte buffer")


def _handles(argument: str, value: object) -> tuple[object, ...]:
    """A handle list: a tuple or list (its entries are checked as handles by the caller)."""
    if not isinstance(value, (tuple, list)):
        raise _bad(argument, type(value).__name__, "must be a list of handles")
    return tuple(value)


@final
class Runtime:
    """The user-mode side of one adapter: processes open it and create devices on it."""

    def __init__(self, vidmm: VideoMemoryManager) -> None:
        self.vidmm = vidmm

    def open_process(self) -> UserProcess:
        """A new process using the adapter (its own budgets, GPU VA space and CPU address space)."""
        return UserProcess(self, self.vidmm.residency.create_process())

    # --- what the OS does to processes (not calls of theirs): memory pressure, issue 23 --------------------------

    def _process(self, process: UserProcess) -> Process:
        if not isinstance(process, UserProcess) or process.runtime is not self or process.closed:
            raise _bad("hProcess", getattr(process, "handle", process), "is not a live process of this adapter")
        return process.process

    def set_focus(self, process: UserProcess, foreground: bool) -> None:
        """The process gains (or loses) the foreground: its weight in the sharing of budgets doubles (halves)."""
        p = self._process(process)
        if not isinstance(foreground, bool):
            raise _bad("foreground", foreground, "must be True or False")
        self.vidmm.residency.budgets.set_priority(p, p.priority_class, foreground)

    def set_scheduling_priority_class(self, process: UserProcess, priority: int) -> None:
        """``D3DKMTSetProcessSchedulingPriorityClass`` (``D3DKMT_SCHEDULINGPRIORITYCLASS``)."""
        p = self._process(process)
        self.vidmm.residency.budgets.set_priority(p, priority, p.foreground)

    def impose_budget(self, process: UserProcess, group: D3DKMT_MEMORY_SEGMENT_GROUP, budget: int | None) -> None:
        """The OS sets the process's budget in ``group`` outright (``None``: back to the shared model)."""
        p = self._process(process)
        try:
            group = D3DKMT_MEMORY_SEGMENT_GROUP(group)
        except ValueError:
            raise _bad("MemorySegmentGroup", group, "must be LOCAL (0) or NON_LOCAL (1)") from None
        self.vidmm.residency.budgets.impose(p, group, budget)

    def request_trim(self, process: UserProcess, flags: D3DDDI_TRIMRESIDENCYSET_FLAGS) -> None:
        """The OS asks the process to trim: a notification to its registered callbacks (delivered by
        :meth:`deliver_trim_notifications`)."""
        p = self._process(process)
        _struct(flags, D3DDDI_TRIMRESIDENCYSET_FLAGS, "Flags")
        if flags.Reserved:
            raise _bad("Flags", flags.Value, "reserved bits must be zero")
        if not flags.Value:
            raise _bad(
                "Flags", flags.Value, "must ask for something: TrimToBudget, PeriodicTrim or RestartPeriodicTrim"
            )
        self.vidmm.residency.budgets.notify(p, flags.Value)

    def trim_notifications_due(self) -> bool:
        """Some trim notification waits to be delivered."""
        return bool(self.vidmm.residency.budgets.pending)

    def deliver_trim_notifications(self) -> int:
        """Call the trim-notification callbacks due (outside every VidMm call, as DxgKrnl's worker does);
        returns how many callbacks ran.  A callback that raises does not keep the others from running (each runs
        in its own process): the first exception is raised once every callback due has run (decision 0186)."""
        ran = 0
        crashed: BaseException | None = None
        for _, notification, callbacks in self.vidmm.residency.budgets.deliver():
            for callback, context in callbacks:
                try:
                    callback(
                        D3DKMT_TRIMNOTIFICATION(
                            Context=context, Flags=notification.Flags, NumBytesToTrim=notification.NumBytesToTrim
                        )
                    )
                except Exception as error:  # re-raised below, after the other processes' callbacks
                    crashed = crashed or error
                ran += 1
        if crashed is not None:
            raise crashed
        return ran


@final
class UserProcess:
    """One process: its devices, its CPU, and the ``D3DKMT*`` calls made per process."""

    def __init__(self, runtime: Runtime, process: Process) -> None:
        self.runtime = runtime
        self.vidmm = runtime.vidmm
        self.process = process
        self.devices: list[UserDevice] = []
        self.trim_devices: dict[int, UserDevice] = {}
        """Trim-notification registrations -> the device each was made with (they go with it)."""
        self.closed = False

    @property
    def handle(self) -> HANDLE:
        return self.process.handle

    def create_device(self) -> UserDevice:
        """``D3DKMTCreateDevice``; refused with ``STATUS_DEVICE_REMOVED`` once a reset's recovery failed and the
        adapter is gone for good (decision 0239)."""
        self._alive()
        if self.vidmm.reset.removed is not None:
            raise DeviceRemoved(self.vidmm.reset.removed)
        device = UserDevice(self, self.vidmm.residency.create_device(self.process))
        self.devices.append(device)
        return device

    def destroy_device(self, device: UserDevice) -> HRESULT:
        """``D3DKMTDestroyDevice``: its contexts, allocations (locked or not), paging queues and synchronisation
        objects go with it; paging it queued and the worker has not serviced is cancelled."""
        self._alive()
        if device not in self.devices:
            raise _bad("hDevice", getattr(device, "handle", device), "is not a device of this process")
        self.vidmm.destroy_device(device.handle)
        self.devices.remove(device)
        for handle in [h for h, d in self.trim_devices.items() if d is device]:  # decision 0186
            del self.trim_devices[handle]
            self.vidmm.residency.budgets.forget_trim_notification(self.process, handle)
        return HRESULT.S_OK

    def close(self) -> None:
        """The process exits -- or is killed, at whatever point it was: every device goes, then its GPU VA spaces
        (decision 0046).  Its handles are invalid afterwards."""
        self._alive()
        self.vidmm.destroy_process(self.handle)
        self.devices.clear()
        self.closed = True

    def _alive(self) -> None:
        if self.closed:
            raise _bad("hProcess", self.handle, "the process has exited")

    # --- the process's CPU ---------------------------------------------------------------------------------

    def cpu_read(self, address: int, size: int) -> bytes:
        """Read as this process's CPU (an address ``pfnLockCb`` returned); an access violation elsewhere."""
        self._read_range(address, size)
        return self.process.cpu.read(CpuVa(address), size)

    def cpu_read_into(self, address: int, out: bytearray | memoryview) -> None:
        """:meth:`cpu_read` of ``len(out)`` bytes into ``out``, a writable, contiguous byte buffer of the caller's
        (what a ``memcpy`` from ``pData`` into the application's own memory does): no buffer is made per read.
        ``out`` is untouched when the read is refused."""
        self._alive()
        _uint("address", address)
        try:
            view = memoryview(out)
        except TypeError:
            raise _bad("out", type(out).__name__, "must be a writable byte buffer (bytearray, memoryview)") from None
        if view.readonly or not view.c_contiguous:
            raise _bad("out", type(out).__name__, "must be a writable, contiguous byte buffer")
        view = view.cast("B")
        if address + len(view) > 1 << 64:
            raise _bad("out", len(view), f"address {address:#x} + length overflows the 64-bit address space")
        self.process.cpu.read_into(CpuVa(address), view)

    def cpu_read_spans(self, address: int, size: int) -> list[ByteArray | int]:
        """:meth:`cpu_read` of ``size`` bytes where they lie, for a caller that only compares them (a ``memcmp``
        through ``pData``, no copy): read-only views laid end to end, valid until the memory is next written, and
        the length of each stretch that reads zero with no memory behind it."""
        self._read_range(address, size)
        return self.process.cpu.read_spans(CpuVa(address), size)

    def _read_range(self, address: int, size: int) -> None:
        """Refuse a read by an exited process, or of a range that is not one in the 64-bit address space."""
        self._alive()
        _uint("address", address)
        _uint("size", size)
        if address + size > 1 << 64:
            raise _bad("size", size, f"address {address:#x} + size overflows the 64-bit address space")

    def cpu_write(self, address: int, data: bytes | bytearray | memoryview) -> None:
        """Write as this process's CPU.  A write into the view of a ``ReadOnly`` lock is refused and writes
        nothing, as a write to a read-only page faults (decision 0050)."""
        self._alive()
        _uint("address", address)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise _bad("data", type(data).__name__, "must be bytes")
        if address + len(data) > 1 << 64:
            raise _bad("data", len(data), f"address {address:#x} + length overflows the 64-bit address space")
        self._writable(address, len(data))
        self.process.cpu.write(CpuVa(address), data)

    def _writable(self, address: int, size: int) -> None:
        """Refuse a write that touches the view of an allocation locked ``ReadOnly`` (decision 0050)."""
        for a in self.vidmm.residency.allocations.values():
            view, lock = a.cpu_view, a.lock
            if (
                view is None
                or lock is None
                or lock.lock2
                or not lock.flags.ReadOnly
                or a.device.process is not self.process
            ):
                continue
            if address < view + a.size and view < address + size:
                raise _bad(
                    "address", address, f"allocation {int(a.handle):#x} is locked ReadOnly: the CPU may not write it"
                )

    # --- D3DKMT per process -------------------------------------------------------------------------------

    def query_video_memory_info(self, args: D3DKMT_QUERYVIDEOMEMORYINFO) -> HRESULT:
        """``D3DKMTQueryVideoMemoryInfo`` (``hProcess`` NULL: this process)."""
        self._alive()
        _struct(args, D3DKMT_QUERYVIDEOMEMORYINFO)
        if args.PhysicalAdapterIndex != 0:
            raise _bad("PhysicalAdapterIndex", args.PhysicalAdapterIndex, "the adapter has one physical adapter (0)")
        if args.hProcess not in (NULL, self.handle):
            raise _bad("hProcess", args.hProcess, "a process may query only itself")
        args.hProcess = self.handle
        self.vidmm.residency.query_video_memory_info(args)
        return HRESULT.S_OK

    def change_video_memory_reservation(self, args: D3DKMT_CHANGEVIDEOMEMORYRESERVATION) -> NTSTATUS:
        """``D3DKMTChangeVideoMemoryReservation`` (``hProcess`` NULL: this process): the memory of a segment group
        this process cannot go without (DXGI's ``SetVideoMemoryReservation``)."""
        self._alive()
        _struct(args, D3DKMT_CHANGEVIDEOMEMORYRESERVATION)
        if args.PhysicalAdapterIndex != 0:
            raise _bad("PhysicalAdapterIndex", args.PhysicalAdapterIndex, "the adapter has one physical adapter (0)")
        if args.hProcess not in (NULL, self.handle):
            raise _bad("hProcess", args.hProcess, "a process may reserve only for itself")
        try:
            group = D3DKMT_MEMORY_SEGMENT_GROUP(args.MemorySegmentGroup)
        except ValueError:
            raise _bad("MemorySegmentGroup", args.MemorySegmentGroup, "must be LOCAL (0) or NON_LOCAL (1)") from None
        self.vidmm.residency.budgets.reserve(self.process, group, args.Reservation)
        return NTSTATUS.STATUS_SUCCESS

    def register_trim_notification(self, args: D3DKMT_REGISTERTRIMNOTIFICATION) -> NTSTATUS:
        """``D3DKMTRegisterTrimNotification``: ``Callback`` is called with ``Context`` when VidMm asks this
        process to trim; ``Handle`` [out] names the registration."""
        self._alive()
        _struct(args, D3DKMT_REGISTERTRIMNOTIFICATION)
        device = next((d for d in self.devices if d.handle == args.hDevice), None)
        if device is None:
            raise _bad("hDevice", args.hDevice, "is not a device of this process")
        args.Handle = self.vidmm.residency.budgets.register_trim_notification(self.process, args.Callback, args.Context)
        self.trim_devices[args.Handle] = device
        return NTSTATUS.STATUS_SUCCESS

    def unregister_trim_notification(self, args: D3DKMT_UNREGISTERTRIMNOTIFICATION) -> NTSTATUS:
        """``D3DKMTUnregisterTrimNotification``."""
        self._alive()
        _struct(args, D3DKMT_UNREGISTERTRIMNOTIFICATION)
        self.vidmm.residency.budgets.unregister_trim_notification(self.process, args.Handle, args.Callback)
        self.trim_devices.pop(args.Handle, None)
        return NTSTATUS.STATUS_SUCCESS


@final
class UserDevice:
    """One device and the runtime callbacks its user-mode driver calls."""

    def __init__(self, process: UserProcess, device: Device) -> None:
        self.process = process
        self.vidmm = process.vidmm
        self.device = device

    @property
    def handle(self) -> HANDLE:
        return self.device.handle

    # --- handle checks (the process's handle table) ----------------------------------------------------------

    def _alive(self) -> None:
        """The process has not exited and the device was not destroyed: a call on a dead device is refused
        before it reaches VidMm (it would otherwise create objects nothing will ever destroy)."""
        self.process._alive()
        if self.vidmm.residency.devices.get(self.handle) is not self.device:
            raise _bad("hDevice", self.handle, "the device was destroyed")

    def _allocation(self, handle: HANDLE, argument: str) -> None:
        a = self.vidmm.residency.allocations.get(handle) if isinstance(handle, int) else None
        if a is None or a.device.process is not self.device.process or a.context:
            raise _bad(argument, handle, "is not an allocation handle of this process")
        if a.device is not self.device:
            raise _bad(argument, handle, "is an allocation of another device")

    def _allocations(self, handles: Iterable[HANDLE], argument: str) -> None:
        for i, handle in enumerate(handles):
            self._allocation(handle, f"{argument}[{i}]")

    def _queue(self, handle: HANDLE, argument: str = "hPagingQueue") -> None:
        queue = self.vidmm.residency.queues.get(handle) if isinstance(handle, int) else None
        if queue is None or queue.device is not self.device:
            raise _bad(argument, handle, "is not a paging queue of this device")

    def _context(self, handle: HANDLE, argument: str = "hContext") -> None:
        owner = self.vidmm.residency.contexts.get(handle) if isinstance(handle, int) else None
        if owner is None or owner is not self.device:
            raise _bad(argument, handle, "is not a context of this device")

    def _sync(self, handle: HANDLE, argument: str) -> None:
        sync = self.vidmm.residency.sync_objects.get(handle) if isinstance(handle, int) else None
        if sync is None or sync.device.process is not self.device.process:
            raise _bad(argument, handle, "is not a synchronization object of this process")

    def _va(self) -> GpuVaSpaces:
        if self.vidmm.va is None:
            raise DdiError(HRESULT.E_INVALIDARG, "GPU virtual addresses need a WDDM 2.x (GpuMmu) driver")
        return self.vidmm.va

    # --- allocations -----------------------------------------------------------------------------------------

    def allocate(self, args: D3DDDICB_ALLOCATE) -> HRESULT:
        """``pfnAllocateCb``: ``NumAllocations`` allocations, described together to the driver; all or none."""
        self._alive()
        _struct(args, D3DDDICB_ALLOCATE)
        infos = _handles("pAllocationInfo", args.pAllocationInfo)
        for i, info in enumerate(infos):
            _struct(info, D3DDDI_ALLOCATIONINFO, f"pAllocationInfo[{i}]")
        if args.NumAllocations != len(args.pAllocationInfo) or not args.pAllocationInfo:
            raise _bad(
                "NumAllocations",
                args.NumAllocations,
                f"must be positive and match pAllocationInfo ({len(args.pAllocationInfo)})",
            )
        if args.PrivateDriverDataSize != len(args.pPrivateDriverData):
            raise _bad("PrivateDriverDataSize", args.PrivateDriverDataSize, "must equal the data's length")
        for i, info in enumerate(args.pAllocationInfo):
            if info.PrivateDriverDataSize != len(info.pPrivateDriverData):
                raise _bad(
                    f"pAllocationInfo[{i}].PrivateDriverDataSize",
                    info.PrivateDriverDataSize,
                    "must equal the data's length",
                )
            if info.pSystemMem is not None:
                raise _bad(
                    f"pAllocationInfo[{i}].pSystemMem", info.pSystemMem, "existing system memory is not modelled"
                )
            if info.Flags.Reserved:
                raise _bad(f"pAllocationInfo[{i}].Flags.Reserved", info.Flags.Reserved, "must be zero")
        try:
            made = self.vidmm.residency.create_allocations(
                self.device, [info.pPrivateDriverData for info in args.pAllocationInfo], args.pPrivateDriverData
            )
        except DdiError as error:
            raise _user_mode(error) from None
        for info, a in zip(args.pAllocationInfo, made, strict=True):
            info.hAllocation = a.handle
        return HRESULT.S_OK

    def deallocate(self, args: D3DDDICB_DEALLOCATE) -> HRESULT:
        """``pfnDeallocateCb``: the content is dropped; every GPU VA mapped to them is freed."""
        self._alive()
        _struct(args, D3DDDICB_DEALLOCATE)
        _handles("HandleList", args.HandleList)
        if args.NumAllocations != len(args.HandleList) or not args.HandleList:
            raise _bad(
                "NumAllocations", args.NumAllocations, f"must be positive and match HandleList ({len(args.HandleList)})"
            )
        self._allocations(args.HandleList, "HandleList")
        if len(set(args.HandleList)) != len(args.HandleList):
            raise _bad("HandleList", args.HandleList, "lists an allocation twice")
        for i, handle in enumerate(args.HandleList):
            a = self.vidmm.residency.objects.allocation(handle, f"HandleList[{i}]")
            if a.lock is not None:
                raise _bad(f"HandleList[{i}]", handle, "is locked: unlock it before destroying it")
        for handle in args.HandleList:
            self.vidmm.residency.destroy_allocation(handle)
        return HRESULT.S_OK

    def set_priority(self, args: D3DDDICB_SETPRIORITY) -> HRESULT:
        """``pfnSetPriorityCb``: eviction priorities (higher stays longer under ``priority-lru``)."""
        self._alive()
        _struct(args, D3DDDICB_SETPRIORITY)
        _handles("phAllocationList", args.phAllocationList)
        _handles("pPriorities", args.pPriorities)
        self._allocations(args.phAllocationList, "phAllocationList")
        return self.vidmm.residency.set_priority(self.device, args)

    # --- paging queues and residency -----------------------------------------------------------------------

    def create_paging_queue(self, args: D3DDDI_CREATEPAGINGQUEUE) -> HRESULT:
        """``pfnCreatePagingQueueCb``."""
        self._alive()
        _struct(args, D3DDDI_CREATEPAGINGQUEUE)
        if args.hDevice not in (NULL, self.handle):
            raise _bad("hDevice", args.hDevice, "must be this device (or NULL)")
        args.hDevice = self.handle
        self.vidmm.residency.create_paging_queue(args)
        return HRESULT.S_OK

    def destroy_paging_queue(self, handle: HANDLE) -> HRESULT:
        """``pfnDestroyPagingQueueCb`` (waits for the queue's work)."""
        self._alive()
        self._queue(handle)
        self.vidmm.residency.destroy_paging_queue(handle)
        return HRESULT.S_OK

    def make_resident(self, args: D3DDDI_MAKERESIDENT) -> HRESULT:
        """``pfnMakeResidentCb``: ``E_PENDING`` with ``PagingFenceValue`` when anything moved."""
        self._alive()
        _struct(args, D3DDDI_MAKERESIDENT)
        _handles("AllocationList", args.AllocationList)
        self._queue(args.hPagingQueue)
        self._allocations(args.AllocationList, "AllocationList")
        return self.vidmm.residency.make_resident(args)

    def evict(self, args: D3DDDICB_EVICT) -> HRESULT:
        """``pfnEvictCb``."""
        self._alive()
        _struct(args, D3DDDICB_EVICT)
        _handles("AllocationList", args.AllocationList)
        if args.hDevice not in (NULL, self.handle):
            raise _bad("hDevice", args.hDevice, "must be this device (or NULL)")
        self._allocations(args.AllocationList, "AllocationList")
        args.hDevice = self.handle
        return self.vidmm.residency.evict(args)

    def wait_for_paging_fence(self, hPagingQueue: HANDLE, value: FenceValue) -> HRESULT:
        """``pfnWaitForSynchronizationObjectFromCpuCb`` on a paging queue's fence: returns once it reached
        ``value`` (the GPU runs meanwhile)."""
        self._alive()
        self._queue(hPagingQueue)
        residency = self.vidmm.residency
        residency.wait(residency.objects.queue(hPagingQueue), value)
        return HRESULT.S_OK

    def paging_fence_value(self, hPagingQueue: HANDLE) -> FenceValue:
        """The queue's fence as the CPU reads it through ``FenceValueCPUVirtualAddress`` (time passes between two
        reads: a client that polls instead of waiting sees every value it was given, eventually)."""
        self._alive()
        self._queue(hPagingQueue)
        residency = self.vidmm.residency
        return residency.poll_fence_value(residency.objects.queue(hPagingQueue))

    def trim_residency_set(self, args: D3DDDIARG_TRIMRESIDENCYSET) -> int:
        """What VidMm's ``pfnTrimResidencySet`` asks of this device's user-mode driver; the bytes trimmed."""
        self._alive()
        _struct(args, D3DDDIARG_TRIMRESIDENCYSET)
        return self.vidmm.residency.trim_residency_set(self.device, args)

    def offer(self, args: D3DKMT_OFFERALLOCATIONS) -> HRESULT:
        """``pfnOfferAllocationsCb``."""
        self._alive()
        _struct(args, D3DKMT_OFFERALLOCATIONS)
        _handles("HandleList", args.HandleList)
        if args.hDevice != self.handle:
            raise _bad("hDevice", args.hDevice, "must be this device")
        self._allocations(args.HandleList, "HandleList")
        self.vidmm.residency.offer(args)
        return HRESULT.S_OK

    def reclaim(self, args: D3DKMT_RECLAIMALLOCATIONS2) -> HRESULT:
        """``pfnReclaimAllocations2Cb``."""
        self._alive()
        _struct(args, D3DKMT_RECLAIMALLOCATIONS2)
        _handles("HandleList", args.HandleList)
        self._queue(args.hPagingQueue)
        self._allocations(args.HandleList, "HandleList")
        return self.vidmm.residency.reclaim(args)

    # --- CPU access ------------------------------------------------------------------------------------------

    def lock(self, args: D3DDDICB_LOCK) -> HRESULT:
        """``pfnLockCb``: ``pData`` is an address of this process's CPU (:meth:`UserProcess.cpu_read`)."""
        self._alive()
        _struct(args, D3DDDICB_LOCK)
        self._allocation(args.hAllocation, "hAllocation")
        return self.vidmm.locks.lock(self.device, args)

    def unlock(self, args: D3DDDICB_UNLOCK) -> HRESULT:
        """``pfnUnlockCb``."""
        self._alive()
        _struct(args, D3DDDICB_UNLOCK)
        _handles("phAllocations", args.phAllocations)
        self._allocations(args.phAllocations, "phAllocations")
        return self.vidmm.locks.unlock(self.device, args)

    def lock2(self, args: D3DDDICB_LOCK2) -> HRESULT:
        """``pfnLock2Cb`` (WDDM 2.x)."""
        self._alive()
        _struct(args, D3DDDICB_LOCK2)
        self._allocation(args.hAllocation, "hAllocation")
        return self.vidmm.locks.lock2(self.device, args)

    def unlock2(self, args: D3DDDICB_UNLOCK2) -> HRESULT:
        """``pfnUnlock2Cb`` (WDDM 2.x)."""
        self._alive()
        _struct(args, D3DDDICB_UNLOCK2)
        self._allocation(args.hAllocation, "hAllocation")
        return self.vidmm.locks.unlock2(self.device, args)

    # --- GPU virtual addresses (WDDM 2.x) -------------------------------------------------------------------

    def reserve_gpu_va(self, args: D3DDDI_RESERVEGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnReserveGpuVirtualAddressCb``."""
        self._alive()
        va = self._va()  # a WDDM 1.x device has no such call: refused before any argument
        _struct(args, D3DDDI_RESERVEGPUVIRTUALADDRESS)
        self._queue(args.hPagingQueue)
        return va.reserve(args)

    def map_gpu_va(self, args: D3DDDI_MAPGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnMapGpuVirtualAddressCb`` (seed 003): ``E_PENDING`` with ``PagingFenceValue`` to wait for before
        the GPU touches the range."""
        self._alive()
        va = self._va()  # a WDDM 1.x device has no such call: refused before any argument
        _struct(args, D3DDDI_MAPGPUVIRTUALADDRESS)
        self._queue(args.hPagingQueue)
        if args.hAllocation:
            self._allocation(args.hAllocation, "hAllocation")
        return va.map_gpu_va(args)

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnUpdateGpuVirtualAddressCb`` (tiled resources)."""
        self._alive()
        va = self._va()  # a WDDM 1.x device has no such call: refused before any argument
        _struct(args, D3DDDICB_UPDATEGPUVIRTUALADDRESS)
        self._context(args.hContext)
        self._sync(args.hFenceObject, "hFenceObject")
        for i, op in enumerate(args.Operations):
            handle = getattr(op.payload, "hAllocation", NULL)
            if handle:
                self._allocation(handle, f"Operations[{i}].hAllocation")
        va.update_gpu_va(args)
        return HRESULT.S_OK

    def free_gpu_va(self, args: D3DDDICB_FREEGPUVIRTUALADDRESS) -> HRESULT:
        """``pfnFreeGpuVirtualAddressCb``: synchronous."""
        self._alive()
        va = self._va()  # a WDDM 1.x device has no such call: refused before any argument
        _struct(args, D3DDDICB_FREEGPUVIRTUALADDRESS)
        va.free_gpu_va(self.device.process, args)
        return HRESULT.S_OK

    # --- contexts and work -----------------------------------------------------------------------------------

    def create_context(self, node: int = 1) -> HANDLE:
        """``pfnCreateContextCb`` on ``node`` (the compute engine by default); the context runs in this process's
        GPU VA space."""
        self._alive()
        _uint("NodeOrdinal", node, 32)
        try:
            return self.vidmm.create_context(self.device, node=node)
        except DdiError as error:
            raise _user_mode(error) from None

    def destroy_context(self, hContext: HANDLE) -> HRESULT:
        """``pfnDestroyContextCb``: the context's work completes first; work queued for it behind a monitored
        fence is cancelled."""
        self._alive()
        self._context(hContext)
        self.vidmm.destroy_context(hContext)
        return HRESULT.S_OK

    def create_sync_object(self) -> HANDLE:
        """``pfnCreateSynchronizationObjectCb`` for a monitored fence (initial value 0)."""
        self._alive()
        return self.vidmm.residency.create_sync_object(self.device).handle

    def destroy_sync_object(self, hSyncObject: HANDLE) -> HRESULT:
        """``pfnDestroySynchronizationObjectCb``: work still waiting for one of its values is cancelled."""
        self._alive()
        self._sync(hSyncObject, "hSyncObject")
        owner = self.vidmm.residency.sync_objects[hSyncObject].device
        if owner is not self.device:
            raise _bad("hSyncObject", hSyncObject, "is a synchronization object of another device")
        self.vidmm.destroy_sync_object(hSyncObject)
        return HRESULT.S_OK

    def signal_from_cpu(self, hSyncObject: HANDLE, value: FenceValue) -> HRESULT:
        """``pfnSignalSynchronizationObjectFromCpuCb``."""
        self._alive()
        self._sync(hSyncObject, "hSyncObject")
        _uint("Value", value)
        self.vidmm.residency.signal_from_cpu(hSyncObject, value)
        return HRESULT.S_OK

    def wait_for_sync_object(self, hSyncObject: HANDLE, value: FenceValue) -> HRESULT:
        """``pfnWaitForSynchronizationObjectFromCpuCb`` on one monitored fence (e.g. the ``hFenceObject`` an
        ``UpdateGpuVirtualAddress`` signals with ``FenceValue + 1``): returns once it reached ``value``."""
        self._alive()
        self._sync(hSyncObject, "hSyncObject")
        residency = self.vidmm.residency
        residency.wait_sync(residency.objects.sync_object(hSyncObject), value)
        return HRESULT.S_OK

    def submit_command(self, hContext: HANDLE, commands: bytes) -> FenceValue:
        """``pfnSubmitCommandCb``: run the reference GPU's packets on the context; returns the fence to wait on."""
        self._alive()
        self._context(hContext)
        _bytes("commands", commands)
        return self.vidmm.work.submit(hContext, bytes(commands))

    def render(self, args: D3DDDICB_RENDER) -> HRESULT:
        """``pfnRenderCb`` (WDDM 1.x): submit a command buffer whose references are allocation-list slots;
        ``args.SubmissionFenceId`` is what :meth:`wait_for_context` waits for."""
        self._alive()
        _struct(args, D3DDDICB_RENDER)
        _bytes("pCommandBuffer", args.pCommandBuffer)
        for i, entry in enumerate(_handles("pAllocationList", args.pAllocationList)):
            _struct(entry, D3DDDI_ALLOCATIONLIST, f"pAllocationList[{i}]")
        self._context(args.hContext)
        self._allocations((entry.hAllocation for entry in args.pAllocationList), "pAllocationList")
        return self.vidmm.render.render(self.device, args)

    def wait_for_context(self, hContext: HANDLE, fence: FenceValue) -> HRESULT:
        """Wait on the CPU for work submitted on the context (``DEVICE_REMOVED`` if it faulted)."""
        self._alive()
        self._context(hContext)
        _integer("fence", fence)
        self.vidmm.work.wait(hContext, fence)  # which checks the value: one this context was given
        return HRESULT.S_OK
