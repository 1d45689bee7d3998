"""Verification tests the stretches no write reached for zero on what was read: exactly as strict as comparing
with the model, and a wrong byte is explained with the same message, wherever it lies."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import TILE
from wddmsim.scenarios.model import MARK, GpuCopy, GpuFill, Model, Ref, Tile, TileState
from wddmsim.scenarios.patterns import fill_bytes, pattern
from wddmsim.scenarios.runner import run_scenario
from wddmsim.scenarios.verify import _differ, _piece, _pieces, compare, matches, zero

SIZE = 5 * MARK + 100
"""Five whole marks and a ragged last one."""


def _model() -> Model:
    """``buf`` written in mark 1 (by the CPU) and marks 2-3 (a fill across their boundary); the rest never."""
    m = Model()
    m.create("buf", SIZE)
    m.write("buf", MARK + 10, pattern(3, 20))
    m.apply(GpuFill(Ref("buf", 3 * MARK - 4), 8, 0x11223344))
    return m


def test_the_model_knows_which_marks_writes_reached() -> None:
    m = _model()
    assert m.blank("buf", 0, SIZE) == [(0, MARK), (4 * MARK, SIZE)]
    assert m.blank("buf", 100, 2 * MARK) == [(0, MARK - 100)]  # relative to the offset asked about
    assert m.blank("buf", MARK, 3 * MARK) == []
    assert m.blank("buf", 4 * MARK + 7, 50) == [(0, 50)]
    assert m.blank("buf", 3 * MARK + 1, MARK + 2) == [(MARK - 1, MARK + 2)]


def test_views_mark_the_resource_bytes_they_reach() -> None:
    m = Model()
    m.create("pool", 2 * TILE)
    m.create("src", MARK)
    m.create_tiled("t", 2)
    m.set_tile("t", 0, Tile(TileState.ZERO))
    m.set_tile("t", 1, Tile(TileState.MAPPED, "pool", TILE))
    m.apply(GpuFill(Ref("t", 0), 64, 0xFFFFFFFF))  # a Zero tile drops the write: nothing is marked
    assert m.blank("pool", 0, 2 * TILE) == [(0, 2 * TILE)]
    m.apply(GpuCopy(Ref("src", 0), Ref("t", TILE + MARK), 16))  # a copy of zeros is still a write
    assert m.blank("pool", 0, 2 * TILE) == [(0, TILE + MARK), (TILE + 2 * MARK, 2 * TILE)]
    m.forget("src")
    assert "src" not in m.marks


def _flip(data: np.ndarray, at: int) -> np.ndarray:
    out = data.copy()
    out[at] ^= 0x10
    return out


WHERE = {
    "first byte, never written": 0,
    "inside a never-written stretch": 500,
    "last never-written byte before a written mark": MARK - 1,
    "first byte of a written mark": MARK,
    "inside a written mark": MARK + 12,
    "across a fill's boundary": 3 * MARK - 1,
    "last written byte before a never-written stretch": 4 * MARK - 1,
    "first never-written byte after a written stretch": 4 * MARK,
    "last byte, a ragged mark": SIZE - 1,
}


@pytest.mark.parametrize("name", list(WHERE))
def test_a_wrong_byte_anywhere_is_caught_with_the_message_of_a_full_comparison(name: str) -> None:
    m = _model()
    want = m.bytes["buf"]
    at = WHERE[name]
    got = _flip(want, at)
    message = f"1 byte(s) differ, first at offset {at:#x} (read {int(got[at]):#04x}, expected {int(want[at]):#04x})"
    assert compare(got, want) == message
    assert not matches(got, want, m.blank("buf", 0, SIZE))
    assert _differ([_piece(got, want, m.blank("buf", 0, SIZE))]) == message
    pieces = [  # read in pieces that do not start on a mark, as a readback may
        _piece(got[start:end], want[start:end], m.blank("buf", start, end - start))
        for start, end in ((0, 3 * MARK + 5), (3 * MARK + 5, SIZE))
    ]
    assert _differ(pieces) == message


SPLIT = (2 * MARK - 50, 4 * MARK + 30)
"""Where a lock's view of ``buf`` is cut into spans: a view, a stretch that reads zero unmapped, a view."""


