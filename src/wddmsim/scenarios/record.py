"""The user-mode call recorder: thin wrappers around :class:`~wddmsim.api.UserProcess` and
:class:`~wddmsim.api.UserDevice` that forward every call unchanged and, when a :class:`CallLog` is attached,
write it to a call trace (:mod:`~wddmsim.scenarios.callfmt`) with its arguments, result and ``[out]`` fields.

What it models: what an API-capture layer between a user-mode driver and the runtime sees (as PIX or a
D3D12 capture layer would): the calls, nothing of VidMm's decisions.  A workload always talks to the adapter
through these wrappers; without a log they only forward.

A call the runtime refuses (:class:`~wddmsim.ddi.status.DdiError`) is recorded with its status and message, then
raised again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import IO, Any, TypeVar, final

from wddmsim.api import Runtime, UserDevice, UserProcess
from wddmsim.core.addresses import FenceValue
from wddmsim.core.pointer import ByteArray
from wddmsim.ddi.allocation import D3DDDICB_ALLOCATE, D3DDDICB_DEALLOCATE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCK2, D3DDDICB_UNLOCK, D3DDDICB_UNLOCK2
from wddmsim.ddi.render import D3DDDICB_RENDER
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_MAKERESIDENT,
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDICB_EVICT,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_RECLAIMALLOCATIONS2,
    D3DKMT_REGISTERTRIMNOTIFICATION,
)
from wddmsim.ddi.status import HRESULT, DdiError
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
)
from wddmsim.scenarios.callfmt import FORMAT, VERSION, Json, Ranges, Symbols, blob, packets_to_json
from wddmsim.scenarios.patterns import pattern

R = TypeVar("R")

_ZEROS = memoryview(bytes(1 << 16))
"""What a digest of a stretch of zeros is fed, a piece at a time."""

VIEW_SPAN = 1 << 40
"""How far a view reaches for naming addresses (see :meth:`TracedDevice._view`)."""


@final
class CallLog:
    """Where recorded calls go: a JSON-lines stream, and the symbol tables that name handles and addresses."""

    def __init__(self, stream: IO[str], scenario: dict[str, Any]) -> None:
        self.stream = stream
        self.symbols = Symbols()
        self.vas: dict[str, Ranges] = {}
        """Per process: its GPU VA ranges."""
        self.views: dict[str, Ranges] = {}
        """Per process: its CPU views."""
        self.fences: dict[tuple[str, int], int] = {}
        """(queue or context symbol, fence value) -> the seq of the call that returned it."""
        self.seq = 0
        self._write({"trace": FORMAT, "version": VERSION, "scenario": scenario})

    def _write(self, record: dict[str, Json]) -> None:
        self.stream.write(json.dumps(record, separators=(",", ":")) + "\n")

    def call(self, record: dict[str, Json]) -> int:
        seq = self.seq
        self.seq += 1
        self._write({"seq": seq, **record})
        return seq

    def fence(self, owner: Json, value: int) -> Json:
        """A fence value as the call that returned it (``{"fence": seq}``), or the number."""
        seq = self.fences.get((str(owner), value))
        return value if seq is None or value == 0 else {"fence": seq}

    def end(self, trailer: dict[str, Json]) -> None:
        """The trailer, with the number of call lines written (version 2: a replay refuses a cut trace)."""
        self._write({"end": {"calls": self.seq, **trailer}})
        self.stream.flush()


def _hr(result: HRESULT | int) -> str:
    try:
        return HRESULT(result).name
    except ValueError:
        return f"{int(result):#x}"


@final
class TracedRuntime:
    """The runtime as the workload sees it."""

    def __init__(self, runtime: Runtime, log: CallLog | None = None) -> None:
        self.runtime = runtime
        self.log = log

    def open_process(self) -> TracedProcess:
        process = self.runtime.open_process()
        name = ""
        if self.log is not None:
            name = self.log.symbols.new("process", process.handle)
            self.log.vas[name] = Ranges("va")
            self.log.views[name] = Ranges("view")
            self.log.call({"call": "open_process", "out": {"process": name}})
        return TracedProcess(process, self.log, name)

    def power_transition(self, kind: str) -> None:
        """The system sleeps (``kind``) and wakes: not a call of the application's, but part of its history."""
        self.runtime.vidmm.power_transition(kind)
        if self.log is not None:
            self.log.call({"call": "power_transition", "kind": kind})

    # What the OS does to processes (issue 23): not their calls, but part of their history, so recorded.

    def set_focus(self, process: TracedProcess, foreground: bool) -> None:
        self.runtime.set_focus(process.process, foreground)
        if self.log is not None:
            self.log.call({"call": "set_focus", "process": process.name, "foreground": foreground})

    def set_scheduling_priority_class(self, process: TracedProcess, priority: int) -> None:
        self.runtime.set_scheduling_priority_class(process.process, priority)
        if self.log is not None:
            self.log.call({"call": "set_scheduling_priority_class", "process": process.name, "priority": priority})

    def impose_budget(self, process: TracedProcess, group: D3DKMT_MEMORY_SEGMENT_GROUP, budget: int | None) -> None:
        self.runtime.impose_budget(process.process, group, budget)
        if self.log is not None:
            self.log.call({"call": "impose_budget", "process": process.name, "group": int(group), "budget": budget})

    def request_trim(self, process: TracedProcess, flags: D3DDDI_TRIMRESIDENCYSET_FLAGS) -> None:
        self.runtime.request_trim(process.process, flags)
        if self.log is not None:
            self.log.call({"call": "request_trim", "process": process.name, "flags": flags.Value})

    def deliver_trim_notifications(self) -> int:
        """The trim notifications due, delivered (the callbacks' own calls are recorded as they make them)."""
        if not self.runtime.trim_notifications_due():
            return 0
        if self.log is not None:
            self.log.call({"call": "deliver_trim_notifications"})
        return self.runtime.deliver_trim_notifications()


