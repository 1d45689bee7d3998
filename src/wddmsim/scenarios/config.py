"""Scenario configuration: the adapter a run builds, and the workload its processes run on it.

What it models: the knobs of design section 6 -- local memory and aperture sizes, driver model (WDDM 1.x or
2.x), page-table layout, paging (DMA) buffer size, eviction policy; processes, allocation size distribution,
access pattern, oversubscription factor, frames, seed.  A scenario is a TOML document::

    name = "default"
    seed = 1
    [adapter]                   # what the GPU and its driver are
    vram = "64MiB"
    [workload]                  # what the applications do
    processes = 3
    [workload.sizes]
    distribution = "log-uniform"

Every value is checked before anything runs: a bad one raises
:class:`~wddmsim.core.errors.ConfigurationError` naming the key (``workload.frames``), the value and the rule.
Unknown keys are refused the same way (a typo must not silently run the default).  Command-line overrides are
dotted keys applied to the document (:func:`apply_overrides`).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from wddmsim.core import tomlfile
from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import GiB, KiB, MiB, format_size, parse_size
from wddmsim.drivers.package import DriverModel, DriverPackage, DriverSettings
from wddmsim.drivers.registry import DEFAULT as DEFAULT_DRIVER
from wddmsim.drivers.registry import driver_package
from wddmsim.hw.gpu import GpuConfig
from wddmsim.scenarios.timeline import TimelineEvent, read_timeline
from wddmsim.system import SystemConfig
from wddmsim.vidmm.config import VidMmConfig
from wddmsim.vidmm.policy import Belady, EvictionPolicy, UseRecorder, registry
from wddmsim.vidmm.policy.offline import Future as Future  # re-exported: the replay records into one

PolicyWrap = Callable[[EvictionPolicy], EvictionPolicy]
"""An observer put around a run's eviction policy: it must pass every hook on unchanged."""

MODEL_LIMIT: Final = 2 * GiB
"""The most allocation bytes a workload may create: the reference model keeps every expected byte in RAM."""

VRAM_MINIMUM: Final = 4 * MiB
VRAM_LIMIT: Final = 1 << 40
"""``adapter.vram`` lies in ``[VRAM_MINIMUM, VRAM_LIMIT]`` (local memory is sparse: 1 TiB costs what is written)."""

PAGING_BUFFER_LIMIT: Final = 8 * MiB
"""The largest ``PagingBufferSize`` (``adapter.paging_buffer``): VidMm allocates its paging buffers as physically
contiguous system memory (``MmAllocateContiguousMemory``), four of them, out of the 64 MiB a scenario keeps
beside its backing stores (decision 0047)."""

TILE: Final = 64 * KiB
"""A tile of a tiled resource (D3D12's standard tile size; ``UpdateGpuVirtualAddress`` maps whole tiles)."""


class Kind(Enum):
    SIZE = "a size such as 64KiB, 256MiB or 4096"
    INT = "an integer"
    FLOAT = "a number"
    BOOL = "true or false"
    STR = "a string"
    INT_LIST = "a list of integers"


def setting(default: Any, kind: Kind, check: Callable[[Any], bool], rule: str, doc: str) -> Any:
    """A dataclass field carrying how to read and check it."""
    return field(default=default, metadata={"kind": kind, "check": check, "rule": rule, "doc": doc})


def _multiple_of_64k(lo: int, hi: int) -> Callable[[int], bool]:
    return lambda v: lo <= v <= hi and v % (64 * KiB) == 0


def _fraction(v: float) -> bool:
    return 0.0 <= v <= 1.0


