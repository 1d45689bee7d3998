"""Posted copies: the bytes of consecutive COPY packets land together, in one move, before anything can look.

The reference driver cuts a transfer into ``max_copy_bytes`` packets (64 MiB), and glibc's memcpy streams past
the caches (non-temporal stores, about twice as fast once a copy outgrows them) only above a threshold it derives
from the cache size -- about 190 MiB on the development machine.  Copied packet by packet, a 1 GiB transfer ran at
half the speed of one copy.  So an engine *posts* a COPY packet's bytes, as a real copy engine posts its writes,
and lands them with the next packets' in one memcpy per contiguous run -- but only where nobody can tell:

* only packets whose addresses resolve without reading memory are posted (local or system physical addresses,
  page lists): a page-table walk or an aperture lookup could read bytes still in flight;
* a posted packet never writes the command buffer being run (the next packets are decoded from it), and the
  bytes a group reads never overlap the bytes it writes (so one move equals the packets' moves in order);
* everything posted lands before the engine runs any other kind of packet, before it yields to the clock, and
  when a submission completes or faults or the engine is reset -- so a fault, reset or preemption between two
  packets finds exactly the packets before it written.

Each packet still completes, and is counted, at its own simulated time: only the host's memcpy calls change.
A listener of ``PacketExecuted`` events may see a posted packet's bytes not yet landed (decision 0193).
"""

from __future__ import annotations

from typing import final

from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, split_address
from wddmsim.hw.memory import PhysicalMemory
from wddmsim.hw.memsys import MemorySystem

_GPU_PHYS = Space.GPU_PHYS
_SYSTEM = Space.SYSTEM
_NO_TRANSFORM = cmd.Transform.NONE
BufferSpan = tuple[PhysicalMemory, int, int]
"""Where the command buffer being run lives: ``(memory, start, end)``."""


@final
class PostedCopies:
    """The bytes of the COPY packets an engine executed but has not landed: one move, from (or to) a contiguous
    ``linear`` run, to (or from) the ``other`` memory's spans, in order."""

    __slots__ = ("hi", "length", "lengths", "linear", "lo", "other", "start", "starts", "to_spans")

    def __init__(self) -> None:
        self.length = 0
        """Bytes posted (0: nothing is)."""
        self.linear: PhysicalMemory | None = None
        self.start = 0
        self.other: PhysicalMemory | None = None
        self.starts: list[int] = []
        self.lengths: list[int] = []
        self.to_spans = True
        self.lo = self.hi = 0
        """Bounds of the spans, kept when both sides are one memory (then reads and writes must not meet)."""

    def join(
        self,
        linear: PhysicalMemory,
        start: int,
        other: PhysicalMemory,
        starts: list[int],
        lengths: list[int],
        length: int,
        to_spans: bool,
    ) -> bool:
        """Post one packet's move; ``False`` when it cannot wait with what is posted (land, then post it)."""
        lo, hi = (starts[0], starts[0] + lengths[0]) if linear is other else (0, 0)
        if not self.length:
            self.linear, self.start, self.other, self.to_spans = linear, start, other, to_spans
            self.starts, self.lengths, self.length, self.lo, self.hi = starts, lengths, length, lo, hi
            return True
        if (
            linear is not self.linear
            or other is not self.other
            or to_spans != self.to_spans
            or start != self.start + self.length
        ):
            return False
        if linear is other:
            lo, hi = min(lo, self.lo), max(hi, self.hi)
            if self.start < hi and lo < start + length:
                return False  # the group would read bytes it writes
            self.lo, self.hi = lo, hi
        self.length += length
        if self.starts[-1] + self.lengths[-1] == starts[0]:  # the spans continue: one longer move
            self.lengths[-1] += lengths[0]
            starts, lengths = starts[1:], lengths[1:]
        self.starts.extend(starts)
        self.lengths.extend(lengths)
        return True

    def land(self) -> None:
        """Write everything posted, in packet order."""
        if not self.length:
            return
        linear, other = self.linear, self.other
        assert linear is not None
        assert other is not None
        view, spans, offset = linear.view, other.view, self.start
        if self.to_spans:
            for start, length in zip(self.starts, self.lengths, strict=True):
                spans[start : start + length] = view[offset : offset + length]
                offset += length
        else:
            for start, length in zip(self.starts, self.lengths, strict=True):
                view[offset : offset + length] = spans[start : start + length]
                offset += length
        self.length = 0
        self.linear = self.other = None
        self.starts, self.lengths = [], []


def post(posted: PostedCopies, memsys: MemorySystem, packet: cmd.Copy, buffer: BufferSpan | None) -> bool:
    """Post ``packet``, landing what is posted first if it cannot join; ``False`` if it cannot wait (the caller
    lands what is posted, then runs it).  A page list outside RAM faults here as it would running."""
    size = packet.size
    if packet.transform != _NO_TRANSFORM or size <= 0 or (packet.src_pages and packet.dst_pages):
        return False
    system = memsys.system
    other: PhysicalMemory
    if packet.src_pages or packet.dst_pages:
        found = _physical(memsys, packet.dst if packet.src_pages else packet.src, size)
        if found is None or found[0] is system:
            return False
        linear, start = found
        listed = packet.src if packet.src_pages else packet.dst
        starts, lengths = memsys.page_list_spans(listed, packet.extents, size)
        other, to_spans = system, packet.dst_pages
    else:
        src, dst = _physical(memsys, packet.src, size), _physical(memsys, packet.dst, size)
        if src is None or dst is None:
            return False
        (linear, start), (other, at) = src, dst
        if linear is other and start < at + size and at < start + size:
            return False  # overlapping: a memmove of its own
        starts, lengths, to_spans = [at], [size], True
    if buffer is not None and _writes_buffer(linear, start, other, starts, lengths, size, to_spans, buffer):
        return False
    if not posted.join(linear, start, other, starts, lengths, size, to_spans):
        posted.land()
        posted.join(linear, start, other, starts, lengths, size, to_spans)
    return True


def _physical(memsys: MemorySystem, word: int, size: int) -> tuple[PhysicalMemory, int] | None:
    """The one memory run a packet address names, when resolving it reads no memory (``None`` otherwise)."""
    space, address = split_address(word)
    if space == _GPU_PHYS and memsys.local.contains(address, size):
        return memsys.local, address
    if space == _SYSTEM and memsys.system.contains(address, size):
        return memsys.system, address
    return None


def _writes_buffer(
    linear: PhysicalMemory,
    start: int,
    other: PhysicalMemory,
    starts: list[int],
    lengths: list[int],
    size: int,
    to_spans: bool,
    buffer: BufferSpan,
) -> bool:
    """Whether the move writes the command buffer the engine is decoding."""
    memory, lo, hi = buffer
    if not to_spans:
        return linear is memory and start < hi and lo < start + size
    if other is not memory:
        return False
    for s, n in zip(starts, lengths, strict=True):  # noqa: SIM110  # a loop beats any() on a span or two
        if s < hi and lo < s + n:
            return True
    return False
