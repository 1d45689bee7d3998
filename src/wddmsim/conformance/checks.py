"""The checks ``check-driver`` runs on every case (issue 21, item 4), each with a name a report can show.

For one case: build it single-pass and check the protocol (``status``: only the legal statuses; ``bounds``: the
guards intact, ``pDmaBuffer`` advanced to exactly past the last byte written, ``DmaSize`` consistent;
``progress``: every STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER made progress and the loop ended), then
``build-time`` (no memory changed while building: effects belong to execution), execute, then ``bytes`` (each
destination holds exactly what the documents say) and ``canaries`` (nothing else changed anywhere: local memory,
the case's system pages), ``effect`` (an operation that must change memory did not return STATUS_SUCCESS having
written nothing), then ``multipass`` (at every DMA size from the smallest that holds a packet to single-pass, the
same destination bytes) and ``determinism`` (the same arguments build the same bytes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np

from wddmsim.conformance.cases import ApertureEntries, Case, Effect, LocalBytes, MdlBytes, Translation
from wddmsim.conformance.rig import Build, Rig, Snapshot
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.status import NTSTATUS
from wddmsim.hw import commands as cmd
from wddmsim.hw.aperture import GART_ENTRY
from wddmsim.hw.faults import AccessKind, GpuFault

CHECKS: Final = (
    "status",
    "bounds",
    "progress",
    "build-time",
    "bytes",
    "canaries",
    "effect",
    "multipass",
    "determinism",
)
SINGLE_PASS: Final = 64 * 1024
"""A DMA size every case fits in one call (the single-pass build)."""
SWEEP_STEP: Final = 8
MAX_SWEEP: Final = 192
"""DMA sizes tried per case at most (evenly spread when the range holds more multiples of 8)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One failed check of one case: what failed, and the evidence."""

    check: str
    operation: str
    case: str
    message: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Outcome:
    """All checks of one case."""

    case: Case
    findings: tuple[Finding, ...]
    ran: frozenset[str]
    """The checks that ran (a protocol breach stops the case before execution)."""
    sizes: tuple[int, ...] = ()

    def failed(self, check: str) -> Finding | None:
        return next((f for f in self.findings if f.check == check), None)


_PROTOCOL: Final = frozenset({"status", "bounds", "progress"})


_UNBUFFERED: Final = frozenset({"status", "bounds", "bytes", "canaries", "effect", "determinism"})
"""What applies to a call with no DMA buffer (the forced CPU_VIRTUAL update): no multipass, nothing to execute."""


def run_case(rig: Rig, case: Case) -> Outcome:
    if case.unbuffered:
        return _run_unbuffered(rig, case)
    findings = list(_single_pass(rig, case))
    ran = set(_PROTOCOL)
    if not {f.check for f in findings} & _PROTOCOL:
        ran |= {"build-time", "bytes", "canaries", "effect"}
    sizes: tuple[int, ...] = ()
    if not findings:
        sizes, sweep = _sweep(rig, case)
        findings.extend(sweep)
        findings.extend(_determinism(rig, case))
        ran |= {"multipass", "determinism"}
    return Outcome(case, tuple(findings), frozenset(ran), sizes)


def _run_unbuffered(rig: Rig, case: Case) -> Outcome:
    """``pDmaBuffer`` NULL: one call that must do the work at once, by the CPU (DOC:system-paging-process.md)."""
    findings = list(_unbuffered_call(rig, case))
    ran = {"status", "bounds"}
    if not findings:
        ran = set(_UNBUFFERED)
        findings.extend(_unbuffered_call(rig, case, again=True))
    return Outcome(case, tuple(findings), frozenset(ran))


def _unbuffered_call(rig: Rig, case: Case, *, again: bool = False) -> Iterator[Finding]:
    before = rig.snapshot(case.mdls)
    breach = rig.call_unbuffered(case.payload)
    if breach:
        check = "status" if breach.startswith(("returned", "raised")) else "bounds"
        case.restore()
        yield _finding(case, check, breach, _arguments(case))
        return
    after = rig.snapshot(case.mdls)
    wrong = [_compare(rig, effect) for effect in case.effects]
    for message in filter(None, wrong):
        check = "determinism" if again else "bytes"
        yield _finding(case, check, ("the same call again: " if again else "") + message, _arguments(case))
    changed = _changes(before, after, case.effects, case.mdls, rig)
    if changed and not again:
        yield _finding(case, "canaries", f"memory outside the destination changed: {changed}", _arguments(case))
    if case.must_change and all(wrong) and not _changes(before, after, [], case.mdls) and not again:
        yield _finding(
            case,
            "effect",
            "returned STATUS_SUCCESS and changed nothing: the update must be done at once",
            _arguments(case),
        )
    case.restore()


def _finding(case: Case, check: str, message: str, detail: str = "") -> Finding:
    return Finding(check, case.operation, case.name, message, detail)


def _protocol(case: Case, build: Build) -> Iterator[Finding]:
    if build.ok:
        return
    breach = build.breach
    check = "status" if breach.startswith(("returned", "raised")) else "progress"
    if any(word in breach for word in ("pDmaBuffer", "DmaSize", "guard", "outside")):
        check = "bounds"
    if "BUSY" in breach:
        check = "status"
    calls = "; ".join(f"call {i}: DmaSize={c.dma_size} wrote {c.written}" for i, c in enumerate(build.calls[-3:]))
    yield _finding(case, check, breach, f"{_arguments(case)}\n{calls}\n{_dump(build)}")


def _single_pass(rig: Rig, case: Case) -> Iterator[Finding]:
    before = rig.snapshot(case.mdls)
    build = rig.build(case.payload, SINGLE_PASS)
    found = list(_protocol(case, build))
    yield from found
    if found:
        case.restore()
        return
    built = rig.snapshot(case.mdls)
    changed = _changes(before, built, [], case.mdls)
    if changed and not case.at_build:
        yield _finding(
            case,
            "build-time",
            f"memory changed while the buffer was built, before it executed: {changed}",
            f"{_arguments(case)}\nEffects belong to execution: a change made while building overtakes every "
            f"operation queued before it.\n{_dump(build)}",
        )
    fault = rig.execute(build)
    if fault:
        yield _finding(case, "bytes", fault, f"{_arguments(case)}\n{_dump(build)}")
        case.restore()
        return
    after = rig.snapshot(case.mdls)
    wrong = [_compare(rig, effect) for effect in case.effects]
    for message in filter(None, wrong):
        yield _finding(case, "bytes", message, f"{_arguments(case)}\n{_dump(build)}")
    changed = _changes(before, after, case.effects, case.mdls, rig)
    if changed:
        yield _finding(case, "canaries", f"memory outside the destination changed: {changed}", _arguments(case))
    if case.must_change and not build.bytes() and all(w for w in wrong):
        yield _finding(
            case,
            "effect",
            "returned STATUS_SUCCESS having written nothing, and nothing changed: an operation the driver does not "
            "carry out must not report success",
            _arguments(case),
        )
    case.restore()


def _sweep(rig: Rig, case: Case) -> tuple[tuple[int, ...], list[Finding]]:
    """Every DMA size from the smallest that holds one packet to single-pass: the same destination bytes."""
    single = len(rig.build(case.payload, SINGLE_PASS).bytes())
    if single == 0:
        return (), []
    smallest = None
    for size in range(SWEEP_STEP, single + 1, SWEEP_STEP):
        probe = rig.build(case.payload, SINGLE_PASS, first_size=size)
        bad = next(_protocol(case, probe), None)
        if bad is not None:
            return (size,), [dataclasses.replace(bad, message=f"DmaSize={size}: {bad.message}")]
        # The first call that answered about the buffer (an ALLOCATION_BUSY answer before it is about the allocation).
        first = next((c for c in probe.calls if c.status != NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY), probe.calls[0])
        if first.written > 0 or first.multipass_after != first.multipass_before or first.status == 0:
            smallest = size
            break
    if smallest is None:
        return (), [_finding(case, "progress", f"no DMA size up to {single} bytes lets the first call make progress")]
    sizes = list(range(smallest, single + SWEEP_STEP, SWEEP_STEP))
    if len(sizes) > MAX_SWEEP:
        sizes = sorted({*np.linspace(smallest, sizes[-1], MAX_SWEEP).astype(int).tolist(), smallest, sizes[-1]})
    for size in sizes:
        build = rig.build(case.payload, size)
        bad = next(_protocol(case, build), None)
        if bad is not None:
            case.restore()
            return tuple(sizes), [dataclasses.replace(bad, message=f"DmaSize={size}: {bad.message}")]
        fault = rig.execute(build)
        wrong = fault or next(filter(None, (_compare(rig, e) for e in case.effects)), "")
        case.restore()
        if wrong:
            return tuple(sizes), [
                _finding(
                    case,
                    "multipass",
                    f"DmaSize={size} ({len(build.calls)} calls): {wrong}",
                    f"{_arguments(case)}\nsingle-pass is {single} bytes\n{_dump(build)}",
                )
            ]
    return tuple(sizes), []


def _determinism(rig: Rig, case: Case) -> Iterator[Finding]:
    first, second = rig.build(case.payload, SINGLE_PASS), rig.build(case.payload, SINGLE_PASS)
    if first.bytes() != second.bytes():
        yield _finding(
            case,
            "determinism",
            f"the same arguments built {len(first.bytes())} then {len(second.bytes())} different bytes",
            f"{_arguments(case)}\nfirst:\n{_hex(first.bytes())}\nsecond:\n{_hex(second.bytes())}",
        )


# --- comparing memory -----------------------------------------------------------------------------------------


def _compare(rig: Rig, effect: Effect) -> str:
    if isinstance(effect, Translation):
        return _translation(rig, effect)
    if isinstance(effect, LocalBytes):
        got = bytes(rig.local()[effect.address : effect.address + len(effect.expected)])
        return _first_difference(got, effect.expected, f"local memory at {effect.address:#x}")
    if isinstance(effect, MdlBytes):
        got = rig.mdl_bytes(effect.mdl, effect.first_page, len(effect.expected))
        return _first_difference(got, effect.expected, f"MDL page {effect.first_page}")
    entries = rig.gpu.aperture.entries[effect.first_page : effect.first_page + len(effect.pfns)]
    valid = GART_ENTRY["Valid"]
    pfn = GART_ENTRY["Pfn"]
    for i, (entry, want) in enumerate(zip(entries.tolist(), effect.pfns, strict=True)):
        if not valid.get(entry) or pfn.get(entry) != want:
            return (
                f"aperture page {effect.first_page + i}: entry {entry:#x} (valid={valid.get(entry)}, "
                f"pfn={pfn.get(entry):#x}), expected a valid entry for pfn {want:#x}"
            )
    return ""


def _translation(rig: Rig, effect: Translation) -> str:
    """Each page of the range as the GPU translates it now (through its TLB, as work would)."""
    for i, want in enumerate(effect.addresses):
        va = effect.va + i * PAGE_SIZE
        try:
            runs = rig.gpu.mmu.translate(effect.root, va, 8, AccessKind.READ)
        except GpuFault as fault:
            return f"VA {va:#x}: the GPU faults ({fault})"
        memory, address, _ = runs[0]
        if memory is not rig.gpu.local or address != want:
            return (
                f"VA {va:#x}: the GPU still translates to {address:#x}, expected local {want:#x}: the stale "
                "translation it cached was not flushed"
            )
    return ""


def _first_difference(got: bytes, want: bytes, where: str) -> str:
    if got == want:
        return ""
    at = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
    wrong = sum(1 for a, b in zip(got, want, strict=True) if a != b)
    return (
        f"{where}: {wrong} of {len(want)} bytes wrong, the first at +{at:#x} (page {at // 4096}): "
        f"got {got[at : at + 8].hex()} expected {want[at : at + 8].hex()}"
    )


def _changes(before: Snapshot, after: Snapshot, effects: list[Effect], mdls: list[MDL], rig: Rig | None = None) -> str:
    """Where memory differs, outside the ``effects`` ('' if nowhere)."""
    local = before.local != after.local
    for effect in effects:
        if isinstance(effect, LocalBytes):
            local[effect.address : effect.address + len(effect.expected)] = False
        elif isinstance(effect, ApertureEntries) and rig is not None:
            offset, size = effect.table_bytes
            start = rig.gpu.aperture.table_offset + offset
            local[start : start + size] = False
    changed = np.flatnonzero(local)
    if changed.size:
        return f"{changed.size} byte(s) of local memory, the first at {int(changed[0]):#x}"
    for index, (old, new) in enumerate(zip(before.system, after.system, strict=True)):
        mdl = mdls[index] if index < len(mdls) else None
        keep = bytearray(new)
        for effect in effects:
            if isinstance(effect, MdlBytes) and effect.mdl is mdl:
                start = effect.first_page * 4096
                keep[start : start + len(effect.expected)] = old[start : start + len(effect.expected)]
        if bytes(keep) != old:
            at = next(i for i, (a, b) in enumerate(zip(keep, old, strict=True)) if a != b)
            where = f"the case's MDL {index}" if mdl is not None else "a canary page of system memory"
            return f"system page {at // 4096} of {where} (byte +{at % 4096:#x})"
    return ""


ARGUMENT_WIDTH: Final = 160
"""A long argument (an array of page-table entries) is shown up to this many characters."""


def _arguments(case: Case) -> str:
    fields = ", ".join(
        f"{k}={_shown(v)}" for k, v in ((f, getattr(case.payload, f)) for f in case.payload.__dataclass_fields__)
    )
    return f"{case.operation}({fields})"


def _shown(value: object) -> str:
    if isinstance(value, int):
        return f"{value:#x}"
    text = " ".join(repr(value).split())
    return text if len(text) <= ARGUMENT_WIDTH else text[: ARGUMENT_WIDTH - 3] + "..."


def _dump(build: Build) -> str:
    data = build.bytes()
    try:
        packets = cmd.decode_all(data, 0, len(data))
        listing = "\n".join(f"  +{offset:#06x} {packet!r}"[:160] for offset, packet in packets[:12])
        return f"the buffer ({len(data)} bytes) as the reference GPU's packets:\n{listing}"
    except Exception:  # not the documented format (a software log): show the bytes
        return f"the buffer ({len(data)} bytes):\n{_hex(data)}"


def _hex(data: bytes, limit: int = 256) -> str:
    rows = [f"  +{i:#06x} {data[i : i + 16].hex(' ')}" for i in range(0, min(len(data), limit), 16)]
    return "\n".join(rows) + ("\n  ..." if len(data) > limit else "")


__all__ = ["CHECKS", "Finding", "Outcome", "run_case"]
