"""The command processor: packets take effect in order, faults halt it, no input crashes it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.core.units import PAGE_SIZE, MiB
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.engine import EngineState, InterruptKind, Submission
from wddmsim.hw.faults import FaultKind
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.hw.pte import Target, encode_pte

BUFFER = 0x100000  # where tests place their command buffers in system memory


def small_gpu() -> Gpu:
    return Gpu(GpuConfig(local_size=64 * MiB, bar_size=16 * MiB, system_size=64 * MiB, aperture_size=16 * MiB))


def run(gpu: Gpu, packets: list[cmd.Packet], fence: int = 1) -> None:
    data = b"".join(cmd.encode(p) for p in packets)
    gpu.system.write(BUFFER, data)
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), fence))
    gpu.clock.run_all()


def local(address: int) -> int:
    return hw_address(Space.GPU_PHYS, address)


def test_copy_fill_write_and_signal_take_effect_and_the_fence_completes() -> None:
    gpu = small_gpu()
    gpu.local.write(0x1000, b"abcdefgh")
    run(
        gpu,
        [
            cmd.Copy(local(0x1000), local(0x2000), 8),
            cmd.Fill(local(0x3000), 12, 0xA1B2C3D4),
            cmd.WriteQwords(local(0x4000), 2, np.array([1, 2], dtype=np.uint64)),
            cmd.WriteQwords(local(0x5000), 3, np.array([7], dtype=np.uint64), repeat=True),
            cmd.WriteMem(local(0x6001), 2, 0xBEEF),
            cmd.Signal(hw_address(Space.SYSTEM, 0x8000), 0x1122334455667788, interrupt=True),
        ],
        fence=9,
    )
    assert gpu.local.read(0x2000, 8) == b"abcdefgh"
    assert gpu.local.read(0x3000, 12) == bytes.fromhex("d4c3b2a1") * 3
    assert gpu.local.u64[0x4000 // 8 : 0x4000 // 8 + 2].tolist() == [1, 2]
    assert gpu.local.u64[0x5000 // 8 : 0x5000 // 8 + 3].tolist() == [7, 7, 7]
    assert gpu.local.read(0x6000, 4) == b"\x00\xef\xbe\x00"
    assert int(gpu.system.u64[0x8000 // 8]) == 0x1122334455667788
    assert [i.kind for i in gpu.interrupts] == [InterruptKind.SIGNAL, InterruptKind.COMPLETION]
    assert gpu.engines[0].completed_fence == 9


def test_packets_complete_in_order_on_the_simulated_clock() -> None:
    gpu = small_gpu()
    run(gpu, [cmd.Fill(local(0), 1 * MiB, 1), cmd.Sync(), cmd.Note(5)])
    executed = [e for e in gpu.events if type(e).__name__ == "PacketExecuted"]
    assert [e.opcode for e in executed] == ["FILL", "SYNC", "NOTE"]  # type: ignore[attr-defined]
    times = [e.time for e in executed]
    cost = gpu.config.cost
    assert times[0] == cost.transfer_ns(1 * MiB, crosses_pcie=False)
    assert times == sorted(times)


def test_overlapping_copies_behave_like_memmove() -> None:
    gpu = small_gpu()
    data = np.random.default_rng(0).integers(0, 256, 3 * PAGE_SIZE, dtype=np.uint8)
    gpu.local.data[0x10000 : 0x10000 + data.shape[0]] = data
    run(gpu, [cmd.Copy(local(0x10000), local(0x10000 + 100), 3 * PAGE_SIZE)])
    assert np.array_equal(gpu.local.data[0x10000 + 100 : 0x10000 + 100 + data.shape[0]], data)
    run(gpu, [cmd.Copy(local(0x10000 + 100), local(0x10000), 3 * PAGE_SIZE)], fence=2)
    assert np.array_equal(gpu.local.data[0x10000 : 0x10000 + data.shape[0]], data)


def test_a_page_list_copy_gathers_scattered_pages_from_the_first_page_offset() -> None:
    gpu = small_gpu()
    for pfn, fill in ((0x300, 1), (0x301, 2), (0x900, 3)):
        gpu.system.data[pfn * PAGE_SIZE : (pfn + 1) * PAGE_SIZE] = fill
    extents = np.array([cmd.extent(0x300, 2), cmd.extent(0x900, 1)], dtype=np.uint64)
    run(gpu, [cmd.Copy(100, local(0), 3 * PAGE_SIZE - 200, src_pages=True, extents=extents)])
    out = gpu.local.data[: 3 * PAGE_SIZE - 200]
    assert (out[: PAGE_SIZE - 100] == 1).all()
    assert (out[PAGE_SIZE - 100 : 2 * PAGE_SIZE - 100] == 2).all()
    assert (out[2 * PAGE_SIZE - 100 :] == 3).all()


def test_a_bus_error_halts_the_engine_with_a_fault_record_until_reset() -> None:
    gpu = small_gpu()
    run(gpu, [cmd.Fill(local(0), 16, 1), cmd.Fill(local(64 * MiB), 16, 2), cmd.Fill(local(32), 16, 3)], fence=4)
    engine = gpu.engines[0]
    assert engine.state == EngineState.HALTED
    assert engine.fault is not None
    assert (engine.fault.kind, engine.fault.fence, engine.fault.packet_offset) == (FaultKind.BUS_ERROR, 4, 32)
    assert gpu.local.read(0, 1) == b"\x01"
    assert gpu.local.read(32, 1) == b"\x00", "nothing after the fault executes"
    assert gpu.interrupts[-1].kind == InterruptKind.FAULT
    gpu.reset()
    assert gpu.engines[0].state == EngineState.IDLE
    assert gpu.engines[0].fault is None
    run(gpu, [cmd.Fill(local(32), 16, 3)], fence=5)
    assert gpu.local.read(32, 1) == b"\x03"


def test_an_undecodable_packet_is_an_invalid_instruction_fault() -> None:
    gpu = small_gpu()
    gpu.system.write(BUFFER, cmd.HEADER.pack(0x55, 0, 16) + bytes(8))
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), 16, 1))
    gpu.clock.run_all()
    fault = gpu.engines[0].fault
    assert fault is not None
    assert fault.kind == FaultKind.INVALID_INSTRUCTION
    assert "unknown opcode" in fault.reason


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=1, max_size=400), st.integers(0, 2**32 - 1))
def test_random_and_bit_flipped_buffers_never_crash_the_simulator(noise: bytes, flip: int) -> None:
    gpu = small_gpu()
    valid = cmd.encode(cmd.Copy(local(0), local(PAGE_SIZE), 64)) + cmd.encode(cmd.Signal(local(0x40), 1))
    mutated = bytearray(valid + noise)
    mutated[flip % len(mutated)] ^= 1 << (flip % 8)
    gpu.system.write(BUFFER, bytes(mutated))
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(mutated) - len(mutated) % 16 or 16, 1))
    gpu.clock.run_all()
    engine = gpu.engines[0]
    assert engine.state in (EngineState.IDLE, EngineState.HALTED)
    assert (engine.fault is None) == (engine.state == EngineState.IDLE)


_writes = st.lists(
    st.tuples(
        st.integers(0, 15),  # destination slot
        st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=24),
        st.booleans(),  # repeat
        st.sampled_from([0, 0, 0, 4]),  # misaligned now and then: an invalid-instruction fault
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(_writes)
def test_write_qwords_take_the_same_effect_inline_and_when_they_complete_later(
    writes: list[tuple[int, list[int], bool, int]],
) -> None:
    """The engine reads a WRITE_QWORDS straight from the buffer when it can run it at once; when something else is
    due first it keeps the decoded packet until then.  Both ways give the same memory, events and fault."""
    packets: list[cmd.Packet] = [
        cmd.WriteQwords(local(0x1000 * slot + skew), len(words), np.array(words, dtype=np.uint64), repeat=repeat)
        if not repeat
        else cmd.WriteQwords(local(0x1000 * slot + skew), len(words), np.array(words[:1], dtype=np.uint64), True)
        for slot, words, repeat, skew in writes
    ]
    results = []
    for busy in (False, True):
        gpu = small_gpu()
        if busy:  # a callback due every few nanoseconds: no packet can complete inline
            for t in range(0, 5000, 3):
                gpu.clock.schedule(t, lambda: None)
        run(gpu, packets)
        engine = gpu.engines[0]
        executed = [(e.time, e.offset, e.opcode) for e in gpu.events if type(e).__name__ == "PacketExecuted"]  # type: ignore[attr-defined]
        fault = None if engine.fault is None else (engine.fault.kind, engine.fault.packet_offset, engine.fault.reason)
        results.append((gpu.local.data[: 0x10000 + 0x1000].tobytes(), executed, fault, engine.completed_fence))
    assert results[0] == results[1]
    assert results[0][2] is not None or results[0][3] == 1


def test_an_empty_buffer_completes_at_once_instead_of_crashing_the_fetch() -> None:
    """Regression: fetching a zero-byte submission indexed an empty run list (an IndexError out of the engine)."""
    gpu = small_gpu()
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), 0, 3))
    gpu.clock.run_all()
    assert gpu.engines[0].completed_fence == 3
    assert gpu.engines[0].state == EngineState.IDLE
    assert [(i.kind, i.value) for i in gpu.interrupts] == [(InterruptKind.COMPLETION, 3)]


Run = tuple[bytes, list[tuple[int, int, str]], tuple[FaultKind, int, str] | None, int]


def _sync_program(gpu: Gpu, *, busy: bool, bad_padding: bool) -> Run:
    """COPYs (one lone, two that join) and SYNCs, run inline or each completing later; a SYNC's padding maybe not
    zero.  What the run leaves: local bytes, executed packets, the fault and the fence."""
    gpu.local.data[:PAGE_SIZE] = np.arange(PAGE_SIZE, dtype=np.uint8)
    if busy:  # a callback due every few nanoseconds: no packet can complete inline
        for t in range(0, 20000, 3):
            gpu.clock.schedule(t, lambda: None)
    packets: list[cmd.Packet] = [
        cmd.Copy(local(0), local(0x10000), 100),
        cmd.Sync(),
        cmd.Copy(local(0), local(0x20000), PAGE_SIZE),
        cmd.Copy(local(0), local(0x21000), PAGE_SIZE),
        cmd.Sync(),
        cmd.Fill(local(0x30000), 16, 7),
        cmd.Sync(),
    ]
    data = bytearray(b"".join(cmd.encode(p) for p in packets))
    if bad_padding:
        data[-1] = 1
    gpu.system.write(BUFFER, bytes(data))
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 1))
    gpu.clock.run_all()
    engine = gpu.engines[0]
    executed = [(e.time, e.offset, e.opcode) for e in gpu.events if type(e).__name__ == "PacketExecuted"]  # type: ignore[attr-defined]
    fault = None if engine.fault is None else (engine.fault.kind, engine.fault.packet_offset, engine.fault.reason)
    return gpu.local.data[:0x31000].tobytes(), executed, fault, engine.completed_fence


@pytest.mark.parametrize("bad_padding", [False, True], ids=["well-formed", "SYNC padding not zero"])
def test_syncs_and_lone_copies_take_the_same_effect_inline_and_when_they_complete_later(bad_padding: bool) -> None:
    """A well-formed SYNC that completes at once runs without being decoded into a packet, and a lone COPY runs
    without being posted (decision 0200); completing later, both take the general path.  Same bytes, events,
    fault either way; a malformed SYNC is still the decoder's invalid instruction."""
    inline = _sync_program(small_gpu(), busy=False, bad_padding=bad_padding)
    later = _sync_program(small_gpu(), busy=True, bad_padding=bad_padding)
    assert inline == later
    local_bytes, executed, fault, fence = inline
    assert [opcode for _, _, opcode in executed] == ["COPY", "SYNC", "COPY", "COPY", "SYNC", "FILL"] + (
        [] if bad_padding else ["SYNC"]
    )
    assert local_bytes[0x10000 : 0x10000 + 100] == bytes(range(100))
    assert local_bytes[0x20000:0x22000] == 2 * np.arange(PAGE_SIZE, dtype=np.uint8).tobytes()
    if bad_padding:
        assert fault == (FaultKind.INVALID_INSTRUCTION, 208, "SYNC must be 16 zero-padded bytes")
    else:
        assert (fault, fence) == (None, 1)


