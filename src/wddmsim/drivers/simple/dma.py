"""The simple driver's way of feeding the kit's multipass loop (:mod:`wddmsim.drivers.kit.dma`).

Its builders describe an operation as ``next_packet(units done, bytes of room)``: the next packet and the units it
covers, or None when none fits the room.  The kit writes each packet only if it fits, and keeps progress in
``MultipassOffset`` alone (``DxgkDdiBuildPagingBuffer`` may fail only for room).
"""

from __future__ import annotations

from collections.abc import Callable

from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit import dma
from wddmsim.hw import commands as cmd

NextPacket = Callable[[int, int], tuple[cmd.Packet, int] | None]
"""``(units done, bytes of room)`` -> the next packet and the units it covers, or None if none fits the room."""


def multipass(
    args: DXGKARG_BUILDPAGINGBUFFER, total: int, next_packet: NextPacket, tail: cmd.Packet | None = None
) -> NTSTATUS:
    """Emit packets from ``MultipassOffset`` units to ``total``, then ``tail``; ``INSUFFICIENT_DMA_BUFFER`` with the
    progress saved when the room runs out."""
    writer = dma.DmaWriter(args)

    def emit(done: int) -> int:
        made = next_packet(done, writer.room)
        return made[1] if made is not None and writer.put(made[0]) else 0

    return dma.multipass(args, writer, total, emit, tail=None if tail is None else cmd.encode(tail))


__all__ = ["NextPacket", "multipass"]
