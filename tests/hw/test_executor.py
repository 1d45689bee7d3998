"""The pluggable executor seam: a submission that names an executor is carried out by it, on the simulated clock,
in submission order, through the GpuServices table -- and whatever it does wrong faults the engine."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import pytest

from wddmsim.core.units import PAGE_SIZE, MiB
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.aperture import gart_entry
from wddmsim.hw.engine import EXECUTOR_OPCODE, EngineState, InterruptKind, Submission
from wddmsim.hw.faults import FaultKind
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.hw.services import GpuServiceError, GpuServices
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

BUFFER = 0x100000
"""Where the tests place their command logs in system memory."""
RECORD = struct.Struct("<IIQQQ")
"""One record of the test's private command log: opcode, pad, a, b, c."""
COPY_LOCAL, TO_SYSTEM, FROM_SYSTEM, MAP_APERTURE, SIGNAL = 1, 2, 3, 4, 5


def small_gpu() -> Gpu:
    return Gpu(GpuConfig(local_size=64 * MiB, bar_size=16 * MiB, system_size=64 * MiB, aperture_size=16 * MiB))


@dataclass
class LogExecutor:
    """A driver's software command log, replayed: each record copies, maps an aperture page or signals."""

    seen: list[tuple[int, bytes | None]] = field(default_factory=list)
    """(time, private data) of each buffer it carried out."""
    clock_now: object = None

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> None:
        self.seen.append((0, None if private_data is None else bytes(private_data)))
        for offset in range(0, len(buffer), RECORD.size):
            op, _, a, b, c = RECORD.unpack_from(buffer, offset)
            if op == COPY_LOCAL:
                services.write_local(b, services.read_local(a, c))
            elif op == TO_SYSTEM:
                services.write_system(b, services.read_local(a, c))
            elif op == FROM_SYSTEM:
                services.write_local(b, services.read_system(a, c))
            elif op == MAP_APERTURE:
                services.set_aperture_entry(a, b)
            elif op == SIGNAL:
                services.write_u64(a, b, interrupt=bool(c))
            else:
                raise ValueError(f"record at {offset}: opcode {op} is not in the log format")


def log(*records: tuple[int, int, int, int]) -> bytes:
    return b"".join(RECORD.pack(op, 0, a, b, c) for op, a, b, c in records)


def submit_log(
    gpu: Gpu, data: bytes, fence: int, executor: object, *, at: int = BUFFER, private: bytes | None = None
) -> None:
    gpu.system.write(at, data)
    gpu.engines[0].submit(
        Submission(hw_address(Space.SYSTEM, at), len(data), fence, executor=executor, private_data=private)  # type: ignore[arg-type]
    )


def test_effects_land_when_the_engine_runs_the_buffer_not_when_it_is_submitted() -> None:
    gpu = small_gpu()
    gpu.local.write(0x1000, b"payload!")
    executor = LogExecutor()
    submit_log(gpu, log((COPY_LOCAL, 0x1000, 0x2000, 8), (TO_SYSTEM, 0x1000, 0x9000, 8)), 7, executor, private=b"mine")
    assert gpu.local.read(0x2000, 8) == bytes(8)  # submitted, not yet executed
    assert executor.seen == []
    gpu.clock.run_all()
    assert gpu.local.read(0x2000, 8) == b"payload!"
    assert gpu.system.read(0x9000, 8) == b"payload!"
    assert executor.seen == [(0, b"mine")]
    assert gpu.engines[0].completed_fence == 7
    assert [(i.kind, i.value) for i in gpu.interrupts] == [(InterruptKind.COMPLETION, 7)]
    names = [type(e).__name__ for e in gpu.events]
    assert names == ["DmaBufferStarted", "PacketExecuted", "DmaBufferCompleted"]
    executed = next(e for e in gpu.events if type(e).__name__ == "PacketExecuted")
    assert executed.opcode == EXECUTOR_OPCODE  # type: ignore[attr-defined]
    assert executed.time == gpu.config.cost.packet_overhead_ns


