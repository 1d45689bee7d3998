"""Paging-buffer disassembly: bytes -> one line per packet, through the GPU's own codec (``hw.commands``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

import numpy as np
import numpy.typing as npt

from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import format_address


def _extents(extents: npt.NDArray[np.uint64], limit: int = 4) -> str:
    shown = []
    for word in extents[:limit].tolist():
        pfn, pages = cmd.split_extent(word)
        shown.append(f"{pfn:#x}+{pages}")
    count = int(extents.shape[0])
    more = f", +{count - limit} more" if count > limit else ""
    return f"[{', '.join(shown)}{more}]"


def format_packet(packet: cmd.Packet) -> str:
    """The mnemonic and fields of one packet."""
    match packet:
        case cmd.Copy():
            src = f"pages+{packet.src:#x}" if packet.src_pages else format_address(packet.src)
            dst = f"pages+{packet.dst:#x}" if packet.dst_pages else format_address(packet.dst)
            text = f"COPY          src={src}  dst={dst}  size={packet.size:#x}"
            if packet.transform != cmd.Transform.NONE:
                text += f"  {packet.transform.name} pitch={packet.pitch}"
            if packet.extents.shape[0]:
                text += f"  extents={len(packet.extents)} {_extents(packet.extents)}"
            return text
        case cmd.Fill():
            return (
                f"FILL          dst={format_address(packet.dst)}  size={packet.size:#x}  pattern={packet.pattern:#010x}"
            )
        case cmd.WriteQwords():
            head = ", ".join(f"{v:#x}" for v in packet.data[:3].tolist())
            more = ", ..." if len(packet.data) > 3 else ""
            mode = "REPEAT " if packet.repeat else ""
            return f"WRITE_QWORDS  dst={format_address(packet.dst)}  count={packet.count}  {mode}[{head}{more}]"
        case cmd.ReadMem():
            return f"READ_MEM      addr={format_address(packet.address)}  size={packet.size}"
        case cmd.WriteMem():
            data = "preserve" if packet.preserve else f"data={packet.data:#x}"
            return f"WRITE_MEM     addr={format_address(packet.address)}  size={packet.size}  {data}"
        case cmd.Signal():
            irq = "  +interrupt" if packet.interrupt else ""
            return f"SIGNAL        addr={format_address(packet.address)}  value={packet.value:#x}{irq}"
        case cmd.TlbInvalidate():
            return f"TLB_INVALIDATE root={format_address(packet.root)}  va=[{packet.start:#x}, {packet.end:#x}]"
        case cmd.Note():
            return f"NOTE          kind={packet.kind}  a={packet.a:#x}  b={packet.b:#x}"
        case cmd.Sync():
            return "SYNC"
        case cmd.Nop():
            return f"NOP           length={packet.length:#x}"
        case _:
            assert_never(packet)


@dataclass(frozen=True, slots=True)
class Line:
    offset: int
    length: int
    text: str


def disassemble(buf: bytes | memoryview, base: int = 0) -> list[Line]:
    """Every packet of ``buf``; a packet that does not decode ends the listing with an ``!!`` line."""
    lines: list[Line] = []
    offset, end = 0, len(buf)
    while offset < end:
        try:
            packet = cmd.decode(buf, offset, end)
        except cmd.DecodeError as error:
            lines.append(Line(base + offset, end - offset, f"!! invalid: {error.reason}"))
            break
        lines.append(Line(base + offset, packet.length, format_packet(packet)))
        offset += packet.length
    return lines


def render(lines: list[Line]) -> str:
    return "\n".join(f"  {line.offset:#07x}  {line.length:#06x}  {line.text}" for line in lines)
