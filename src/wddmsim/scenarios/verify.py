"""End-of-run verification: every byte every process wrote, read back through the runtime and compared with the
reference model.

What it models: how an application checks its data -- CPU-visible resources through a lock (``pfnLock2Cb`` /
``pfnLockCb``, and the locks it held all along through their views first), the others by GPU work that copies
them into a CPU-visible readback buffer, which is then read through a lock.  A tiled resource is also read
through its tiled VA range, so the tile mappings themselves are checked (Zero tiles must read zero).  Each
resource not in the process's residency set is made resident for the copy and evicted again.  A resource destroyed
mid-run (a capture's, decision 0182) is read back the same way just before its ``pfnDeallocateCb``, so nothing goes
unverified.

The application compares through its lock pointer, as a ``memcmp`` would (no copy into its own memory first), and
tests the stretches no write ever reached for zero instead of comparing them with the model's untouched pages:
every byte is still read through the lock and checked, and a difference is explained as a full comparison would
(decision 0243).
"""

from __future__ import annotations

import numpy as np

from wddmsim.core.pointer import ByteArray
from wddmsim.ddi.status import DdiError
from wddmsim.scenarios.app import LOCK_FAILURES, READBACK, App
from wddmsim.scenarios.held import Resource
from wddmsim.scenarios.model import GpuCopy, Ref
from wddmsim.scenarios.result import Check

STEP = 1 << 15
"""Words :func:`same` compares a step: the step's answers fit a small buffer reused across steps (``array_equal``
builds an answer array of an eighth of the bytes compared, and has a fixed cost that dominates small pieces)."""


def same(actual: bytes | ByteArray, expected: ByteArray) -> bool:
    """Whether ``actual`` holds exactly ``expected`` (a match, the usual answer, costs one pass, no copy)."""
    got = np.frombuffer(actual, dtype=np.uint8)
    if got.shape != expected.shape:
        return False
    if got.shape[0] % 8 or not expected.flags.c_contiguous:
        return bool(np.array_equal(got, expected))
    left, right = got.view(np.uint64), expected.view(np.uint64)  # eight bytes a step
    count = left.shape[0]
    answers = np.empty(min(STEP, count), dtype=np.bool_)
    for at in range(0, count, STEP):
        n = min(STEP, count - at)
        if not np.equal(left[at : at + n], right[at : at + n], out=answers[:n]).all():
            return False
    return True


def zero(actual: ByteArray) -> bool:
    """Whether every byte of ``actual`` is zero (the largest word of it is 0: one pass, no answer array)."""
    words = actual.shape[0] // 8
    if words and int(actual[: 8 * words].view(np.uint64).max()) != 0:
        return False
    return not actual[8 * words :].any()


def matches(actual: ByteArray, expected: ByteArray, blank: list[tuple[int, int]]) -> bool:
    """:func:`same`, where the model says which stretches (``blank``: ``(start, end)``) no write ever reached: those
    are tested for zero on what was read, not compared with the model's bytes there (zero too, but never touched:
    reading them would fault in a page of the host per 4 KiB only to compare against zeros)."""
    if not blank:
        return same(actual, expected)
    if actual.shape != expected.shape:
        return False
    at = 0
    for start, end in blank:
        if not (same(actual[at:start], expected[at:start]) and zero(actual[start:end])):
            return False
        at = end
    return same(actual[at:], expected[at:])


def compare(actual: bytes | ByteArray, expected: ByteArray) -> str | None:
    """None when equal; else where and how much they differ."""
    got = np.frombuffer(actual, dtype=np.uint8) if isinstance(actual, bytes) else actual
    if got.shape != expected.shape:
        return f"read {got.shape[0]} bytes, expected {expected.shape[0]}"
    diff = np.flatnonzero(got != expected)
    if diff.shape[0] == 0:
        return None
    first = int(diff[0])
    return (
        f"{diff.shape[0]} byte(s) differ, first at offset {first:#x} "
        f"(read {int(got[first]):#04x}, expected {int(expected[first]):#04x})"
    )


Piece = tuple[ByteArray | None, ByteArray]
"""What a piece read held and what it should hold; ``None`` for a piece that matched (its bytes were the expected
ones, so nothing of it is kept)."""

Stretches = list[tuple[int, int]]
"""``(start, end)`` stretches of a piece, in order, never overlapping."""


def _piece(got: ByteArray, want: ByteArray, blank: Stretches | None = None) -> Piece:
    """A piece seen through a lock: compared now, while the lock shows it; only a piece that differs is copied
    out.  ``blank``: the stretches of it never written (:func:`matches`)."""
    return (None, want) if matches(got, want, blank or []) else (got.copy(), want)


def _zeros_piece(want: ByteArray, blank: Stretches) -> Piece:
    """A piece that reads zero with no memory behind it: it matches where the model holds zero, which needs no
    look at the stretches never written."""
    at = 0
    for start, end in [*blank, (want.shape[0], want.shape[0])]:
        if not zero(want[at:start]):
            return (np.zeros(want.shape[0], dtype=np.uint8), want)
        at = end
    return (None, want)


def _within(blank: Stretches, start: int, end: int) -> Stretches:
    """The stretches of ``blank`` inside ``[start, end)``, relative to ``start``."""
    return [(max(s, start) - start, min(e, end) - start) for s, e in blank if s < end and start < e]


def _pieces(spans: list[ByteArray | int], want: ByteArray, blank: Stretches) -> list[Piece]:
    """The spans a lock shows (:meth:`App.seeing`), each compared where it lies with what its bytes should be."""
    out: list[Piece] = []
    at = 0
    for span in spans:
        n = span if isinstance(span, int) else int(span.shape[0])
        part = _within(blank, at, at + n)
        out.append(
            _zeros_piece(want[at : at + n], part) if isinstance(span, int) else _piece(span, want[at : at + n], part)
        )
        at += n
    return out


