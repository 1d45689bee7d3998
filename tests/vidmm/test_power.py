"""Power transitions (decision 0045; conformance rows 58 and 100): the purge matrix of the three Preserved*
flags, what the driver reports, and a sleep or hibernate that every byte survives."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.caps import DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO
from wddmsim.ddi.power import DEVICE_POWER_STATE, DISPLAY_ADAPTER_HW_ID, POWER_ACTION
from wddmsim.ddi.segments import (
    DXGK_QUERYSEGMENTOUT3,
    DXGK_QUERYSEGMENTOUT4,
    DXGK_SEGMENTDESCRIPTOR4,
    DXGK_SEGMENTFLAGS,
)
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.hw import commands as cmd
from wddmsim.hw.gpu import POWER_LOSS_PATTERN, Gpu
from wddmsim.kmd.allocations import AllocationUsage
from wddmsim.kmd.config import DriverModel
from wddmsim.testing.fakes import DelegatingDriver
from wddmsim.testing.residency import backing_bytes
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.errors import DeviceRemoved
from wddmsim.vidmm.events import AdapterPowerState, PageTablesEvicted, PageTablesRestored, VidMmEvict
from wddmsim.vidmm.power import PowerKind, Purge, purge_rule, purged_from

from .test_work import Proc, va
from .world import SMALL_GPU, World, pattern

K, P, X = Purge.KEPT, Purge.PARTIAL, Purge.PURGED
MATRIX = {  # (PreservedDuringStandby, PreservedDuringHibernate, PartiallyPreservedDuringHibernate)
    (1, 1, 1): None,
    (1, 1, 0): (K, K),
    (1, 0, 1): (K, P),
    (1, 0, 0): (K, X),
    (0, 1, 1): None,
    (0, 1, 0): None,
    (0, 0, 1): None,
    (0, 0, 0): (X, X),
}


def _descriptor(flags: tuple[int, int, int], *, end: int = 0x1F_FFFF, size: int = 4 * MiB) -> DXGK_SEGMENTDESCRIPTOR4:
    standby, hibernate, partial = flags
    return DXGK_SEGMENTDESCRIPTOR4(
        Flags=DXGK_SEGMENTFLAGS(
            PreservedDuringStandby=bool(standby),
            PreservedDuringHibernate=bool(hibernate),
            PartiallyPreservedDuringHibernate=bool(partial),
        ),
        BaseAddress=0,
        Size=size,
        CommitLimit=size,
        SystemMemoryEndAddress=end,
    )


@pytest.mark.parametrize("flags", list(itertools.product((1, 0), repeat=3)), ids=lambda f: "".join(map(str, f)))
def test_the_purge_matrix_follows_the_three_preserved_flags(flags: tuple[int, int, int]) -> None:
    """DXGK_SEGMENTFLAGS remarks: four valid combinations; the other four are refused, naming the flags."""
    expected = MATRIX[flags]
    descriptor = _descriptor(flags)
    if expected is None:
        with pytest.raises(InvalidArgument, match="segment 2 Flags=0x") as error:
            purge_rule(2, descriptor)
        assert error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
        return
    assert purge_rule(2, descriptor) == expected
    starts = {Purge.KEPT: None, Purge.PURGED: 0, Purge.PARTIAL: 0x20_0000}
    assert purged_from(descriptor, 2, PowerKind.STANDBY) == starts[expected[0]]
    assert purged_from(descriptor, 2, PowerKind.HIBERNATE) == starts[expected[1]]
    assert purged_from(descriptor, 2, PowerKind.HYBRID_SLEEP) == starts[expected[1]], "hybrid sleep = hibernate"


@pytest.mark.parametrize("end", [0, 4 * MiB - 1, 4 * MiB, 8 * MiB])
def test_a_partially_preserved_segment_needs_its_system_memory_end_inside_it(end: int) -> None:
    with pytest.raises(InvalidArgument, match=f"SystemMemoryEndAddress={end:#x}"):
        purge_rule(1, _descriptor((1, 0, 1), end=end))


def test_an_aperture_segment_is_never_purged() -> None:
    aperture = dataclasses.replace(_descriptor((0, 0, 0)), Flags=DXGK_SEGMENTFLAGS(Aperture=True))
    assert purged_from(aperture, 3, PowerKind.HIBERNATE) is None


KEEPS: dict[str, dict[str, Any]] = {
    "nothing": {},
    "standby": {"vram_kept_in_standby": True},
    "partly": {"vram_kept_in_standby": True, "vram_kept_in_hibernate": 4 * MiB},
    "everything": {"vram_kept_in_standby": True, "vram_kept_in_hibernate": 8 * MiB},
}


@pytest.mark.parametrize("keeps", KEEPS)
def test_the_driver_reports_what_its_gpu_keeps(keeps: str) -> None:
    """The reference driver's flags say truthfully what the GPU's memory keeps: segment 1 is [0, 2 MiB) of local
    memory, segment 2 starts at 2 MiB; 4 MiB kept in hibernate keeps segment 1 whole and segment 2 in part."""
    w = World(gpu=dataclasses.replace(SMALL_GPU, **KEEPS[keeps]))
    flags = {s.id: s.descriptor for s in w.vidmm.spaces}
    expected = {
        "nothing": ((X, X), (X, X)),
        "standby": ((K, X), (K, X)),
        "partly": ((K, K), (K, P)),
        "everything": ((K, K), (K, K)),
    }[keeps]
    assert (purge_rule(1, flags[1]), purge_rule(2, flags[2])) == expected
    assert flags[2].SystemMemoryEndAddress == (2 * MiB - 1 if keeps == "partly" else 0)
    out = DXGK_QUERYSEGMENTOUT3()  # the WDDM 1.2 query carries SystemMemoryEndAddress too
    query = DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT3
    w.adapter.driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=query, pOutputData=out))
    out.pSegmentDescriptor = []
    w.adapter.driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=query, pOutputData=out))
    assert [d.SystemMemoryEndAddress for d in out.pSegmentDescriptor] == [
        flags[i].SystemMemoryEndAddress for i in (1, 2, 3)
    ]
    assert [d.Flags for d in out.pSegmentDescriptor] == [flags[i].Flags for i in (1, 2, 3)]


class BadPowerFlagsDriver(DelegatingDriver):
    """Reports PreservedDuringHibernate without PreservedDuringStandby on segment 2."""

    def query_adapter_info(self, args: DXGKARG_QUERYADAPTERINFO) -> NTSTATUS:
        status = self.inner.query_adapter_info(args)
        out = args.pOutputData
        if isinstance(out, DXGK_QUERYSEGMENTOUT4) and out.pSegmentDescriptor:
            d = out.pSegmentDescriptor[1]
            out.pSegmentDescriptor[1] = dataclasses.replace(
                d, Flags=DXGK_SEGMENTFLAGS.from_value(d.Flags.Value | 1 << 8)
            )
        return status


def test_vidmm_refuses_invalid_power_flags_when_it_starts() -> None:
    with pytest.raises(InvalidArgument, match=r"segment 2 Flags=0x\w+: PreservedDuringHibernate and"):
        World(wrap_driver=BadPowerFlagsDriver)


def test_the_gpu_loses_what_its_memory_does_not_keep() -> None:
    gpu = Gpu(dataclasses.replace(SMALL_GPU, vram_kept_in_standby=True, vram_kept_in_hibernate=4 * MiB))
    data = pattern(8 * MiB, 5)
    gpu.local.write(0, data.tobytes())
    gpu.power_down(hibernate=False)
    assert np.array_equal(np.frombuffer(gpu.local.read(0, 8 * MiB), np.uint8), data), "standby keeps it all"
    gpu.power_down(hibernate=True)
    after = np.frombuffer(gpu.local.read(0, 8 * MiB), np.uint8)
    assert np.array_equal(after[: 4 * MiB], data[: 4 * MiB])
    assert set(after[4 * MiB :].view("<u4").tolist()) == {POWER_LOSS_PATTERN}


@pytest.mark.parametrize(
    ("standby", "kept", "rule"),
    [
        (False, 4 * MiB, "kept in standby too"),
        (True, 12345, "multiple of 64 KiB"),
        (True, 16 * MiB, "within local memory"),
    ],
)
def test_gpu_memory_kept_in_hibernate_must_be_kept_in_standby_and_whole(standby: bool, kept: int, rule: str) -> None:
    config = dataclasses.replace(SMALL_GPU, vram_kept_in_standby=standby, vram_kept_in_hibernate=kept)
    with pytest.raises(ConfigurationError, match=f"vram_kept_in_hibernate={kept}: .*{rule}"):
        Gpu(config)


def _scene(w: World) -> dict[str, VidMmAllocation]:
    """Allocations in the CPU-visible segment, low and high in the other one, in the aperture, and evicted."""
    seg2 = w.vidmm.spaces.get(2)
    scene = {
        "visible": w.buffer(64 * KiB, usage=AllocationUsage.CPU_VISIBLE),
        "low": w.buffer(64 * KiB),
        "filler": w.buffer(2 * MiB),
        "high": w.buffer(64 * KiB),
        "aperture": w.buffer(64 * KiB, usage=AllocationUsage.APERTURE_ONLY),
        "parked": w.buffer(64 * KiB),
    }
    for i, a in enumerate(scene.values()):
        w.make_resident(a)
        w.write(a, pattern(a.size, i))
    w.evict(scene["parked"])
    assert scene["visible"].placement is not None and scene["visible"].placement.segment_id == 1
    low, high = scene["low"].placement, scene["high"].placement
    assert low is not None and high is not None and low.segment_id == high.segment_id == seg2.id
    assert low.offset + 64 * KiB <= 2 * MiB <= high.offset, "one on each side of SystemMemoryEndAddress"
    return scene


LOCAL = {"visible", "low", "filler", "high"}
EVICTED: dict[str, dict[PowerKind, set[str]]] = {  # what leaves, by what the GPU keeps and the transition
    "nothing": {PowerKind.STANDBY: LOCAL, PowerKind.HIBERNATE: LOCAL},
    "standby": {PowerKind.STANDBY: set(), PowerKind.HIBERNATE: LOCAL},
    "partly": {PowerKind.STANDBY: set(), PowerKind.HIBERNATE: {"filler", "high"}},
    "everything": {PowerKind.STANDBY: set(), PowerKind.HIBERNATE: set()},
}


@pytest.mark.parametrize("model", [DriverModel.WDDM2, DriverModel.WDDM1], ids=["wddm2", "wddm1"])
@pytest.mark.parametrize("kind", list(PowerKind), ids=str)
@pytest.mark.parametrize("keeps", KEEPS)
def test_every_byte_survives_a_power_transition(keeps: str, kind: PowerKind, model: DriverModel) -> None:
    w = World(gpu=dataclasses.replace(SMALL_GPU, **KEEPS[keeps]), model=model)
    scene = _scene(w)
    before = {name: a.placement for name, a in scene.items()}
    start = len(w.adapter.events)
    report = w.vidmm.power_transition(kind)
    expected = EVICTED[keeps][PowerKind.HIBERNATE if kind == PowerKind.HYBRID_SLEEP else kind]  # purged alike
    evicted = {n for n, a in scene.items() if before[n] is not None and a.placement is None}
    assert evicted == expected
    assert report.evicted == len(expected)
    assert all(scene[n].placement == before[n] for n in scene if n not in expected), "kept ranges stay put"
    events = w.adapter.events.since(start)
    power = [e for e in events if isinstance(e, AdapterPowerState)]
    assert [(e.state, e.kind) for e in power] == [("D3", kind.value), ("D0", kind.value)]
    evictions = [e for e in events if isinstance(e, VidMmEvict)]
    assert {e.allocation for e in evictions} == {scene[n].handle for n in expected}
    assert all(e.cause == "power" and e.time <= power[0].time for e in evictions), "out before D3"
    for i, (name, a) in enumerate(scene.items()):
        if a.placement is None:
            assert np.array_equal(backing_bytes(w.adapter, a), pattern(a.size, i)), f"{name}: its backing store"
    w.make_resident(*scene.values())
    for i, (name, a) in enumerate(scene.items()):
        assert np.array_equal(w.read(a), pattern(a.size, i)), f"{name} after the wake"
    w.check()


def test_a_purge_really_loses_what_vidmm_left_in_place() -> None:
    """The negative control: an allocation VidMm did not move out reads the power-loss pattern afterwards."""
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    w.write(a, pattern(a.size, 1))
    placement = a.placement
    assert placement is not None
    w.vidmm.residency.outages.power_down = lambda purged: []  # type: ignore[method-assign]
    w.vidmm.power_transition("standby")
    base = w.vidmm.spaces.get(placement.segment_id).base + placement.offset
    lost = np.frombuffer(w.adapter.gpu.local.read(base, a.size), np.uint8)
    assert set(lost.view("<u4").tolist()) == {POWER_LOSS_PATTERN}


def test_page_tables_leave_before_the_power_down_and_return_before_the_process_runs() -> None:
    w = World()
    p = Proc(w, w.device)
    src, src_va = p.buffer(64 * KiB)
    dst, dst_va = p.buffer(64 * KiB)
    w.write(src, pattern(src.size, 3))
    start = len(w.adapter.events)
    report = w.vidmm.power_transition(PowerKind.HIBERNATE)
    assert report.trees == 1 and p.space.evicted
    assert [e.process for e in w.adapter.events.since(start) if isinstance(e, PageTablesEvicted)] == [
        int(p.device.process.handle)
    ]
    start = len(w.adapter.events)
    p.run(cmd.Copy(va(src_va), va(dst_va), 64 * KiB))
    assert any(isinstance(e, PageTablesRestored) for e in w.adapter.events.since(start))
    assert np.array_equal(w.read(dst), pattern(src.size, 3))
    w.check()


def test_the_paging_process_tables_are_copied_out_and_written_back() -> None:
    """Pinned at all other times, evicted across a power transition (DOC:system-paging-process); without the
    write-back the next move through the scratch area faults."""
    w = World()
    process = w.vidmm.paging_process
    assert process is not None
    tables = {key: mapping.data.copy() for key, (_, mapping) in process.tables.items()}
    a = w.buffer(64 * KiB)
    report = w.vidmm.power_transition("hibernate")
    assert report.paging_tables == len(tables)
    assert all(np.array_equal(process.tables[k][1].data, v) for k, v in tables.items())
    w.make_resident(a)  # a Fill through the scratch area
    assert np.array_equal(w.read(a), np.zeros(a.size, np.uint8))

    broken = World()
    assert broken.vidmm.paging_process is not None
    broken.vidmm.paging_process.restore_tables = lambda saved: None  # type: ignore[method-assign]
    b = broken.buffer(64 * KiB)
    broken.vidmm.power_transition("hibernate")
    with pytest.raises(DeviceRemoved, match="node 0 reported a fault"):  # the Fill's scratch walk faults
        broken.make_resident(b)
    assert broken.vidmm.reset.count == 1


def test_pinned_and_context_allocations_are_back_at_the_wake() -> None:
    w = World()
    pinned = w.buffer(64 * KiB)
    w.make_resident(pinned)
    w.write(pinned, pattern(pinned.size, 9))
    w.vidmm.residency.lifetimes.pin(pinned.handle)
    w.vidmm.create_context(w.device)
    images = [a for a in w.rm.allocations.values() if a.context]
    assert images and all(a.placement is not None for a in images)
    report = w.vidmm.power_transition("standby")
    assert report.restored == 1 + len(images)
    assert pinned.placement is not None and all(a.placement is not None for a in images)
    assert np.array_equal(w.read(pinned), pattern(pinned.size, 9))
    w.check()


def test_bad_power_requests_are_refused_and_change_nothing() -> None:
    w = World()
    a = w.buffer(64 * KiB)
    w.make_resident(a)
    start = len(w.adapter.events)
    with pytest.raises(InvalidArgument, match="kind='nap': must be one of standby, hibernate, hybrid_sleep"):
        w.vidmm.power_transition("nap")
    assert not w.adapter.events.since(start) and a.placement is not None
    driver = w.adapter.driver
    with pytest.raises(DdiError) as error:
        driver.set_power_state(DISPLAY_ADAPTER_HW_ID, 9, POWER_ACTION.PowerActionSleep)  # type: ignore[arg-type]
    assert error.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    with pytest.raises(DdiError, match="PowerDeviceUnspecified"):
        driver.set_power_state(
            DISPLAY_ADAPTER_HW_ID, DEVICE_POWER_STATE.PowerDeviceUnspecified, POWER_ACTION.PowerActionSleep
        )
    data = w.read(a).copy()
    child = driver.set_power_state(7, DEVICE_POWER_STATE.PowerDeviceD3, POWER_ACTION.PowerActionHibernate)
    assert child == NTSTATUS.STATUS_SUCCESS and np.array_equal(w.read(a), data), "a child device: nothing happens"
