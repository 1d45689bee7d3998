"""The adapter description of a native driver: a small TOML file beside the library (decision 0110).

What the library does not export comes from here: which paging operations it claims to build (``check-driver``
checks exactly those; VidMm routes exactly those to it), which built-in package supplies the other DDIs (its
segments, allocations, contexts and submission), and who executes the paging buffers it writes::

    library = "librefgpu.so"      # relative to this file
    base = "reference"            # the package whose DDIs the library does not replace
    model = "wddm1"               # optional: the base's driver model (wddm1 or wddm2)
    operations = ["Transfer", "Fill", "DiscardContent", "ReadPhysical", "WritePhysical",
                  "MapApertureSegment", "UnmapApertureSegment"]
    dma_buffer_private_data_size = 64   # optional: DmaBufferPrivateDataSize the driver asks for
    swizzling = false             # optional: it builds Swizzle/Unswizzle transfers
    tdr_delay = 2.0               # optional: seconds the executor may take on a buffer (TdrDelay; 0: no limit)
    call_timeout = 0              # optional: seconds a driver entry point may take (0: no limit; check-driver: 2)

    [executor]
    kind = "gpu"                  # gpu: the reference GPU decodes the documented command format
                                  # c: symbol (in library, default the driver's) runs each paging buffer
                                  # python: class = "module:Class" runs each paging buffer

A library named alone (``--driver ./librefgpu.so``) gets :func:`default_description`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Final

from wddmsim.core import tomlfile
from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_OPERATION as Op
from wddmsim.drivers.native.watchdog import TDR_DELAY
from wddmsim.drivers.package import DriverModel

OPERATION_NAMES: Final[dict[str, Op]] = {
    "Transfer": Op.DXGK_OPERATION_TRANSFER,
    "Fill": Op.DXGK_OPERATION_FILL,
    "DiscardContent": Op.DXGK_OPERATION_DISCARD_CONTENT,
    "ReadPhysical": Op.DXGK_OPERATION_READ_PHYSICAL,
    "WritePhysical": Op.DXGK_OPERATION_WRITE_PHYSICAL,
    "MapApertureSegment": Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT,
    "UnmapApertureSegment": Op.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT,
    "SpecialLockTransfer": Op.DXGK_OPERATION_SPECIAL_LOCK_TRANSFER,
    "TransferVirtual": Op.DXGK_OPERATION_VIRTUAL_TRANSFER,
    "FillVirtual": Op.DXGK_OPERATION_VIRTUAL_FILL,
    "InitContextResource": Op.DXGK_OPERATION_INIT_CONTEXT_RESOURCE,
    "UpdatePageTable": Op.DXGK_OPERATION_UPDATE_PAGE_TABLE,
    "FlushTlb": Op.DXGK_OPERATION_FLUSH_TLB,
    "UpdateContextAllocation": Op.DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION,
    "CopyPageTableEntries": Op.DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES,
    "NotifyResidency": Op.DXGK_OPERATION_NOTIFY_RESIDENCY,
    "SignalMonitoredFence": Op.DXGK_OPERATION_SIGNAL_MONITORED_FENCE,
    "MapApertureSegment2": Op.DXGK_OPERATION_MAP_APERTURE_SEGMENT2,
}
"""The union members of ``DXGKARG_BUILDPAGINGBUFFER`` by name, as the description lists them."""

DEFAULT_OPERATIONS: Final = frozenset(
    OPERATION_NAMES[name]
    for name in (
        "Transfer",
        "Fill",
        "DiscardContent",
        "ReadPhysical",
        "WritePhysical",
        "MapApertureSegment",
        "UnmapApertureSegment",
    )
)
"""What a library named alone is taken to claim: the segment model's operations (decision 0110)."""