def _differ(pieces: list[Piece]) -> str | None:
    """None when every piece read holds what it should; else :func:`compare` of them all laid end to end."""
    if all(got is None for got, _ in pieces):
        return None
    data = np.concatenate([want if got is None else got for got, want in pieces])
    return compare(data, np.concatenate([want for _, want in pieces]))


def _gpu_read(app: App, view: str, offset: int, want: ByteArray, blank: Stretches) -> list[Piece]:
    """Copy the bytes ``want`` expects at ``offset`` of ``view`` into the readback buffer on the GPU, then compare
    them through a lock of that."""
    size = int(want.shape[0])
    app.gpu.run([GpuCopy(Ref(view, offset), Ref(app.readback.name, 0), size)])
    with app.seeing(app.readback, 0, size) as spans:
        return _pieces(spans, want, blank)


def _cpu_read(app: App, r: Resource, start: int, size: int, level: int) -> list[Piece]:
    """Compare ``size`` bytes from ``start`` of ``r`` through a lock of it (of MIP ``level``'s swizzling range)."""
    with app.seeing(r, start, size, level) as spans:
        return _pieces(spans, app.model.bytes[r.name][start : start + size], app.model.blank(r.name, start, size))


def _read_resource(app: App, r: Resource) -> tuple[list[Piece], str] | None:
    """What ``r`` holds and what it should, piece by piece, over the bytes a reader can see (each level of a
    swizzled surface, through its own swizzling range); None when ``r`` could not be made resident for its GPU
    readback."""
    if r.spec.cpu_visible:
        pieces = [p for level, (start, n) in enumerate(r.spec.regions()) for p in _cpu_read(app, r, start, n, level)]
        return pieces, app.lock_call
    borrowed = r.last_use < 0 and r is not app.pool
    if borrowed and not app.bring_for_readback(r):
        return None
    expected = app.model.bytes[r.name]
    pieces = []
    for at in range(0, r.spec.size, READBACK):
        n = min(READBACK, r.spec.size - at)
        pieces += _gpu_read(app, r.name, at, expected[at : at + n], app.model.blank(r.name, at, n))
    if borrowed:
        app.release_after_readback(r)
    return pieces, "COPY to readback"


def _unreadable(app: App, r: Resource) -> Check:
    """A resource VidMm would not make resident for its readback: a failed check, never GPU work on its VA."""
    return Check(
        _title(app, r),
        "MakeResident",
        False,
        f"E_OUTOFMEMORY even with CantTrimFurther for its {r.spec.size / 2**20:.1f} MiB: not read back "
        "(a GPU copy from it would fault)",
    )


def _check(app: App, r: Resource) -> Check | None:
    """None when ``r`` holds what the model says; else the failed check (a lock refused for the read is one:
    the bytes could not be read back)."""
    try:
        read = _read_resource(app, r)
    except DdiError as refused:
        if refused.status not in LOCK_FAILURES:
            raise
        how = app.lock_call
        return Check(_title(app, r), how, False, f"not read back: the lock was refused: {refused}")
    if read is None:
        return _unreadable(app, r)
    pieces, how = read
    problem = _differ(pieces)
    if problem is None:
        return None
    where = "held lock" if r.held else how
    return Check(_title(app, r), where, False, problem)


def _title(app: App, r: Resource) -> str:
    return f"process {app.index}: {r.name} ({r.spec.kind.name.lower()}, {r.spec.placement.value})"


def verify_retiring(app: App, r: Resource) -> None:
    """Read ``r`` back before the application destroys it mid-run (its bytes go with it); the process's summary
    check counts it (``app.retired``)."""
    retired = app.retired
    retired.count += 1
    failed = _check(app, r)
    if failed is None:
        retired.good += r.spec.size
    else:
        retired.failed.append(failed)


def verify(app: App) -> list[Check]:
    """The checks of one process: one per resource that differs, one summary; and what the app reported (and
    what was verified before mid-run destructions, counted in the summary)."""
    before = app.retired
    reported = [Check(p.step, p.operation, False, p.detail) for p in app.problems]
    checks = list(before.failed)
    targets = [r for r in app.resources if r.held] + [r for r in app.resources if not r.held] + [app.staging]
    if app.pool is not None:
        targets.append(app.pool)
    good = before.good
    for r in targets:
        failed = _check(app, r)
        if failed is None:
            good += r.spec.size
        else:
            checks.append(failed)
    failed_count = len(checks)  # allocations only: what the application reported is its own check (decision 0185)
    total = len(targets) + before.count
    checks.append(
        Check(
            f"process {app.index}: {total} allocations, {good / 2**20:.1f} MiB match the reference model",
            "pfnLock2Cb + COPY" if app.wddm2 else "pfnLockCb + pfnRenderCb",
            failed_count == 0,
            f"{app.frames_done} frames; {total - failed_count} of {total} allocations verified",
        )
    )
    if app.tiled:
        size = app.model.size(app.tiled)
        bad = None
        for at in range(0, size, READBACK):
            n = min(READBACK, size - at)
            bad = _differ(_gpu_read(app, app.tiled, at, app.model.read(Ref(app.tiled, at), n), []))
            if bad is not None:
                bad = f"at tiled offset {at:#x}: {bad}"
                break
        checks.append(
            Check(
                f"process {app.index}: the tiled range reads its tile mappings (Zero tiles read zero)",
                "UpdateGpuVirtualAddress + COPY",
                bad is None,
                bad
                or f"{size // 65536} tiles over a {app.model.size(app.pool.name) // 65536 if app.pool else 0}-tile pool",
            )
        )
    return reported + checks
