"""Every packet type and opcode is handled by every dispatcher on packets (table-driven).

The dispatchers end in ``assert_never`` so mypy names a packet type added without a case; these tests check
the same at run time, with one packet of every type: it encodes and decodes to itself (the decoder table covers
every opcode), the engine executes it in a paging buffer, the unprivileged-buffer check accepts or refuses it as
the table says, the disassembler names it, and ``DxgkDdiRender`` accepts or refuses it.
"""

from __future__ import annotations

from typing import get_args

import numpy as np
import pytest

from wddmsim.core.units import MiB
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit.render import RenderRefused
from wddmsim.drivers.kit.render import address_words as _references
from wddmsim.hw import commands as cmd
from wddmsim.hw import swizzle
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import EngineState, Submission, _check_unprivileged
from wddmsim.hw.faults import FaultKind, GpuFault
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.hw.memory import PhysicalMemory
from wddmsim.hw.memsys import transform_copy
from wddmsim.viz.disasm import format_packet

BUFFER = 0x100000


def local(address: int) -> int:
    return hw_address(Space.GPU_PHYS, address)


# type -> (a packet of it (physical addresses), refused in an unprivileged buffer, DxgkDdiRender's address
# references in it (None: DxgkDdiRender refuses it as a kernel-only packet))
PACKETS: dict[type, tuple[cmd.Packet, bool, int | None]] = {
    cmd.Nop: (cmd.Nop(), False, 0),
    cmd.Copy: (cmd.Copy(local(0x1000), local(0x2000), 8), True, 2),
    cmd.Fill: (cmd.Fill(local(0x3000), 12, 0xA1B2C3D4), True, 1),
    cmd.WriteQwords: (cmd.WriteQwords(local(0x4000), 2, np.array([1, 2], dtype=np.uint64)), True, None),
    cmd.ReadMem: (cmd.ReadMem(local(0x5000), 8), True, None),
    cmd.WriteMem: (cmd.WriteMem(local(0x6000), 2, 0xBEEF), True, None),
    cmd.Signal: (cmd.Signal(hw_address(Space.SYSTEM, 0x8000), 5), True, None),
    cmd.TlbInvalidate: (cmd.TlbInvalidate(local(0x9000), 0, 0), True, None),
    cmd.Note: (cmd.Note(3, 1, 2), False, None),
    cmd.Sync: (cmd.Sync(), False, 0),
}


def _opcode(packet: cmd.Packet) -> cmd.Opcode:
    return cmd.Opcode(cmd.HEADER.unpack_from(cmd.encode(packet))[0])


def test_the_table_has_every_packet_type_and_every_opcode() -> None:
    assert set(PACKETS) == set(get_args(cmd.Packet))
    assert {_opcode(packet) for packet, _, _ in PACKETS.values()} == set(cmd.Opcode)
    assert set(cmd._DECODERS) == set(cmd.Opcode)


@pytest.mark.parametrize("kind", list(PACKETS), ids=lambda k: k.__name__)
def test_every_packet_encodes_decodes_and_disassembles(kind: type) -> None:
    packet = PACKETS[kind][0]
    data = cmd.encode(packet)
    assert cmd.decode(data, 0, len(data)) == packet
    assert cmd.decoder(_opcode(packet))(data, 0, *cmd.HEADER.unpack_from(data)[1:]) == packet
    assert format_packet(packet).startswith(_opcode(packet).name)


def test_the_engine_executes_every_packet_type_in_a_paging_buffer() -> None:
    gpu = Gpu(GpuConfig(local_size=64 * MiB, bar_size=16 * MiB, system_size=64 * MiB, aperture_size=16 * MiB))
    gpu.local.write(0x1000, b"abcdefgh")
    data = b"".join(cmd.encode(packet) for packet, _, _ in PACKETS.values())
    gpu.system.write(BUFFER, data)
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 7))
    gpu.clock.run_all()
    assert gpu.engines[0].fault is None
    assert gpu.engines[0].state == EngineState.IDLE
    assert gpu.engines[0].completed_fence == 7
    assert gpu.local.read(0x2000, 8) == b"abcdefgh"
    assert int(gpu.system.u64[0x8000 // 8]) == 5


@pytest.mark.parametrize("kind", list(PACKETS), ids=lambda k: k.__name__)
def test_the_unprivileged_check_names_a_physical_address_or_a_tlb_flush(kind: type) -> None:
    packet, refused, _ = PACKETS[kind]
    if refused:
        with pytest.raises(GpuFault) as fault:
            _check_unprivileged(packet)
        assert fault.value.kind == FaultKind.INVALID_INSTRUCTION
    else:
        _check_unprivileged(packet)


@pytest.mark.parametrize("kind", list(PACKETS), ids=lambda k: k.__name__)
def test_render_takes_user_packets_and_refuses_the_kernel_ones(kind: type) -> None:
    packet, _, references = PACKETS[kind]
    if references is None:
        with pytest.raises(RenderRefused) as refused:
            _references(packet, 0x40)
        assert refused.value.status == NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION
        assert f"{kind.__name__} at 0x40" in str(refused.value)
    else:
        assert len(_references(packet, 0x40)) == references


@pytest.mark.parametrize("transform", list(cmd.Transform), ids=lambda t: t.name)
def test_every_copy_transform_is_carried_out(transform: cmd.Transform) -> None:
    """``transform_copy`` handles every ``Transform``: the bytes land as the layout says (tiling, then untiling
    with the same pitch, gives the source back)."""
    pitch = 2 * swizzle.TILE_WIDTH  # two tiles a row: the layouts differ
    size = pitch * swizzle.TILE_HEIGHT * 2
    memory = PhysicalMemory("test", 4 * size)
    source = bytes(range(256)) * (size // 256)
    memory.write(0, source)
    transform_copy([(memory, 0, size)], [(memory, size, size)], transform, pitch)
    expected = {
        cmd.Transform.NONE: source,
        cmd.Transform.TILE: bytes(swizzle.tile(np.frombuffer(source, dtype=np.uint8), pitch)),
        cmd.Transform.UNTILE: bytes(swizzle.untile(np.frombuffer(source, dtype=np.uint8), pitch)),
    }[transform]
    assert memory.read(size, size) == expected
    assert (expected == source) == (transform == cmd.Transform.NONE)
