"""The engine's run of WRITE_QWORDS packets (decision 0232) against the packet-by-packet paths.

A buffer of many WRITE_QWORDS runs in one loop when the event log is off: each packet whose words land in one page
the MMU has cached for writing is copied there from the fetched buffer, the clock advanced packet by packet.  Every
other packet -- and every packet when the log is on -- takes the one-packet path, and a packet that must wait for
something else takes the general one.  All of them must leave the same memory, the same clock, the same count of
packets, the same fault at the same offset and the same interrupts; where the log is on, the same events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from tests.hw.test_engine import BUFFER, small_gpu
from tests.hw.test_mmu import Tables
from wddmsim.core.units import PAGE_SIZE
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import Interrupt, InterruptKind, Submission
from wddmsim.hw.events import PacketExecuted
from wddmsim.hw.faults import FaultKind
from wddmsim.hw.gpu import Gpu
from wddmsim.hw.pte import Target, encode_pte

VA = 0x1234_0000
PAGES = {  # VA page -> where it leads
    0: {"target": Target.LOCAL, "address": 0x10_0000},
    1: {"target": Target.SYSTEM, "address": 0x7000},
    2: {"zero": True},
    3: {"target": Target.LOCAL, "address": 0x20_0000},
    4: {"target": Target.LOCAL, "address": 0x30_0000, "read_only": True},
    5: {"target": Target.SYSTEM, "address": BUFFER},  # the command buffer itself
}
INVALID_PAGE = 6  # no entry: a page fault


def va(page: int, at: int = 0) -> int:
    return hw_address(Space.GPU_VA, VA + page * PAGE_SIZE + at)


def words(count: int, seed: int) -> np.ndarray:
    return (np.arange(count, dtype=np.uint64) + 1) * np.uint64(0x0101_0101_0101_0101) + np.uint64(seed)


def wq(dst: int, count: int, seed: int, *, repeat: bool = False) -> cmd.WriteQwords:
    return cmd.WriteQwords(dst, count, words(1 if repeat else count, seed), repeat=repeat)


# One-page writes to cached pages run in the loop; the first write to each page, repeats, writes across pages,
# physical destinations and misaligned ones take the one-packet path.
MANY: list[cmd.Packet] = [
    wq(va(0), 4, 1),  # first write to page 0: a miss, the one-packet path caches it
    *(wq(va(0, 64 * k), 8, 10 + k) for k in range(1, 12)),  # the loop
    wq(va(1, PAGE_SIZE - 16), 5, 30),  # across pages 1 and 2 (system, then Zero)
    wq(va(1, 8), 3, 31),  # first one-page write to page 1
    wq(va(1, 512), PAGE_SIZE // 8 - 64, 32),  # to the page's end
    wq(va(2, 128), 6, 33),  # the Zero page: dropped (first, then cached)
    wq(va(2, 256), 6, 34),
    wq(va(3, 0), PAGE_SIZE // 8, 35),  # a whole page, first
    wq(va(3, 0), 32, 36, repeat=True),  # a repeat
    wq(va(3, 256), 32, 37),
    wq(hw_address(Space.GPU_PHYS, 0x28_0000), 9, 38),  # physical
    wq(va(0, 2000), 16, 39),
    *(wq(va(3, 40 * k), 5, 50 + k) for k in range(20)),
]
WITH_READ_ONLY = [*MANY[:20], wq(va(4, 64), 4, 60), *MANY[20:]]
WITH_INVALID = [*MANY[:14], wq(va(INVALID_PAGE, 8), 2, 61), *MANY[14:]]
WITH_OTHERS = [*MANY[:9], cmd.Fill(hw_address(Space.GPU_PHYS, 0x29_0000), 64, 0xABCD), *MANY[9:], cmd.Sync()]


def bad_padding(packet: cmd.WriteQwords) -> bytes:
    """``packet`` encoded with a non-zero padding word (an even count leaves 8 bytes of padding)."""
    assert packet.count % 2 == 0
    data = bytearray(cmd.encode(packet))
    data[-1] = 1
    return bytes(data)


MALFORMED = [cmd.encode(p) for p in MANY[:16]] + [bad_padding(wq(va(0, 8), 4, 70))] + [cmd.encode(MANY[16])]


def self_rewriting() -> list[bytes]:
    """A packet run in the loop rewrites the next packet (in the buffer's own page, through page 5): the engine
    must read the new one, not the one it would have read ahead."""
    head = [wq(va(5, PAGE_SIZE - 64), 2, 80), *MANY[:6]]  # the first write to page 5 caches it
    victim = wq(va(0, 8), 4, 81)
    replacement = cmd.encode(wq(va(3, 512), 4, 82))
    start = sum(p.length for p in head)
    victim_at = start + wq(va(5), len(replacement) // 8, 0).length
    rewriter = cmd.WriteQwords(
        va(5, victim_at), len(replacement) // 8, np.frombuffer(replacement, dtype="<u8").astype(np.uint64)
    )
    out = [cmd.encode(p) for p in (*head, rewriter, victim, *MANY[6:10])]
    assert len(b"".join(out)) < PAGE_SIZE - 64
    return out


PROGRAMS: dict[str, list[bytes]] = {
    "many": [cmd.encode(p) for p in MANY],
    "read-only fault": [cmd.encode(p) for p in WITH_READ_ONLY],
    "page fault": [cmd.encode(p) for p in WITH_INVALID],
    "other packets": [cmd.encode(p) for p in WITH_OTHERS],
    "malformed": MALFORMED,
    "self-rewriting": self_rewriting(),
}
MODES = ("quiet", "counted", "kept", "busy")
"""The log off (the loop); on, keeping nothing, with no listener (the loop, its events counted); on and keeping; on, with a callback due every
few nanoseconds (no packet completes inline: the general path)."""


@dataclass
class Outcome:
    memory: bytes
    interrupts: list[tuple[int, int, int, tuple[object, ...] | None]]
    packets: int
    emitted: int
    executed: list[tuple[int, int, str]]
    one_packet_calls: int


def run(
    program: list[bytes],
    mode: str,
    *,
    root_entries: int | None = None,
    at: Callable[[Gpu], None] | None = None,
    when: int = 0,
) -> Outcome:
    gpu = small_gpu()
    tables = Tables(gpu)
    for page, entry in PAGES.items():
        tables.set_leaf(VA + page * PAGE_SIZE, encode_pte(**entry))  # type: ignore[arg-type]
    engine = gpu.engines[0]
    seen: list[tuple[int, int, int, tuple[object, ...] | None]] = []

    def record(interrupt: Interrupt) -> None:
        fault = interrupt.fault
        detail = None if fault is None else (fault.kind, fault.packet_offset, fault.address, fault.reason)
        seen.append((gpu.clock.now, int(interrupt.kind), interrupt.value, detail))

    gpu.set_interrupt_handler(record)
    if mode == "quiet":
        gpu.events.enabled = False
    elif mode == "counted":
        gpu.events.keep = False
    elif mode == "busy":
        for t in range(0, 60000, 3):
            gpu.clock.schedule(t, lambda: None)
    if at is not None:
        gpu.clock.schedule(when, lambda: at(gpu))
    calls = []
    one_packet = engine._write_qwords_now

    def spy(*args: object) -> bool | None:
        calls.append(1)
        return one_packet(*args)  # type: ignore[arg-type]

    engine._write_qwords_now = spy  # type: ignore[method-assign,assignment]
    data = b"".join(program)
    gpu.system.write(BUFFER, data)
    engine.submit(
        Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 7, root=tables.root, root_entries=root_entries)
    )
    gpu.clock.run_all()
    executed = [(e.time, e.offset, e.opcode) for e in gpu.events if isinstance(e, PacketExecuted)]
    memory = gpu.local.data[:0x31_0000].tobytes() + gpu.system.data[: BUFFER + PAGE_SIZE].tobytes()
    return Outcome(memory, seen, engine.packets_executed, gpu.events.emitted, executed, len(calls))


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_run_in_the_loop_agrees_with_the_packet_by_packet_paths(name: str) -> None:
    outcomes = {mode: run(PROGRAMS[name], mode) for mode in MODES}
    quiet = outcomes["quiet"]
    for mode in MODES[1:]:
        other = outcomes[mode]
        assert other.memory == quiet.memory, mode
        assert other.interrupts == quiet.interrupts, mode  # the same times, fence, fault and offset
        assert other.packets == quiet.packets, mode
    assert outcomes["kept"].executed == outcomes["busy"].executed
    assert outcomes["counted"].emitted == outcomes["kept"].emitted, "a skipped event is counted as an emitted one"
    assert len(outcomes["kept"].executed) == quiet.packets
    assert quiet.emitted == 0
    # The loop ran most packets: the one-packet path saw only the ones it cannot take.
    assert quiet.one_packet_calls < quiet.packets // 2
    # So did a log that keeps nothing with no one listening (a plain `wddmsim run`): its events only counted.
    assert outcomes["counted"].one_packet_calls == quiet.one_packet_calls
    assert outcomes["kept"].one_packet_calls >= quiet.packets - 2  # the log on: every WRITE_QWORDS, one by one


def test_the_loop_writes_what_the_program_says() -> None:
    """Spot checks of the bytes (the agreement above is only as good as one of the paths)."""
    gpu_memory = run(PROGRAMS["many"], "quiet").memory
    local = np.frombuffer(gpu_memory[:0x31_0000], dtype="<u8")
    system = np.frombuffer(gpu_memory[0x31_0000:], dtype="<u8")
    assert local[(0x10_0000 + 64 * 3) // 8 : (0x10_0000 + 64 * 3) // 8 + 8].tolist() == words(8, 13).tolist()
    assert system[(0x7000 + 512) // 8 : (0x7000 + 512) // 8 + 2].tolist() == words(2, 32).tolist()
    assert local[(0x20_0000 + 40 * 19) // 8 : (0x20_0000 + 40 * 19) // 8 + 5].tolist() == words(5, 69).tolist()
    rewritten = run(PROGRAMS["self-rewriting"], "quiet").memory
    local = np.frombuffer(rewritten[:0x31_0000], dtype="<u8")
    assert local[(0x20_0000 + 512) // 8 : (0x20_0000 + 512) // 8 + 4].tolist() == words(4, 82).tolist()
    assert local[(0x10_0000 + 8) // 8 : (0x10_0000 + 8) // 8 + 4].tolist() != words(4, 81).tolist()


@pytest.mark.parametrize(
    ("name", "offset_of", "kind"),
    [
        ("read-only fault", 20, FaultKind.PAGE_FAULT),
        ("page fault", 14, FaultKind.PAGE_FAULT),
        ("malformed", 16, FaultKind.INVALID_INSTRUCTION),
    ],
)
def test_a_fault_mid_run_halts_at_its_packet_with_the_ones_before_executed(
    name: str, offset_of: int, kind: FaultKind
) -> None:
    program = PROGRAMS[name]
    quiet = run(program, "quiet")
    ((_, interrupt, fence, fault),) = quiet.interrupts
    assert (interrupt, fence) == (InterruptKind.FAULT, 7)
    assert fault is not None and fault[0] == kind
    assert fault[1] == sum(len(p) for p in program[:offset_of])
    assert quiet.packets == offset_of


def test_the_end_of_the_root_s_entries_faults_in_the_loop_as_on_the_one_packet_path() -> None:
    """A VA at or past ``root_entries`` faults whether its page is cached or not (the loop's bound)."""
    outcomes = [run(PROGRAMS["many"], mode, root_entries=0) for mode in MODES]
    assert all(o.interrupts == outcomes[0].interrupts for o in outcomes)
    ((_, _, _, fault),) = outcomes[0].interrupts
    assert fault is not None and fault[1] == 0 and "NumEntries" in str(fault[3])


def _completion_times() -> list[int]:
    return [t for t, _, _ in run(PROGRAMS["many"], "kept").executed]


@pytest.mark.parametrize("packet", [5, 12, 30])
def test_a_callback_due_mid_run_sees_exactly_the_packets_before_it(packet: int) -> None:
    """The clock advances packet by packet: a callback due between two packets runs between them, in the loop as on
    the other paths -- it sees the earlier packets' words and the count, and none of the later ones."""
    when = _completion_times()[packet - 1] + 1
    snapshots: dict[str, tuple[int, bytes]] = {}
    for mode in MODES[:3]:

        def look(gpu: Gpu, mode: str = mode) -> None:
            snapshots[mode] = (gpu.engines[0].packets_executed, gpu.local.data[:0x31_0000].tobytes())

        run(PROGRAMS["many"], mode, at=look, when=when)
    assert snapshots["quiet"] == snapshots["counted"] == snapshots["kept"]
    assert snapshots["quiet"][0] == packet


@pytest.mark.parametrize("packet", [5, 12, 30])
def test_an_engine_reset_mid_run_drops_the_rest_of_the_buffer(packet: int) -> None:
    """A callback resets the engine between two packets of a run (the log off), or a listener does after a
    packet's event (the log on): the packets before it executed, the rest are dropped, no completion."""
    when = _completion_times()[packet - 1] + 1

    def reset(gpu: Gpu) -> None:
        gpu.engines[0].reset()

    outcomes = {mode: run(PROGRAMS["many"], mode, at=reset, when=when) for mode in MODES[:3]}
    assert outcomes["quiet"].memory == outcomes["counted"].memory == outcomes["kept"].memory
    assert outcomes["quiet"].packets == packet
    assert all(o.interrupts == [] for o in outcomes.values())

    gpu = small_gpu()
    tables = Tables(gpu)
    for page, entry in PAGES.items():
        tables.set_leaf(VA + page * PAGE_SIZE, encode_pte(**entry))  # type: ignore[arg-type]
    engine = gpu.engines[0]
    count = []

    def reset_after(event: object) -> None:
        count.append(1)
        if len(count) == packet:
            engine.reset()

    gpu.events.subscribe(reset_after, (PacketExecuted,))
    data = b"".join(PROGRAMS["many"])
    gpu.system.write(BUFFER, data)
    engine.submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 7, root=tables.root))
    gpu.clock.run_all()
    assert engine.packets_executed == packet == len(count)
    assert gpu.local.data[:0x31_0000].tobytes() == outcomes["quiet"].memory[:0x31_0000]