ACCESS_PATTERNS: Final = ("hot-cold", "sequential", "random", "streaming")
CLIENTS: Final = ("trim-to-share", "residency-library", "careless")
BUDGET_MODELS: Final = ("capacity", "shared")
DISTRIBUTIONS: Final = ("log-uniform", "uniform", "fixed")


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterSettings:
    """The simulated GPU, its driver and VidMm's policy."""

    driver: str = setting(
        DEFAULT_DRIVER,
        Kind.STR,
        lambda v: bool(v),
        "must name a driver package",
        "The driver package (wddmsim.drivers: reference, or module:attribute); see `wddmsim run --list`.",
    )
    driver_model: str = setting(
        "wddm2",
        Kind.STR,
        lambda v: v in ("wddm1", "wddm2"),
        "must be wddm1 (segment model) or wddm2 (GpuMmu)",
        "How the driver presents the GPU (not given: the driver package's own -- wddm2 on the reference driver).",
    )
    vram: int = setting(
        64 * MiB,
        Kind.SIZE,
        _multiple_of_64k(VRAM_MINIMUM, VRAM_LIMIT),
        "must be a multiple of 64 KiB between 4 MiB and 1 TiB",
        "Local video memory (sparse: only what is written is committed).",
    )
    cpu_visible: int = setting(
        16 * MiB,
        Kind.SIZE,
        _multiple_of_64k(64 * KiB, 1 << 40),
        "must be a positive multiple of 64 KiB",
        "The part of local memory the CPU reaches through the PCI BAR (the first segment).",
    )
    aperture: int = setting(
        32 * MiB,
        Kind.SIZE,
        _multiple_of_64k(64 * KiB, 1 << 40),
        "must be a positive multiple of 64 KiB",
        "The aperture (GART) segment: system pages the GPU reaches through a page table.",
    )
    system_memory: int = setting(
        4 * GiB,
        Kind.SIZE,
        _multiple_of_64k(64 * MiB, 1 << 42),
        "must be a multiple of 64 KiB between 64 MiB and 4 TiB",
        "Host RAM (sparse): backing stores, paging buffers, page frames.",
    )
    page_table_levels: tuple[int, ...] = setting(
        (9, 9, 9, 9),
        Kind.INT_LIST,
        lambda v: 2 <= len(v) <= 6 and all(1 <= b <= 16 for b in v) and v[0] <= 9 and 32 <= 12 + sum(v) <= 57,
        "must list 2 to 6 levels of 1 to 16 index bits each, leaf level first and at most 9 bits, giving a "
        "VA of 32 to 57 bits (12 + their sum)",
        "Index bits per GpuMmu page-table level, leaf first (4 x 9: a 48-bit VA).",
    )
    dual_pte: bool = setting(
        True, Kind.BOOL, lambda v: True, "", "Level-1 entries point at a 4 KB and a 64 KB leaf table at once."
    )
    paging_buffer: int = setting(
        64 * KiB,
        Kind.SIZE,
        lambda v: 0 < v <= PAGING_BUFFER_LIMIT,
        "must be positive and at most 8 MiB",
        "PagingBufferSize the driver reports: the DMA buffer each paging operation is built into.",
    )
    paging_buffer_segment: str = setting(
        "system",
        Kind.STR,
        lambda v: v in ("system", "aperture"),
        "must be system or aperture",
        "PagingBufferSegmentId the driver reports: system (0, contiguous memory) or the aperture segment.",
    )
    vram_kept: str = setting(
        "none",
        Kind.STR,
        lambda v: v in ("none", "standby", "hibernate"),
        "must be none, standby or hibernate",
        "What local memory keeps across power states: none (a discrete card), standby (self-refresh), hibernate.",
    )
    policy: str = setting(
        registry.DEFAULT_EVICTION,
        Kind.STR,
        lambda v: registry.valid_eviction_name(v, "adapter.policy"),
        f"must be one of the eviction policies {registry.names(registry.EVICTION)} or a module:Class",
        "VidMm's eviction policy (wddmsim.vidmm.policy; `wddmsim run --list`), or module:Class of your own.",
    )
    placement: str = setting(
        registry.DEFAULT_PLACEMENT,
        Kind.STR,
        lambda v: registry.valid_placement_name(v, "adapter.placement"),
        f"must be one of the placement policies {registry.names(registry.PLACEMENT)} or a module:Class",
        "VidMm's placement policy: which segments, in which order, with which victims; or module:Class.",
    )
    budgets: str = setting(
        "capacity",
        Kind.STR,
        lambda v: v in BUDGET_MODELS,
        f"must be one of {', '.join(BUDGET_MODELS)}",
        "How the OS sets process budgets (decision 0169): capacity (each may use all of a segment group unless a "
        "timeline event imposes a budget) or shared (re-shared by priority, focus and usage under pressure).",
    )

    @property
    def model(self) -> DriverModel:
        return DriverModel(self.driver_model)

    @property
    def package(self) -> DriverPackage:
        """The driver package ``driver`` names (refused naming ``adapter.driver`` if it names none)."""
        return driver_package(self.driver, setting="adapter.driver")


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeDistribution:
    """How large the workload's allocations are."""

    distribution: str = setting(
        "log-uniform",
        Kind.STR,
        lambda v: v in DISTRIBUTIONS,
        f"must be one of {', '.join(DISTRIBUTIONS)}",
        "log-uniform: as many small as large; uniform; fixed: every allocation is `max` bytes.",
    )
    min: int = setting(
        256 * KiB, Kind.SIZE, lambda v: 4 * KiB <= v <= 1 * GiB, "must lie between 4 KiB and 1 GiB", "Smallest."
    )
    max: int = setting(
        4 * MiB, Kind.SIZE, lambda v: 4 * KiB <= v <= 1 * GiB, "must lie between 4 KiB and 1 GiB", "Largest."
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSettings:
    """What the applications do: how many, with how much memory, touching it how."""

    processes: int = setting(3, Kind.INT, lambda v: 1 <= v <= 64, "must lie between 1 and 64", "Processes.")
    frames: int = setting(12, Kind.INT, lambda v: 1 <= v <= 100_000, "must lie between 1 and 100000", "Frames.")
    oversubscription: float = setting(
        1.5,
        Kind.FLOAT,
        lambda v: 0.05 <= v <= 16,
        "must lie between 0.05 and 16",
        "Bytes of all processes' resources / local memory.",
    )
    textures: float = setting(
        0.4, Kind.FLOAT, _fraction, "must lie between 0 and 1", "Share of resources that are 2D surfaces."
    )
    cpu_visible: float = setting(
        0.3,
        Kind.FLOAT,
        _fraction,
        "must lie between 0 and 1",
        "Share of resources created CPU-visible (written in place through locks). WDDM 1.x: all are.",
    )
    aperture: float = setting(
        0.1,
        Kind.FLOAT,
        _fraction,
        "must lie between 0 and 1",
        "Share of resources that live in the aperture only (upload heaps; CPU-visible).",
    )
    access: str = setting(
        "hot-cold",
        Kind.STR,
        lambda v: v in ACCESS_PATTERNS,
        f"must be one of {', '.join(ACCESS_PATTERNS)}",
        "Which resources a frame uses: hot-cold (a few often), sequential (a sliding window), random, "
        "streaming (each once, in order, wrapping).",
    )
    working_set: float = setting(
        0.5,
        Kind.FLOAT,
        lambda v: 0 < v <= 1,
        "must lie in (0, 1]",
        "Share of a process's resources one frame uses.",
    )
    uploads: int = setting(
        3, Kind.INT, lambda v: 0 <= v <= 10_000, "must lie between 0 and 10000", "CPU uploads per process per frame."
    )
    gpu_ops: int = setting(
        6,
        Kind.INT,
        lambda v: 0 <= v <= 10_000,
        "must lie between 0 and 10000",
        "GPU Copy/Fill packets per process per frame (WDDM 2.x).",
    )
    lazy_evictions: float = setting(
        0.5,
        Kind.FLOAT,
        _fraction,
        "must lie between 0 and 1",
        "Share of evictions made with EvictOnlyIfNecessary.",
    )
    resident_target: float = setting(
        1.0,
        Kind.FLOAT,
        lambda v: 0.05 <= v <= 4,
        "must lie between 0.05 and 4",
        "A process trims its residency set beyond this share of its part of the local budget.",
    )
    persistent_locks: int = setting(
        0,
        Kind.INT,
        lambda v: 0 <= v <= 64,
        "must lie between 0 and 64",
        "CPU-visible resources each process keeps locked for the whole run (written between frames).",
    )
    power: str = setting(
        "none",
        Kind.STR,
        lambda v: v in ("none", "standby", "hibernate", "hybrid_sleep"),
        "must be none, standby, hibernate or hybrid_sleep",
        "A power transition the system goes through halfway (before frame frames/2): VidMm empties what it purges.",
    )
    tiles: int = setting(
        0,
        Kind.INT,
        lambda v: 0 <= v <= 4096,
        "must lie between 0 and 4096",
        "64 KiB tiles of each process's tiled resource (UpdateGpuVirtualAddress); 0: none.",
    )
    tile_pool: int = setting(
        8,
        Kind.INT,
        lambda v: 1 <= v <= 4096,
        "must lie between 1 and 4096",
        "64 KiB tiles in each process's tile pool.",
    )
    client: str = setting(
        "trim-to-share",
        Kind.STR,
        lambda v: v in CLIENTS,
        f"must be one of {', '.join(CLIENTS)}",
        "How each process manages residency (decision 0170): trim-to-share (trims to its share after each frame), "
        "residency-library (the D3D12 residency library's algorithm: budgets, LRU, batches), careless (ignores "
        "budgets and trim notifications).",
    )
    sizes: SizeDistribution = field(default_factory=SizeDistribution)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResearchSettings:
    """``[research]``: how the run's research metrics are measured (decision 0157); the run itself is unchanged."""

    thrash_window: int = setting(
        4,
        Kind.INT,
        lambda v: 0 <= v <= 100_000,
        "must lie between 0 and 100000",
        "Frames after an eviction within which a re-fetch of the allocation counts as thrash.",
    )


def _page_multiple(v: int) -> bool:
    return 0 < v <= MODEL_LIMIT and v % (4 * KiB) == 0


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedAllocation:
    """``[[capture.resources]]``: one allocation of a captured application (a D3D12 heap), with its lifetime."""

    name: str = setting(
        "", Kind.STR, lambda v: bool(v) and not any(c.isspace() for c in v), "must be a name without spaces", "Name."
    )
    size: int = setting(
        0, Kind.SIZE, _page_multiple, "must be a positive multiple of 4 KiB up to 2 GiB", "Bytes (whole pages)."
    )
    group: str = setting(
        "local", Kind.STR, lambda v: v in ("local", "non-local"), "must be local or non-local", "Segment group."
    )
    kind: str = setting(
        "gpu-only",
        Kind.STR,
        lambda v: v in ("gpu-only", "cpu-visible"),
        "must be gpu-only or cpu-visible",
        "Whether the CPU can see it.",
    )
    resident: bool = setting(True, Kind.BOOL, lambda v: True, "", "Made resident when it is created.")
    process: int = setting(0, Kind.INT, lambda v: 0 <= v < 64, "must lie between 0 and 63", "The owning process.")
    first_frame: int = setting(
        0, Kind.INT, lambda v: 0 <= v < 100_000, "must lie between 0 and 99999", "The frame it is created in."
    )
    last_frame: int = setting(
        0, Kind.INT, lambda v: 0 <= v < 100_000, "must lie between 0 and 99999", "The last frame it lives in."
    )


CAPTURED_REQUIRED: Final = ("name", "size", "first_frame", "last_frame")


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureSettings:
    """``[capture]``: a real application's allocations replayed instead of generated ones (decision 0180)."""

    source: str = setting("", Kind.STR, lambda v: bool(v), "must name the capture", "The capture file it came from.")
    start_us: float = setting(
        0.0, Kind.FLOAT, lambda v: v >= 0, "must be at least 0", "Capture time (us) where frame 0 starts."
    )
    end_us: float = setting(
        0.0, Kind.FLOAT, lambda v: v >= 0, "must be at least 0", "Capture time (us) where the last frame ends."
    )
    resources: tuple[CapturedAllocation, ...] = field(default=(), metadata={"table_list": CapturedAllocation})

    @property
    def bytes(self) -> int:
        return sum(r.size for r in self.resources)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioConfig:
    """One scenario: a name, a seed, an adapter and a workload."""

    name: str = "custom"
    description: str = ""
    seed: int = 1
    adapter: AdapterSettings = field(default_factory=AdapterSettings)
    workload: WorkloadSettings = field(default_factory=WorkloadSettings)
    research: ResearchSettings = field(default_factory=ResearchSettings)
    capture: CaptureSettings | None = None
    """A captured application's allocations, replayed instead of the generated resources."""
    timeline: tuple[TimelineEvent, ...] = ()
    """Pressure at chosen frames (:mod:`~wddmsim.scenarios.timeline`), in frame order."""

    @property
    def workload_bytes(self) -> int:
        """Bytes of all processes' resources (before rounding to whole pages; a capture's own)."""
        if self.capture is not None:
            return self.capture.bytes
        return int(self.workload.oversubscription * self.adapter.vram)

    @property
    def started_bytes(self) -> int:
        """Bytes of the resources of the processes the timeline starts."""
        return sum(e.bytes for e in self.timeline if e.event == "start")

    @property
    def offline_policy(self) -> bool:
        """The eviction policy is offline: a run needs the uses of a recorded one (``wddmsim replay``)."""
        return registry.offline(self.adapter.policy)

    def system_config(
        self, *, future: Sequence[int] | None = None, uses: list[int] | None = None, wrap: PolicyWrap | None = None
    ) -> SystemConfig:
        """The adapter this scenario runs on; ``future``: the recorded uses an offline policy is given; ``uses``:
        a list the run's uses are appended to (for a later offline run; under the default policy if this one is
        offline); ``wrap``: an observer put around the
        eviction policy (the reference-string recorder of :mod:`wddmsim.research`)."""
        a = self.adapter
        policy: str | EvictionPolicy = a.policy
        if future is not None and self.offline_policy:
            policy = Belady(future)
        elif uses is not None:  # the recording run of an offline policy runs under the default (decision 0161)
            online = registry.DEFAULT_EVICTION if self.offline_policy else a.policy
            policy = UseRecorder(registry.eviction_policy(online, "adapter.policy"), uses)
        if wrap is not None:
            policy = wrap(registry.eviction_policy(policy, "adapter.policy"))
        return SystemConfig(
            gpu=GpuConfig(
                local_size=a.vram,
                bar_size=a.cpu_visible,
                aperture_size=a.aperture,
                system_size=a.system_memory,
                mmu_index_bits=a.page_table_levels,
                dual_pte=a.dual_pte,
                vram_kept_in_standby=a.vram_kept != "none",
                vram_kept_in_hibernate=a.vram if a.vram_kept == "hibernate" else 0,
            ),
            driver_package=a.driver,
            driver=a.package.configure(
                DriverSettings(
                    model=a.model,
                    paging_buffer_size=a.paging_buffer,
                    paging_buffers_in_aperture=a.paging_buffer_segment == "aperture",
                )
            ),
            vidmm=VidMmConfig(eviction_policy=policy, placement_policy=a.placement, budgets=a.budgets),
        )

    def to_dict(self) -> dict[str, Any]:
        """The document this configuration reads back from (sizes in bytes)."""
        out = dataclasses.asdict(self)
        out["adapter"]["page_table_levels"] = list(self.adapter.page_table_levels)
        if self.adapter.placement == registry.DEFAULT_PLACEMENT:
            # A setting newer than the summaries and traces already written: left out at its default, so that
            # they read back, and a run's summary.json stays as it was (the golden runs).
            del out["adapter"]["placement"]
        if self.research == ResearchSettings():
            del out["research"]  # newer than the summaries and traces already written: left out at its defaults
        # Settings newer than the summaries and traces already written are left out at their defaults (decision
        # 0170), so that those read back and the built-in runs' summaries stay as they were.
        if self.adapter.budgets == "capacity":
            del out["adapter"]["budgets"]
        if self.workload.client == "trim-to-share":
            del out["workload"]["client"]
        del out["timeline"]
        if self.timeline:
            out["timeline"] = [e.to_dict() for e in self.timeline]
        if self.adapter.driver == DEFAULT_DRIVER:
            # Documents written before there were driver packages (recorded traces, summaries) have no such key:
            # the default is left out, so they and these read back the same.
            del out["adapter"]["driver"]
        if self.capture is None:
            del out["capture"]  # newer than the summaries and traces already written: only there when given
        else:
            out["capture"]["resources"] = [dataclasses.asdict(r) for r in self.capture.resources]
        return out

    def with_changes(self, overrides: Mapping[str, object]) -> ScenarioConfig:
        """A copy with dotted-key overrides applied and checked."""
        return from_dict(apply_overrides(self.to_dict(), overrides))


# --- reading -------------------------------------------------------------------------------------------------


def _convert(key: str, kind: Kind, value: object) -> object:
    def bad() -> ConfigurationError:
        return ConfigurationError(key, value, f"must be {kind.value}")

    match kind:
        case Kind.SIZE:
            if isinstance(value, bool):
                raise bad()
            if isinstance(value, int):
                return value
            if isinstance(value, str):
                try:
                    return parse_size(value)
                except ValueError:
                    raise bad() from None
            raise bad()
        case Kind.INT:
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad()
            return value
        case Kind.FLOAT:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise bad()
            return float(value)
        case Kind.BOOL:
            if not isinstance(value, bool):
                raise bad()
            return value
        case Kind.STR:
            if not isinstance(value, str):
                raise bad()
            return value
        case Kind.INT_LIST:
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise bad()
            return tuple(value)
    raise AssertionError(kind)


def _read(cls: type[Any], doc: Mapping[str, object], prefix: str) -> Any:
    """An instance of the settings dataclass ``cls`` from the table ``doc``; every key checked."""
    if not isinstance(doc, Mapping):
        raise ConfigurationError(prefix.rstrip("."), doc, "must be a table")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in doc if k not in fields]
    if unknown:
        raise ConfigurationError(
            prefix + unknown[0], doc[unknown[0]], f"is not a setting; known: {', '.join(sorted(fields))}"
        )
    values: dict[str, object] = {}
    for name, f in fields.items():
        if name not in doc:
            continue
        key = prefix + name
        if "table_list" in f.metadata:  # an array of tables
            values[name] = _read_tables(f.metadata["table_list"], doc[name], key)
            continue
        if "kind" not in f.metadata:  # a nested table
            nested = f.default_factory if f.default_factory is not dataclasses.MISSING else None
            assert nested is not None
            values[name] = _read(type(nested()), doc[name], key + ".")  # type: ignore[arg-type]
            continue
        value = _convert(key, f.metadata["kind"], doc[name])
        if not f.metadata["check"](value):
            raise ConfigurationError(key, doc[name], f.metadata["rule"])
        values[name] = value
    return cls(**values)