def _spans(got: np.ndarray) -> list[np.ndarray | int]:
    a, b = SPLIT
    return [got[:a], b - a, got[b:]]


@pytest.mark.parametrize("name", list(WHERE))
def test_spans_a_lock_shows_are_compared_where_they_lie_with_the_same_message(name: str) -> None:
    """Wherever the wrong byte lies -- in a view, or in a stretch the lock shows as zeros where the model wrote
    something -- the explanation is :func:`compare`'s of the bytes read laid end to end."""
    m = _model()
    want = m.bytes["buf"]
    a, b = SPLIT
    read = _flip(want, WHERE[name])
    read[a:b] = 0  # what the unmapped stretch reads
    expected = compare(read, want)
    assert expected is not None  # the model wrote bytes in [a, b): a zero stretch there differs
    assert _differ(_pieces(_spans(read), want, m.blank("buf", 0, SIZE))) == expected


def test_a_stretch_read_as_zeros_matches_where_the_model_holds_zeros() -> None:
    m = Model()
    m.create("buf", SIZE)
    m.write("buf", 10, pattern(4, 64))
    m.write("buf", 4 * MARK + 8, np.zeros(16, dtype=np.uint8))  # written, but with zeros
    want = m.bytes["buf"]
    spans: list[np.ndarray | int] = [want[: MARK + 3].copy(), SIZE - MARK - 3]
    assert _differ(_pieces(spans, want, m.blank("buf", 0, SIZE))) is None
    m.write("buf", 4 * MARK + 9, np.ones(1, dtype=np.uint8))
    assert _differ(_pieces(spans, want, m.blank("buf", 0, SIZE))) == (
        f"1 byte(s) differ, first at offset {4 * MARK + 9:#x} (read 0x00, expected 0x01)"
    )


def test_what_matches_still_matches() -> None:
    m = _model()
    want = m.bytes["buf"]
    assert matches(want.copy(), want, m.blank("buf", 0, SIZE))
    assert _differ([_piece(want.copy(), want, m.blank("buf", 0, SIZE))]) is None
    assert not matches(want[:-1].copy(), want, m.blank("buf", 0, SIZE))  # a short read never matches


@pytest.mark.parametrize("length", [0, 1, 7, 8, 9, 4096 + 3])
def test_zero_sees_every_byte(length: int) -> None:
    data = np.zeros(length, dtype=np.uint8)
    assert zero(data)
    for at in range(length):
        data[at] = 1
        assert not zero(data), at
        data[at] = 0


def test_a_gpu_write_the_model_never_saw_fails_the_run_where_it_landed(monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: four bytes filled behind the model's back into a never-written stretch of the staging buffer
    (read back through its lock) are reported at their offset."""
    from wddmsim.scenarios import timeline_run as runner
    from wddmsim.scenarios.app import App
    from wddmsim.scenarios.result import Check
    from wddmsim.scenarios.verify import verify

    landed: list[int] = []

    def sabotaged(app: App) -> list[Check]:
        if app.index == 1:
            name = app.staging.name
            start = app.model.blank(name, 0, app.staging.spec.size)[0][0]
            app.gpu.run([GpuFill(Ref(name, start), 4, 0x01020304)])
            landed.append(start)
        return verify(app)

    monkeypatch.setattr(runner, "verify", sabotaged)
    small = {"workload.frames": 3, "workload.processes": 2, "adapter.vram": "32MiB", "adapter.cpu_visible": "8MiB"}
    result = run_scenario(catalog.load("default", small))
    failed = [c for c in result.checks if not c.ok]
    assert len(failed) == 2, failed  # the staging buffer, and process 1's verdict
    first = int(fill_bytes(0x01020304, 4)[0])
    assert "p1.staging" in failed[0].step
    assert failed[0].detail == f"4 byte(s) differ, first at offset {landed[0]:#x} (read {first:#04x}, expected 0x00)"