@final
class TracedProcess:
    """One process: its devices, its CPU (reads and writes at the addresses locks return)."""

    def __init__(self, process: UserProcess, log: CallLog | None, name: str) -> None:
        self.process = process
        self.log = log
        self.name = name

    def create_device(self) -> TracedDevice:
        device = self.process.create_device()
        name = ""
        if self.log is not None:
            name = self.log.symbols.new("device", device.handle)
            self.log.call({"call": "create_device", "process": self.name, "out": {"device": name}})
        return TracedDevice(device, self, name)

    def destroy_device(self, device: TracedDevice) -> HRESULT:
        result = self.process.destroy_device(device.device)
        if self.log is not None:
            self.log.call(
                {"call": "destroy_device", "process": self.name, "args": {"device": device.name}, "result": _hr(result)}
            )
        return result

    def close(self) -> None:
        """The process exits: everything it still holds is reclaimed (decision 0046)."""
        self.process.close()
        if self.log is not None:
            self.log.call({"call": "close_process", "process": self.name})

    def cpu_write(self, address: int, data: bytes) -> None:
        self.process.cpu_write(address, data)
        if self.log is not None:
            self.log.call(
                {
                    "call": "cpu_write",
                    "process": self.name,
                    "args": {"address": self.log.views[self.name].express(address), "data": blob(data)},
                }
            )

    def cpu_write_pattern(self, address: int, seed: int, size: int) -> ByteArray:
        """Write ``size`` bytes of :func:`~wddmsim.scenarios.patterns.pattern` ``seed`` (recorded by name); returns
        the bytes written, so that the caller's model need not generate them again."""
        data = pattern(seed, size)
        self.process.cpu_write(address, data.data)  # the array's own bytes: no copy made to write them
        if self.log is not None:
            self.log.call(
                {
                    "call": "cpu_write",
                    "process": self.name,
                    "args": {
                        "address": self.log.views[self.name].express(address),
                        "pattern": {"seed": seed, "size": size},
                    },
                }
            )
        return data

    def cpu_read(self, address: int, size: int) -> bytes:
        data = self.process.cpu_read(address, size)
        self._log_read(address, data)
        return data

    def cpu_read_into(self, address: int, out: memoryview) -> None:
        """:meth:`cpu_read` into the caller's buffer; recorded as the same ``cpu_read`` (a replay reads and checks
        the same bytes)."""
        self.process.cpu_read_into(address, out)
        self._log_read(address, out)

    def cpu_read_spans(self, address: int, size: int) -> list[ByteArray | int]:
        """:meth:`cpu_read` of the bytes where they lie; recorded as the same ``cpu_read`` (the digest runs over
        the spans in order, a stretch of zeros as its zero bytes)."""
        spans = self.process.cpu_read_spans(address, size)
        if self.log is not None:
            digest = hashlib.sha256()
            for span in spans:
                if isinstance(span, int):
                    for at in range(0, span, len(_ZEROS)):
                        digest.update(_ZEROS[: min(len(_ZEROS), span - at)])
                else:
                    digest.update(span.data)
            self._log_digest(address, size, digest.hexdigest())
        return spans

    def _log_read(self, address: int, data: bytes | memoryview) -> None:
        if self.log is not None:
            self._log_digest(address, memoryview(data).nbytes, hashlib.sha256(data).hexdigest())

    def _log_digest(self, address: int, size: int, sha256: str) -> None:
        assert self.log is not None
        self.log.call(
            {
                "call": "cpu_read",
                "process": self.name,
                "args": {"address": self.log.views[self.name].express(address), "size": size},
                "out": {"sha256": sha256},
            }
        )

    def register_trim_notification(self, device: TracedDevice, callback: object) -> int:
        """``D3DKMTRegisterTrimNotification`` for ``device``; returns the registration's handle."""
        args = D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=device.device.handle, Callback=callback)  # type: ignore[arg-type]
        self.process.register_trim_notification(args)
        if self.log is not None:
            self.log.call({"call": "register_trim_notification", "process": self.name, "device": device.name})
        return args.Handle

    def query_video_memory_info(self, args: D3DKMT_QUERYVIDEOMEMORYINFO) -> HRESULT:
        result = self.process.query_video_memory_info(args)
        if self.log is not None:
            self.log.call(
                {
                    "call": "query_video_memory_info",
                    "process": self.name,
                    "args": {"MemorySegmentGroup": int(args.MemorySegmentGroup)},
                    "result": _hr(result),
                    "out": {
                        "Budget": args.Budget,
                        "CurrentUsage": args.CurrentUsage,
                        "CurrentReservation": args.CurrentReservation,
                        "AvailableForReservation": args.AvailableForReservation,
                    },
                }
            )
        return result