def _read_tables(cls: type[Any], doc: object, key: str) -> tuple[Any, ...]:
    """An array of tables (``[[capture.resources]]``), each read and checked; its required keys must be given."""
    if not isinstance(doc, (list, tuple)):
        raise ConfigurationError(key, doc, "must be an array of tables")
    out = []
    for i, table in enumerate(doc):
        prefix = f"{key}[{i}]."
        if isinstance(table, Mapping):
            missing = [k for k in CAPTURED_REQUIRED if k not in table]
            if missing:
                raise ConfigurationError(prefix + missing[0], None, "is required")
        out.append(_read(cls, table, prefix))
    return tuple(out)


def read_adapter(doc: Mapping[str, object]) -> AdapterSettings:
    """``[adapter]`` settings read and checked one by one (not against each other)."""
    settings: AdapterSettings = _read(AdapterSettings, doc, "adapter.")
    return settings


_TOP = ("name", "description", "seed", "adapter", "workload", "research", "timeline", "capture")


def from_dict(doc: Mapping[str, object], *, name: str | None = None) -> ScenarioConfig:
    """A checked configuration from a TOML document (already parsed)."""
    unknown = [k for k in doc if k not in _TOP]
    if unknown:
        raise ConfigurationError(unknown[0], doc[unknown[0]], f"is not a setting; known: {', '.join(_TOP)}")
    title = doc.get("name", name or "custom")
    if not isinstance(title, str) or not title:
        raise ConfigurationError("name", title, "must be a non-empty string")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise ConfigurationError("description", description, "must be a string")
    seed = doc.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 63:
        raise ConfigurationError("seed", seed, "must be an integer between 0 and 2**63 - 1")
    workload: WorkloadSettings = _read(WorkloadSettings, doc.get("workload", {}), "workload.")  # type: ignore[arg-type]
    adapter = _package_model(
        _read(AdapterSettings, doc.get("adapter", {}), "adapter."),  # type: ignore[arg-type]
        doc.get("adapter", {}),
    )
    config = ScenarioConfig(
        name=title,
        description=description,
        seed=seed,
        adapter=adapter,
        workload=workload,
        research=_read(ResearchSettings, doc.get("research", {}), "research."),  # type: ignore[arg-type]
        timeline=read_timeline(doc.get("timeline"), workload.frames, workload.processes, CLIENTS, adapter.vram),
        capture=None if "capture" not in doc else _read(CaptureSettings, doc["capture"], "capture."),  # type: ignore[arg-type]
    )
    check(config)
    return config