def test_an_executor_buffer_runs_behind_earlier_buffers_in_submission_order() -> None:
    gpu = small_gpu()
    # Buffer 1 (decoded): a long fill, then a copy that reads aperture page 0 -- mapped to frame 0x200 now.
    gpu.aperture.entries[0] = gart_entry(0x200)
    gpu.system.write(0x200 * PAGE_SIZE, b"old page")
    gpu.system.write(0x201 * PAGE_SIZE, b"new page")
    aperture0 = hw_address(Space.GPU_PHYS, gpu.aperture.base)
    packets: list[cmd.Packet] = [
        cmd.Fill(hw_address(Space.GPU_PHYS, 0x10000), 4 * MiB, 0x5A5A5A5A),
        cmd.Copy(aperture0, hw_address(Space.GPU_PHYS, 0x3000), 8),
    ]
    data = b"".join(cmd.encode(p) for p in packets)
    gpu.system.write(BUFFER, data)
    gpu.engines[0].submit(Submission(hw_address(Space.SYSTEM, BUFFER), len(data), 1))
    # Buffer 2 (the executor's), submitted while buffer 1 is queued: it remaps the page and copies the fill.
    executor = LogExecutor()
    records = log(
        (MAP_APERTURE, 0, 0x201, 0), (COPY_LOCAL, 0x10000, 0x4000, 4), (SIGNAL, hw_address(Space.SYSTEM, 0x8000), 2, 1)
    )
    submit_log(gpu, records, 2, executor, at=BUFFER + 0x1000)
    gpu.clock.run_all()
    assert gpu.local.read(0x3000, 8) == b"old page"  # the remap did not overtake the copy queued before it
    assert gpu.local.read(0x4000, 4) == b"ZZZZ"  # the executor ran after the fill
    assert int(gpu.system.u64[0x8000 // 8]) == 2
    assert [(i.kind, i.value) for i in gpu.interrupts] == [
        (InterruptKind.COMPLETION, 1),
        (InterruptKind.SIGNAL, 2),
        (InterruptKind.COMPLETION, 2),
    ]
    starts = [e.time for e in gpu.events if type(e).__name__ == "DmaBufferStarted"]
    ends = [e.time for e in gpu.events if type(e).__name__ == "DmaBufferCompleted"]
    assert starts[1] >= ends[0]


def test_the_time_an_executor_reports_delays_its_completion() -> None:
    gpu = small_gpu()
    submit_log(gpu, log(), 3, lambda buffer, private, services: 5000)
    gpu.clock.run_all()
    done = next(e for e in gpu.events if type(e).__name__ == "DmaBufferCompleted")
    assert done.time == gpu.config.cost.packet_overhead_ns + 5000
    assert gpu.engines[0].completed_fence == 3


@pytest.mark.parametrize(
    ("executor", "reason"),
    [
        (LogExecutor(), "LogExecutor raised ValueError: record at 0: opcode 99"),
        (lambda buffer, private, services: "soon", "returned 'soon': must be None or nanoseconds >= 0"),
        (lambda buffer, private, services: -1, "returned -1"),
    ],
)
def test_an_executor_that_fails_faults_its_engine_and_a_reset_recovers(executor: object, reason: str) -> None:
    gpu = small_gpu()
    submit_log(gpu, log((99, 0, 0, 0)), 4, executor)
    follower = LogExecutor()
    submit_log(gpu, log((COPY_LOCAL, 0, 0x100, 8)), 5, follower, at=BUFFER + 0x1000)
    with campaign.case("executor") as box:
        gpu.clock.run_all()
    engine = gpu.engines[0]
    assert engine.state == EngineState.HALTED
    assert engine.fault is not None
    assert engine.fault.kind == FaultKind.INVALID_INSTRUCTION and engine.fault.fence == 4
    assert reason in engine.fault.reason
    assert [i.kind for i in gpu.interrupts] == [InterruptKind.FAULT]
    assert follower.seen == [] and engine.completed_fence == 0  # nothing runs behind a fault
    box.append(Outcome.REFUSED)
    gpu.reset()
    submit_log(gpu, log((COPY_LOCAL, 0, 0x100, 8)), 6, follower, at=BUFFER + 0x1000)
    gpu.clock.run_all()
    assert engine.completed_fence == 6 and len(follower.seen) == 1


def test_a_services_fault_the_executor_does_not_handle_is_a_bus_error() -> None:
    gpu = small_gpu()
    submit_log(gpu, log((COPY_LOCAL, 64 * MiB - 4, 0, 8)), 8, LogExecutor())
    gpu.clock.run_all()
    fault = gpu.engines[0].fault
    assert fault is not None
    assert fault.kind == FaultKind.BUS_ERROR
    assert "read_local: address=0x3fffffc" in fault.reason and "must lie within local memory" in fault.reason


def test_a_reset_drops_an_executor_buffer_that_has_not_run() -> None:
    gpu = small_gpu()
    executor = LogExecutor()
    submit_log(gpu, log(), 9, executor)
    gpu.clock.step()  # the buffer starts
    gpu.reset()
    gpu.clock.run_all()
    assert executor.seen == [] and gpu.engines[0].completed_fence == 0


BAD_CALLS = [
    ("read_local", lambda s: s.read_local(64 * MiB - 4, 8), "address"),
    ("read_local", lambda s: s.read_local(-1, 1), "address"),
    ("write_local", lambda s: s.write_local(64 * MiB, b"x"), "address"),
    ("local_view", lambda s: s.local_view(0, -1), "length"),
    ("read_system", lambda s: s.read_system(64 * MiB - 1, 2), "address"),
    ("write_system", lambda s: s.write_system(1 << 40, b"x"), "address"),
    ("set_aperture_entry", lambda s: s.set_aperture_entry(4096, 1), "page"),
    ("set_aperture_entry", lambda s: s.set_aperture_entry(0, 64 * MiB // PAGE_SIZE), "pfn"),
    ("clear_aperture_entry", lambda s: s.clear_aperture_entry(-1), "page"),
    ("write_u64", lambda s: s.write_u64(hw_address(Space.GPU_PHYS, 0x1004), 1), "address"),
    ("write_u64", lambda s: s.write_u64(hw_address(Space.GPU_PHYS, 0x1000), 1 << 64), "value"),
    ("page_table_view", lambda s: s.write_page_table(Target.LOCAL, 0x1001, bytes(8)), "address"),
    ("page_table_view", lambda s: s.read_page_table(Target.SYSTEM, 0x1000, 7), "length"),
    ("page_table_view", lambda s: s.read_page_table(Target.SYSTEM, 64 * MiB, 8), "address"),
    ("invalidate_tlb", lambda s: s.invalidate_tlb(TablePointer(Target.LOCAL, 64 * MiB)), "root"),
]


@pytest.mark.parametrize(("call", "action", "argument"), BAD_CALLS)
def test_a_bad_services_call_is_refused_naming_its_argument_and_changes_nothing(
    call: str, action: object, argument: str
) -> None:
    gpu = small_gpu()
    services = gpu.engines[0].services
    local, system, table = gpu.local.data.copy(), bytes(gpu.system.read(0, 64 * 1024)), gpu.aperture.entries.copy()
    with campaign.case("gpu_services") as box:
        with pytest.raises(GpuServiceError) as caught:
            action(services)  # type: ignore[operator]
        box.append(Outcome.REFUSED)
    error = caught.value
    assert (error.call, error.argument) == (call, argument)
    assert str(error).startswith(f"{call}: {argument}=")
    assert error.kind == FaultKind.BUS_ERROR
    assert (gpu.local.data == local).all() and gpu.system.read(0, 64 * 1024) == system
    assert (gpu.aperture.entries == table).all()
    assert gpu.interrupts == []


def test_the_services_reach_every_part_of_the_machine() -> None:
    gpu = small_gpu()
    services = gpu.engines[0].services
    assert services.local_base == gpu.local.host_address and services.local_size == 64 * MiB
    services.write_local(0x10, b"vram")
    assert gpu.local.read(0x10, 4) == b"vram" and services.read_local(0x10, 4) == b"vram"
    services.write_system(0x2000, b"ram")
    assert gpu.system.read(0x2000, 3) == b"ram" and services.read_system(0x2000, 3) == b"ram"
    services.set_aperture_entry(3, 0x42, snoop=True)
    assert services.aperture_entry(3) == gart_entry(0x42, snoop=True) == int(gpu.aperture.entries[3])
    services.clear_aperture_entry(3)
    assert int(gpu.aperture.entries[3]) == 0
    services.write_u64(hw_address(Space.SYSTEM, 0x3000), 0xFFFF_FFFF_FFFF_FFFF, interrupt=True)
    assert gpu.system.read(0x3000, 8) == b"\xff" * 8
    assert [(i.kind, i.value) for i in gpu.interrupts] == [(InterruptKind.SIGNAL, 0xFFFF_FFFF_FFFF_FFFF)]
    services.write_page_table(Target.LOCAL, 0x8000, (0x1234).to_bytes(8, "little"))
    assert services.read_page_table(Target.LOCAL, 0x8000, 8) == (0x1234).to_bytes(8, "little")
    root = TablePointer(Target.LOCAL, 0x8000)
    gpu.mmu.tlb[root] = {}
    services.invalidate_tlb(root, 0, 0)
    services.invalidate_tlb()
    assert gpu.mmu.tlb == {}
    campaign.record("gpu_services", Outcome.ACCEPTED, 9)
