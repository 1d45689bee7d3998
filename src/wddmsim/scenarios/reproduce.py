"""Classic results reproduced through the whole VidMm path (issue 22, decision 0148): ``wddmsim reproduce NAME``.

Each reference of a reference string is what an application does when it needs an allocation for a while and
then no longer: ``pfnMakeResidentCb`` on it (waiting on the paging fence when VidMm answers ``E_PENDING``), then
``pfnEvictCb`` with ``EvictOnlyIfNecessary`` -- VidMm may keep it, and evicts it only when room is needed.  The
allocations are real: created through ``DxgkDdiCreateAllocation`` by the reference driver, placed by VidMm's
residency manager, zero-filled on their first use and copied out and back in by paging buffers the driver builds
with ``DxgkDdiBuildPagingBuffer`` and the simulated GPU executes.  The eviction policy under test is VidMm's own,
from the policy registry; Belady's MIN is given the uses an earlier run of the same string reported
(:class:`~wddmsim.vidmm.policy.offline.UseRecorder`), as ``wddmsim replay TRACE --policy min`` does.

So that the counts are exactly the allocations' faults (decision 0148): the driver presents the GPU in the WDDM
1.x segment model by default (no page tables anywhere; on WDDM 2.x the paging process's tables live in the
CPU-visible segment 1); paging buffers live in system memory (``PagingBufferSegmentId`` 0) and fences in VidMm's
fence area; no context is created, so no context allocation; and the allocations are placed by
:class:`DedicatedSegment`, which offers them only segment 2, sized to exactly ``capacity`` allocations.  Every
run checks, from the event log, that each page-in was one of the string's allocations into segment 2, that
nothing else ever took a range there, and that every fault past the first ``capacity`` evicted exactly one
allocation; then it destroys the process and checks that the adapter holds what it held before.

A fault is a ``VidMmPageIn`` event of VidMm's event log (first touches included, as Belady counted them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, final

from wddmsim.core.errors import ConfigurationError, WddmsimError
from wddmsim.core.units import KiB, MiB
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDI_MAKERESIDENT_FLAGS,
    D3DDDICB_EVICT,
)
from wddmsim.ddi.status import HRESULT
from wddmsim.drivers.package import DriverModel, DriverSettings
from wddmsim.drivers.registry import driver_package
from wddmsim.drivers.resources import ResourceDesc, ResourceKind
from wddmsim.hw.gpu import GpuConfig
from wddmsim.system import Adapter, SystemConfig, build_adapter
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.config import VidMmConfig
from wddmsim.vidmm.device import PagingQueue
from wddmsim.vidmm.events import SegmentRange, VidMmEvict, VidMmPageIn
from wddmsim.vidmm.policy import BasePlacement, Belady, EvictionPolicy, Rung, SegmentView, UseRecorder, VictimClass
from wddmsim.vidmm.policy import registry as policies

ALLOCATION_SIZE: Final = 64 * KiB
"""Every allocation of a reference string: one 64 KiB unit, so segment sizes stay on the GPU's 64 KiB grain."""
DEDICATED: Final = 2
"""The memory segment the allocations live in (the reference driver's local segment the CPU cannot see)."""
_CPU_VISIBLE: Final = 256 * KiB
"""Segment 1: room for the paging process's page tables on WDDM 2.x (never offered to the allocations)."""
_APERTURE: Final = 1 * MiB
"""The aperture segment: small, and never offered to the allocations either."""


_EPSILON: Final = 1e-12
"""Rounding of a rate computed in floating point."""


class ReproductionError(WddmsimError):
    """A reproduction could not count what it claims to: the configuration let something else into the count."""


