"""The fast equality test of verification agrees with the byte-by-byte comparison that explains a mismatch."""

from __future__ import annotations

import numpy as np
import pytest

from wddmsim.scenarios.verify import STEP, _differ, _piece, compare, same

BASE = np.arange(4096, dtype=np.int64).astype(np.uint8)


def _flip(data: np.ndarray, at: int) -> bytes:
    out = data.copy()
    out[at] ^= 0x10
    return out.tobytes()


CASES = {
    "equal, whole words": (BASE.tobytes(), BASE),
    "equal, odd length": (BASE[:4093].tobytes(), BASE[:4093]),
    "equal, unaligned slice": (BASE[3 : 3 + 64].tobytes(), BASE[3 : 3 + 64]),
    "empty": (b"", BASE[:0]),
    "first byte differs": (_flip(BASE, 0), BASE),
    "last byte differs, odd length": (_flip(BASE[:4093], 4092), BASE[:4093]),
    "shorter": (BASE[:4088].tobytes(), BASE),
    "longer": (BASE.tobytes() + b"\0" * 8, BASE),
    "strided expectation": (BASE[::2].tobytes(), BASE[::2]),
    "strided, one differs": (_flip(BASE[::2].copy(), 7), BASE[::2]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_is_compare_finding_nothing(name: str) -> None:
    actual, expected = CASES[name]
    assert same(actual, expected) == (compare(actual, expected) is None)


def test_pieces_that_differ_are_explained_as_one_stream() -> None:
    """A mismatch in a later piece is reported at its offset in the whole, as before the pieces existed."""
    pieces = [
        _piece(BASE[:2048].copy(), BASE[:2048]),
        _piece(np.frombuffer(_flip(BASE[2048:], 100), dtype=np.uint8), BASE[2048:]),
    ]
    assert _differ(pieces) == "1 byte(s) differ, first at offset 0x864 (read 0x74, expected 0x64)"
    assert _differ([_piece(BASE[:2048].copy(), BASE[:2048])]) is None


def test_a_piece_read_into_a_reused_buffer_keeps_what_it_read() -> None:
    """Verification reads every piece into one scratch buffer: a piece that differs is copied out before the
    next read overwrites the buffer, and one that matched is reported with its expected bytes."""
    scratch = np.empty(2048, dtype=np.uint8)
    scratch[:] = np.frombuffer(_flip(BASE[:2048], 5), dtype=np.uint8)
    first = _piece(scratch, BASE[:2048])
    scratch[:] = BASE[2048:]
    second = _piece(scratch, BASE[2048:])
    scratch[:] = 0  # the next read
    assert second[0] is None and first[0] is not None
    assert _differ([first, second]) == "1 byte(s) differ, first at offset 0x5 (read 0x15, expected 0x05)"
    assert _differ([second, _piece(scratch, BASE[:2048])]) == (
        f"{int(np.count_nonzero(BASE[:2048]))} byte(s) differ, first at offset 0x801 (read 0x00, expected 0x01)"
    )


LONG = np.random.default_rng(7).integers(0, 256, 3 * STEP * 8 + 24, dtype=np.uint8)
"""Three whole steps of :func:`same` and a ragged last one."""


@pytest.mark.parametrize("at", [0, STEP * 8 - 1, STEP * 8, 2 * STEP * 8 + 5, LONG.shape[0] - 1])
def test_a_wrong_byte_in_any_step_of_a_long_comparison_is_caught(at: int) -> None:
    assert same(LONG.tobytes(), LONG)
    wrong = _flip(LONG, at)
    assert not same(wrong, LONG)
    assert compare(wrong, LONG) == (
        f"1 byte(s) differ, first at offset {at:#x} (read {LONG[at] ^ 0x10:#04x}, expected {LONG[at]:#04x})"
    )
