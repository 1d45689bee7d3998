"""Writing packets into the paging buffer the way ``DxgkDdiBuildPagingBuffer`` must, for any driver of this GPU.

:class:`DmaWriter` is the driver's cursor over ``[pDmaBuffer, pDmaBuffer + DmaSize)``: a builder asks for
``room`` before encoding a packet and never writes past the end; :meth:`DmaWriter.commit` advances
``pDmaBuffer`` past the last byte written and shrinks ``DmaSize`` by as much.

:func:`multipass` is the loop every splittable operation shares: starting from ``MultipassOffset`` units of
progress, emit packets until the work is done (``STATUS_SUCCESS``) or the next packet does not fit
(``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER``, progress saved in ``MultipassOffset``).

Both are the DDI's rules, not a driver's policy: ``DxgkDdiBuildPagingBuffer`` may fail only for room, never writes
past ``DmaSize``, and keeps its progress in ``MultipassOffset`` alone.  A malformed cursor or offset is refused with
:class:`~wddmsim.ddi.status.InvalidArgument` naming it, before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import CpuPointer
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.hw import commands as cmd

U64 = npt.NDArray[np.uint64]
_SUCCESS = NTSTATUS.STATUS_SUCCESS  # enum members read once (class attribute access is slow)
_INSUFFICIENT = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER


@final
class DmaWriter:
    """The free space of one paging buffer during one ``DxgkDdiBuildPagingBuffer`` call."""

    __slots__ = ("args", "buf", "bytes", "end", "pos", "start", "words")

    def __init__(self, args: DXGKARG_BUILDPAGINGBUFFER) -> None:
        pointer = args.pDmaBuffer
        if pointer is None:
            raise InvalidArgument("pDmaBuffer", None, "must point into the DMA buffer: this operation writes packets")
        if args.DmaSize < 0:
            raise InvalidArgument("DmaSize", args.DmaSize, "must not be negative")
        self.args = args
        self.buf = pointer.mapping.view
        self.bytes = pointer.mapping.data
        self.words = pointer.mapping.words
        self.start = self.pos = pointer.offset
        self.end = pointer.offset + args.DmaSize

    @property
    def room(self) -> int:
        return self.end - self.pos

    @property
    def written(self) -> int:
        return self.pos - self.start

    def put(self, packet: cmd.Packet) -> bool:
        """Encode ``packet`` if it fits; ``False`` (and nothing written) if it does not."""
        if packet.length > self.room:
            return False
        self.pos += cmd.encode_into(self.buf, self.pos, packet)
        return True

    def reserve_write_qwords(self, dst: int, count: int, inline: int, *, repeat: bool = False) -> U64:
        """Encode a WRITE_QWORDS of ``inline`` words (the caller checked there is room) and return its words, for
        the caller to fill in place."""
        pos = self.pos
        self.pos += cmd.encode_write_qwords_header_into(self.buf, pos, dst, count, inline, repeat=repeat)
        first = pos + cmd.WRITE_QWORDS_FIXED_SIZE
        if self.words is not None and not first & 7:
            return self.words[first >> 3 : (first >> 3) + inline]
        words: U64 = self.bytes[first : first + 8 * inline].view(cmd.LE_U64)
        return words

    def put_bytes(self, packet: bytes) -> bool:
        """Copy an already-encoded packet if it fits."""
        if len(packet) > self.end - self.pos:
            return False
        self.buf[self.pos : self.pos + len(packet)] = packet
        self.pos += len(packet)
        return True

    def commit(self) -> None:
        """Advance ``pDmaBuffer`` past the bytes written and reduce ``DmaSize`` to match."""
        args = self.args
        assert args.pDmaBuffer is not None
        written = self.pos - self.start
        args.pDmaBuffer = args.pDmaBuffer + written
        args.DmaSize -= written
        self.start = self.pos


Emit = Callable[[int], int]
"""Write one packet starting at unit ``done``; return how many units it covered (0 = it did not fit)."""


def multipass(
    args: DXGKARG_BUILDPAGINGBUFFER, writer: DmaWriter, total: int, emit: Emit, *, tail: bytes | None = None
) -> NTSTATUS:
    """Drive ``emit`` from ``MultipassOffset`` to ``total`` units, then write ``tail`` (an encoded packet).

    Progress is stored only in ``MultipassOffset``; ``done == total`` on entry means the units were all
    emitted in an earlier buffer and only ``tail`` remains.
    """
    done = args.MultipassOffset
    if not 0 <= done <= total:
        raise InvalidArgument("MultipassOffset", done, f"must lie in [0, {total}] for this operation")
    while done < total:
        covered = emit(done)
        if covered == 0:
            writer.commit()
            args.MultipassOffset = done
            return _INSUFFICIENT
        done += covered
    if tail is not None and not writer.put_bytes(tail):
        writer.commit()
        args.MultipassOffset = done
        return _INSUFFICIENT
    writer.commit()
    args.MultipassOffset = done
    return _SUCCESS


def advance(args: DXGKARG_BUILDPAGINGBUFFER, written: int, done: int) -> None:
    """The end of a call that wrote ``written`` bytes from ``pDmaBuffer`` (a builder's own loop, not
    :class:`DmaWriter`): ``pDmaBuffer`` past them, ``DmaSize`` less by as much, progress in ``MultipassOffset``."""
    pointer = args.pDmaBuffer
    assert pointer is not None
    args.pDmaBuffer = CpuPointer(pointer.mapping, pointer.offset + written)
    args.DmaSize -= written
    args.MultipassOffset = done


def single_packet(args: DXGKARG_BUILDPAGINGBUFFER, packet: cmd.Packet) -> NTSTATUS:
    """Write an operation that is one packet: it fits, or nothing is written and the buffer is declared full."""
    writer = DmaWriter(args)
    if not writer.put(packet):
        return _INSUFFICIENT
    writer.commit()
    return _SUCCESS


__all__ = ["DmaWriter", "Emit", "advance", "multipass", "single_packet"]
