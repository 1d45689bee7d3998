"""The caller's loop of ``DxgkDdiBuildPagingBuffer``: operations in, submitted paging buffers out.

Shaped as the normative VidMm loop of the DDI documentation::

    MultipassOffset = 0
    do { status = BuildPagingBuffer(args)
         SUCCESS                 -> the operation is in the current buffer; submitted later (flush)
         INSUFFICIENT_DMA_BUFFER -> submit the current buffer, take a fresh one, call again
         ALLOCATION_BUSY         -> (Transfer, DiscardContent, SpecialLockTransfer only) wait until the
                                    allocation is idle, call again with Flags.AllocationIsIdle
         anything else           -> critical failure: the adapter-reset path
    } while not SUCCESS

and it checks the driver as it goes: a legal status only; ``pDmaBuffer`` still inside the buffer and
``DmaSize`` shrunk by exactly the bytes it advanced; the guard after the buffer untouched; progress on a fresh
buffer (a driver that cannot fit anything in an empty buffer would loop for ever).  Every breach ends in
:class:`~.reset.ResetPath`, which raises :class:`~.errors.DeviceRemoved` with the reason.

Why over 400 lines: the loop, its checks of the driver and the buffers' fences (tickets, flush, wait, poll) share
one state -- the open buffer and what is built into it -- and each check sits next to the step it guards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Final, NoReturn, final

from wddmsim.core.addresses import FenceValue
from wddmsim.core.bits import BitUnion
from wddmsim.core.errors import UnfitArgument
from wddmsim.core.events import EventLog
from wddmsim.core.pointer import CpuPointer
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.flags import DXGK_DISCARDCONTENTFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGKARG_BUILDPAGINGBUFFER,
    Op,
    PagingPayload,
)
from wddmsim.ddi.status import BUILD_PAGING_BUFFER_STATUSES, NTSTATUS, status_name
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import BuildPagingBuffer, PagingBufferSubmitted, PagingOperation
from wddmsim.vidmm.gpu.reset import ResetPath
from wddmsim.vidmm.gpu.scheduler import GpuHung, GpuScheduler
from wddmsim.vidmm.paging.buffers import CANARY, PagingBuffer, PagingBufferPool

_NO_FENCE: Final = FenceValue(0)

_SUCCESS = NTSTATUS.STATUS_SUCCESS  # enum members read once (class attribute access is slow)
_INSUFFICIENT = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
_ARGS = DXGKARG_BUILDPAGINGBUFFER
_new = object.__new__
"""A class called with keywords hands ``__init__`` a dictionary of them (~250 ns for the argument block's eight):
the block is made with ``object.__new__`` and its own ``__init__`` called as a function (decision 0233)."""
_BUSY_CAPABLE = (  # seed rule (b): ALLOCATION_BUSY is legal from these three operations only
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT,
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
)


class DriverContractBreach(Exception):
    """What the checker found wrong with the driver's answer (turned into a reset by the caller)."""


@dataclass(slots=True, eq=False)
class PagingTicket:
    """The paging work built up to one point (an allocation's last move): :attr:`fence` is the paging-node
    submission that completes it, 0 while that work is still in the open buffer (decision 0058)."""

    fence: FenceValue = FenceValue(0)  # noqa: RUF009 (a NewType: the call returns its argument)


@final
class PagingStream:
    """Builds operations into paging buffers for one paging node and submits them, in order."""

    def __init__(
        self,
        driver: KernelModeDriver,
        scheduler: GpuScheduler,
        pool: PagingBufferPool,
        reset: ResetPath,
        events: EventLog,
        *,
        context: HANDLE,
        node: int,
        idle_waiter: Callable[[HANDLE], None] | None = None,
        allocation_size: Callable[[HANDLE], int] | None = None,
    ) -> None:
        self.driver = driver
        self.scheduler = scheduler
        self.pool = pool
        self.reset = reset
        self.events = events
        self.context = context
        self.node = node
        self.current: PagingBuffer | None = None
        self.idle_waiter = idle_waiter
        """Waits until no process's work in flight references an allocation (None: nothing to wait for)."""
        self._ops_in_current = 0
        self.continuing = 0
        """Operations waiting half-way -- for a fresh buffer for the rest of one that did not fit, or for the GPU
        before the CPU writes page-table entries (:meth:`wait_within`): what they submitted before may run
        meanwhile, the rest (a TLB flush behind a PTE change, say) is still to come."""
        self.building = 0
        """Operations inside :meth:`build` now (a driver or a wait re-entering VidMm sees it non-zero)."""
        self.calls = 0
        self.passes = 0
        self.submissions = 0
        self.last_fence = FenceValue(0)
        self.capture: Callable[[PagingBufferSubmitted, bytes], None] | None = None
        """Optional observer of every submission and its bytes (disassembly, reports); it must not mutate."""
        self.allocation_size = allocation_size
        """Size of an allocation by handle: what ``DiscardContent`` and ``InitContextResource`` cover (events)."""
        self._open_tickets: list[PagingTicket] = []
        """Tickets of work in the open buffer: they learn their fence when it is submitted."""

    # --- buffers ------------------------------------------------------------------------------------------

    def _fresh_buffer(self) -> PagingBuffer:
        buffer = self.pool.next_buffer()
        fence, scheduler = buffer.fence, self.scheduler
        if fence and not (scheduler.nodes[self.node].completed >= fence and self.node not in scheduler.faults):
            self.wait(fence)  # a fault or hang on the way takes the reset path, never escapes bare
        buffer.used = buffer.submitted = 0  # buffer.reset(), without the call: once per paging operation
        buffer.fence = _NO_FENCE
        self._ops_in_current = 0
        return buffer

    def _buffer(self) -> PagingBuffer:
        if self.current is None:
            self.current = self._fresh_buffer()
        return self.current

    def _submit(self, buffer: PagingBuffer) -> FenceValue | None:
        """Submit what was built since the last submission of ``buffer``."""
        if buffer.used == buffer.submitted:
            return None
        fence = self.scheduler.submit(
            self.context,
            self.node,
            address=buffer.address,
            segment_id=buffer.segment_id,
            size=buffer.size,
            start=buffer.submitted,
            end=buffer.used,
            private_data=buffer.private_cursor,
            private_size=self.pool.private_size,
        )
        if self.capture is not None or not self.events.skips(PagingBufferSubmitted, self.scheduler.clock.now):
            event = PagingBufferSubmitted(
                time=self.scheduler.clock.now,
                node=self.node,
                fence=fence,
                start=buffer.submitted,
                end=buffer.used,
                operations=self._ops_in_current,
            )
            self.events.emit(event)
            if self.capture is not None:
                self.capture(event, bytes(buffer.mapping.view[buffer.submitted : buffer.used]))
        buffer.submitted = buffer.used
        buffer.fence = fence
        self.submissions += 1
        self.last_fence = fence
        if self._open_tickets:
            self._resolve_tickets(fence)
        return fence

    def _resolve_tickets(self, fence: FenceValue) -> None:
        for ticket in self._open_tickets:
            ticket.fence = fence
        self._open_tickets.clear()

    def ticket(self) -> PagingTicket:
        """A ticket for everything built so far: the operations of a move just built, say, whose bytes a CPU
        view must not show before they ran (decision 0058)."""
        current = self.current
        if current is not None and current.used > current.submitted:
            ticket = PagingTicket()
            self._open_tickets.append(ticket)
            return ticket
        return PagingTicket(self.last_fence)

    def done(self, ticket: PagingTicket, *, wait: bool) -> bool:
        """Whether the work ``ticket`` stands for has run on the paging engine; with ``wait``, it runs first (the
        open buffer is submitted if the work is in it).  Without ``wait``, a poll: the answer is what is true now, and
        then the engine runs one more event (decision 0053), so polling again makes progress."""
        if not ticket.fence:
            self.flush()  # submitting is not waiting: the engine may start on it
        if self.scheduler.is_complete(self.node, ticket.fence):
            return True
        if not wait:
            self.scheduler.poll()  # the caller polls: time passes after it looked, so its next poll sees progress
            return False
        self.wait(ticket.fence)
        return True

    @property
    def unfinished(self) -> bool:
        """Paging work is still to come from this stream without any new request: an operation built and not
        submitted, or one being built (a multipass operation, or one that did not fit, waiting for a buffer)."""
        current = self.current
        return bool(self.continuing) or (current is not None and current.used > current.submitted)

    def use_pool(self, pool: PagingBufferPool) -> None:
        """Build into ``pool``'s buffers from now on (the video memory manager replaced the pool: a resize, or the
        pool mapped into ``PagingBufferSegmentId``); the old one is the caller's to free."""
        self.pool = pool

    def flush(self) -> FenceValue:
        """Submit the open buffer; return the fence that completes everything built so far (0 if none)."""
        if self.current is not None:
            self._submit(self.current)
            self.current = None
        return self.last_fence

    def wait_within(self, fence: int) -> None:
        """:meth:`wait` in the middle of an operation (its flush still to be built): :attr:`unfinished` holds."""
        self.continuing += 1
        try:
            self.wait(fence)
        finally:
            self.continuing -= 1

    def wait(self, fence: int) -> None:
        """Wait for ``fence`` on this node; a GPU fault or hang takes the reset path."""
        try:
            self.scheduler.wait(self.node, fence)
        except GpuHung as error:
            self.reset.trigger(f"waiting for paging fence {fence}: {error}")

    # --- the loop -----------------------------------------------------------------------------------------

    def execute(self, payload: PagingPayload) -> FenceValue:
        """Build one operation, submit it, and wait for it; returns the fence it completed with."""
        self.build(payload)  # flush() and wait() written out: one call each fewer per operation
        current = self.current
        if current is not None:
            self._submit(current)
            self.current = None
        fence = self.last_fence
        try:
            self.scheduler.wait(self.node, fence)
        except GpuHung as error:
            self.reset.trigger(f"waiting for paging fence {fence}: {error}")
        return fence

    def build(self, payload: PagingPayload) -> int:
        """Build one operation into the stream (the normative loop); returns the passes it took.  Once the adapter
        is removed (decision 0239) nothing is built: ``DeviceRemoved`` with the removal's reason, no driver call."""
        removed = self.reset.removed
        if removed is not None:
            raise DeviceRemoved(removed)
        self.building += 1  # counted here, not around a helper: one call fewer per operation
        try:
            buffer = self.current
            if buffer is None:
                buffer = self.current = self._fresh_buffer()
            used = buffer.used
            args = _new(_ARGS)  # the class call in its two steps (decision 0233): keywords without a dictionary
            _ARGS.__init__(
                args,
                payload,
                # A new pointer each call (buffer.cursor, without the call), never the object the driver handed
                # back last time: a Python driver may keep that one as its own cursor and move it (decision 0226).
                pDmaBuffer=CpuPointer(buffer.mapping, used),
                DmaSize=buffer.size - used,
                pDmaBufferPrivateData=buffer.private_cursor,
                DmaBufferPrivateDataSize=self.pool.private_size,
                MultipassOffset=0,
                hSystemContext=self.context,
                DmaBufferWriteOffset=used,
            )
            passes = 1
            idle_retry = False
            stalled = 0
            events = self.events
            while True:
                # One driver call, checked (inline: the loop's one call per operation is the driver's).
                before = args.pDmaBuffer
                assert before is not None
                offset_at_start = args.MultipassOffset
                size_before = args.DmaSize
                self.calls += 1
                if events.enabled:
                    events.tallies[TALLY_CALLS] += 1
                try:
                    raw = self.driver.build_paging_buffer(args)
                except UnfitArgument as error:  # VidMm's own value, refused by the bridge before the driver ran (0237)
                    self._fatal(
                        f"{args.Operation.name}: the C bridge refused VidMm's own argument before the driver ran: {error}"
                    )
                except Exception as error:  # the driver's bug, not ours: a bugcheck on Windows
                    self._fatal(f"{args.Operation.name}: the driver raised {type(error).__name__}: {error}")
                pointer = args.pDmaBuffer
                if (  # the checks of _check in one expression, for the answer of nearly every call: a legal status,
                    raw.__class__ is NTSTATUS
                    and raw in BUILD_PAGING_BUFFER_STATUSES
                    and pointer is not None  # ... pDmaBuffer advanced inside the buffer, DmaSize shrunk by as much ...
                    and pointer.mapping is buffer.mapping
                    and before.offset <= pointer.offset <= buffer.size
                    and args.DmaSize == size_before - (pointer.offset - before.offset)
                    and buffer.guard.tobytes() == CANARY  # ... and the guard untouched (guard_intact, without the call)
                ):
                    written = pointer.offset - before.offset
                    status = raw
                else:
                    try:
                        written = self._check(args, buffer, raw, before, size_before)
                    except DriverContractBreach as breach:
                        self._fatal(f"{args.Operation.name}: {breach}")
                    status = NTSTATUS(raw)
                buffer.used += written
                if events.enabled and not events.skips(BuildPagingBuffer, self.scheduler.clock.now):
                    self._emit_call(args, status, written, buffer.used - written)
                progress = written + (args.MultipassOffset != offset_at_start)
                if status == _SUCCESS:
                    self._ops_in_current += 1
                    if events.enabled:  # skips() is True for a disabled log: not asked then
                        self._tally(events, args.Operation, payload)
                        if not events.skips(PagingOperation, self.scheduler.clock.now):  # a plain run may not want it
                            self._account(args, payload, passes)
                    return passes
                if status == _INSUFFICIENT:
                    stalled = stalled + 1 if args.MultipassOffset == offset_at_start else 0
                    if stalled >= MAX_STALLED_CALLS:
                        self._fatal(
                            f"{args.Operation.name}: MultipassOffset stayed at {args.MultipassOffset} for {stalled} calls "
                            "answered STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER -- the driver records no progress, so the "
                            "operation would never end"
                        )
                    if progress == 0 and buffer.used == 0:
                        self._fatal(
                            f"{args.Operation.name}: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER on an empty "
                            f"{buffer.size}-byte paging buffer -- the driver cannot fit a single packet, "
                            "so the operation can never make progress"
                        )
                    self._submit(buffer)
                    self.continuing += 1
                    try:
                        buffer = self.current = self._fresh_buffer()
                    finally:
                        self.continuing -= 1
                    self._rebind(args, buffer)
                    passes += 1
                    self.passes += 1
                    continue
                # STATUS_GRAPHICS_ALLOCATION_BUSY
                if not isinstance(args.payload, _BUSY_CAPABLE):
                    self._fatal(
                        f"{args.Operation.name}: STATUS_GRAPHICS_ALLOCATION_BUSY is legal only for Transfer, "
                        "DiscardContent and SpecialLockTransfer"
                    )
                if idle_retry:
                    self._fatal(
                        f"{args.Operation.name}: STATUS_GRAPHICS_ALLOCATION_BUSY again with Flags.AllocationIsIdle set"
                    )
                if args.MultipassOffset != 0 or progress:
                    self._fatal(
                        f"{args.Operation.name}: STATUS_GRAPHICS_ALLOCATION_BUSY after writing or making progress"
                    )
                self._wait_allocation_idle(args.payload.hAllocation)
                buffer = self._buffer()
                self._rebind(args, buffer)
                args.payload = _with_idle_flag(args.payload)
                idle_retry = True
        finally:
            self.building -= 1

    def _rebind(self, args: DXGKARG_BUILDPAGINGBUFFER, buffer: PagingBuffer) -> None:
        args.pDmaBuffer = buffer.cursor
        args.DmaSize = buffer.remaining
        args.pDmaBufferPrivateData = buffer.private_cursor
        args.DmaBufferPrivateDataSize = self.pool.private_size
        args.DmaBufferWriteOffset = buffer.used

    def _wait_allocation_idle(self, hAllocation: HANDLE) -> None:
        """Until nothing on the GPU uses the allocation: the paging work before this operation, and (through
        :attr:`idle_waiter`) the processes' work that references it (decision 0009)."""
        if self.current is not None:
            self._submit(self.current)
        try:
            self.scheduler.wait(self.node, self.scheduler.nodes[self.node].submitted)
            if self.idle_waiter is not None:
                self.idle_waiter(hAllocation)
        except GpuHung as error:
            self.reset.trigger(f"waiting for an allocation to go idle: {error}")

    def _emit_call(self, args: DXGKARG_BUILDPAGINGBUFFER, status: NTSTATUS, written: int, offset: int) -> None:
        self.events.emit(
            BuildPagingBuffer(
                time=self.scheduler.clock.now,
                operation=_OP_NAMES[args.Operation],
                status=_STATUS_NAMES.get(status) or status.name,
                multipass_offset=args.MultipassOffset,
                bytes_written=written,
                buffer_offset=offset,
            )
        )

    def _check(
        self, args: DXGKARG_BUILDPAGINGBUFFER, buffer: PagingBuffer, raw: object, before: CpuPointer, size_before: int
    ) -> int:
        if not isinstance(raw, int) or raw not in BUILD_PAGING_BUFFER_STATUSES:
            shown = status_name(raw) if isinstance(raw, int) else repr(raw)
            raise DriverContractBreach(
                f"returned {shown}; only STATUS_SUCCESS, STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER and "
                "STATUS_GRAPHICS_ALLOCATION_BUSY are legal (a critical failure: bugcheck on Windows)"
            )
        pointer = args.pDmaBuffer
        if pointer is None or pointer.mapping is not buffer.mapping:
            raise DriverContractBreach("pDmaBuffer no longer points into the paging buffer")
        written = pointer.offset - before.offset
        if written < 0 or pointer.offset > buffer.size:
            raise DriverContractBreach(
                f"pDmaBuffer moved by {written} byte(s) to offset {pointer.offset:#x} of a {buffer.size:#x}-byte buffer"
            )
        if not buffer.guard_intact():
            raise DriverContractBreach(
                f"the driver wrote past DmaSize ({size_before:#x} bytes at offset {before.offset:#x}) "
                "into the guard page"
            )
        if args.DmaSize != size_before - written:
            raise DriverContractBreach(
                f"DmaSize={args.DmaSize:#x} after advancing pDmaBuffer by {written:#x} from DmaSize={size_before:#x}"
            )
        return int(written)

    def _fatal(self, reason: str) -> NoReturn:
        self.current = None
        self._resolve_tickets(self.last_fence)  # the open buffer is dropped: its work will never run
        self.reset.trigger(reason)

    @staticmethod
    def _tally(events: EventLog, op: Op, payload: PagingPayload) -> None:
        """The counts a plain run keeps of its paging operations without building their events (decision 0223):
        ``TALLY_OPERATIONS[op]`` one per operation, ``TALLY_BYTES[op]`` the bytes a transfer moves."""
        tallies = events.tallies
        tallies[TALLY_OPERATIONS[op]] += 1
        if op in TALLY_BYTES:
            tallies[TALLY_BYTES[op]] += _moved(_KINDS.get(type(payload)) or _payload_kind(payload), payload)

    def _account(self, args: DXGKARG_BUILDPAGINGBUFFER, payload: PagingPayload, passes: int) -> None:
        kind = _KINDS.get(type(payload)) or _payload_kind(payload)
        size = _moved(kind, payload)
        has = kind.fields  # a membership test, not a method call, per field: this runs for every operation
        handle = HANDLE(int(_GET_HALLOCATION(payload))) if "hAllocation" in has else HANDLE(0)
        if not size and handle and isinstance(payload, _WHOLE_ALLOCATION) and self.allocation_size is not None:
            size = self.allocation_size(handle)  # DiscardContent, InitContextResource: the whole allocation
        source = _GET_SOURCE(payload) if "Source" in has else None
        destination = _GET_DESTINATION(payload) if "Destination" in has else None
        direction = _GET_TRANSFERDIRECTION(payload) if "TransferDirection" in has else None
        self.events.emit(
            PagingOperation(
                time=self.scheduler.clock.now,
                operation=_OP_NAMES[args.Operation],
                allocation=handle,
                size=size,
                source_segment=int(getattr(source, "SegmentId", 0)) if source is not None else 0,
                destination_segment=int(getattr(destination, "SegmentId", kind.read(payload, "SegmentId", 0))),
                passes=passes,
                direction="" if direction is None else direction.name,
                args=scalar_fields(payload),
            )
        )


MAX_STALLED_CALLS: Final = 64
"""INSUFFICIENT_DMA_BUFFER answers in a row with ``MultipassOffset`` unchanged before VidMm gives up on the driver:
the offset is where the DDI has a driver record its progress, and a loop without it never ends (decision 0121)."""

_GET_HALLOCATION = attrgetter("hAllocation")  # for the fields a payload type has (the union type does not)
_GET_SOURCE = attrgetter("Source")
_GET_DESTINATION = attrgetter("Destination")
_GET_TRANSFERDIRECTION = attrgetter("TransferDirection")
_WHOLE_ALLOCATION = (DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE)


def scalar_fields(payload: object, prefix: str = "") -> tuple[tuple[str, int], ...]:
    """The integer fields of a payload by DDI name, nested structures flattened (``Source.SegmentId``); arrays,
    MDLs, pointers and bytes are left out.  Flag unions give their ``Value``."""
    t = type(payload)
    reader = _READERS.get(t)
    if reader is None:
        reader = _reader(t)
    values = reader[1](payload)
    key = (t, prefix, *map(type, values))
    emit = _RECIPES.get(key)
    if emit is None:
        emit = _RECIPES[key] = _recipe(reader[0], values, prefix)
    return emit(values)


_READERS: dict[type, tuple[tuple[str, ...], Callable[[object], tuple[Any, ...]]]] = {}
"""Per payload type (or structure inside one): its field names in declaration order and one getter of them all."""

Recipe = Callable[[tuple[Any, ...]], tuple[tuple[str, int], ...]]
_RECIPES: dict[tuple[object, ...], Recipe] = {}
"""Per payload type, prefix and the types of its field values: a function of the field values that gives the
reported ones -- worked out once, so the event of every paging operation is one call that builds its tuple (the
field types of one payload type rarely vary: an optional field is ``None`` or not)."""


def _reader(t: type) -> tuple[tuple[str, ...], Callable[[object], tuple[Any, ...]]]:
    names = tuple(f.name for f in dataclasses.fields(t))
    getter: Callable[[object], tuple[Any, ...]]
    if len(names) > 1:
        getter = attrgetter(*names)
    else:  # attrgetter of one name returns the value itself, of none is refused
        getter = (lambda payload: (getattr(payload, names[0]),)) if names else (lambda payload: ())
    _READERS[t] = reader = (names, getter)
    return reader


def _recipe(names: tuple[str, ...], values: tuple[Any, ...], prefix: str) -> Recipe:
    """The function reporting these field values: ints as they are, bool and IntEnum through ``int``, unions by
    ``Value``, one level of nested structure by its own recipe; anything else is left out.

    At the top level, a nested structure's fields are read inline (its type and its field types as seen here,
    tested in one expression); a value of another shape takes the general recipe, which asks ``scalar_fields``."""
    scope: dict[str, Any] = {"nested": scalar_fields}
    general = _compile(_parts(names, values, prefix, "v", None), scope)
    if prefix or not any(_value_kind(type(value)) is _NESTED for value in values):
        return general
    guards: list[str] = []
    inline = _parts(names, values, prefix, "v", (guards, scope))
    scope["general"] = general
    return _compile(inline, scope, f"    if {' and '.join(guards)}:\n    ", "\n    return general(v)")


def _parts(
    names: tuple[str, ...],
    values: tuple[Any, ...],
    prefix: str,
    source: str,
    inline: tuple[list[str], dict[str, Any]] | None,
) -> list[str]:
    """The reported items of ``source`` (a tuple of these field values) as expressions; nested structures through
    ``nested``, or with ``inline``, read in place under the guards it collects (names bound in its scope)."""
    parts: list[str] = []
    for index, (name, value) in enumerate(zip(names, values, strict=True)):
        kind, label, item = _value_kind(type(value)), prefix + name, f"{source}[{index}]"
        if kind is _EXACT_INT:
            parts.append(f"({label!r}, {item})")
        elif kind is _INT:
            parts.append(f"({label!r}, int({item}))")
        elif kind is _UNION:
            parts.append(f"({label!r}, {item}.Value)")
        elif kind is _NESTED and not prefix:  # one level of nesting, as the event shows it
            if inline is None:
                parts.append(f"*nested({item}, {label + '.'!r})")
                continue
            guards, scope = inline
            t = type(value)
            inner_names, getter = _READERS.get(t) or _reader(t)
            inner = getter(value)
            n, w = f"n{index}", f"w{index}"
            scope[f"T{index}"], scope[f"G{index}"], scope[f"K{index}"] = t, getter, tuple(map(type, inner))
            guards.append(f"type({n} := {item}) is T{index} and (*map(type, {w} := G{index}({n})),) == K{index}")
            parts.extend(_parts(inner_names, inner, label + ".", w, None))
    return parts


def _compile(parts: list[str], scope: dict[str, Any], before: str = "", after: str = "") -> Recipe:
    # the source: literals, indices and names bound in ``scope``, all built above
    exec(f"def emit(v):\n{before}    return ({', '.join(parts)}{',' if parts else ''}){after}\n", scope)
    emit: Recipe = scope["emit"]
    return emit


_EXACT_INT, _INT, _UNION, _NESTED, _OTHER = "exact int", "int", "union", "nested", "other"


def _value_kind(t: type) -> str:
    if t is int:
        return _EXACT_INT
    if issubclass(t, int):
        return _INT
    if issubclass(t, BitUnion):
        return _UNION
    if dataclasses.is_dataclass(t):
        return _NESTED
    return _OTHER


_OP_NAMES = {op: op.name for op in Op}
_STATUS_NAMES = {status: status.name for status in BUILD_PAGING_BUFFER_STATUSES}
"""The legal answers' names, read once (an enum member's ``name`` is a property: a call per event)."""

_SIZE_FIELDS = (
    ("TransferSize", 1),
    ("FillSize", 1),
    ("TransferSizeInBytes", 1),
    ("FillSizeInBytes", 1),
    ("NumberOfPages", 4096),
    ("NumPageTableEntries", 8),
)
"""Where a payload says how many bytes it moves: the first of these it has that is not zero."""


@dataclass(frozen=True, slots=True)
class _PayloadKind:
    """What the ``PagingOp`` event reads of a payload type, worked out once per type (looking for an attribute a
    slotted payload does not have costs an exception)."""

    sizes: tuple[tuple[str, int], ...]
    fields: frozenset[str]

    def read(self, payload: PagingPayload, name: str, default: object) -> Any:
        return getattr(payload, name) if name in self.fields else default


_KINDS: dict[type, _PayloadKind] = {}


def _moved(kind: _PayloadKind, payload: PagingPayload) -> int:
    """The bytes a payload says it moves: the first of its size fields that is not zero (0 if none)."""
    for name, unit in kind.sizes:
        size = int(getattr(payload, name)) * unit
        if size:
            return size
    return 0


TALLY_CALLS: Final = (BuildPagingBuffer, "")
"""The :attr:`EventLog.tallies` key counting ``DxgkDdiBuildPagingBuffer`` calls (decision 0223)."""
TALLY_OPERATIONS: Final = {op: (PagingOperation, op.name) for op in Op}
"""Per operation, the tallies key counting the operations built (``PagingOperation.operation`` names)."""
TALLY_BYTES: Final = {
    op: (PagingOperation, op.name + " bytes")
    for op in (Op.DXGK_OPERATION_TRANSFER, Op.DXGK_OPERATION_VIRTUAL_TRANSFER, Op.DXGK_OPERATION_SPECIAL_LOCK_TRANSFER)
}
"""Per transfer operation, the tallies key summing the bytes they move (``PagingOperation.size``)."""


def _payload_kind(payload: PagingPayload) -> _PayloadKind:
    kind = _KINDS.get(type(payload))
    if kind is None:
        t = type(payload)
        wanted = ("Source", "Destination", "SegmentId", "hAllocation", "TransferDirection")
        fields = frozenset(name for name in wanted if hasattr(t, name))
        sizes = tuple((name, unit) for name, unit in _SIZE_FIELDS if hasattr(t, name))
        kind = _KINDS[t] = _PayloadKind(sizes, fields)
    return kind


def _with_idle_flag(payload: PagingPayload) -> PagingPayload:
    if isinstance(payload, DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT):
        return dataclasses.replace(payload, Flags=DXGK_DISCARDCONTENTFLAGS(AllocationIsIdle=True))
    if isinstance(payload, (DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER)):
        flags = dataclasses.replace(payload.Flags, AllocationIsIdle=True)
        return dataclasses.replace(payload, Flags=flags)
    return payload


__all__ = ["DriverContractBreach", "PagingStream", "PagingTicket", "scalar_fields"]