def test_write_qwords_durations_follow_a_replaced_cost_model() -> None:
    """The engine keeps WRITE_QWORDS durations per size (decision 0203); a cost model set later is the one used."""
    from wddmsim.hw.cost import CostModel

    gpu = small_gpu()
    engine = gpu.engines[0]
    packets: list[cmd.Packet] = [
        cmd.WriteQwords(local(0x1000 * slot), count, np.arange(count, dtype=np.uint64))
        for slot, count in ((0, 3), (1, 512), (2, 3))
    ]
    models = (engine.cost, CostModel(packet_overhead_ns=1000, local_bandwidth=1e9), engine.cost)
    durations = []
    for fence, model in enumerate(models, start=1):
        engine.cost = model
        start = gpu.clock.now
        run(gpu, packets, fence)
        times = [e.time for e in gpu.events if type(e).__name__ == "PacketExecuted" and e.fence == fence]  # type: ignore[attr-defined]
        durations.append([b - a for a, b in zip([start, *times], times, strict=False)])
        assert durations[-1] == [model.transfer_ns(8 * p.count, crosses_pcie=False) for p in packets]  # type: ignore[union-attr]
    assert durations[0] == durations[2] == [100, 104, 100]
    assert durations[1] == [1024, 1000 + 4096, 1024], "1 us of overhead, then 1 ns a byte"


