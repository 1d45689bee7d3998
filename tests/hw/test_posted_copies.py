"""Posted copies (decision 0193): consecutive COPY packets land in one move, and nobody can tell -- the same bytes,
events, times and faults as copying packet by packet, whatever falls between the packets."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE, GiB, KiB, MiB
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import EngineState, Submission
from wddmsim.hw.faults import FaultKind
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.hw.memory import LocalMemory, SystemMemory
from wddmsim.hw.posted import PostedCopies
from wddmsim.kmd.config import DriverConfig
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig

BUFFER = 0x100000  # the command buffer, in system memory
PLANT = 0x380000  # local bytes a program copies over its own command buffer
SYS_PAGES = (0x200000 // PAGE_SIZE, 0x400000 // PAGE_SIZE)  # system pages programs copy to and from
LOCAL_SPAN = 0x300000  # local bytes programs copy to and from (the aperture table is above)


def tiny_gpu() -> Gpu:
    return Gpu(GpuConfig(local_size=4 * MiB, bar_size=2 * MiB, system_size=4 * MiB, aperture_size=2 * MiB))


def local(address: int) -> int:
    return hw_address(Space.GPU_PHYS, address)


def system(address: int) -> int:
    return hw_address(Space.SYSTEM, address)


def submit(gpu: Gpu, packets: list[cmd.Packet], fence: int = 1) -> list[int]:
    """Write the buffer and submit it; the packets' offsets."""
    encoded = [cmd.encode(p) for p in packets]
    gpu.system.write(BUFFER, b"".join(encoded))
    gpu.engines[0].submit(Submission(system(BUFFER), sum(map(len, encoded)), fence))
    return [sum(map(len, encoded[:i])) for i in range(len(encoded))]


Outcome = tuple[bytes, bytes, list[dict[str, Any]], Any, int, int]


def outcome(gpu: Gpu) -> Outcome:
    engine = gpu.engines[0]
    return (
        gpu.local.data.tobytes(),
        gpu.system.data.tobytes(),
        [e.to_record() for e in gpu.events],
        engine.fault,
        engine.completed_fence,
        engine.packets_executed,
    )


def seeded(gpu: Gpu, seed: int) -> Gpu:
    rng = np.random.default_rng(seed + 1000)
    gpu.local.data[:LOCAL_SPAN] = rng.integers(0, 256, LOCAL_SPAN, dtype=np.uint8)
    lo, hi = SYS_PAGES[0] * PAGE_SIZE, SYS_PAGES[1] * PAGE_SIZE
    gpu.system.data[lo:hi] = rng.integers(0, 256, hi - lo, dtype=np.uint8)
    return gpu


# --- a random program: chains of copies cut like a transfer, and everything that may fall between them --------


def _program(rng: np.random.Generator) -> tuple[list[cmd.Packet], bytes]:
    packets: list[cmd.Packet] = []
    cursor: dict[str, tuple[int, int]] = {}
    planted = cmd.encode(cmd.Fill(local(0x2000), 64, 0x22222222))
    kind = "other"
    for _ in range(int(rng.integers(1, 14))):
        if kind in ("other", "self") or rng.random() < 0.5:  # else the same kind again: a chain, mostly
            kind = str(rng.choice(["local", "to_sys", "from_sys", "to_pages", "from_pages", "other", "self"]))
        size = int(rng.choice([1, 100, PAGE_SIZE, 3 * PAGE_SIZE + 5, 16 * KiB, 64 * KiB]))
        if kind == "other":
            packets.append(_other(rng))
        elif kind == "self":  # rewrite the next packet before it is decoded: a FILL becomes another FILL
            fill = cmd.Fill(local(0x1000), 64, 0x11111111)
            offset = sum(len(cmd.encode(p)) for p in packets) + len(cmd.encode(cmd.Copy(0, 0, 1)))
            packets += [cmd.Copy(local(PLANT), system(BUFFER + offset), len(planted)), fill]
        elif kind in ("to_pages", "from_pages"):
            packets.append(_paged(rng, kind, size, cursor))
        else:
            packets.append(_plain(rng, kind, size, cursor))
    return packets, planted