def _package_model(adapter: AdapterSettings, given: object) -> AdapterSettings:
    """``adapter.driver_model`` not given: the model of the driver package's default configuration (decision
    0076), so ``adapter.driver = "simple"`` alone runs the WDDM 1.x segment model that driver presents, and the
    reference driver keeps wddm2.  A model given is kept as given (and refused by :func:`check` if the package
    cannot present it)."""
    if isinstance(given, Mapping) and "driver_model" in given:
        return adapter
    model = adapter.package.default_config().model.value
    return adapter if model == adapter.driver_model else dataclasses.replace(adapter, driver_model=model)


def loads(text: str, *, name: str | None = None) -> ScenarioConfig:
    """A configuration from TOML text; a syntax error is a :class:`ConfigurationError` too."""
    return from_dict(tomlfile.parse(text, "scenario file", name or "<text>"), name=name)


def check(config: ScenarioConfig) -> None:
    """The rules that tie settings together (each alone was checked as it was read)."""
    a, w = config.adapter, config.workload
    if w.sizes.min > w.sizes.max:
        raise ConfigurationError(
            "workload.sizes.min", w.sizes.min, f"must not exceed workload.sizes.max ({w.sizes.max})"
        )
    if w.cpu_visible + w.aperture > 1:
        raise ConfigurationError(
            "workload.aperture",
            w.aperture,
            f"workload.cpu_visible + workload.aperture must not exceed 1 ({w.cpu_visible} + {w.aperture})",
        )
    if config.workload_bytes + config.started_bytes > MODEL_LIMIT and config.started_bytes:
        raise ConfigurationError(
            "timeline",
            format_size(config.started_bytes),
            f"the processes it starts and the workload's {format_size(config.workload_bytes)} exceed "
            f"{format_size(MODEL_LIMIT)}, the most the reference model holds in RAM",
        )
    if config.capture is not None:
        _check_capture(config.capture, w)
    elif config.workload_bytes < w.processes * w.sizes.min:
        raise ConfigurationError(
            "workload.oversubscription",
            w.oversubscription,
            f"gives {format_size(config.workload_bytes)}: less than one {format_size(w.sizes.min)} allocation per process",
        )
    if config.workload_bytes > MODEL_LIMIT:
        raise ConfigurationError(
            "workload.oversubscription",
            w.oversubscription,
            f"{w.oversubscription} x {format_size(a.vram)} of resources exceeds {format_size(MODEL_LIMIT)}, the most "
            "the reference model holds in RAM (lower adapter.vram or workload.oversubscription; "
            "`wddmsim run tour --vram 80GiB` shows a large sparse GPU)",
        )
    need = 2 * (config.workload_bytes + config.started_bytes) + 64 * MiB
    if a.system_memory < need:
        raise ConfigurationError(
            "adapter.system_memory",
            a.system_memory,
            f"must hold every backing store and the paging buffers: at least {format_size(need)}",
        )
    _check_driver(config)
    if w.tiles and w.tile_pool * TILE > a.vram // 4:
        raise ConfigurationError(
            "workload.tile_pool", w.tile_pool, f"{w.tile_pool} 64 KiB tiles must fit in a quarter of adapter.vram"
        )
    if w.persistent_locks and w.cpu_visible + w.aperture == 0 and a.model == DriverModel.WDDM2:
        raise ConfigurationError(
            "workload.persistent_locks",
            w.persistent_locks,
            "needs CPU-visible resources: raise workload.cpu_visible or workload.aperture",
        )
    system = config.system_config()
    renames = {
        "local_size": "adapter.vram",
        "bar_size": "adapter.cpu_visible",
        "aperture_size": "adapter.aperture",
        "system_size": "adapter.system_memory",
        "mmu_index_bits": "adapter.page_table_levels",
        "paging_buffer_size": "adapter.paging_buffer",
    }
    try:
        system.gpu.validate()
        system.driver.validate()
    except ConfigurationError as error:
        raise ConfigurationError(renames.get(error.setting, error.setting), error.value, error.rule) from None
    if a.cpu_visible >= a.vram - system.gpu.aperture_table_size:
        raise ConfigurationError(
            "adapter.cpu_visible", a.cpu_visible, "must leave local memory the CPU cannot see (less than adapter.vram)"
        )