_VA = 0x1234_0000
_VA_PAGES = {  # VA page -> where it leads: two local pages apart, a system page, a Zero page, a read-only page
    0: {"target": Target.LOCAL, "address": 0x10_0000},
    1: {"target": Target.SYSTEM, "address": 0x7000},
    2: {"zero": True},
    3: {"target": Target.LOCAL, "address": 0x20_0000},
    4: {"target": Target.LOCAL, "address": 0x30_0000, "read_only": True},
}
# (first byte from _VA, words, repeat): one page, across each kind of boundary, a Zero page alone, a repeat across
# pages, a whole page, and a write into the read-only page (a fault after the others).
_VA_WRITES = [
    (0x10, 4, False),
    (PAGE_SIZE - 16, 5, False),
    (2 * PAGE_SIZE - 8, 3, False),
    (2 * PAGE_SIZE + 64, 2, False),
    (3 * PAGE_SIZE - 24, 6, True),
    (3 * PAGE_SIZE, PAGE_SIZE // 8, False),
    (0x40, 500, False),
    (4 * PAGE_SIZE - 8, 2, False),
]


def _va_program(*, busy: bool, root_entries: int | None = None, rootless: bool = False) -> Run:
    from tests.hw.test_mmu import Tables

    gpu = small_gpu()
    tables = Tables(gpu)
    for page, entry in _VA_PAGES.items():
        tables.set_leaf(_VA + page * PAGE_SIZE, encode_pte(**entry))  # type: ignore[arg-type]
    if busy:  # a callback due every few nanoseconds: no packet can complete inline (the general path)
        for t in range(0, 50000, 3):
            gpu.clock.schedule(t, lambda: None)
    packets: list[cmd.Packet] = [
        cmd.WriteQwords(
            hw_address(Space.GPU_VA, _VA + at),
            count,
            np.arange(1, 2 if repeat else count + 1, dtype=np.uint64) * 0x0101_0101_0101_0101 + n,
            repeat=repeat,
        )
        for n, (at, count, repeat) in enumerate(_VA_WRITES)
    ]
    data = b"".join(cmd.encode(p) for p in packets)
    gpu.system.write(BUFFER, data)
    gpu.engines[0].submit(
        Submission(
            hw_address(Space.SYSTEM, BUFFER),
            len(data),
            1,
            root=None if rootless else tables.root,
            root_entries=root_entries,
        )
    )
    gpu.clock.run_all()
    engine = gpu.engines[0]
    executed = [(e.time, e.offset, e.opcode) for e in gpu.events if type(e).__name__ == "PacketExecuted"]  # type: ignore[attr-defined]
    fault = None if engine.fault is None else (engine.fault.kind, engine.fault.packet_offset, engine.fault.reason)
    memory = gpu.local.data[:0x31_0000].tobytes() + gpu.system.data[:0x8000].tobytes()
    return memory, executed, fault, engine.completed_fence


def test_write_qwords_through_a_gpu_va_land_alike_inline_and_when_they_complete_later() -> None:
    """The inline WRITE_QWORDS path writes a table's words that fall in one page with one copy and hands any other
    range (two pages, a Zero page, a repeat) to ``write_runs``: the same bytes, events and fault as the general
    path, for writes across local, system, Zero and read-only pages."""
    inline, later = _va_program(busy=False), _va_program(busy=True)
    assert inline == later
    memory, executed, fault, _ = inline
    assert len(executed) == len(_VA_WRITES) - 1  # the last one faults on the read-only page
    assert fault is not None and fault[0] == FaultKind.PAGE_FAULT
    first = np.frombuffer(memory, dtype="<u8", count=4, offset=0x10_0000 + 0x10)
    assert [int(w) for w in first] == [0x0101_0101_0101_0101 * k for k in range(1, 5)]
    # The second write: two words at the end of the first local page, three at the start of the system page.
    before = np.frombuffer(memory, dtype="<u8", count=2, offset=0x10_0000 + PAGE_SIZE - 16)
    after = np.frombuffer(memory, dtype="<u8", count=3, offset=0x31_0000 + 0x7000)
    assert [int(w) for w in (*before, *after)] == [0x0101_0101_0101_0101 * k + 1 for k in range(1, 6)]


@pytest.mark.parametrize(
    ("root_entries", "rootless", "reason"),
    [(0, False, "beyond the root's NumEntries"), (None, True, "the engine has no address space")],
    ids=["no root entry", "no address space"],
)
def test_write_qwords_through_a_gpu_va_fault_alike_inline_and_when_they_complete_later(
    root_entries: int | None, rootless: bool, reason: str
) -> None:
    """The inline path translates a GPU VA through the MMU itself when the engine has an address space and leaves
    any other case to the memory system: a VA past the root's entries and an engine without an address space
    fault the first packet the same way on both paths."""
    inline = _va_program(busy=False, root_entries=root_entries, rootless=rootless)
    later = _va_program(busy=True, root_entries=root_entries, rootless=rootless)
    assert inline == later
    _, executed, fault, fence = inline
    assert executed == [] and fence == 0
    assert fault is not None and fault[:2] == (FaultKind.PAGE_FAULT, 0) and reason in fault[2]


@pytest.mark.parametrize("fast", [True, False], ids=["inline copy", "general copy"])
def test_inline_page_list_copies_and_write_qwords_share_durations_that_follow_the_cost_model(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An inline page-list COPY (decision 0204) takes its duration from the table WRITE_QWORDS keep by bytes and
    PCIe (decision 0213): each packet's duration is the cost model's for its own size, under a replaced model too,
    and the same as the general path's."""
    from wddmsim.hw import engine as engine_module
    from wddmsim.hw.cost import CostModel

    monkeypatch.setattr(engine_module, "fast_paged_copy", fast)
    gpu = small_gpu()
    engine = gpu.engines[0]
    inline: list[bool | None] = []
    paged_copy_now = engine._paged_copy_now

    def spy(*args: object) -> bool | None:
        inline.append(paged_copy_now(*args))  # type: ignore[arg-type]
        return inline[-1]

    monkeypatch.setattr(engine, "_paged_copy_now", spy)
    one = np.array([cmd.extent(0x300, 1)], dtype=np.uint64)
    system = hw_address(Space.SYSTEM, 0x200000)
    packets: list[cmd.Packet] = [
        cmd.Copy(local(0), 0, 24, dst_pages=True, extents=one),  # 24 bytes over PCIe ...
        cmd.WriteQwords(system, 3, np.arange(3, dtype=np.uint64)),  # ... as these 3 words
        cmd.Copy(local(0), 0, PAGE_SIZE, dst_pages=True, extents=one),
        cmd.WriteQwords(local(0x1000), 3, np.arange(3, dtype=np.uint64)),  # 24 bytes, local
    ]
    sizes = [(24, True), (24, True), (PAGE_SIZE, True), (24, False)]
    models = (engine.cost, CostModel(packet_overhead_ns=1000, pcie_bandwidth=1e9, local_bandwidth=2e9), engine.cost)
    gpu.local.view[0:PAGE_SIZE] = bytes([7]) * PAGE_SIZE
    for fence, model in enumerate(models, start=1):
        engine.cost = model
        start = gpu.clock.now
        run(gpu, packets, fence)
        times = [e.time for e in gpu.events if type(e).__name__ == "PacketExecuted" and e.fence == fence]  # type: ignore[attr-defined]
        durations = [b - a for a, b in zip([start, *times], times, strict=False)]
        assert durations == [model.transfer_ns(size, crosses_pcie=pcie) for size, pcie in sizes]
    assert durations[2] == models[0].transfer_ns(PAGE_SIZE, crosses_pcie=True) > durations[0]
    assert inline == ([True] * 6 if fast else [])
    assert gpu.system.view[0x300000 : 0x300000 + PAGE_SIZE].tobytes() == bytes([7]) * PAGE_SIZE