@final
class DedicatedSegment(BasePlacement):
    """Placement for a reproduction: segment :data:`DEDICATED` only -- free room, then unreferenced victims, then
    listed ones -- and no demotion (decision 0148).  VidMm's own objects keep the mechanism's ladder."""

    name = "dedicated"

    def rungs(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[Rung]:
        if DEDICATED not in {s.id for s in candidates}:
            return []  # the driver does not let this allocation into the segment: placing it elsewhere would count it
        return [Rung((DEDICATED,), v) for v in (VictimClass.NONE, VictimClass.UNREFERENCED, VictimClass.ANYONE)]

    def demotion(self, a: VidMmAllocation, candidates: Sequence[SegmentView]) -> list[int]:
        return []


@dataclass(frozen=True, slots=True)
class Counts:
    """What VidMm's event log says of one run of a reference string."""

    references: int
    faults: int
    """``VidMmPageIn`` events: first touches (zero fills) and page-ins (transfers from system memory)."""
    first_touches: int
    """Allocations paged in at least once (each one's first touch is a fault)."""
    evictions: int
    """``VidMmEvict`` events of cause ``pressure``: victims of the policy."""


def gpu_for(capacity: int) -> GpuConfig:
    """A GPU whose segment :data:`DEDICATED` holds exactly ``capacity`` allocations of :data:`ALLOCATION_SIZE`."""
    if capacity < 1:
        raise ConfigurationError("capacity", capacity, "must be at least one allocation")
    table = GpuConfig(aperture_size=_APERTURE).aperture_table_size  # the driver's hidden top of local memory
    return GpuConfig(
        local_size=_CPU_VISIBLE + capacity * ALLOCATION_SIZE + table,
        bar_size=_CPU_VISIBLE,
        aperture_size=_APERTURE,
        system_size=64 * MiB + 2 * capacity * ALLOCATION_SIZE,
    )


def run_string(
    references: Sequence[int],
    capacity: int,
    policy: EvictionPolicy,
    *,
    model: DriverModel = DriverModel.WDDM1,
    inspect: Callable[[Adapter], None] | None = None,
) -> Counts:
    """Run ``references`` (allocation numbers from 1) over room for ``capacity`` allocations under ``policy``,
    through the whole path; the counts from VidMm's event log, each checked (:class:`ReproductionError`).
    ``inspect`` is shown the adapter after the last reference, before the process is destroyed."""
    adapter = build_adapter(
        SystemConfig(
            gpu=gpu_for(capacity),
            driver_package="reference",
            driver=driver_package("reference").configure(DriverSettings(model=model)),
            vidmm=VidMmConfig(eviction_policy=policy, placement_policy=DedicatedSegment()),
        )
    )
    start = adapter.footprint()
    string = _String(adapter, max(references, default=0))
    for r in references:
        string.reference(r)
    counts = _counts(adapter, string.handles, len(references), capacity)
    if inspect is not None:
        inspect(adapter)
    adapter.vidmm.destroy_process(string.process)
    if adapter.footprint() != start:
        raise ReproductionError(f"the adapter holds more after the run than before: {adapter.footprint()} != {start}")
    return counts


class _String:
    """One process, one device, one paging queue and the allocations of a reference string."""

    def __init__(self, adapter: Adapter, count: int) -> None:
        self.adapter = adapter
        self.rm = adapter.vidmm.residency
        process = self.rm.create_process()
        self.process = process.handle
        self.device = self.rm.create_device(process)
        args = D3DDDI_CREATEPAGINGQUEUE(hDevice=self.device.handle, Priority=0)  # type: ignore[arg-type]
        self.rm.create_paging_queue(args)
        self.queue: PagingQueue = self.rm.objects.queue(args.hPagingQueue)
        desc = ResourceDesc(ResourceKind.BUFFER, size=ALLOCATION_SIZE)
        self.allocations = [
            self.rm.lifetimes.create_allocation(self.device, adapter.umd.encode(desc)) for _ in range(count)
        ]
        self.handles = frozenset(int(a.handle) for a in self.allocations)

    def reference(self, number: int) -> None:
        """``pfnMakeResidentCb`` (waiting on the paging fence), then ``pfnEvictCb(EvictOnlyIfNecessary)``."""
        a = self.allocations[number - 1]
        args = D3DDDI_MAKERESIDENT(
            hPagingQueue=self.queue.handle,
            NumAllocations=1,
            AllocationList=(a.handle,),
            Flags=D3DDDI_MAKERESIDENT_FLAGS(),
        )
        status = self.rm.make_resident(args)
        if status == HRESULT.E_PENDING:
            self.rm.wait(self.queue, args.PagingFenceValue)
        elif status != HRESULT.S_OK:
            raise ReproductionError(f"MakeResident of allocation {number} answered {status.name}")
        if a.placement is None:  # the policy gave no victim (a veto, an empty ranking): not a hit, not countable
            raise ReproductionError(
                f"allocation {number} is not resident after MakeResident: the policy made no room for it"
            )
        self.rm.evict(
            D3DDDICB_EVICT(
                hDevice=self.device.handle,
                NumAllocations=1,
                AllocationList=(a.handle,),
                Flags=D3DDDI_EVICT_FLAGS(EvictOnlyIfNecessary=True),
            )
        )


def _counts(adapter: Adapter, handles: frozenset[int], references: int, capacity: int) -> Counts:
    """Faults and evictions from the event log, with the checks that they are the string's and nothing else's."""
    page_ins = adapter.events.of_type(VidMmPageIn)
    for e in page_ins:
        if e.allocation not in handles or e.segment != DEDICATED:
            raise ReproductionError(f"a page-in of allocation {e.allocation:#x} into segment {e.segment} was counted")
    for r in adapter.events.of_type(SegmentRange):
        if r.segment == DEDICATED and (r.owner != "allocation" or r.allocation not in handles):
            raise ReproductionError(f"{r.owner} {r.label or hex(r.allocation)} took a range of the dedicated segment")
    evictions = [e for e in adapter.events.of_type(VidMmEvict) if e.cause == "pressure"]
    first = len({e.allocation for e in page_ins})
    if len(evictions) != len(page_ins) - min(first, capacity):
        raise ReproductionError(
            f"{len(page_ins)} faults over room for {capacity} made {len(evictions)} evictions, not "
            f"{len(page_ins) - min(first, capacity)}: the segment does not hold exactly {capacity} allocations"
        )
    return Counts(references, len(page_ins), first, len(evictions))


# -- the reproductions ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One policy on one case: our number beside the published one (None: printed only)."""

    case: str
    """The case's key (``3``: three frames; ``1.25``: n/k), as ``--expect POLICY@CASE=VALUE`` names it."""
    label: str
    policy: str
    ours: float
    published: float | None
    counts: Counts
    below: float = 0.0
    """How far under the published number ours may lie (a finite run of an asymptotic rate)."""
    above: float = 0.0

    @property
    def matched(self) -> bool | None:
        """None when there is nothing to compare with."""
        if self.published is None:
            return None
        return self.published - self.below - _EPSILON <= self.ours <= self.published + self.above + _EPSILON


@dataclass(frozen=True, slots=True)
class Reproduction:
    """The rows of one reproduction, and what they are."""

    name: str
    title: str
    source: str
    measure: str
    """What ``ours`` and ``published`` are: ``faults`` or ``miss rate`` (a fraction)."""
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()

    @property
    def compared(self) -> list[Row]:
        return [r for r in self.rows if r.published is not None]

    @property
    def mismatches(self) -> list[Row]:
        return [r for r in self.rows if r.matched is False]

    @property
    def matched(self) -> bool:
        """Every published number matched (and there was at least one to match)."""
        return bool(self.compared) and not self.mismatches


@dataclass(frozen=True, slots=True)
class Options:
    """What a reproduction may be told (``wddmsim reproduce`` options)."""

    others: Sequence[str] | None = None
    """Policies without a published number, printed beside the others (None: every registered online policy)."""
    loops: int = 11
    """``lru-cliff``: passes over the cycle (the first is compulsory misses only)."""
    model: DriverModel = DriverModel.WDDM1
    expect: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """Overrides of published numbers, by ``(policy, case)`` (a check that a mismatch is reported)."""
    on_run: Callable[[str], None] | None = None
    """Told before each run (``lru-cliff 1.25 fifo``): progress for the command line."""


@dataclass(frozen=True, slots=True)
class Spec:
    name: str
    summary: str
    run: Callable[[Options], Reproduction]
    cases: tuple[str, ...]
    """The cases' keys (what ``--expect POLICY@CASE=VALUE`` may name)."""


BELADY_STRING: Final = (1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5)
BELADY_PUBLISHED: Final[dict[int, dict[str, int]]] = {
    3: {"fifo": 9, "lru": 10, Belady.name: 7},
    4: {"fifo": 10, "lru": 8, Belady.name: 6},
}
"""Belady, Nelson and Shedler (1969): faults, first touches included."""
CLIFF_FACTORS: Final = (1.01, 1.1, 1.25, 1.5, 2.0, 4.0)
CLIFF_CAPACITY: Final = 100
MAX_LOOPS: Final = 1000
"""Passes over the cycle ``--loops`` may ask for: the default 11 take seconds, 1000 about ten minutes."""
PUBLISHED_POLICIES: Final = ("fifo", "lru", Belady.name)


def others_of(options: Options) -> list[str]:
    """The policies printed beside the published ones: every registered online one in registry order, or the
    names given (each checked, in their order)."""
    if options.others is None:
        return [n for n in policies.EVICTION if n not in PUBLISHED_POLICIES and not policies.offline(n)]
    chosen: list[str] = []
    for name in options.others:
        if name in PUBLISHED_POLICIES or name == policies.ALIAS_OF_OPT:
            continue  # always run
        if policies.offline(name):
            raise ConfigurationError(
                "--policy", name, f"is an offline policy: only {Belady.name} is given the future here"
            )
        policies.eviction_policy(name, "--policy")  # a bad name or module:Class is refused here, naming it
        chosen.append(name)
    return list(dict.fromkeys(chosen))


def _runs(
    references: Sequence[int], capacity: int, names: Sequence[str], options: Options, case: str
) -> dict[str, Counts]:
    """Each policy over the string; ``min`` is given the uses the ``lru`` run reported (recorded, then replayed)."""

    def run(name: str, policy: EvictionPolicy) -> Counts:
        if options.on_run is not None:
            options.on_run(f"{case}: {name}")
        return run_string(references, capacity, policy, model=options.model)

    uses: list[int] = []
    out = {"lru": run("lru", UseRecorder(policies.eviction_policy("lru"), uses))}
    for name in names:
        if name not in out and name != Belady.name:
            out[name] = run(name, policies.eviction_policy(name, "--policy"))
    belady = Belady(uses)
    out[Belady.name] = run(Belady.name, belady)
    if belady.diverged:
        raise ReproductionError(f"MIN's run diverged from the recorded uses at {belady.diverged} uses")
    return out


def _published(options: Options, policy: str, case: str, published: float | None) -> float | None:
    return options.expect.get((policy, case), published)


def belady_anomaly(options: Options) -> Reproduction:
    """FIFO faults more with four frames than with three; LRU and OPT (stack algorithms) do not."""
    names = [*PUBLISHED_POLICIES, *others_of(options)]
    rows = []
    for frames, published in BELADY_PUBLISHED.items():
        case = str(frames)
        runs = _runs(BELADY_STRING, frames, names, options, f"{frames} frames")
        for name in names:
            counts = runs[name]
            want = _published(options, name, case, published.get(name))
            rows.append(Row(case, f"{frames} frames", name, counts.faults, want, counts))
    return Reproduction(
        "belady-anomaly",
        "Belady's anomaly: reference string 1 2 3 4 1 2 5 1 2 3 4 5 over 3, then 4 frames",
        "Belady, Nelson and Shedler, CACM 12(6), 1969",
        "faults",
        tuple(rows),
        ("faults: VidMmPageIn events, first touches included; each frame is one 64 KiB allocation's room",),
    )


def lru_cliff(options: Options) -> Reproduction:
    """A cyclic scan of n allocations over room for k: LRU and FIFO miss every time, MIN (n-k)/(n-1) of them."""
    if not 2 <= options.loops <= MAX_LOOPS:
        raise ConfigurationError(
            "--loops",
            options.loops,
            f"must lie between 2 (the first pass is compulsory misses) and {MAX_LOOPS} (each pass runs every policy "
            "over up to 400 allocations)",
        )
    names = [*PUBLISHED_POLICIES, *others_of(options)]
    k = CLIFF_CAPACITY
    rows = []
    for factor in CLIFF_FACTORS:
        n = round(k * factor)
        case = f"{factor:g}"
        label = f"n/k={case}, n={n}"
        runs = _runs(tuple(range(1, n + 1)) * options.loops, k, names, options, label)
        steady = (options.loops - 1) * n  # references past the first pass: no compulsory miss among them
        exact = {"lru": 1.0, "fifo": 1.0, Belady.name: (n - k) / (n - 1)}
        for name in names:
            counts = runs[name]
            rate = (counts.faults - counts.first_touches) / steady
            # MIN's steady state misses n-k times in every n-1 references; a finite run falls short of that by
            # less than one such phase (n-k misses), and never exceeds it: it approaches from below.
            below = (n - k) / steady if name == Belady.name else 0.0
            want = _published(options, name, case, exact.get(name))
            rows.append(Row(case, label, name, rate, want, counts, below))
    return Reproduction(
        "lru-cliff",
        f"The LRU cliff: a cyclic scan of n allocations over room for k={k}, {options.loops} passes",
        "Belady 1966 (MIN); the cyclic-scan miss rates of LRU, FIFO and OPT (policies-and-clients.md)",
        "miss rate",
        tuple(rows),
        (
            "steady-state miss rate: faults past each allocation's first touch / references past the first pass",
            "MIN may lie under (n-k)/(n-1) by (n-k) misses over the references counted (one phase of its"
            " schedule), never over it; more --loops narrow that",
        ),
    )


REPRODUCTIONS: Final[dict[str, Spec]] = {
    s.name: s
    for s in (
        Spec(
            "belady-anomaly",
            "FIFO 9 then 10 faults with 3 then 4 frames; LRU 10 then 8; OPT 7 then 6",
            belady_anomaly,
            tuple(str(frames) for frames in BELADY_PUBLISHED),
        ),
        Spec(
            "lru-cliff",
            "cyclic scan at n/k 1.01..4: LRU and FIFO miss 100 %, OPT (n-k)/(n-1)",
            lru_cliff,
            tuple(f"{factor:g}" for factor in CLIFF_FACTORS),
        ),
    )
}


def reproduce(name: str, options: Options | None = None) -> Reproduction:
    """Run the reproduction ``name`` (a key of :data:`REPRODUCTIONS`)."""
    spec = REPRODUCTIONS.get(name)
    if spec is None:
        raise ConfigurationError("NAME", name, f"known reproductions: {', '.join(REPRODUCTIONS)}")
    options = options or Options()
    run = [*PUBLISHED_POLICIES, *others_of(options)]
    for policy, case in options.expect:
        if policy not in run or case not in spec.cases:
            raise ConfigurationError(
                "--expect",
                f"{policy}@{case}",
                f"names no row of {name}: policies {', '.join(run)}; cases {', '.join(spec.cases)}",
            )
    return spec.run(options)


__all__ = [
    "ALLOCATION_SIZE",
    "DEDICATED",
    "REPRODUCTIONS",
    "Counts",
    "DedicatedSegment",
    "Options",
    "Reproduction",
    "ReproductionError",
    "Row",
    "gpu_for",
    "reproduce",
    "run_string",
]