def _check_capture(capture: CaptureSettings, w: WorkloadSettings) -> None:
    """A capture's allocations against the workload: owners among its processes, lifetimes within its frames,
    names unique, and no more bytes than the reference model holds."""
    if not capture.resources:
        raise ConfigurationError("capture.resources", [], "must list at least one allocation")
    if capture.end_us < capture.start_us:
        raise ConfigurationError(
            "capture.end_us", capture.end_us, f"must not precede capture.start_us ({capture.start_us})"
        )
    if capture.bytes > MODEL_LIMIT:
        raise ConfigurationError(
            "capture.resources",
            format_size(capture.bytes),
            f"exceeds {format_size(MODEL_LIMIT)} in all, the most the reference model holds in RAM",
        )
    seen: dict[str, int] = {}
    for i, r in enumerate(capture.resources):
        key = f"capture.resources[{i}]."
        if r.name in seen:
            raise ConfigurationError(key + "name", r.name, f"is the name of capture.resources[{seen[r.name]}] too")
        seen[r.name] = i
        if r.process >= w.processes:
            raise ConfigurationError(key + "process", r.process, f"must be below workload.processes ({w.processes})")
        if r.last_frame < r.first_frame:
            raise ConfigurationError(
                key + "last_frame", r.last_frame, f"must not precede first_frame ({r.first_frame})"
            )
        if r.last_frame >= w.frames:
            raise ConfigurationError(key + "last_frame", r.last_frame, f"must be below workload.frames ({w.frames})")