def _continue(rng: np.random.Generator, kind: str, cursor: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    return cursor.get(kind) if rng.random() < 0.6 else None


def _plain(rng: np.random.Generator, kind: str, size: int, cursor: dict[str, tuple[int, int]]) -> cmd.Packet:
    sys_lo = SYS_PAGES[0] * PAGE_SIZE
    picks = {
        "local": (int(rng.integers(0, 256)) * 4 * KiB, int(rng.integers(0, 256)) * 4 * KiB + int(rng.integers(0, 3))),
        "to_sys": (int(rng.integers(0, 256)) * 4 * KiB, sys_lo + int(rng.integers(0, 256)) * 4 * KiB),
        "from_sys": (sys_lo + int(rng.integers(0, 256)) * 4 * KiB, int(rng.integers(0, 256)) * 4 * KiB),
    }
    src, dst = _continue(rng, kind, cursor) or picks[kind]
    cursor[kind] = (src + size, dst + size)
    wrap = {"local": (local, local), "to_sys": (local, system), "from_sys": (system, local)}[kind]
    return cmd.Copy(wrap[0](src), wrap[1](dst), size)


def _paged(rng: np.random.Generator, kind: str, size: int, cursor: dict[str, tuple[int, int]]) -> cmd.Packet:
    first = int(rng.choice([0, 0, 100]))
    pages = (first + size + PAGE_SIZE - 1) // PAGE_SIZE
    held = _continue(rng, kind, cursor)
    linear, pfn = held if held is not None else (int(rng.integers(0, 256)) * 4 * KiB, int(rng.integers(*SYS_PAGES)))
    if held is not None:
        first = 0
        pages = (size + PAGE_SIZE - 1) // PAGE_SIZE
    words = []
    for _ in range(pages):
        if rng.random() < 0.3:
            pfn = int(rng.integers(*SYS_PAGES))
        if rng.random() < 0.03:
            pfn = 0x9000  # outside RAM: a bus error
        words.append(cmd.extent(pfn, 1))
        pfn += 1
    cursor[kind] = (linear + size, pfn)
    extents = np.array(words, dtype=np.uint64)
    if kind == "to_pages":
        return cmd.Copy(local(linear), first, size, dst_pages=True, extents=extents)
    return cmd.Copy(first, local(linear), size, src_pages=True, extents=extents)


def _other(rng: np.random.Generator) -> cmd.Packet:
    pick = int(rng.integers(0, 5))
    at = int(rng.integers(0, 256)) * 4 * KiB
    if pick == 0:
        return cmd.Fill(local(at), 256, 0xA5A5A5A5)
    if pick == 1:
        return cmd.Sync()
    if pick == 2:
        return cmd.WriteQwords(local(at), 2, np.array([1, 2], dtype=np.uint64))
    if pick == 3:
        return cmd.Copy(local(at), local(64 * MiB), 16)  # a bus error
    return cmd.Note(7)


def _snapshot(gpu: Gpu, into: list[bytes]) -> None:
    into.append(hashlib.sha256(gpu.local.data.tobytes() + gpu.system.data.tobytes()).digest())


def _run_program(seed: int, posted: bool) -> tuple[Outcome, list[bytes]]:
    rng = np.random.default_rng(seed)
    packets, planted = _program(rng)
    gpu = seeded(tiny_gpu(), seed)
    gpu.local.write(PLANT, planted)
    engine = gpu.engines[0]
    engine.post_copies = posted
    seen: list[bytes] = []
    for t in rng.integers(0, 60_000, int(rng.integers(0, 4))):  # something else due: it looks at memory
        gpu.clock.schedule(int(t), lambda: _snapshot(gpu, seen))
    if rng.random() < 0.5:  # a reset (a timeout, a preemption) somewhere among the packets
        gpu.clock.schedule(int(rng.integers(0, 60_000)), engine.reset)
    submit(gpu, packets)
    gpu.clock.run_all()
    return outcome(gpu), seen


@pytest.mark.parametrize("seed", range(60))
def test_a_random_program_gives_the_same_bytes_events_and_faults_posted_or_not(seed: int) -> None:
    (a, seen_a), (b, seen_b) = _run_program(seed, posted=True), _run_program(seed, posted=False)
    assert a[2] == b[2], "events (times, offsets, opcodes, faults) differ"
    assert seen_a == seen_b, "memory differed when something else ran between packets"
    assert a[3:] == b[3:]
    assert a[0] == b[0], "local memory differs"
    assert a[1] == b[1], "system memory differs"


# --- what falls between two packets -------------------------------------------------------------------------


def _chain(gpu: Gpu, pieces: int, piece: int) -> list[cmd.Packet]:
    """A local -> system transfer cut into ``pieces`` packets onto contiguous system pages."""
    base = SYS_PAGES[0]
    return [
        cmd.Copy(
            local(i * piece),
            0,
            piece,
            dst_pages=True,
            extents=np.array([cmd.extent(base + i * piece // PAGE_SIZE, piece // PAGE_SIZE)], dtype=np.uint64),
        )
        for i in range(pieces)
    ]


def _sys(gpu: Gpu, piece: int, i: int) -> bytes:
    start = SYS_PAGES[0] * PAGE_SIZE + i * piece
    return gpu.system.read(start, piece)


def test_a_reset_between_two_packets_finds_the_first_written_and_the_rest_untouched() -> None:
    piece = 64 * KiB
    gpu = tiny_gpu()
    gpu.local.data[: 3 * piece] = np.repeat(np.array([1, 2, 3], dtype=np.uint8), piece)
    first_done = gpu.config.cost.transfer_ns(piece, crosses_pcie=True)
    gpu.clock.schedule(first_done + 1, gpu.engines[0].reset)  # after the first packet, before the second
    submit(gpu, _chain(gpu, 3, piece))
    gpu.clock.run_all()
    assert _sys(gpu, piece, 0) == b"\x01" * piece
    assert _sys(gpu, piece, 1) == _sys(gpu, piece, 2) == bytes(piece)
    assert gpu.engines[0].packets_executed == 1
    assert gpu.engines[0].completed_fence == 0


def test_a_callback_between_two_packets_sees_the_first_written_and_not_the_second() -> None:
    piece = 64 * KiB
    gpu = tiny_gpu()
    gpu.local.data[: 2 * piece] = np.repeat(np.array([1, 2], dtype=np.uint8), piece)
    seen: list[tuple[bytes, bytes]] = []
    first_done = gpu.config.cost.transfer_ns(piece, crosses_pcie=True)
    gpu.clock.schedule(first_done + 1, lambda: seen.append((_sys(gpu, piece, 0), _sys(gpu, piece, 1))))
    submit(gpu, _chain(gpu, 2, piece))
    gpu.clock.run_all()
    assert seen == [(b"\x01" * piece, bytes(piece))]
    assert _sys(gpu, piece, 1) == b"\x02" * piece


def test_a_fault_in_the_third_packet_leaves_the_first_two_written_and_the_fourth_untouched() -> None:
    piece = 16 * KiB
    gpu = tiny_gpu()
    gpu.local.data[: 4 * piece] = np.repeat(np.array([1, 2, 3, 4], dtype=np.uint8), piece)
    packets = _chain(gpu, 4, piece)
    bad = packets[2]
    assert isinstance(bad, cmd.Copy)
    packets[2] = cmd.Copy(bad.src, 0, piece, dst_pages=True, extents=np.array([cmd.extent(0x9000, 4)], np.uint64))
    offsets = submit(gpu, packets, fence=5)
    gpu.clock.run_all()
    engine = gpu.engines[0]
    assert engine.state == EngineState.HALTED and engine.fault is not None
    assert (engine.fault.kind, engine.fault.packet_offset, engine.fault.fence) == (FaultKind.BUS_ERROR, offsets[2], 5)
    assert [_sys(gpu, piece, i) for i in range(4)] == [b"\x01" * piece, b"\x02" * piece, bytes(piece), bytes(piece)]


def test_a_copy_over_the_next_packet_changes_what_runs_next() -> None:
    gpu = tiny_gpu()
    planted = cmd.encode(cmd.Fill(local(0x2000), 64, 0x22222222))
    gpu.local.write(PLANT, planted)
    copy_length = len(cmd.encode(cmd.Copy(0, 0, 1)))
    submit(
        gpu,
        [
            cmd.Copy(local(0x10000), local(0x20000), 4096),  # posted, then joined by nothing
            cmd.Copy(local(PLANT), system(BUFFER + 2 * copy_length), len(planted)),
            cmd.Fill(local(0x1000), 64, 0x11111111),
        ],
    )
    gpu.clock.run_all()
    assert gpu.local.read(0x2000, 64) == b"\x22" * 64, "the rewritten packet ran"
    assert gpu.local.read(0x1000, 64) == bytes(64), "the original one did not"


def test_the_packets_after_a_copy_read_and_overwrite_its_bytes_in_order() -> None:
    gpu = tiny_gpu()
    gpu.local.data[0x10000:0x11000] = 0x33
    submit(
        gpu,
        [
            cmd.Copy(local(0x10000), local(0x20000), 0x1000),
            cmd.Fill(local(0x20000), 64, 0x44444444),
            cmd.Copy(local(0x10000), system(0x210000), 0x1000),
            cmd.ReadMem(system(0x210000 + 64), 8),
            cmd.Copy(local(0x10000), system(0x211000), 0x1000),
            cmd.WriteQwords(system(0x211000), 1, np.array([0x55], dtype=np.uint64)),
        ],
    )
    gpu.clock.run_all()
    assert gpu.local.read(0x20000, 128) == b"\x44" * 64 + b"\x33" * 64
    assert gpu.engines[0].last_read == 0x3333333333333333
    assert gpu.system.read(0x211000, 16) == (0x55).to_bytes(8, "little") + b"\x33" * 8


def test_a_listener_of_the_buffers_completion_finds_every_byte_landed() -> None:
    piece = 64 * KiB
    gpu = tiny_gpu()
    gpu.local.data[: 4 * piece] = 9
    seen: list[bytes] = []
    gpu.events.subscribe(
        lambda e: (
            seen.append(gpu.system.read(SYS_PAGES[0] * PAGE_SIZE, 4 * piece))
            if type(e).__name__ == "DmaBufferCompleted"
            else None
        )
    )
    submit(gpu, _chain(gpu, 4, piece))
    gpu.clock.run_all()
    assert seen == [b"\x09" * 4 * piece]


# --- joining --------------------------------------------------------------------------------------------------


def test_contiguous_packets_join_into_one_move_and_a_gap_does_not_join() -> None:
    local_mem, system_mem = LocalMemory("l", 1 * MiB), SystemMemory("s", 1 * MiB)
    local_mem.data[: 3 * PAGE_SIZE] = np.repeat(np.array([4, 5, 6], dtype=np.uint8), PAGE_SIZE)
    posted = PostedCopies()
    assert posted.join(local_mem, 0, system_mem, [0x10000], [PAGE_SIZE], PAGE_SIZE, True)
    assert posted.join(local_mem, PAGE_SIZE, system_mem, [0x11000, 0x40000], [100, PAGE_SIZE - 100], PAGE_SIZE, True)
    assert (posted.starts, posted.lengths, posted.length) == (
        [0x10000, 0x40000],
        [PAGE_SIZE + 100, PAGE_SIZE - 100],
        2 * PAGE_SIZE,
    )
    assert not posted.join(local_mem, 3 * PAGE_SIZE, system_mem, [0x50000], [PAGE_SIZE], PAGE_SIZE, True), "a gap"
    assert not posted.join(system_mem, 2 * PAGE_SIZE, local_mem, [0], [PAGE_SIZE], PAGE_SIZE, True), "another pair"
    assert system_mem.read(0x10000, 1) == b"\x00", "nothing lands before land()"
    posted.land()
    assert system_mem.read(0x10000, PAGE_SIZE + 100) == b"\x04" * PAGE_SIZE + b"\x05" * 100
    assert system_mem.read(0x40000, PAGE_SIZE - 100) == b"\x05" * (PAGE_SIZE - 100)
    assert posted.length == 0


def test_within_one_memory_a_group_never_reads_what_it_writes() -> None:
    mem = LocalMemory("l", 1 * MiB)
    posted = PostedCopies()
    assert posted.join(mem, 0, mem, [0x20000], [PAGE_SIZE], PAGE_SIZE, True)
    assert posted.join(mem, PAGE_SIZE, mem, [0x21000], [PAGE_SIZE], PAGE_SIZE, True)
    # The next packet would read [0x2000, 0x21000): it reaches into what the group writes.
    assert not posted.join(mem, 2 * PAGE_SIZE, mem, [0x22000], [0x1F000], 0x1F000, True)
    assert not posted.join(mem, 2 * PAGE_SIZE, mem, [0x1000], [PAGE_SIZE], PAGE_SIZE, True), "writes what it read"


# --- transfers around the packet limit --------------------------------------------------------------------------

Loc = DXGK_TRANSFER_LOCATION
BOTH = DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True)
LOCAL = 2


def _round_trip(
    max_copy: int, size: int, scatter: int | None, posted: bool, memory: int | None = None
) -> tuple[bool, list[Any]]:
    driver = DriverConfig(max_copy_bytes=max_copy)
    config = (
        SystemConfig(driver=driver)
        if memory is None
        else SystemConfig(gpu=GpuConfig(local_size=memory, system_size=memory), driver=driver)
    )
    rig = PagingRig(config)
    for engine in rig.gpu.engines:
        engine.post_copies = posted
    backing: MDL = rig.backing(size, scatter_seed=scatter)
    there = Loc.segment(LOCAL, rig.segment_address(LOCAL, 0))
    back = Loc.segment(LOCAL, rig.segment_address(LOCAL, 2 * size))
    payload = rig.pattern(size, seed=size)
    rig.write_segment(LOCAL, 0, payload)
    start = len(rig.adapter.events)
    for src, dst in ((there, Loc.mdl(backing)), (Loc.mdl(backing), back)):
        rig.execute(DXGK_BUILDPAGINGBUFFER_TRANSFER(TransferSize=size, Source=src, Destination=dst, Flags=BOTH))
    ok = np.array_equal(rig.read_mdl(backing, 0, size), payload) and np.array_equal(
        rig.read_segment(LOCAL, 2 * size, size), payload
    )
    return ok, [e.to_record() for e in rig.adapter.events.since(start)]


@pytest.mark.parametrize("scatter", [None, 5])
@pytest.mark.parametrize("pages", [1, 15, 16, 17, 49])
def test_transfers_around_the_packet_limit_copy_every_byte_with_the_same_events(
    pages: int, scatter: int | None
) -> None:
    size = pages * PAGE_SIZE - (100 if pages > 1 else 0)
    ok, events = _round_trip(64 * KiB, size, scatter, posted=True)
    assert ok
    assert events == _round_trip(64 * KiB, size, scatter, posted=False)[1]
    assert sum(e["event"] == "PacketExecuted" and e["opcode"] == "COPY" for e in events) == 2 * -(-pages // 16)


@pytest.mark.slow
@pytest.mark.parametrize("size", [64 * MiB - PAGE_SIZE, 64 * MiB + PAGE_SIZE, 200 * MiB + 100])
def test_transfers_around_the_reference_packet_limit_of_64_mib(size: int) -> None:
    ok, events = _round_trip(64 * MiB, size, None, posted=True, memory=1 * GiB)
    assert ok
    assert events == _round_trip(64 * MiB, size, None, posted=False, memory=1 * GiB)[1]
