"""The small round trip's inline steps on the GPU side (issue 24, round 7) against the general code they stand
beside: the fetch of a buffer in system RAM, and the SYNC read as two words."""

from __future__ import annotations

import pytest

from wddmsim.core.units import MiB
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import Engine, Submission
from wddmsim.hw.faults import FaultKind
from wddmsim.hw.gpu import Gpu, GpuConfig

SYSTEM_SIZE = 64 * MiB


def _gpu() -> Gpu:
    return Gpu(GpuConfig(local_size=64 * MiB, bar_size=16 * MiB, system_size=SYSTEM_SIZE, aperture_size=16 * MiB))


def _started(gpu: Gpu, word: int, size: int) -> tuple[Engine, Submission]:
    """An engine that has fetched the buffer at ``word`` and not yet run its packet (the clock is kept busy)."""
    for t in range(0, 100, 3):  # due before any packet could complete: nothing runs inline
        gpu.clock.schedule(t, lambda: None)
    engine = gpu.engines[0]
    sub = Submission(word, size, 1)
    engine.submit(sub)
    while engine._current is None and engine.fault is None and gpu.clock.step():
        pass
    return engine, sub


@pytest.mark.parametrize(
    ("space", "address"),
    [(Space.SYSTEM, 0x10_0000), (Space.SYSTEM, SYSTEM_SIZE - 32), (Space.GPU_PHYS, 0x20_0000)],
    ids=["system RAM", "the end of system RAM", "local memory (the general fetch)"],
)
def test_a_buffer_fetched_when_it_starts_is_what_the_general_fetch_reads(space: Space, address: int) -> None:
    gpu = _gpu()
    packets = cmd.encode(cmd.Sync()) + cmd.encode(cmd.Sync())
    memory = gpu.system if space == Space.SYSTEM else gpu.local
    memory.write(address, packets)
    engine, sub = _started(gpu, hw_address(space, address), len(packets))
    fetched, span = bytes(engine._buffer), engine._buffer_span
    assert fetched == packets
    assert span == (memory, address, address + len(packets))
    assert bytes(engine._fetch(sub)) == fetched
    assert engine._buffer_span == span


def test_a_buffer_past_the_end_of_system_ram_faults_as_the_general_fetch_refuses_it() -> None:
    gpu = _gpu()
    engine, _ = _started(gpu, hw_address(Space.SYSTEM, SYSTEM_SIZE - 16), 32)
    assert engine.fault is not None
    assert (engine.fault.kind, engine.fault.packet_offset, engine.fault.reason) == (
        FaultKind.BUS_ERROR,
        0,
        "system address is outside RAM",
    )


def _decoded_sync(buf: bytes, offset: int, end: int) -> bool:
    try:
        packet = cmd.decode(buf, offset, end)
    except cmd.DecodeError:
        return False
    return isinstance(packet, cmd.Sync) and packet.length == 16


@pytest.mark.parametrize(
    "window",
    [
        cmd.SYNC_BYTES,
        cmd.SYNC_BYTES[:-1] + b"\x01",
        cmd.SYNC_BYTES[:8] + b"\x80" + bytes(7),
        cmd.HEADER.pack(cmd.Opcode.SYNC, 1, 16) + bytes(8),
        cmd.HEADER.pack(cmd.Opcode.SYNC, 0, 32) + bytes(24),
        cmd.encode(cmd.Fill(0, 16, 7)),
        bytes(16),
    ],
    ids=["SYNC", "last pad byte set", "first pad byte set", "a flag set", "32 bytes long", "a FILL", "zeros"],
)
@pytest.mark.parametrize("offset", [0, 16])
def test_sync_at_finds_exactly_the_syncs_the_decoder_reads(window: bytes, offset: int) -> None:
    buf = bytes(offset) + window
    end = len(buf)
    assert cmd.sync_at(buf, offset, end) == _decoded_sync(buf, offset, end)
    assert cmd.sync_at(memoryview(buf), offset, end) == (window == cmd.SYNC_BYTES)
    assert not cmd.sync_at(buf, offset, end - 1)  # one byte short of a SYNC
