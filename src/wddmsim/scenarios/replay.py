"""Replay a recorded call trace on a fresh adapter -- the recorded configuration, or another one (a different
eviction policy, local memory or aperture size, paging-buffer size, page-table layout) -- and compare.

What it models: an application replayed call by call, as a capture tool replays a capture.  Every handle,
address and fence value the trace names by symbol is mapped to what this run's VidMm hands out.  The replay
reports calls whose result differs from the recording (a MakeResident that now fails ...), CPU reads whose bytes
differ (content must survive any residency history, under any policy), and the paging traffic of both runs
(:mod:`~wddmsim.scenarios.traffic`).  Under the recorded configuration the replay issues exactly the recorded
calls, so the event logs are identical.

One rule where the runs may diverge: a call recorded as complete (``S_OK``, fence 0) that now returns
``E_PENDING`` is waited for at once, as the application would have had to; a recorded wait for a fence that is 0
in the replay returns at once.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from wddmsim.api import UserDevice, UserProcess
from wddmsim.core.addresses import FenceValue
from wddmsim.core.bits import BitUnion
from wddmsim.core.errors import ConfigurationError, WddmsimError
from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE, D3DDDICB_DEALLOCATE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import (
    D3DDDICB_LOCK,
    D3DDDICB_LOCK2,
    D3DDDICB_LOCK2FLAGS,
    D3DDDICB_LOCKFLAGS,
    D3DDDICB_UNLOCK,
    D3DDDICB_UNLOCK2,
)
from wddmsim.ddi.render import D3DDDI_ALLOCATIONLIST, D3DDDI_PATCHLOCATIONLIST, D3DDDICB_RENDER, D3DDDICB_RENDERFLAGS
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDI_MAKERESIDENT_FLAGS,
    D3DDDI_OFFER_PRIORITY,
    D3DDDI_PAGINGQUEUE_PRIORITY,
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDICB_EVICT,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_OFFER_FLAGS,
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
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.scenarios.callfmt import (
    FORMAT,
    READABLE_VERSIONS,
    Json,
    Ranges,
    Symbols,
    TraceFormatError,
    packets_from_json,
    unblob,
)
from wddmsim.scenarios.config import Future, PolicyWrap, ScenarioConfig, apply_overrides, from_dict
from wddmsim.scenarios.patterns import pattern
from wddmsim.scenarios.record import VIEW_SPAN
from wddmsim.scenarios.traffic import difference, event_digest, traffic
from wddmsim.system import Adapter, build_adapter

MAX_WRITE: Final = 1 << 31
"""The largest CPU write a trace may ask for (the model's largest workload)."""
MAX_LISTED: Final = 20
"""How many differing calls a result keeps word of (the count is exact)."""
UpdateType = D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE
_SUCCESS: Final = frozenset({HRESULT.S_OK, HRESULT.E_PENDING, HRESULT.D3DERR_WASSTILLDRAWING})
"""Results that are not a refusal (``E_PENDING``: the paging fence to wait on; ``WASSTILLDRAWING``: try again)."""


@dataclass(slots=True)
class Trace:
    """A call trace read from disk."""

    scenario: dict[str, Any]
    calls: list[dict[str, Json]]
    trailer: dict[str, Json] | None
    lines: list[int] = field(default_factory=list)
    """The file line (1-based) of each call, for errors."""

    @property
    def config(self) -> ScenarioConfig:
        if not isinstance(self.scenario, dict):
            raise TraceFormatError(f"the header's scenario is {type(self.scenario).__name__}, not a table")
        return from_dict(self.scenario)


def _parse_lines(path: Path) -> list[tuple[int, Json]]:
    """``(line number, value)`` of every non-blank line; a :class:`TraceFormatError` names the bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TraceFormatError(f"{path}: byte {error.start}: not UTF-8 text, not a {FORMAT} trace") from None
    except OSError as error:
        raise TraceFormatError(f"{path}: cannot be read: {error.strerror}") from None
    records: list[tuple[int, Json]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except (ValueError, RecursionError) as error:  # ValueError: JSONDecodeError, or an integer too long to read
            raise TraceFormatError(f"{path}: line {number}: not JSON: {_json_fault(error)}") from None
    return records


def _json_fault(error: ValueError | RecursionError) -> str:
    """What the decoder refused, in a few words."""
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return f"an integer of more than {sys.get_int_max_str_digits()} digits"


def read_trace(path: Path) -> Trace:
    """Parse and check a trace file (:class:`TraceFormatError` names the line).

    Version 2 (decision 0038) ends with a trailer that counts the calls written: a trace without its trailer,
    or with another number of calls, was cut (or edited) and is refused.  Version 1 traces, which have no
    count, are read when their trailer is there.
    """
    records = _parse_lines(path)
    if not records:
        raise TraceFormatError(f"{path}: empty, not a {FORMAT} trace")
    number, header = records[0]
    if not isinstance(header, dict) or header.get("trace") != FORMAT:
        raise TraceFormatError(f"{path}: line {number} is not a {FORMAT} header")
    version = header.get("version")
    if version not in READABLE_VERSIONS:
        raise TraceFormatError(
            f"{path}: version {version!r}; this wddmsim reads versions {', '.join(map(str, READABLE_VERSIONS))}"
        )
    if not isinstance(header.get("scenario"), dict):
        raise TraceFormatError(f"{path}: line {number}: the header has no scenario table")
    last_line, last = records[-1]
    if len(records) < 2 or not isinstance(last, dict) or not isinstance(last.get("end"), dict):
        raise TraceFormatError(
            f'{path}: line {last_line}: the trace ends without its trailer (an "end" line): it was cut short'
        )
    trailer: dict[str, Json] = last["end"]
    body = records[1:-1]
    for line, record in body:
        if not isinstance(record, dict) or not isinstance(record.get("call"), str):
            raise TraceFormatError(f"{path}: line {line} is not a call")
    _check_count(path, version, trailer, len(body), last_line)
    return Trace(header["scenario"], [r for _, r in body], trailer, [n for n, _ in body])


def _check_count(path: Path, version: object, trailer: dict[str, Json], calls: int, line: int) -> None:
    """Version 2: the trailer's ``calls`` is the number of call lines (a cut or a deleted line is an error)."""
    if version == 1:
        return
    written = trailer.get("calls")
    if isinstance(written, bool) or not isinstance(written, int):
        raise TraceFormatError(f"{path}: line {line}: the trailer's calls={written!r}: must be the number of calls")
    if written != calls:
        raise TraceFormatError(
            f"{path}: line {line}: the trailer counts {written} calls; the trace holds {calls}: it was cut or edited"
        )


@dataclass(slots=True)
class ReplayResult:
    """What a replay found."""

    config: ScenarioConfig
    adapter: Adapter
    recorded: dict[str, int]
    """The recorded run's traffic (from the trace's trailer)."""
    recorded_digest: str
    calls: int = 0
    differing: int = 0
    """Calls whose result (or error) differs from the recording."""
    examples: list[str] = field(default_factory=list)
    reads: int = 0
    reads_differing: int = 0
    refused_now: int = 0
    """Calls that succeeded when recorded and are refused (raised or returned an error) in the replay."""

    def failures(self, *, overridden: bool) -> str:
        """Why the replay failed, or ``""``: without overrides any call that returned otherwise is a divergence;
        with overrides (which may change results) a call that succeeded when recorded and is now refused."""
        if not overridden and self.differing:
            return f"{self.differing} call(s) returned otherwise than recorded on the recorded configuration"
        if overridden and self.refused_now:
            return f"{self.refused_now} call(s) that succeeded when recorded were refused"
        return ""

    @property
    def traffic(self) -> dict[str, int]:
        return traffic(self.adapter.events)

    def difference(self) -> dict[str, tuple[int, int, int]]:
        """Counter -> (recorded, replay, replay - recorded), for those that differ."""
        return difference(self.recorded, self.traffic)

    @property
    def identical_events(self) -> bool:
        return bool(self.recorded_digest) and event_digest(self.adapter.events)[1] == self.recorded_digest

    @property
    def content_preserved(self) -> bool:
        return self.reads_differing == 0


class _Replayer:
    """Runs one trace's calls, mapping symbols to this run's handles and addresses."""

    def __init__(self, adapter: Adapter, result: ReplayResult) -> None:
        self.adapter = adapter
        self.result = result
        self.symbols = Symbols()
        self.processes: dict[str, UserProcess] = {}
        self.devices: dict[str, UserDevice] = {}
        self.vas: dict[str, Ranges] = {}
        self.views: dict[str, Ranges] = {}
        self.fences: dict[int, int] = {}
        """seq of a recorded call -> the fence value it returned in the replay."""
        self.device_process: dict[str, str] = {}
        self.handlers: dict[str, Callable[[dict[str, Json]], object]] = {
            name.removeprefix("do_"): getattr(self, name) for name in dir(self) if name.startswith("do_")
        }

    # --- helpers -----------------------------------------------------------------------------------------------

    def v(self, symbol: Json) -> HANDLE:
        return HANDLE(self.symbols.value(symbol))

    def fence(self, value: Json) -> FenceValue:
        if isinstance(value, dict) and "fence" in value:
            return FenceValue(self.fences.get(int(value["fence"]), 0))
        return FenceValue(int(value))

    def device(self, rec: dict[str, Json]) -> UserDevice:
        return self.devices[str(rec["device"])]

    def process_of(self, rec: dict[str, Json]) -> str:
        """The process symbol of the record (device records: the device's process)."""
        if "process" in rec:
            return str(rec["process"])
        return self.device_process[str(rec["device"])]

    def pending(self, rec: dict[str, Json], result: HRESULT, queue: HANDLE, value: FenceValue) -> None:
        """A fence value the replay got: remembered for later waits; waited for at once if the recording did not
        have one (the application would have had to)."""
        self.fences[int(rec["seq"])] = value
        recorded = rec.get("out", {}).get("PagingFenceValue", 0) if isinstance(rec.get("out"), dict) else 0
        if result == HRESULT.E_PENDING and not recorded:
            device = self.device(rec)
            device.wait_for_paging_fence(queue, value)

    # --- running -------------------------------------------------------------------------------------------

    def run(
        self, calls: list[dict[str, Json]], lines: list[int] | None = None, after: Callable[[], None] | None = None
    ) -> None:
        for index, rec in enumerate(calls):
            if after is not None and index:
                after()  # the previous call is over (whether it returned, was refused or raised)
            line = lines[index] if lines and index < len(lines) else index + 2
            self.result.calls += 1
            handler = self.handlers.get(str(rec["call"]))
            if handler is None:
                raise TraceFormatError(f"line {line}: seq {rec.get('seq')}: unknown call {rec['call']!r}")
            expected_error = rec.get("error")
            try:
                outcome = handler(rec)
            except (DdiError, WddmsimError) as error:
                status = error.status.name if isinstance(error, DdiError) else type(error).__name__
                if not (isinstance(expected_error, dict) and expected_error.get("status") == status):
                    self._differ(rec, f"raised {status}: {error}", refused=expected_error is None)
                continue
            except TraceFormatError as error:
                raise TraceFormatError(f"line {line}: seq {rec.get('seq')} {rec['call']}: {error}") from None
            except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError) as error:
                # The record does not have the fields, types or symbols its call needs: the trace is malformed.
                raise TraceFormatError(
                    f"line {line}: seq {rec.get('seq')} {rec['call']}: malformed record ({type(error).__name__}: "
                    f"{error})"
                ) from None
            if expected_error is not None:
                self._differ(rec, "succeeded; the recording was refused")
                self._release(rec)
            elif "result" in rec and isinstance(outcome, HRESULT) and outcome.name != rec["result"]:
                refused = outcome not in _SUCCESS and rec["result"] in {h.name for h in _SUCCESS}
                self._differ(rec, f"returned {outcome.name}; recorded {rec['result']}", refused=refused)

    def _release(self, rec: dict[str, Json]) -> None:
        """A lock the recording saw refused and the replay was granted: the application, refused, never unlocked
        it, so the replay does at once -- the allocation stays lockable for the calls after it (decision 0230)."""
        call = rec["call"]
        if call == "lock":
            handle = self.v(rec["args"]["hAllocation"])
            self.device(rec).unlock(D3DDDICB_UNLOCK(NumAllocations=1, phAllocations=(handle,)))
        elif call == "lock2":
            self.device(rec).unlock2(D3DDDICB_UNLOCK2(hAllocation=self.v(rec["args"]["hAllocation"])))

    def _differ(self, rec: dict[str, Json], what: str, *, refused: bool = False) -> None:
        self.result.differing += 1
        self.result.refused_now += refused
        if len(self.result.examples) < MAX_LISTED:
            self.result.examples.append(f"seq {rec.get('seq')} {rec['call']}: {what}")

    # --- processes and devices ---------------------------------------------------------------------------------

    def do_open_process(self, rec: dict[str, Json]) -> None:
        process = self.adapter.runtime.open_process()
        name = str(rec["out"]["process"])
        self.symbols.bind(name, process.handle)
        self.processes[name] = process
        self.vas[name] = Ranges("va")
        self.views[name] = Ranges("view")

    def do_create_device(self, rec: dict[str, Json]) -> None:
        device = self.processes[str(rec["process"])].create_device()
        name = str(rec["out"]["device"])
        self.symbols.bind(name, device.handle)
        self.devices[name] = device
        self.device_process[name] = str(rec["process"])

    def do_destroy_device(self, rec: dict[str, Json]) -> HRESULT:
        return self.processes[str(rec["process"])].destroy_device(self.devices[str(rec["args"]["device"])])

    def do_close_process(self, rec: dict[str, Json]) -> None:
        self.processes[str(rec["process"])].close()

    # --- allocations and residency -----------------------------------------------------------------------------

    def do_allocate(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        infos = [
            D3DDDI_ALLOCATIONINFO(pPrivateDriverData=bytes.fromhex(d), PrivateDriverDataSize=len(d) // 2)
            for d in a["allocations"]
        ]
        resource = bytes.fromhex(a.get("resource", ""))
        args = D3DDDICB_ALLOCATE(
            NumAllocations=len(infos),
            pAllocationInfo=infos,
            pPrivateDriverData=resource,
            PrivateDriverDataSize=len(resource),
        )
        result = self.device(rec).allocate(args)
        for name, info in zip(rec["out"]["handles"], infos, strict=True):
            self.symbols.bind(name, info.hAllocation)
        return result

    def do_deallocate(self, rec: dict[str, Json]) -> HRESULT:
        handles = tuple(self.v(h) for h in rec["args"]["HandleList"])
        return self.device(rec).deallocate(D3DDDICB_DEALLOCATE(NumAllocations=len(handles), HandleList=handles))

    def do_create_paging_queue(self, rec: dict[str, Json]) -> HRESULT:
        args = D3DDDI_CREATEPAGINGQUEUE(Priority=D3DDDI_PAGINGQUEUE_PRIORITY(rec["args"]["Priority"]))
        result = self.device(rec).create_paging_queue(args)
        self.symbols.bind(rec["out"]["hPagingQueue"], args.hPagingQueue)
        self.symbols.bind(rec["out"]["hSyncObject"], args.hSyncObject)
        return result

    def do_make_resident(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        handles = tuple(self.v(h) for h in a["AllocationList"])
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=self.v(a["hPagingQueue"]),
            NumAllocations=len(handles),
            AllocationList=handles,
            Flags=_bits(D3DDDI_MAKERESIDENT_FLAGS, a["Flags"]),
        )
        result = self.device(rec).make_resident(args)
        self.pending(rec, result, args.hPagingQueue, args.PagingFenceValue)
        return result

    def do_evict(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        handles = tuple(self.v(h) for h in a["AllocationList"])
        return self.device(rec).evict(
            D3DDDICB_EVICT(
                NumAllocations=len(handles), AllocationList=handles, Flags=_bits(D3DDDI_EVICT_FLAGS, a["Flags"])
            )
        )

    def do_wait_for_paging_fence(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        return self.device(rec).wait_for_paging_fence(self.v(a["hPagingQueue"]), self.fence(a["value"]))

    def do_offer(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        handles = tuple(self.v(h) for h in a["HandleList"])
        device = self.device(rec)
        return device.offer(
            D3DKMT_OFFERALLOCATIONS(
                hDevice=device.handle,
                HandleList=handles,
                NumAllocations=len(handles),
                Priority=D3DDDI_OFFER_PRIORITY(a["Priority"]),
                Flags=_bits(D3DKMT_OFFER_FLAGS, a["Flags"]),
            )
        )

    def do_reclaim(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        handles = tuple(self.v(h) for h in a["HandleList"])
        args = D3DKMT_RECLAIMALLOCATIONS2(
            hPagingQueue=self.v(a["hPagingQueue"]), NumAllocations=len(handles), HandleList=handles
        )
        result = self.device(rec).reclaim(args)
        self.pending(rec, result, args.hPagingQueue, args.PagingFenceValue)
        return result

    def do_query_video_memory_info(self, rec: dict[str, Json]) -> HRESULT:
        args = D3DKMT_QUERYVIDEOMEMORYINFO(
            MemorySegmentGroup=D3DKMT_MEMORY_SEGMENT_GROUP(rec["args"]["MemorySegmentGroup"])
        )
        return self.processes[str(rec["process"])].query_video_memory_info(args)

    # --- CPU access --------------------------------------------------------------------------------------------

    def _viewed(self, rec: dict[str, Json], handle: Json, address: int) -> None:
        out = rec.get("out", {})
        if isinstance(out, dict) and isinstance(out.get("pData"), dict) and address:
            self.views[self.process_of(rec)].add(str(out["pData"]["view"]), address, VIEW_SPAN)

    def do_lock(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        pages = a.get("pPages")
        args = D3DDDICB_LOCK(
            hAllocation=self.v(a["hAllocation"]),
            PrivateDriverData=a.get("PrivateDriverData", 0),
            NumPages=a.get("NumPages", 0),
            pPages=None if pages is None else tuple(pages),
            Flags=_bits(D3DDDICB_LOCKFLAGS, a["Flags"]),
        )
        result = self.device(rec).lock(args)
        self._viewed(rec, a["hAllocation"], args.pData)
        return result

    def do_unlock(self, rec: dict[str, Json]) -> HRESULT:
        handles = tuple(self.v(h) for h in rec["args"]["phAllocations"])
        return self.device(rec).unlock(D3DDDICB_UNLOCK(NumAllocations=len(handles), phAllocations=handles))

    def do_lock2(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        args = D3DDDICB_LOCK2(hAllocation=self.v(a["hAllocation"]), Flags=_bits(D3DDDICB_LOCK2FLAGS, a.get("Flags", 0)))
        result = self.device(rec).lock2(args)
        self._viewed(rec, rec["args"]["hAllocation"], args.pData)
        return result

    def do_unlock2(self, rec: dict[str, Json]) -> HRESULT:
        return self.device(rec).unlock2(D3DDDICB_UNLOCK2(hAllocation=self.v(rec["args"]["hAllocation"])))

    def do_cpu_write(self, rec: dict[str, Json]) -> None:
        a = rec["args"]
        process = str(rec["process"])
        address = self.views[process].resolve(a["address"])
        if "pattern" in a:
            size = int(a["pattern"]["size"])
            if not 0 <= size <= MAX_WRITE:
                raise TraceFormatError(f"pattern size {size}: a CPU write is 0..{MAX_WRITE:#x} bytes")
            data = pattern(int(a["pattern"]["seed"]), size).tobytes()
        else:
            data = unblob(a["data"])
        self.processes[process].cpu_write(address, data)

    def do_cpu_read(self, rec: dict[str, Json]) -> None:
        a = rec["args"]
        process = str(rec["process"])
        data = self.processes[process].cpu_read(self.views[process].resolve(a["address"]), int(a["size"]))
        self.result.reads += 1
        if hashlib.sha256(data).hexdigest() != rec["out"]["sha256"]:
            self.result.reads_differing += 1
            self._differ(rec, f"read {len(data)} bytes that differ from the recording")

    # --- GPU virtual addresses -----------------------------------------------------------------------------

    def do_reserve_gpu_va(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        vas = self.vas[self.process_of(rec)]
        args = D3DDDI_RESERVEGPUVIRTUALADDRESS(
            hPagingQueue=self.v(a["hPagingQueue"]),
            BaseAddress=vas.resolve(a["BaseAddress"]),
            MinimumAddress=a["MinimumAddress"],
            MaximumAddress=a["MaximumAddress"],
            Size=a["Size"],
            ReservationType=a["ReservationType"],
            DriverProtection=a["DriverProtection"],
        )
        result = self.device(rec).reserve_gpu_va(args)
        vas.add(str(rec["out"]["VirtualAddress"]), args.VirtualAddress, args.Size)
        self.pending(rec, result, args.hPagingQueue, args.PagingFenceValue)
        return result

    def do_map_gpu_va(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        vas = self.vas[self.process_of(rec)]
        args = D3DDDI_MAPGPUVIRTUALADDRESS(
            hPagingQueue=self.v(a["hPagingQueue"]),
            BaseAddress=vas.resolve(a["BaseAddress"]),
            MinimumAddress=a["MinimumAddress"],
            MaximumAddress=a["MaximumAddress"],
            hAllocation=self.v(a["hAllocation"]) if a["hAllocation"] else HANDLE(0),
            OffsetInPages=a["OffsetInPages"],
            SizeInPages=a["SizeInPages"],
            Protection=_bits(D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE, a["Protection"]),
            DriverProtection=a["DriverProtection"],
        )
        result = self.device(rec).map_gpu_va(args)
        va = rec["out"]["VirtualAddress"]
        if isinstance(va, str):
            vas.add(va, args.VirtualAddress, args.SizeInPages * 4096)
        self.pending(rec, result, args.hPagingQueue, args.PagingFenceValue)
        return result

    def do_update_gpu_va(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        vas = self.vas[self.process_of(rec)]
        ops: list[D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION] = []
        for op in a["Operations"]:
            kind = UpdateType(op["OperationType"])
            payload: Any
            if kind == UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY:
                payload = D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY(
                    SourceAddress=vas.resolve(op["SourceAddress"]),
                    DestAddress=vas.resolve(op["DestAddress"]),
                    SizeInBytes=op["SizeInBytes"],
                )
            elif kind == UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP:
                payload = D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP(
                    BaseAddress=vas.resolve(op["BaseAddress"]),
                    SizeInBytes=op["SizeInBytes"],
                    Protection=_bits(D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE, op["Protection"]),
                )
            else:
                common = {
                    "BaseAddress": vas.resolve(op["BaseAddress"]),
                    "SizeInBytes": op["SizeInBytes"],
                    "hAllocation": self.v(op["hAllocation"]),
                    "AllocationOffsetInBytes": op.get("AllocationOffsetInBytes", 0),
                    "AllocationSizeInBytes": op.get("AllocationSizeInBytes", 0),
                }
                if kind == UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP:
                    payload = D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP(**common)
                else:
                    payload = D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT(
                        **common,
                        Protection=_bits(D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE, op["Protection"]),
                        DriverProtection=op.get("DriverProtection", 0),
                    )
            ops.append(D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION(OperationType=kind, payload=payload))
        return self.device(rec).update_gpu_va(
            D3DDDICB_UPDATEGPUVIRTUALADDRESS(
                hContext=self.v(a["hContext"]),
                hFenceObject=self.v(a["hFenceObject"]),
                NumOperations=len(ops),
                Operations=tuple(ops),
                FenceValue=a["FenceValue"],
                Flags=_bits(D3DDDICB_UPDATEGPUVIRTUALADDRESS_FLAGS, a["Flags"]),
            )
        )

    def do_free_gpu_va(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        vas = self.vas[self.process_of(rec)]
        base = vas.resolve(a["BaseAddress"])
        result = self.device(rec).free_gpu_va(D3DDDICB_FREEGPUVIRTUALADDRESS(BaseAddress=base, Size=a["Size"]))
        vas.remove(base)
        return result

    def do_register_trim_notification(self, rec: dict[str, Json]) -> None:
        """The callback was the application's: in the replay it does nothing (its calls follow in the trace)."""
        device = self.devices[str(rec["device"])]
        args = D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=device.handle, Callback=lambda _notification: None)
        self.processes[str(rec["process"])].register_trim_notification(args)

    def do_set_focus(self, rec: dict[str, Json]) -> None:
        self.adapter.runtime.set_focus(self.processes[str(rec["process"])], bool(rec["foreground"]))

    def do_set_scheduling_priority_class(self, rec: dict[str, Json]) -> None:
        priority = int(rec["priority"])  # malformed: a TypeError, so a TraceFormatError
        self.adapter.runtime.set_scheduling_priority_class(self.processes[str(rec["process"])], priority)

    def do_impose_budget(self, rec: dict[str, Json]) -> None:
        budget = rec["budget"]
        group = D3DKMT_MEMORY_SEGMENT_GROUP(int(rec["group"]))
        self.adapter.runtime.impose_budget(
            self.processes[str(rec["process"])],
            group,
            None if budget is None else int(budget),
        )

    def do_request_trim(self, rec: dict[str, Json]) -> None:
        flags = int(rec["flags"])
        self.adapter.runtime.request_trim(
            self.processes[str(rec["process"])], D3DDDI_TRIMRESIDENCYSET_FLAGS.from_value(flags)
        )

    def do_deliver_trim_notifications(self, rec: dict[str, Json]) -> None:
        self.adapter.runtime.deliver_trim_notifications()

    def do_power_transition(self, rec: dict[str, Json]) -> None:
        self.adapter.vidmm.power_transition(str(rec["kind"]))

    # --- contexts, synchronisation and work ------------------------------------------------------------------

    def do_create_context(self, rec: dict[str, Json]) -> None:
        self.symbols.bind(rec["out"]["hContext"], self.device(rec).create_context(int(rec["args"]["node"])))

    def do_create_sync_object(self, rec: dict[str, Json]) -> None:
        self.symbols.bind(rec["out"]["hSyncObject"], self.device(rec).create_sync_object())

    def do_destroy_context(self, rec: dict[str, Json]) -> HRESULT:
        return self.device(rec).destroy_context(self.v(rec["args"]["hContext"]))

    def do_destroy_sync_object(self, rec: dict[str, Json]) -> HRESULT:
        return self.device(rec).destroy_sync_object(self.v(rec["args"]["hSyncObject"]))

    def do_signal_from_cpu(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        return self.device(rec).signal_from_cpu(self.v(a["hSyncObject"]), FenceValue(int(a["value"])))

    def do_wait_for_sync_object(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        return self.device(rec).wait_for_sync_object(self.v(a["hSyncObject"]), FenceValue(int(a["value"])))

    def do_submit_command(self, rec: dict[str, Json]) -> None:
        a = rec["args"]
        data = packets_from_json(a["packets"], self.vas[self.process_of(rec)])
        self.fences[int(rec["seq"])] = self.device(rec).submit_command(self.v(a["hContext"]), data)

    def do_render(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        data = packets_from_json(a["packets"], self.vas[self.process_of(rec)])
        slots = tuple(
            D3DDDI_ALLOCATIONLIST(hAllocation=self.v(e["hAllocation"]), WriteOperation=bool(e["WriteOperation"]))
            for e in a["pAllocationList"]
        )
        patches = tuple(
            D3DDDI_PATCHLOCATIONLIST(
                AllocationIndex=p[0],
                AllocationOffset=p[1],
                PatchOffset=p[2],
                SlotId=p[3],
                DriverId=p[4],
                SplitOffset=p[5],
            )
            for p in a["pPatchLocationList"]
        )
        args = D3DDDICB_RENDER(
            hContext=self.v(a["hContext"]),
            pCommandBuffer=data,
            CommandLength=len(data),
            NumAllocations=len(slots),
            pAllocationList=slots,
            NumPatchLocations=len(patches),
            pPatchLocationList=patches,
            Flags=_bits(D3DDDICB_RENDERFLAGS, a.get("Flags", 0)),
        )
        result = self.device(rec).render(args)
        self.fences[int(rec["seq"])] = args.SubmissionFenceId
        return result

    def do_wait_for_context(self, rec: dict[str, Json]) -> HRESULT:
        a = rec["args"]
        return self.device(rec).wait_for_context(self.v(a["hContext"]), self.fence(a["fence"]))


def replay(
    trace: Trace,
    overrides: Mapping[str, object] | None = None,
    *,
    wrap: PolicyWrap | None = None,
    after_call: Callable[[], None] | None = None,
    on_adapter: Callable[[Adapter], None] | None = None,
) -> ReplayResult:
    """Run ``trace`` on the configuration it was recorded with, changed by ``overrides`` (dotted keys of
    :mod:`~wddmsim.scenarios.config`; the driver model must stay: a trace's calls belong to one model; so must the
    user-mode driver, whose format the recorded private driver data is in -- a package wrapping the recorded one
    shares it).  ``wrap`` and ``after_call``: an observer around the eviction policy, told when each call ends
    (the reference string of :mod:`wddmsim.research`: one request per call); ``on_adapter`` sees the adapter
    before the first call."""
    recorded = trace.config
    config = from_dict(apply_overrides(recorded.to_dict(), overrides or {}))
    if config.adapter.driver_model != recorded.adapter.driver_model:
        raise ConfigurationError(
            "adapter.driver_model",
            config.adapter.driver_model,
            f"a trace replays on the driver model it was recorded with ({recorded.adapter.driver_model})",
        )
    if config.adapter.package.umd is not recorded.adapter.package.umd:
        raise ConfigurationError(
            "adapter.driver",
            config.adapter.driver,
            "a trace's private driver data is in the format of the user-mode driver it was recorded with "
            f"(driver package {recorded.adapter.driver})",
        )
    future = _recorded_uses(trace) if config.offline_policy else None
    adapter = build_adapter(config.system_config(future=future, wrap=wrap))
    if on_adapter is not None:
        on_adapter(adapter)
    trailer = trace.trailer or {}
    recorded_traffic = trailer.get("traffic", {})
    if not isinstance(recorded_traffic, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in recorded_traffic.values()
    ):
        raise TraceFormatError("the trailer's traffic must map counters to integers")
    result = ReplayResult(
        config,
        adapter,
        {str(k): int(v) for k, v in recorded_traffic.items()},
        str(trailer.get("events_sha256", "")),
    )
    _Replayer(adapter, result).run(trace.calls, trace.lines, after_call)
    if after_call is not None:
        after_call()
    return result


def _recorded_uses(trace: Trace) -> list[int]:
    """The uses of the recorded run (what an offline policy is given): the trace replayed once on the recorded
    configuration, with the eviction policy's use notifications recorded (decision 0065)."""
    recorded = trace.config
    uses = Future()
    adapter = build_adapter(recorded.system_config(uses=uses))
    _Replayer(adapter, ReplayResult(recorded, adapter, {}, "")).run(trace.calls, trace.lines)
    return uses


B = TypeVar("B", bound=BitUnion)


def _bits(kind: type[B], value: Json) -> B:
    """A recorded flag word as its union -- refused if it has bits the union does not (``from_value`` would drop
    them, and the replay would pass a call the recording refused)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TraceFormatError(f"{kind.__name__}={value!r}: not an integer")
    flags = kind.from_value(value) if value >= 0 else None
    if flags is None or flags.Value != value:
        raise TraceFormatError(f"{kind.__name__}={value:#x}: has bits outside the {kind.__name__} layout")
    return flags