def _check_driver(config: ScenarioConfig) -> None:
    """The driver package exists, presents the model asked for and has what the workload uses."""
    a, w = config.adapter, config.workload
    package = a.package
    if a.model not in package.capabilities(package.default_config()).driver_models:
        models = ", ".join(sorted(m.value for m in package.capabilities(package.default_config()).driver_models))
        raise ConfigurationError(
            "adapter.driver_model", a.driver_model, f"driver package {package.name} presents only {models}"
        )
    caps = package.capabilities(package.configure(DriverSettings(model=a.model, paging_buffer_size=a.paging_buffer)))
    if w.tiles and not caps.tiled_resources:
        rule = (
            "tiled resources need GPU virtual addresses: adapter.driver_model = wddm2"
            if DriverModel.WDDM2 in caps.driver_models
            else f"driver package {package.name} has no tiled resources"
        )
        raise ConfigurationError("workload.tiles", w.tiles, rule)


# --- overrides -------------------------------------------------------------------------------------------------


def parse_override(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` from the command line; VALUE is read as TOML (``3``, ``1.5``, ``true``, ``[9, 9]``),
    else taken as a string (``lru``, ``128MiB``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigurationError("--set", text, "must be KEY=VALUE, e.g. workload.frames=20")
    raw = raw.strip()
    try:
        value: object = tomllib.loads(f"v = {raw}")["v"]
    except (ValueError, RecursionError):  # not TOML (an integer past Python's digit limit, nesting past the
        # reader's depth): the text as written, refused by its key's rule if that wants a number or a list
        value = raw
    return key, value


def apply_overrides(doc: Mapping[str, object], overrides: Mapping[str, object]) -> dict[str, Any]:
    """A copy of ``doc`` with each dotted key set (tables are created as needed; checking happens on read)."""
    out: dict[str, Any] = _copy(doc)
    for key, value in overrides.items():
        parts = key.split(".")
        table = out
        for i, part in enumerate(parts[:-1]):
            nxt = table.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise ConfigurationError(".".join(parts[: i + 1]), nxt, "is a value, not a table")
            table = nxt
        table[parts[-1]] = value
    return out


def _copy(doc: Mapping[str, object]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in doc.items()}


def describe_settings() -> list[tuple[str, str, str]]:
    """``(key, default, what it is)`` for every setting, for ``--help`` and the documentation."""
    rows: list[tuple[str, str, str]] = []

    def walk(cls: type[Any], prefix: str) -> None:
        for f in dataclasses.fields(cls):
            if "kind" not in f.metadata:
                assert f.default_factory is not dataclasses.MISSING
                walk(type(f.default_factory()), f"{prefix}{f.name}.")
                continue
            default: Any = f.default
            shown = format_size(default) if f.metadata["kind"] == Kind.SIZE else str(default)
            rows.append((prefix + f.name, shown, f.metadata["doc"]))

    walk(AdapterSettings, "adapter.")
    walk(WorkloadSettings, "workload.")
    walk(ResearchSettings, "research.")
    return rows
