"""The simple driver's cursor over a DMA buffer, and the multipass loop its paging operations share.

``DxgkDdiBuildPagingBuffer`` may fail only for room: every packet is checked against what is left *before* it is
written, and progress (in the operation's own units) is kept in ``MultipassOffset`` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.hw import commands as cmd


@final
class Writer:
    """The free bytes ``[pDmaBuffer, pDmaBuffer + DmaSize)`` of one call."""

    __slots__ = ("args", "buf", "end", "pos", "start")

    def __init__(self, args: DXGKARG_BUILDPAGINGBUFFER) -> None:
        if args.pDmaBuffer is None:
            raise InvalidArgument("pDmaBuffer", None, "a segment-model driver writes every operation into a buffer")
        if args.DmaSize < 0:
            raise InvalidArgument("DmaSize", args.DmaSize, "must not be negative")
        self.args = args
        self.buf = args.pDmaBuffer.mapping.view
        self.start = self.pos = args.pDmaBuffer.offset
        self.end = self.pos + args.DmaSize

    @property
    def room(self) -> int:
        return self.end - self.pos

    def put(self, packet: cmd.Packet) -> bool:
        """Write ``packet`` if it fits (``False``, nothing written, if it does not)."""
        if packet.length > self.room:
            return False
        self.pos += cmd.encode_into(self.buf, self.pos, packet)
        return True

    def commit(self) -> None:
        """``pDmaBuffer`` past the last byte written, ``DmaSize`` less by as much."""
        args = self.args
        assert args.pDmaBuffer is not None
        written = self.pos - self.start
        args.pDmaBuffer = args.pDmaBuffer + written
        args.DmaSize -= written
        self.start = self.pos


NextPacket = Callable[[int, int], tuple[cmd.Packet, int] | None]
"""``(units done, bytes of room)`` -> the next packet and the units it covers, or None if none fits the room."""


def multipass(
    args: DXGKARG_BUILDPAGINGBUFFER, total: int, next_packet: NextPacket, tail: cmd.Packet | None = None
) -> NTSTATUS:
    """Emit packets from ``MultipassOffset`` units to ``total``, then ``tail``; ``INSUFFICIENT_DMA_BUFFER`` with the
    progress saved when the room runs out."""
    done = args.MultipassOffset
    if not 0 <= done <= total:
        raise InvalidArgument("MultipassOffset", done, f"must lie in [0, {total}] for this operation")
    writer = Writer(args)
    finished = True
    while done < total:
        made = next_packet(done, writer.room)
        if made is None or not writer.put(made[0]):
            finished = False
            break
        done += made[1]
    if finished and tail is not None:
        finished = writer.put(tail)
    writer.commit()
    args.MultipassOffset = done
    return NTSTATUS.STATUS_SUCCESS if finished else NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