class ExecutorKind(Enum):
    """Who carries out the paging buffers the driver writes."""

    GPU = "gpu"
    """The reference GPU, decoding the documented command format (docs/command-format.md)."""
    C = "c"
    """A C function with the ``WddmsimExecutePagingBuffer`` signature."""
    PYTHON = "python"
    """A Python class (:class:`wddmsim.hw.executor.Executor`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutorSpec:
    kind: ExecutorKind = ExecutorKind.GPU
    library: Path | None = None
    """The library exporting a C executor (None: the driver's own)."""
    symbol: str = "WddmsimExecutePagingBuffer"
    target: str = ""
    """``module:Class`` of a Python executor."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterDescription:
    """One native driver and how it is composed into an adapter."""

    library: Path
    base: str = "reference"
    model: DriverModel | None = None
    operations: frozenset[Op] = DEFAULT_OPERATIONS
    dma_buffer_private_data_size: int | None = None
    swizzling: bool = False
    """The library builds ``Swizzle``/``Unswizzle`` transfers (the base's swizzled surfaces may be used)."""
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)
    tdr_delay: float | None = TDR_DELAY
    """Seconds of wall time the library's executor may take on one paging buffer before timeout detection (decision
    0132); None: no limit (``tdr_delay = 0``)."""
    call_timeout: float | None = None
    """Seconds of wall time a driver entry point of the library may take (decision 0132); None (the default, and
    ``call_timeout = 0``): called inline, unbounded -- Windows does not bound a kernel function either, and a thread
    hand-over per call would halve a C driver's paging rate.  ``check-driver`` bounds them by ``TdrDelay``."""
    source: Path | None = None
    """The TOML file it was read from (None: a library named alone)."""

    def claims(self, operation: Op) -> bool:
        return operation in self.operations

    def claims_name(self, name: str) -> bool:
        return OPERATION_NAMES[name] in self.operations

    @property
    def operation_names(self) -> list[str]:
        return [name for name, op in OPERATION_NAMES.items() if op in self.operations]


_KEYS: Final = frozenset(
    {
        "library",
        "base",
        "model",
        "operations",
        "dma_buffer_private_data_size",
        "swizzling",
        "executor",
        "tdr_delay",
        "call_timeout",
    }
)
MAX_TDR_DELAY: Final = 3600.0
_EXECUTOR_KEYS: Final = frozenset({"kind", "library", "symbol", "class"})
MAX_PRIVATE_DATA: Final = 64 * 1024


def default_description(library: Path) -> AdapterDescription:
    """What a library named alone is taken to be: a segment-model driver of the reference GPU (decision 0110)."""
    return AdapterDescription(library=library.resolve(), model=DriverModel.WDDM1)


def read_description(path: Path, *, setting: str = "driver") -> AdapterDescription:
    """Parse ``path``; any bad key or value is a :class:`ConfigurationError` naming it, its value and the rule."""
    return parse_description(tomlfile.read(path, setting, str(path)), path)


def parse_description(doc: dict[str, object], path: Path) -> AdapterDescription:
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise ConfigurationError(
            unknown[0], doc[unknown[0]], f"is not a key of an adapter description: {sorted(_KEYS)}"
        )
    here = path.resolve().parent
    library = doc.get("library")
    if not isinstance(library, str) or not library:
        raise ConfigurationError("library", library, "must name the driver's shared library (a path)")
    return AdapterDescription(
        library=(here / library).resolve(),
        base=_string(doc, "base", "reference"),
        model=_model(doc.get("model")),
        operations=_operations(doc.get("operations")),
        dma_buffer_private_data_size=_private_size(doc.get("dma_buffer_private_data_size")),
        swizzling=_flag(doc, "swizzling"),
        executor=_executor(doc.get("executor", {}), here),
        tdr_delay=_seconds(doc, "tdr_delay", TDR_DELAY, "no timeout detection"),
        call_timeout=_seconds(doc, "call_timeout", 0, "no limit"),
        source=path.resolve(),
    )


def _string(doc: dict[str, object], key: str, default: str) -> str:
    value = doc.get(key, default)
    if not isinstance(value, str) or not value:
        raise ConfigurationError(key, value, "must be a non-empty string")
    return value


def _flag(doc: dict[str, object], key: str) -> bool:
    value = doc.get(key, False)
    if not isinstance(value, bool):
        raise ConfigurationError(key, value, "must be true or false")
    return value


def _model(value: object) -> DriverModel | None:
    if value is None:
        return None
    choices = [m.value for m in DriverModel]
    if value not in choices:
        raise ConfigurationError("model", value, f"must be one of {choices}")
    return DriverModel(value)


def _operations(value: object) -> frozenset[Op]:
    if value is None:
        return DEFAULT_OPERATIONS
    if not isinstance(value, list) or not value:
        raise ConfigurationError("operations", value, "must be a non-empty list of operation names")
    ops: set[Op] = set()
    for name in value:
        op = OPERATION_NAMES.get(name) if isinstance(name, str) else None
        if op is None:
            raise ConfigurationError("operations", name, f"must be one of {list(OPERATION_NAMES)}")
        ops.add(op)
    return frozenset(ops)


def _seconds(doc: dict[str, object], key: str, default: float, zero: str) -> float | None:
    """A bound in seconds (``tdr_delay``: ``TdrDelay``; ``call_timeout``); 0 turns it off (as ``TdrLevel`` 0 does
    on Windows)."""
    value = doc.get(key, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= MAX_TDR_DELAY:
        raise ConfigurationError(key, value, f"must be a number of seconds in [0, {MAX_TDR_DELAY:g}] (0: {zero})")
    return float(value) or None


def _private_size(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_PRIVATE_DATA:
        raise ConfigurationError(
            "dma_buffer_private_data_size", value, f"must be an integer in [0, {MAX_PRIVATE_DATA}]"
        )
    return value


def _executor(value: object, here: Path) -> ExecutorSpec:
    if not isinstance(value, dict):
        raise ConfigurationError("executor", value, "must be a table")
    unknown = sorted(set(value) - _EXECUTOR_KEYS)
    if unknown:
        raise ConfigurationError(f"executor.{unknown[0]}", value[unknown[0]], f"is not one of {sorted(_EXECUTOR_KEYS)}")
    kinds = [k.value for k in ExecutorKind]
    kind = value.get("kind", ExecutorKind.GPU.value)
    if kind not in kinds:
        raise ConfigurationError("executor.kind", kind, f"must be one of {kinds}")
    spec = ExecutorKind(kind)
    library = value.get("library")
    if library is not None and (not isinstance(library, str) or not library):
        raise ConfigurationError("executor.library", library, "must be a path")
    symbol = value.get("symbol", "WddmsimExecutePagingBuffer")
    if not isinstance(symbol, str) or not symbol.isidentifier():
        raise ConfigurationError("executor.symbol", symbol, "must be a C identifier")
    target = value.get("class", "")
    if spec is ExecutorKind.PYTHON and (not isinstance(target, str) or ":" not in target):
        raise ConfigurationError("executor.class", target, 'a python executor needs class = "module:Class"')
    return ExecutorSpec(
        kind=spec,
        library=(here / library).resolve() if isinstance(library, str) else None,
        symbol=symbol,
        target=str(target),
    )


def executor_option(text: str, *, setting: str = "--executor") -> ExecutorSpec:
    """``--executor``: ``gpu``, ``c:SYMBOL`` (in the driver's library), ``c:SYMBOL@LIBRARY`` or
    ``python:module:Class``."""
    kind, _, rest = text.partition(":")
    if kind == ExecutorKind.GPU.value and not rest:
        return ExecutorSpec()
    if kind == ExecutorKind.C.value and rest:
        symbol, _, library = rest.partition("@")
        if not symbol.isidentifier():
            raise ConfigurationError(setting, text, "c:SYMBOL needs a C identifier")
        return ExecutorSpec(kind=ExecutorKind.C, symbol=symbol, library=Path(library).resolve() if library else None)
    if kind == ExecutorKind.PYTHON.value and ":" in rest:
        return ExecutorSpec(kind=ExecutorKind.PYTHON, target=rest)
    raise ConfigurationError(setting, text, "must be gpu, c:SYMBOL[@LIBRARY] or python:module:Class")


def with_library(description: AdapterDescription, library: Path) -> AdapterDescription:
    """``description`` for the library at ``library`` (``check-driver LIB --adapter FILE``: LIB wins)."""
    return replace(description, library=library.resolve())


__all__ = [
    "DEFAULT_OPERATIONS",
    "OPERATION_NAMES",
    "AdapterDescription",
    "ExecutorKind",
    "ExecutorSpec",
    "default_description",
    "executor_option",
    "parse_description",
    "read_description",
    "with_library",
]
