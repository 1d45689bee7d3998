"""The bytes a workload writes, named by a seed so that a call trace can say "pattern 1234, 64 KiB" instead of
carrying the bytes.

A pattern is the raw output of numpy's ``PCG64`` bit generator seeded with ``seed``, as little-endian 64-bit
words, cut to ``size`` bytes.  Bit generators' streams are stable across numpy versions (NEP 19), so a trace
recorded today replays the same bytes tomorrow; ``Generator`` methods carry no such promise and are not used
here.
"""

from __future__ import annotations

import numpy as np

from wddmsim.core.pointer import ByteArray


def pattern(seed: int, size: int) -> ByteArray:
    """``size`` bytes of pattern ``seed``."""
    words = np.random.PCG64(seed).random_raw(-(-size // 8))
    out: ByteArray = np.asarray(words, dtype="<u8").view(np.uint8)[:size]
    return out


def fill_bytes(value: int, size: int, phase: int = 0) -> ByteArray:
    """What a ``FILL`` packet with the 32-bit ``value`` writes: the little-endian word repeated, its phase counted
    from the packet's first byte (``phase`` bytes already written before this piece)."""
    word = np.frombuffer(int(value).to_bytes(4, "little"), dtype=np.uint8)
    reps = -(-(size + phase % 4) // 4)
    out: ByteArray = np.tile(word, reps)[phase % 4 : phase % 4 + size]
    return out
