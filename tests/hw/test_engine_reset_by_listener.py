"""An observer that resets the engine while a buffer runs (a fault-injection harness does): the packets before it
have taken effect, the rest of the buffer is dropped as a reset drops in-flight work, and the engine takes the
next submission -- never an internal assertion."""

from __future__ import annotations

import numpy as np
import pytest

from tests.hw.test_engine import BUFFER, local, small_gpu
from wddmsim.core.events import Event
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import EngineState, InterruptKind, Submission
from wddmsim.hw.events import DmaBufferStarted, PacketExecuted

PACKETS: list[cmd.Packet] = [
    cmd.Copy(local(0x1000), local(0x2000), 8),
    cmd.Fill(local(0x3000), 12, 0xA1B2C3D4),
    cmd.WriteQwords(local(0x4000), 2, np.array([1, 2], dtype=np.uint64)),  # the WRITE_QWORDS fast path
    cmd.WriteMem(local(0x6001), 2, 0xBEEF),
]


@pytest.mark.parametrize("after", range(1, len(PACKETS) + 1))
def test_a_reset_from_a_listener_drops_the_rest_of_the_buffer(after: int) -> None:
    gpu = small_gpu()
    engine = gpu.engines[0]
    engine.privileged = True  # the paging engine's fast paths run inline too
    gpu.local.write(0x1000, b"abcdefgh")
    seen: list[Event] = []

    def reset_after(event: Event) -> None:
        seen.append(event)
        if len(seen) == after:
            engine.reset()

    gpu.events.subscribe(reset_after, (PacketExecuted,))
    data = b"".join(cmd.encode(p) for p in PACKETS)
    gpu.system.write(BUFFER, data)
    engine.submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 5))
    gpu.clock.run_all()

    assert len(seen) == after, "no packet ran after the reset"
    done = [
        gpu.local.read(0x2000, 8) == b"abcdefgh",
        gpu.local.read(0x3000, 12) == bytes.fromhex("d4c3b2a1") * 3,
        gpu.local.u64[0x4000 // 8 : 0x4000 // 8 + 2].tolist() == [1, 2],
        gpu.local.read(0x6000, 4) == b"\x00\xef\xbe\x00",
    ]
    assert done == [i < after for i in range(len(PACKETS))]
    assert engine.state == EngineState.IDLE and engine.fault is None
    assert engine.completed_fence != 5
    assert InterruptKind.COMPLETION not in [i.kind for i in gpu.interrupts]

    again = cmd.encode(cmd.Fill(local(0x8000), 4, 0x01020304))  # the engine takes the next submission
    gpu.system.write(BUFFER, again)
    engine.submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(again), 6))
    gpu.clock.run_all()
    assert gpu.local.read(0x8000, 4) == bytes.fromhex("04030201")
    assert engine.completed_fence == 6


def test_a_reset_when_the_buffer_starts_drops_it_before_its_fetch() -> None:
    """An observer of ``DmaBufferStarted`` resets the engine: the buffer is never fetched, so a fetch that would
    fault (a GPU VA with no address space) neither halts the engine nor raises a fault interrupt."""
    gpu = small_gpu()
    engine = gpu.engines[0]
    resets: list[int] = []

    def reset_once(event: Event) -> None:
        if not resets:
            resets.append(1)
            engine.reset()

    gpu.events.subscribe(reset_once, (DmaBufferStarted,))
    engine.submit(Submission(hw_address(Space.GPU_VA, 0x5000_0000), 64, 5))
    gpu.clock.run_all()

    assert resets == [1]
    assert engine.state == EngineState.IDLE and engine.fault is None
    assert gpu.interrupts == []
    again = cmd.encode(cmd.Fill(local(0x8000), 4, 0x01020304))
    gpu.system.write(BUFFER, again)
    engine.submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(again), 6))
    gpu.clock.run_all()
    assert gpu.local.read(0x8000, 4) == bytes.fromhex("04030201")
    assert engine.completed_fence == 6