@final
class TracedDevice:
    """One device's runtime callbacks (the ``pfn*Cb`` a user-mode driver calls), recorded when asked."""

    def __init__(self, device: UserDevice, process: TracedProcess, name: str) -> None:
        self.device = device
        self.process = process
        self.log = process.log
        self.name = name

    # --- recording ---------------------------------------------------------------------------------------------

    def _do(
        self,
        call: str,
        run: Callable[[], R],
        args: Callable[[CallLog], dict[str, Json]],
        out: Callable[[CallLog, R], dict[str, Json]] | None = None,
    ) -> R:
        """Run the call; record it with its arguments (named before it runs) and what it gave back."""
        log = self.log
        if log is None:
            return run()
        recorded: dict[str, Json] = {"call": call, "device": self.name, "args": args(log)}
        try:
            result = run()
        except DdiError as error:
            recorded["error"] = {"status": error.status.name, "message": str(error)}
            log.call(recorded)
            raise
        if isinstance(result, HRESULT):
            recorded["result"] = _hr(result)
        if out is not None:
            recorded["out"] = out(log, result)
        log.call(recorded)
        return result

    def _a(self, log: CallLog, handle: int) -> Json:
        return log.symbols.name("allocation", handle)

    def _q(self, log: CallLog, handle: int) -> Json:
        return log.symbols.name("queue", handle)

    @property
    def _vas(self) -> Ranges:
        assert self.log is not None
        return self.log.vas[self.process.name]

    @property
    def _views(self) -> Ranges:
        assert self.log is not None
        return self.log.views[self.process.name]

    # --- allocations -------------------------------------------------------------------------------------------

    def allocate(self, args: D3DDDICB_ALLOCATE) -> HRESULT:
        def out(log: CallLog, _: HRESULT) -> dict[str, Json]:
            return {"handles": [log.symbols.new("allocation", info.hAllocation) for info in args.pAllocationInfo]}

        return self._do(
            "allocate",
            lambda: self.device.allocate(args),
            lambda log: {
                "allocations": [info.pPrivateDriverData.hex() for info in args.pAllocationInfo],
                "resource": args.pPrivateDriverData.hex(),
            },
            out,
        )

    def deallocate(self, args: D3DDDICB_DEALLOCATE) -> HRESULT:
        return self._do(
            "deallocate",
            lambda: self.device.deallocate(args),
            lambda log: {"HandleList": [self._a(log, h) for h in args.HandleList]},
        )

    # --- paging queues and residency -----------------------------------------------------------------------

    def create_paging_queue(self, args: D3DDDI_CREATEPAGINGQUEUE) -> HRESULT:
        return self._do(
            "create_paging_queue",
            lambda: self.device.create_paging_queue(args),
            lambda log: {"Priority": int(args.Priority)},
            lambda log, _: {
                "hPagingQueue": log.symbols.new("queue", args.hPagingQueue),
                "hSyncObject": log.symbols.new("sync", args.hSyncObject),
            },
        )

    def _fenced(self, log: CallLog, queue: int, value: int, seq_next: int) -> int:
        if value:
            log.fences[(str(self._q(log, queue)), value)] = seq_next
        return value

    def make_resident(self, args: D3DDDI_MAKERESIDENT) -> HRESULT:
        return self._do(
            "make_resident",
            lambda: self.device.make_resident(args),
            lambda log: {
                "hPagingQueue": self._q(log, args.hPagingQueue),
                "AllocationList": [self._a(log, h) for h in args.AllocationList],
                "Flags": args.Flags.Value,
            },
            lambda log, _: {
                "PagingFenceValue": self._fenced(log, args.hPagingQueue, args.PagingFenceValue, log.seq),
                "NumAllocations": args.NumAllocations,
                "NumBytesToTrim": args.NumBytesToTrim,
            },
        )

    def evict(self, args: D3DDDICB_EVICT) -> HRESULT:
        return self._do(
            "evict",
            lambda: self.device.evict(args),
            lambda log: {"AllocationList": [self._a(log, h) for h in args.AllocationList], "Flags": args.Flags.Value},
            lambda log, _: {"NumBytesToTrim": args.NumBytesToTrim},
        )

    def wait_for_paging_fence(self, hPagingQueue: HANDLE, value: FenceValue) -> HRESULT:
        return self._do(
            "wait_for_paging_fence",
            lambda: self.device.wait_for_paging_fence(hPagingQueue, value),
            lambda log: {
                "hPagingQueue": self._q(log, hPagingQueue),
                "value": log.fence(self._q(log, hPagingQueue), value),
            },
        )

    def offer(self, args: D3DKMT_OFFERALLOCATIONS) -> HRESULT:
        return self._do(
            "offer",
            lambda: self.device.offer(args),
            lambda log: {
                "HandleList": [self._a(log, h) for h in args.HandleList],
                "Priority": int(args.Priority),
                "Flags": args.Flags.Value,
            },
        )

    def reclaim(self, args: D3DKMT_RECLAIMALLOCATIONS2) -> HRESULT:
        return self._do(
            "reclaim",
            lambda: self.device.reclaim(args),
            lambda log: {
                "hPagingQueue": self._q(log, args.hPagingQueue),
                "HandleList": [self._a(log, h) for h in args.HandleList],
            },
            lambda log, _: {
                "pResults": [int(r) for r in args.pResults],
                "PagingFenceValue": self._fenced(log, args.hPagingQueue, args.PagingFenceValue, log.seq),
            },
        )

    # --- CPU access ------------------------------------------------------------------------------------------

    def _view(self, log: CallLog, handle: int, address: int) -> Json:
        """Name the view a lock returned after its allocation (its address stays for the allocation's life).

        User mode is not told the view's size; views never overlap, so an address belongs to the nearest view
        below it (a view extends, for naming, up to the next one)."""
        name = self._a(log, handle)
        if address and isinstance(name, str):
            self._views.add(name, address, VIEW_SPAN)
            return {"view": name, "offset": 0}
        return address

    def lock(self, args: D3DDDICB_LOCK) -> HRESULT:
        return self._do(
            "lock",
            lambda: self.device.lock(args),
            lambda log: {
                "hAllocation": self._a(log, args.hAllocation),
                "Flags": args.Flags.Value,
                "PrivateDriverData": args.PrivateDriverData,
                "NumPages": args.NumPages,
                "pPages": None if args.pPages is None else list(args.pPages),
            },
            lambda log, _: {"pData": self._view(log, args.hAllocation, args.pData)},
        )

    def unlock(self, args: D3DDDICB_UNLOCK) -> HRESULT:
        return self._do(
            "unlock",
            lambda: self.device.unlock(args),
            lambda log: {"phAllocations": [self._a(log, h) for h in args.phAllocations]},
        )

    def lock2(self, args: D3DDDICB_LOCK2) -> HRESULT:
        return self._do(
            "lock2",
            lambda: self.device.lock2(args),
            lambda log: {"hAllocation": self._a(log, args.hAllocation), "Flags": args.Flags.Value},
            lambda log, _: {"pData": self._view(log, args.hAllocation, args.pData)},
        )

    def unlock2(self, args: D3DDDICB_UNLOCK2) -> HRESULT:
        return self._do(
            "unlock2",
            lambda: self.device.unlock2(args),
            lambda log: {"hAllocation": self._a(log, args.hAllocation)},
        )

    # --- GPU virtual addresses ---------------------------------------------------------------------------------

    def reserve_gpu_va(self, args: D3DDDI_RESERVEGPUVIRTUALADDRESS) -> HRESULT:
        def out(log: CallLog, _: HRESULT) -> dict[str, Json]:
            name = log.symbols.new("va", args.VirtualAddress)
            self._vas.add(name, args.VirtualAddress, args.Size)
            return {
                "VirtualAddress": name,
                "PagingFenceValue": self._fenced(log, args.hPagingQueue, args.PagingFenceValue, log.seq),
            }

        return self._do(
            "reserve_gpu_va",
            lambda: self.device.reserve_gpu_va(args),
            lambda log: {
                "hPagingQueue": self._q(log, args.hPagingQueue),
                "BaseAddress": self._vas.express(args.BaseAddress) if args.BaseAddress else 0,
                "MinimumAddress": args.MinimumAddress,
                "MaximumAddress": args.MaximumAddress,
                "Size": args.Size,
                "ReservationType": int(args.ReservationType),
                "DriverProtection": args.DriverProtection,
            },
            out,
        )

    def map_gpu_va(self, args: D3DDDI_MAPGPUVIRTUALADDRESS) -> HRESULT:
        def out(log: CallLog, _: HRESULT) -> dict[str, Json]:
            inside = self._vas.find(args.VirtualAddress)
            if inside is None:
                name = log.symbols.new("va", args.VirtualAddress)
                self._vas.add(name, args.VirtualAddress, args.SizeInPages * 4096)
                va: Json = name
            else:
                va = {"va": inside[0], "offset": inside[1]}
            return {
                "VirtualAddress": va,
                "PagingFenceValue": self._fenced(log, args.hPagingQueue, args.PagingFenceValue, log.seq),
            }

        return self._do(
            "map_gpu_va",
            lambda: self.device.map_gpu_va(args),
            lambda log: {
                "hPagingQueue": self._q(log, args.hPagingQueue),
                "BaseAddress": self._vas.express(args.BaseAddress) if args.BaseAddress else 0,
                "MinimumAddress": args.MinimumAddress,
                "MaximumAddress": args.MaximumAddress,
                "hAllocation": self._a(log, args.hAllocation) if args.hAllocation else 0,
                "OffsetInPages": args.OffsetInPages,
                "SizeInPages": args.SizeInPages,
                "Protection": args.Protection.Value,
                "DriverProtection": args.DriverProtection,
            },
            out,
        )

    def update_gpu_va(self, args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> HRESULT:
        def operations(log: CallLog) -> list[Json]:
            ops: list[Json] = []
            for op in args.Operations:
                p = op.payload
                record: dict[str, Json] = {"OperationType": int(op.OperationType)}
                if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY):
                    record["SourceAddress"] = self._vas.express(p.SourceAddress)
                    record["DestAddress"] = self._vas.express(p.DestAddress)
                    record["SizeInBytes"] = p.SizeInBytes
                else:
                    record["BaseAddress"] = self._vas.express(p.BaseAddress)
                    record["SizeInBytes"] = p.SizeInBytes
                    for name in ("AllocationOffsetInBytes", "AllocationSizeInBytes", "DriverProtection"):
                        if hasattr(p, name):
                            record[name] = getattr(p, name)
                    if hasattr(p, "hAllocation"):
                        record["hAllocation"] = self._a(log, p.hAllocation)
                    if hasattr(p, "Protection"):
                        record["Protection"] = p.Protection.Value
                ops.append(record)
            return ops

        return self._do(
            "update_gpu_va",
            lambda: self.device.update_gpu_va(args),
            lambda log: {
                "hContext": log.symbols.name("context", args.hContext),
                "hFenceObject": log.symbols.name("sync", args.hFenceObject),
                "FenceValue": args.FenceValue,
                "Flags": args.Flags.Value,
                "Operations": operations(log),
            },
        )

    def free_gpu_va(self, args: D3DDDICB_FREEGPUVIRTUALADDRESS) -> HRESULT:
        def run() -> HRESULT:
            result = self.device.free_gpu_va(args)
            if self.log is not None:
                self._vas.remove(args.BaseAddress)
            return result

        return self._do(
            "free_gpu_va",
            run,
            lambda log: {"BaseAddress": self._vas.express(args.BaseAddress), "Size": args.Size},
        )

    # --- contexts, synchronisation and work ------------------------------------------------------------------

    def create_context(self, node: int = 1) -> HANDLE:
        return self._do(
            "create_context",
            lambda: self.device.create_context(node),
            lambda log: {"node": node},
            lambda log, handle: {"hContext": log.symbols.new("context", handle)},
        )

    def create_sync_object(self) -> HANDLE:
        return self._do(
            "create_sync_object",
            self.device.create_sync_object,
            lambda log: {},
            lambda log, handle: {"hSyncObject": log.symbols.new("sync", handle)},
        )

    def destroy_context(self, hContext: HANDLE) -> HRESULT:
        return self._do(
            "destroy_context",
            lambda: self.device.destroy_context(hContext),
            lambda log: {"hContext": log.symbols.name("context", hContext)},
        )

    def destroy_sync_object(self, hSyncObject: HANDLE) -> HRESULT:
        return self._do(
            "destroy_sync_object",
            lambda: self.device.destroy_sync_object(hSyncObject),
            lambda log: {"hSyncObject": log.symbols.name("sync", hSyncObject)},
        )

    def signal_from_cpu(self, hSyncObject: HANDLE, value: FenceValue) -> HRESULT:
        return self._do(
            "signal_from_cpu",
            lambda: self.device.signal_from_cpu(hSyncObject, value),
            lambda log: {"hSyncObject": log.symbols.name("sync", hSyncObject), "value": value},
        )

    def wait_for_sync_object(self, hSyncObject: HANDLE, value: FenceValue) -> HRESULT:
        return self._do(
            "wait_for_sync_object",
            lambda: self.device.wait_for_sync_object(hSyncObject, value),
            lambda log: {"hSyncObject": log.symbols.name("sync", hSyncObject), "value": value},
        )

    def submit_command(self, hContext: HANDLE, commands: bytes) -> FenceValue:
        def out(log: CallLog, fence: int) -> dict[str, Json]:
            log.fences[(str(log.symbols.name("context", hContext)), fence)] = log.seq
            return {"fence": fence}

        return self._do(
            "submit_command",
            lambda: self.device.submit_command(hContext, commands),
            lambda log: {
                "hContext": log.symbols.name("context", hContext),
                "packets": packets_to_json(commands, self._vas),
            },
            out,
        )

    def render(self, args: D3DDDICB_RENDER) -> HRESULT:
        def out(log: CallLog, _: HRESULT) -> dict[str, Json]:
            log.fences[(str(log.symbols.name("context", args.hContext)), args.SubmissionFenceId)] = log.seq
            return {"SubmissionFenceId": args.SubmissionFenceId}

        return self._do(
            "render",
            lambda: self.device.render(args),
            lambda log: {
                "hContext": log.symbols.name("context", args.hContext),
                "packets": packets_to_json(
                    args.pCommandBuffer[args.CommandOffset : args.CommandOffset + args.CommandLength], self._vas
                ),
                "pAllocationList": [
                    {"hAllocation": self._a(log, e.hAllocation), "WriteOperation": e.WriteOperation}
                    for e in args.pAllocationList
                ],
                "pPatchLocationList": [
                    [p.AllocationIndex, p.AllocationOffset, p.PatchOffset, p.SlotId, p.DriverId, p.SplitOffset]
                    for p in args.pPatchLocationList
                ],
                "Flags": args.Flags.Value,
            },
            out,
        )

    def wait_for_context(self, hContext: HANDLE, fence: FenceValue) -> HRESULT:
        return self._do(
            "wait_for_context",
            lambda: self.device.wait_for_context(hContext, fence),
            lambda log: {
                "hContext": log.symbols.name("context", hContext),
                "fence": log.fence(log.symbols.name("context", hContext), fence),
            },
        )
