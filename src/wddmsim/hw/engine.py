"""The command processor of one GPU engine: it fetches submitted buffers, decodes packets and executes them.

Work is asynchronous to the CPU side and paced by the simulated clock: a packet's effects land when it
*completes* (start + cost), one packet after another, submission after submission -- a COPY's bytes may wait a
little longer, posted, until anything but this engine could look (:mod:`.posted`).  When a submission's last
packet completes the engine writes the submission's fence value to its ``completed_fence`` register and raises
a completion interrupt.  A fault halts the engine with a :class:`~.faults.FaultRecord` until it is reset.

A submission may instead name an *executor* (:class:`Executor`): an object that carries out the buffer in its
own format -- a driver's software command log -- through a :class:`~.services.GpuServices` table.  It runs on the
clock like a packet, in submission order, and the submission then completes exactly as a decoded one does; an
executor that raises faults the engine (never a traceback out of the simulator).

The engine knows nothing of paging buffers or Windows: it runs packets.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import partial
from typing import Protocol, assert_never, final, get_args

import numpy as np

from wddmsim.core.clock import Clock
from wddmsim.core.events import EventLog
from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import HW_ADDRESS, Space, split_address
from wddmsim.hw.cost import CostModel
from wddmsim.hw.events import DmaBufferCompleted, DmaBufferStarted, EngineFaulted, EngineNote, PacketExecuted
from wddmsim.hw.faults import AccessKind, FaultKind, FaultRecord, GpuFault
from wddmsim.hw.memory import PhysicalMemory
from wddmsim.hw.memsys import (
    MemorySystem,
    copy_runs,
    fill_runs,
    read_runs,
    scatter_gather,
    transform_copy,
    write_runs,
)
from wddmsim.hw.mmu import Run
from wddmsim.hw.posted import BufferSpan, PostedCopies, post
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.hw.services import GpuServices
from wddmsim.hw.swizzle import check_surface

# Enum members read once: attribute access on an enum class is slow on the per-packet path.
_READ = AccessKind.READ
_WRITE = AccessKind.WRITE
_SPACE_LSB = HW_ADDRESS["space"].lsb
_ADDRESS_MASK = HW_ADDRESS["address"].mask
_PAGE_MASK = PAGE_SIZE - 1
# The low bytes of two little-endian opcodes (their high bytes are 0): a peek at the next packet's kind.
_COPY_OPCODE = int(cmd.Opcode.COPY)
_WRITE_QWORDS_OPCODE = int(cmd.Opcode.WRITE_QWORDS)
_SYNC_OPCODE = int(cmd.Opcode.SYNC)
_SYNC_LENGTH = len(cmd.SYNC_BYTES)
_SYSTEM = Space.SYSTEM
_GPU_PHYS = Space.GPU_PHYS
_GPU_VA = Space.GPU_VA
EXECUTOR_OPCODE = "EXECUTOR"
"""The opcode a :class:`PacketExecuted` event names for a buffer an executor carried out."""


class Executor(Protocol):
    """Carries out a submitted buffer itself (issue 21's pluggable executor): the engine calls it once, when the
    submission's turn comes on the clock, with the submitted range ``[start, end)`` of the buffer, the
    submission's private data, and the services through which it reaches the machine.

    It returns ``None``, or how many more nanoseconds the work takes (the submission completes that much later).
    Whatever it raises faults the engine: a :class:`~.faults.GpuFault` as itself, anything else as an invalid
    instruction naming the executor and the error.
    """

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> int | None: ...


@dataclass(slots=True)
class Submission:
    """A buffer handed to an engine: ``size`` bytes of packets at ``address`` (a packet address word)."""

    address: int
    size: int
    fence: int
    """Written to ``completed_fence`` when the last packet completes."""
    root: TablePointer | None = None
    """The address space the buffer runs in: loaded into the root registers when the buffer starts (a context
    switch); ``None`` keeps what the registers hold."""
    root_entries: int | None = None
    privileged: bool = True
    """A kernel-mode (paging) buffer may name physical memory and flush TLBs; any other buffer may reach memory
    only through its GPU VAs -- anything else is an invalid instruction."""
    executor: Executor | None = None
    """Who carries out the buffer: ``None`` is the engine's own decoder (``docs/command-format.md``)."""
    private_data: memoryview | bytes | None = None
    """Handed to the executor with the buffer (the driver's ``pDmaBufferPrivateData`` record)."""


class InterruptKind(IntEnum):
    COMPLETION = 0
    FAULT = 1
    SIGNAL = 2


@dataclass(slots=True)
class Interrupt:
    """What an engine raises to the driver: a buffer completed or a ``SIGNAL`` packet wrote ``value``, or a fault
    with its record."""

    engine: int
    kind: InterruptKind
    value: int = 0
    fault: FaultRecord | None = None


class EngineState(IntEnum):
    IDLE = 0
    BUSY = 1
    HALTED = 2


_COMPLETION = InterruptKind.COMPLETION  # members read once: these are used once per submission
_IDLE = EngineState.IDLE
_BUSY = EngineState.BUSY


@final
class Engine:
    """One engine (the paging/copy engine is engine 0)."""

    def __init__(
        self,
        index: int,
        name: str,
        clock: Clock,
        memsys: MemorySystem,
        cost: CostModel,
        events: EventLog,
        interrupt: Callable[[Interrupt], None],
    ) -> None:
        self.index = index
        self.name = name
        self.clock = clock
        self.memsys = memsys
        self.cost = cost
        self._write_cost_of: CostModel | None = None
        self._write_ns: dict[tuple[int, bool], int] = {}
        """Transfer durations of WRITE_QWORDS and inline COPY packets by (bytes, crosses PCIe) under
        ``_write_cost_of``: a few sizes recur per run."""
        self.events = events
        self._interrupt = interrupt
        self.root: TablePointer | None = None
        """MMIO: the page-table root of the address space ``GPU_VA`` addresses are translated in."""
        self.root_entries: int | None = None
        """MMIO: how many root entries are valid (a VA indexing past them faults); ``None``: all."""
        self.completed_fence = 0
        """MMIO: the fence of the last completed submission."""
        self.last_read = 0
        """MMIO: the value of the last READ_MEM."""
        self.fault: FaultRecord | None = None
        self.privileged = True
        """Whether the running buffer is a kernel-mode one (see :attr:`Submission.privileged`)."""
        self.state = EngineState.IDLE
        self.packets_executed = 0
        self._queue: deque[Submission] = deque()
        self._current: Submission | None = None
        self._buffer: memoryview | bytes = b""
        self._buffer_span: BufferSpan | None = None
        """Where ``_buffer`` lives when it is a live view of memory (a posted copy must not write there)."""
        self._offset = 0
        self.post_copies = True
        """Whether COPY packets' bytes may land together, later (:mod:`.posted`, decision 0193)."""
        self._posted = PostedCopies()
        self._generation = 0  # bumped by reset() so stale scheduled callbacks do nothing
        self.services = GpuServices(memsys, self._runs, self._signal)
        """What an executor is handed: the machine, resolved in this engine's current address space."""

    # --- CPU side -------------------------------------------------------------------------------------------

    def submit(self, submission: Submission) -> None:
        self._queue.append(submission)
        if self.state == _IDLE:
            self.state = _BUSY
            self.clock.schedule(self.clock.now, partial(self._begin_next, self._generation))

    @property
    def pending(self) -> int:
        return len(self._queue) + (self._current is not None)

    def reset(self) -> None:
        """Engine reset: drop queued and in-flight work, clear the fault; registers other than the fault stay.
        Packets that executed before it have written their bytes."""
        self._posted.land()
        self._generation += 1
        self._queue.clear()
        self._current = None
        self._buffer = b""
        self._buffer_span = None
        self.fault = None
        self.state = EngineState.IDLE

    # --- execution ------------------------------------------------------------------------------------------

    def _begin_next(self, generation: int) -> None:
        if generation != self._generation:
            return
        if not self._queue:
            self.state = EngineState.IDLE
            return
        sub = self._queue.popleft()
        self._current = sub
        self._offset = 0
        if sub.root is not None:  # the context's address space, switched in with its buffer
            self.root, self.root_entries = sub.root, sub.root_entries
        self.privileged = sub.privileged
        events = self.events
        # A plain run may have no one for it; a log that is off skips it without the call (what skips answers).
        if events.enabled and not events.skips(DmaBufferStarted, self.clock.now):
            events.emit(DmaBufferStarted(time=self.clock.now, engine=self.index, fence=sub.fence, size=sub.size))
            if generation != self._generation:
                return  # its observer reset the engine: the buffer is dropped before it is fetched
        word, size = sub.address, sub.size
        system = self.memsys.system
        if word >> _SPACE_LSB == _SYSTEM and size > 0 and (word & _ADDRESS_MASK) + size <= system.size:
            # A paging buffer in system RAM (every one VidMm submits): _fetch's one-run answer, without the calls.
            address = word & _ADDRESS_MASK
            self._buffer_span = (system, address, address + size)
            self._buffer = system.view[address : address + size]
        else:
            try:
                self._buffer = self._fetch(sub)
            except GpuFault as fault:
                self._halt(fault, sub, 0)
                return
        if sub.executor is not None:
            self._schedule_executor(generation)
            return
        self._schedule_next_packet(generation)

    def _fetch(self, sub: Submission) -> memoryview | bytes:
        self._buffer_span = None
        runs = self.memsys.runs(sub.address, sub.size, _READ, self.root, self.root_entries)
        if not runs:  # an empty buffer: nothing to fetch, it completes at once
            return b""
        mem, offset, size = runs[0]
        if len(runs) == 1 and mem is not None:
            self._buffer_span = (mem, offset, offset + size)
            return mem.view[offset : offset + size]
        return read_runs(runs).tobytes()

    def _schedule_next_packet(self, generation: int) -> None:
        """Decode the next packet and run it when it completes -- inline when nothing else is due before."""
        while True:
            sub = self._current
            if sub is None or generation != self._generation:
                return  # the last packet's observer reset the engine: the rest of the buffer is dropped
            if self._offset >= sub.size:
                self._finish_submission(sub)
                if self._queue or generation != self._generation:
                    self._begin_next(generation)
                else:  # nothing queued (the interrupt handler submitted nothing): what _begin_next does, without it
                    self.state = _IDLE
                return
            offset = self._offset
            buffer = self._buffer
            opcode = buffer[offset]  # a peek at the opcode byte saves the fast paths' calls for other packets
            if opcode == _WRITE_QWORDS_OPCODE and self.privileged:  # the paging buffer's staple, in runs
                ran = self._write_qwords_run(sub, offset, generation)
                if ran is None:
                    return
                if ran:
                    continue
                # Not well-formed, or it completes later: the general path below decodes it (and keeps it).
            if self.privileged and opcode == _COPY_OPCODE and fast_paged_copy:  # a small transfer's packet
                paged = cmd.paged_copy_at(buffer, offset, sub.size)
                if paged is not None:
                    ran = self._paged_copy_now(sub, offset, paged)
                    if ran is None:
                        return
                    if ran:
                        continue
            # The buffer's usual last packet, without building it; one that completes later takes the general path.
            if opcode == _SYNC_OPCODE and cmd.sync_at(buffer, offset, sub.size) and self._sync_now(sub, offset):
                continue
            try:
                packet = cmd.decode(self._buffer, offset, sub.size)
            except cmd.DecodeError as error:
                self._halt(GpuFault(FaultKind.INVALID_INSTRUCTION, offset, error.reason), sub, offset)
                return
            self._offset += packet.length
            done = self.clock.now + self._duration(packet)
            if not self.clock.try_advance(done):
                self._posted.land()  # something else runs first: it must find every executed packet's bytes
                self.clock.schedule(done, partial(self._complete, generation, packet, offset))
                return
            if not self._run_packet(sub, packet, offset):
                return

    # --- a pluggable executor -------------------------------------------------------------------------------------

    def _schedule_executor(self, generation: int) -> None:
        """Run the current submission's executor when a packet would complete (one packet's overhead from now)."""
        done = self.clock.now + self.cost.packet_overhead_ns
        self.clock.schedule(done, partial(self._run_executor, generation))

    def _run_executor(self, generation: int) -> None:
        if generation != self._generation:
            return
        sub = self._current
        assert sub is not None
        assert sub.executor is not None
        try:
            extra = sub.executor(self._buffer, sub.private_data, self.services)
        except GpuFault as fault:
            self._halt(fault, sub, 0)
            return
        except Exception as error:  # the user's code: whatever it raises is this engine's fault, not ours
            reason = f"executor {_name_of(sub.executor)} raised {type(error).__name__}: {error}"
            self._halt(GpuFault(FaultKind.INVALID_INSTRUCTION, 0, reason), sub, 0)
            return
        if generation != self._generation:  # the executor's work reset the engine: nothing left to complete
            return
        if extra is not None and (not isinstance(extra, int) or isinstance(extra, bool) or extra < 0):
            reason = f"executor {_name_of(sub.executor)} returned {extra!r}: must be None or nanoseconds >= 0"
            self._halt(GpuFault(FaultKind.INVALID_INSTRUCTION, 0, reason), sub, 0)
            return
        self._executed(sub, 0, None)
        if extra:
            self.clock.schedule(self.clock.now + extra, partial(self._end_executed, generation))
        else:
            self._end_executed(generation)

    def _end_executed(self, generation: int) -> None:
        if generation != self._generation:
            return
        sub = self._current
        assert sub is not None
        self._finish_submission(sub)
        self._begin_next(generation)

    def _signal(self, value: int) -> None:
        self._interrupt(Interrupt(self.index, InterruptKind.SIGNAL, value))

    # --- packets ---------------------------------------------------------------------------------------------

    def _complete(self, generation: int, packet: cmd.Packet, offset: int) -> None:
        if generation != self._generation:
            return
        sub = self._current
        assert sub is not None
        if self._run_packet(sub, packet, offset):
            self._schedule_next_packet(generation)

    def _run_packet(self, sub: Submission, packet: cmd.Packet, offset: int) -> bool:
        """Apply ``packet``'s effects now; ``False`` if it faulted (the engine is halted)."""
        try:
            self._execute(packet)
        except _EXECUTION_ERRORS as error:
            return self._failed(error, sub, offset)
        return self._executed(sub, offset, type(packet))

    def _sync_now(self, sub: Submission, offset: int) -> bool:
        """Run a well-formed SYNC if it completes before anything else is due (``False``: it completes later,
        nothing done): what :meth:`_run_packet` does for one, in one call."""
        clock = self.clock
        done = clock.now + self.cost.sync_ns
        queue = clock.queue  # clock.try_advance(done), without the call
        if queue and queue[0][0] <= done:
            return False
        if done > clock.now:
            clock.now = done
        self._offset += _SYNC_LENGTH
        if self._posted.length:
            self._posted.land()
        self.packets_executed += 1  # _count_packet, without the call
        events = self.events
        if events.enabled and not events.skips(PacketExecuted, clock.now):
            events.emit(PacketExecuted(time=clock.now, engine=self.index, fence=sub.fence, offset=offset, opcode=_SYNC))
        return True

    def _write_qwords_run(self, sub: Submission, offset: int, generation: int) -> bool | None:
        """Run the well-formed WRITE_QWORDS packets from ``offset`` on (:func:`~.commands.write_qwords_run`) while
        each completes before anything else is due: ``True`` if one or more ran, ``False`` if none did (nothing
        done: the packet there is anything else, or completes later), ``None`` if one faulted -- the packets before
        it executed.  A paging buffer holds hundreds in a row (decision 0232).

        While no one hears ``PacketExecuted`` (the log off, or keeping nothing with no listener for it, as in a
        plain ``wddmsim run``) nothing in the run can call out (no callback due either), so a packet whose words
        land inside one page the MMU has cached for writing (:meth:`~.mmu.Mmu.write_pages`) runs here, in the
        loop, its event counted as skipped; any other packet, and every packet while someone hears them, is
        :meth:`_write_qwords_now`'s, after which a listener may have reset or changed the engine, or begun to
        hear packets: the run goes on only if it was not reset, and asks again who hears."""
        buffer, clock, mmu = self._buffer, self.clock, self.memsys.mmu
        root, root_entries = self.root, self.root_entries
        events = self.events
        enabled = events.enabled
        quiet = events.unheard(PacketExecuted)
        pages: dict[int, tuple[PhysicalMemory | None, int]] = {}
        limit = 0
        if quiet and root is not None:
            pages, limit = mmu.write_pages(root, root_entries)
        landed = not self._posted.length
        last_size, ns = -1, 0
        executed = 0  # packets run in the loop, not yet counted
        ran = False
        for fields in cmd.write_qwords_run(buffer, offset, sub.size):
            dst, count, repeat, words, length = fields
            size = count << 3
            address = dst & _ADDRESS_MASK
            if (
                landed
                and not repeat
                and dst >> _SPACE_LSB == _GPU_VA
                and address + size <= limit
                and (address & _PAGE_MASK) + size <= PAGE_SIZE
                and not address & 7
                and (hit := pages.get(address >> PAGE_SHIFT)) is not None
            ):  # what _write_qwords_now does for it, with the MMU's cached page
                if size != last_size:
                    last_size, ns = size, self._write_duration(size, False)
                done, queue = clock.now + ns, clock.queue  # clock.try_advance(done), without the call
                if queue and queue[0][0] <= done:
                    break
                if done > clock.now:
                    clock.now = done
                offset += length
                mem, page = hit
                if mem is not None:  # a Zero page drops the words
                    at = page + (address & _PAGE_MASK)
                    mem.view[at : at + size] = buffer[words : words + size]
                if enabled:  # counted as emitted, as _write_qwords_now's skipped event is
                    events.skips(PacketExecuted, clock.now)
                executed += 1
                continue
            self._offset = offset
            self.packets_executed += executed
            ran, executed = ran or executed > 0, 0
            one = self._write_qwords_now(sub, offset, fields)
            if one is None:
                return None
            if not one:
                return ran
            ran, landed = True, True
            if enabled:
                if generation != self._generation or not self.privileged:
                    return True  # a listener reset the engine, or made its buffer unprivileged: the caller decides
                if not quiet or not events.unheard(PacketExecuted):  # someone hears packets now: one at a time
                    quiet, pages = False, {}
            offset = self._offset
            if quiet and root is not None:  # the packet's translation may have filled (or made) the dictionary
                pages = mmu.write_pages(root, root_entries)[0]
        self._offset = offset
        self.packets_executed += executed
        return ran or executed > 0

    def _write_duration(self, size: int, pcie: bool) -> int:
        """A WRITE_QWORDS's duration under the current cost model (kept by size and PCIe, decision 0203)."""
        cost = self.cost
        if cost is not self._write_cost_of:  # the costs are frozen: a new model is a new object
            self._write_cost_of, self._write_ns = cost, {}
        ns = self._write_ns.get((size, pcie))
        if ns is None:
            ns = self._write_ns[size, pcie] = cost.transfer_ns(size, crosses_pcie=pcie)
        return ns

    def _write_qwords_now(self, sub: Submission, offset: int, fast: cmd.WriteQwordsFields) -> bool | None:
        """Run a WRITE_QWORDS read by :func:`~.commands.write_qwords_run` if it completes before anything else is
        due: ``True`` if it ran, ``False`` if it completes later (nothing done), ``None`` if it faulted.  Its cost,
        its effect and :meth:`_executed` in one call, its words taken straight from the fetched buffer: a page
        table's worth of entries per packet makes this the paging buffer's hot path."""
        dst, count, repeat, words, length = fast
        space = dst >> _SPACE_LSB
        address = dst & _ADDRESS_MASK
        pcie = space == _SYSTEM or (space == _GPU_PHYS and self.memsys.aperture.contains(address))
        clock = self.clock
        cost = self.cost
        if cost is not self._write_cost_of:  # the costs are frozen: a new model is a new object
            self._write_cost_of, self._write_ns = cost, {}
        ns = self._write_ns.get((8 * count, pcie))
        if ns is None:  # what _write_duration does, without the call: this runs once per packet
            ns = self._write_ns[8 * count, pcie] = cost.transfer_ns(8 * count, crosses_pcie=pcie)
        if not clock.try_advance(clock.now + ns):
            return False
        self._offset += length
        if self._posted.length:
            self._posted.land()
        size = 8 * count
        try:
            if address & 7:
                self._check_aligned(dst, 8)
            root = self.root
            runs = (  # memsys.runs' first case (a VA in the engine's address space), without the call
                self.memsys.mmu.translate(root, address, size, _WRITE, root_entries=self.root_entries)
                if space == _GPU_VA and root is not None
                else self.memsys.runs(dst, size, _WRITE, root, self.root_entries)
            )
            if repeat:
                write_runs(runs, bytes(self._buffer[words : words + 8]) * count)
            elif len(runs) == 1 and (mem := runs[0][0]) is not None:  # a table's words in one page: one copy
                at = runs[0][1]
                mem.view[at : at + size] = self._buffer[words : words + size]
            else:
                write_runs(runs, self._buffer[words : words + size])
        except _EXECUTION_ERRORS as error:
            self._failed(error, sub, offset)
            return None
        self.packets_executed += 1  # _count_packet, without the call
        now = clock.now
        events = self.events
        if not events.skips(PacketExecuted, now):
            events.emit(
                PacketExecuted(time=now, engine=self.index, fence=sub.fence, offset=offset, opcode=_WRITE_QWORDS)
            )
        return True

    def _paged_copy_now(self, sub: Submission, offset: int, fields: cmd.PagedCopyFields) -> bool | None:
        """Run a COPY read by :func:`~.commands.paged_copy_at` if it is not to be posted and completes before
        anything else is due: ``True`` if it ran, ``False`` if not (nothing done: the general path takes it),
        ``None`` if it faulted.  What :meth:`_execute_copy` and :meth:`_run_packet` do for it, in one call."""
        linear_word, first, size, to_pages, words, length = fields
        after = offset + length  # posting (decisions 0193, 0200) is the general path's
        if self._posted.length or (self.post_copies and after + 2 <= sub.size and self._buffer[after] == _COPY_OPCODE):
            return False
        clock, cost = self.clock, self.cost
        if cost is not self._write_cost_of:  # the durations kept for WRITE_QWORDS serve here too
            self._write_cost_of, self._write_ns = cost, {}
        ns = self._write_ns.get((size, True))
        if ns is None:
            ns = self._write_ns[size, True] = cost.transfer_ns(size, crosses_pcie=True)  # a page list: PCIe
        done = clock.now + ns
        queue = clock.queue  # clock.try_advance(done), without the call
        if queue and queue[0][0] <= done:
            return False
        if done > clock.now:
            clock.now = done
        self._offset = after
        try:
            # page_list_spans' small-list path, runs and scatter_gather in one call (decision 0221)
            if not self.memsys.copy_page_list(linear_word, first, words, size, to_pages, self.root, self.root_entries):
                packet = cmd.decode(self._buffer, offset, sub.size)
                assert isinstance(packet, cmd.Copy)
                self._copy_general(packet)
        except _EXECUTION_ERRORS as error:
            self._failed(error, sub, offset)
            return None
        self.packets_executed += 1  # _count_packet, without the call
        events = self.events
        if events.enabled and not events.skips(PacketExecuted, clock.now):
            events.emit(PacketExecuted(time=clock.now, engine=self.index, fence=sub.fence, offset=offset, opcode=_COPY))
        return True

    def _failed(self, error: Exception, sub: Submission, offset: int) -> bool:
        if not isinstance(error, GpuFault):
            error = GpuFault(FaultKind.INVALID_INSTRUCTION, offset, f"cannot execute: {error}")
        self._halt(error, sub, offset)
        return False

    def _executed(self, sub: Submission, offset: int, kind: type[cmd.Packet] | None) -> bool:
        """Count a packet (``kind`` ``None``: a whole buffer an executor carried out)."""
        self._count_packet(sub, offset, EXECUTOR_OPCODE if kind is None else _opcode(kind))
        return True

    def _count_packet(self, sub: Submission, offset: int, opcode: str) -> None:
        """One packet executed now: counted, and a ``PacketExecuted`` event if anyone wants one (decision 0207)."""
        self.packets_executed += 1
        now = self.clock.now
        if not self.events.skips(PacketExecuted, now):
            self.events.emit(PacketExecuted(time=now, engine=self.index, fence=sub.fence, offset=offset, opcode=opcode))

    def _finish_submission(self, sub: Submission) -> None:
        if self._posted.length:
            self._posted.land()
        self._current = None
        self._buffer = b""
        self._buffer_span = None
        self.completed_fence = sub.fence
        events = self.events
        if events.enabled and not events.skips(DmaBufferCompleted, self.clock.now):
            events.emit(DmaBufferCompleted(time=self.clock.now, engine=self.index, fence=sub.fence))
        self._interrupt(Interrupt(self.index, _COMPLETION, sub.fence))

    def _halt(self, fault: GpuFault, sub: Submission, offset: int) -> None:
        self._posted.land()  # the packets before the faulting one executed
        record = FaultRecord(
            kind=fault.kind,
            engine=self.index,
            address=fault.address,
            access=fault.access,
            level=fault.level,
            fence=sub.fence,
            packet_offset=offset,
            reason=fault.reason,
        )
        self.fault = record
        self.state = EngineState.HALTED
        self.events.emit(
            EngineFaulted(
                time=self.clock.now,
                engine=self.index,
                kind=record.kind.name,
                address=record.address,
                fence=record.fence,
                reason=record.reason,
            )
        )
        self._interrupt(Interrupt(self.index, InterruptKind.FAULT, sub.fence, record))

    def _duration(self, packet: cmd.Packet) -> int:
        cost = self.cost
        match packet:
            case cmd.Copy():
                pcie = (
                    packet.src_pages
                    or packet.dst_pages
                    or self._crosses_pcie(packet.src)
                    or self._crosses_pcie(packet.dst)
                )
                return cost.transfer_ns(packet.size, crosses_pcie=pcie)
            case cmd.Sync():
                return cost.sync_ns
            case cmd.Fill():
                return cost.transfer_ns(packet.size, crosses_pcie=self._crosses_pcie(packet.dst))
            case cmd.WriteQwords():
                return self._write_words_ns(packet.dst, packet.count)
            case cmd.ReadMem() | cmd.WriteMem() | cmd.Signal() | cmd.TlbInvalidate() | cmd.Note() | cmd.Nop():
                return cost.packet_overhead_ns
            case _:
                assert_never(packet)

    def _write_words_ns(self, dst: int, count: int) -> int:
        return self.cost.transfer_ns(8 * count, crosses_pcie=self._crosses_pcie(dst))

    def _crosses_pcie(self, word: int) -> bool:
        space, address = split_address(word)
        if space == _SYSTEM:
            return True
        return space == _GPU_PHYS and self.memsys.aperture.contains(address)

    def _runs(self, word: int, size: int, access: AccessKind) -> list[Run]:
        return self.memsys.runs(word, size, access, self.root, self.root_entries)

    def _execute(self, packet: cmd.Packet) -> None:
        if not self.privileged:
            _check_unprivileged(packet)
        if (
            type(packet) is cmd.Copy
            and self.post_copies
            and (self._posted.length or self._copy_follows())
            and post(self._posted, self.memsys, packet, self._buffer_span)
        ):
            return
        if self._posted.length:
            self._posted.land()
        match packet:  # the paging buffer's packets first: each case is an isinstance test
            case cmd.Copy():
                self._execute_copy(packet)
            case cmd.Sync() | cmd.Nop():
                pass
            case cmd.Fill():
                fill_runs(self._runs(packet.dst, packet.size, _WRITE), packet.pattern)
            case cmd.WriteQwords():
                self._write_words(
                    packet.dst, packet.count, packet.data.astype(cmd.LE_U64, copy=False).view(np.uint8), packet.repeat
                )
            case cmd.ReadMem():
                raw = read_runs(self._runs(packet.address, packet.size, AccessKind.READ))
                self.last_read = int.from_bytes(raw.tobytes(), "little")
            case cmd.WriteMem():
                runs = self._runs(packet.address, packet.size, AccessKind.WRITE)
                if packet.preserve:
                    payload = read_runs(self._runs(packet.address, packet.size, AccessKind.READ))
                else:
                    payload = np.frombuffer(packet.data.to_bytes(8, "little")[: packet.size], dtype=np.uint8)
                write_runs(runs, payload)
            case cmd.Signal():
                self._check_aligned(packet.address, 8)
                runs = self._runs(packet.address, 8, AccessKind.WRITE)
                write_runs(runs, np.frombuffer(packet.value.to_bytes(8, "little"), dtype=np.uint8))
                if packet.interrupt:
                    self._interrupt(Interrupt(self.index, InterruptKind.SIGNAL, packet.value))
            case cmd.TlbInvalidate():
                self._execute_tlb_invalidate(packet)
            case cmd.Note():
                self.events.emit(
                    EngineNote(time=self.clock.now, engine=self.index, kind=packet.kind, a=packet.a, b=packet.b)
                )
            case _:
                assert_never(packet)

    def _copy_follows(self) -> bool:
        """Whether the next packet of the buffer is a COPY, which a posted COPY could join: before anything else
        (or at the buffer's end) what is posted lands at once, so posting a lone COPY would only add bookkeeping
        (decision 0200).  A COPY that ends a group still joins it: the group lands in one move."""
        sub, at, buffer = self._current, self._offset, self._buffer
        return sub is not None and at + 2 <= sub.size and buffer[at] == _COPY_OPCODE and buffer[at + 1] == 0

    def _write_words(self, dst: int, count: int, words: memoryview | bytes | ByteArray, repeat: bool) -> None:
        """WRITE_QWORDS: ``count`` words at ``dst``; ``words`` holds their little-endian bytes, or one word's when
        ``repeat``."""
        if repeat:
            words = bytes(words[:8]) * count
        if split_address(dst)[1] & 7:
            self._check_aligned(dst, 8)
        write_runs(self._runs(dst, 8 * count, _WRITE), words)

    def _execute_copy(self, packet: cmd.Copy) -> None:
        if (
            packet.transform == cmd.Transform.NONE
            and (packet.src_pages or packet.dst_pages)
            and self._paged_fast(packet)
        ):
            return
        self._copy_general(packet)

    def _copy_general(self, packet: cmd.Copy) -> None:
        """A COPY by its runs on both sides (after :meth:`_paged_fast`, if it was tried, declined)."""
        if packet.src_pages:
            src = self.memsys.page_list_runs(packet.src, packet.extents, packet.size)
        else:
            src = self._runs(packet.src, packet.size, AccessKind.READ)
        if packet.dst_pages:
            dst = self.memsys.page_list_runs(packet.dst, packet.extents, packet.size)
        else:
            dst = self._runs(packet.dst, packet.size, AccessKind.WRITE)
        if packet.transform == cmd.Transform.NONE:
            if src:
                copy_runs(src, dst)
            return
        problem = check_surface(packet.pitch, packet.size)
        if problem:
            raise GpuFault(FaultKind.INVALID_INSTRUCTION, packet.src, f"COPY transform: {problem}")
        transform_copy(src, dst, packet.transform, packet.pitch)

    def _paged_fast(self, packet: cmd.Copy) -> bool:
        memsys = self.memsys
        if packet.src_pages:
            starts, lengths = memsys.page_list_spans(packet.src, packet.extents, packet.size)
            linear = self._runs(packet.dst, packet.size, AccessKind.WRITE)
        else:
            starts, lengths = memsys.page_list_spans(packet.dst, packet.extents, packet.size)
            linear = self._runs(packet.src, packet.size, AccessKind.READ)
        return len(linear) == 1 and scatter_gather(linear[0], memsys.system, starts, lengths, to_pages=packet.dst_pages)

    def _execute_tlb_invalidate(self, packet: cmd.TlbInvalidate) -> None:
        space, address = split_address(packet.root)
        if space == Space.GPU_PHYS and self.memsys.local.contains(address, 8):
            root = TablePointer(Target.LOCAL, address)
        elif space == Space.SYSTEM and self.memsys.system.contains(address, 8):
            root = TablePointer(Target.SYSTEM, address)
        else:
            raise GpuFault(FaultKind.BUS_ERROR, address, "TLB_INVALIDATE root is not a table in memory")
        self.memsys.mmu.invalidate(root, packet.start, packet.end)

    @staticmethod
    def _check_aligned(word: int, alignment: int) -> None:
        _, address = split_address(word)
        if address % alignment:
            raise GpuFault(FaultKind.INVALID_INSTRUCTION, address, f"address must be {alignment}-byte aligned")


_EXECUTION_ERRORS = (GpuFault, ValueError, IndexError, OverflowError, MemoryError)
"""What executing a packet may raise: a fault, or a packet the engine cannot carry out (an invalid instruction)."""


_OPCODE_NAMES: dict[type[cmd.Packet], str] = {kind: kind.__name__.upper() for kind in get_args(cmd.Packet)}


_WRITE_QWORDS = _OPCODE_NAMES[cmd.WriteQwords]
_SYNC = _OPCODE_NAMES[cmd.Sync]
_COPY = _OPCODE_NAMES[cmd.Copy]

fast_paged_copy = True
"""Whether a small page-list COPY takes :meth:`Engine._paged_copy_now` (tests turn it off to hold it to the general
path's bytes, events and faults)."""


def _opcode(kind: type[cmd.Packet]) -> str:
    return _OPCODE_NAMES[kind]


def _name_of(executor: Executor) -> str:
    name = getattr(executor, "__qualname__", None) or type(executor).__qualname__
    return str(name)


def _check_unprivileged(packet: cmd.Packet) -> None:
    """What a user buffer may not do: name a physical address or a page list, or flush a TLB."""
    match packet:
        case cmd.Copy():
            words = [] if packet.src_pages or packet.dst_pages else [packet.src, packet.dst]
            if packet.src_pages or packet.dst_pages:
                raise GpuFault(
                    FaultKind.INVALID_INSTRUCTION, packet.src, "COPY with a page list in an unprivileged buffer"
                )
        case cmd.Fill() | cmd.WriteQwords():
            words = [packet.dst]
        case cmd.ReadMem() | cmd.WriteMem() | cmd.Signal():
            words = [packet.address]
        case cmd.TlbInvalidate():
            raise GpuFault(FaultKind.INVALID_INSTRUCTION, packet.root, "TLB_INVALIDATE in an unprivileged buffer")
        case cmd.Note() | cmd.Sync() | cmd.Nop():
            words = []
        case _:
            assert_never(packet)
    for word in words:
        space, address = split_address(word)
        if space != Space.GPU_VA:
            raise GpuFault(
                FaultKind.INVALID_INSTRUCTION,
                address,
                f"a {Space(space).name} address in an unprivileged buffer (GPU VAs only)",
            )