def _random_program(rng: np.random.Generator) -> list[bytes]:
    """Mostly one-page writes to the mapped pages, now and then anything else the run must hand over or stop at."""
    out: list[bytes] = []
    for n in range(int(rng.integers(5, 60))):
        roll = int(rng.integers(0, 100))
        page = int(rng.integers(0, 4))
        count = int(rng.integers(1, 40))
        at = 8 * int(rng.integers(0, (PAGE_SIZE - 8 * count) // 8 + 1))
        if roll < 79:
            out.append(cmd.encode(wq(va(page, at), count, n)))
        elif roll < 84:
            out.append(cmd.encode(wq(va(page, PAGE_SIZE - 8), 3, n)))  # across into the next page
        elif roll < 89:
            out.append(cmd.encode(wq(va(page, at), count, n, repeat=True)))
        elif roll == 89:
            out.append(cmd.encode(wq(va(page, at + 4), 1, n)))  # misaligned: an invalid instruction
        elif roll == 90:
            out.append(cmd.encode(wq(va(4 if n % 2 else INVALID_PAGE, at), count, n)))  # a page fault
        elif roll < 94:
            out.append(cmd.encode(wq(hw_address(Space.GPU_PHYS, 0x28_0000 + at), count, n)))
        elif roll < 97:
            out.append(cmd.encode(cmd.Fill(hw_address(Space.GPU_PHYS, 0x29_0000 + at), 16, n)))
        else:
            out.append(cmd.encode(cmd.Sync()))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_agree_on_every_path(seed: int) -> None:
    program = _random_program(np.random.default_rng(seed))
    outcomes = [run(program, mode) for mode in MODES]
    for other in outcomes[1:]:
        assert (other.memory, other.interrupts, other.packets) == (
            outcomes[0].memory,
            outcomes[0].interrupts,
            outcomes[0].packets,
        )
    assert outcomes[2].executed == outcomes[3].executed


def test_a_packet_of_the_run_that_rewrites_a_page_table_is_seen_only_after_the_flush(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write in the loop to the leaf table itself (mapped at a VA page the loop has cached) changes page 0's entry:
    the next write to page 0 still lands where the TLB's snapshot says, the flush (which ends the run) makes the MMU
    forget it, and the writes after it land at the new page -- on every path alike."""
    leaf, root = 0x403000, 0x400000  # where Tables puts the root and the leaf table of VA (allocated in order)
    index = (VA // PAGE_SIZE) % 512
    monkeypatch.setitem(PAGES, 7, {"target": Target.LOCAL, "address": leaf})
    moved = encode_pte(target=Target.LOCAL, address=0x30_8000)
    program = [
        cmd.encode(p)
        for p in (
            wq(va(0), 2, 1),
            wq(va(7, 8 * 500), 1, 0),  # an unused entry: page 7 cached for writing
            wq(va(0, 64), 2, 2),
            cmd.WriteQwords(va(7, 8 * index), 1, np.array([moved], dtype=np.uint64)),  # in the loop
            wq(va(0, 128), 2, 3),  # the TLB still has the old page
            cmd.TlbInvalidate(hw_address(Space.GPU_PHYS, root), VA, VA + PAGE_SIZE - 1),
            wq(va(0, 192), 2, 4),
            wq(va(0, 256), 2, 5),  # in the loop again, at the new page
        )
    ]
    outcomes = {mode: run(program, mode) for mode in MODES}
    quiet = outcomes["quiet"]
    for mode, other in outcomes.items():
        assert (other.memory, other.interrupts, other.packets) == (quiet.memory, quiet.interrupts, 8), mode
    assert quiet.one_packet_calls == 3  # the first write to pages 0 and 7, and the first after the flush
    memory = np.frombuffer(quiet.memory, dtype=np.uint64)

    def at(address: int) -> list[int]:
        return [int(word) for word in memory[address // 8 : address // 8 + 2]]

    assert at(0x10_0000 + 128) == words(2, 3).tolist()
    assert at(0x30_8000 + 192) == words(2, 4).tolist() and at(0x30_8000 + 256) == words(2, 5).tolist()
    assert at(0x10_0000 + 192) == at(0x10_0000 + 256) == [0, 0]
