"""An independent model of how many paging buffers an operation needs, from docs/command-format.md alone.

Packets are packed greedily: each packet is as large as the room left allows (a COPY carries as many
page-list extents as fit, a WRITE_QWORDS as many words), capped by the driver's per-packet limit; a packet that
does not fit starts the next buffer.  ``tail`` is a trailing packet (the SYNC of TransferEnd).
"""

from __future__ import annotations

from collections.abc import Callable

ALIGN = 16
COPY_FIXED = 40
WRITE_QWORDS_FIXED = 24


def pad(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def floor16(n: int) -> int:
    return n - n % ALIGN


Fit = Callable[[int, int], tuple[int, int]]
"""``(room, units left)`` -> ``(units the next packet covers, its bytes)``; ``(0, 0)`` if nothing fits."""


def paged_copy(max_units: int) -> Fit:
    def fit(room: int, left: int) -> tuple[int, int]:
        n = min(left, max_units, (floor16(room) - COPY_FIXED) // 8)
        return (n, pad(COPY_FIXED + 8 * n)) if n >= 1 else (0, 0)

    return fit


def fixed(packet: int, max_units: int) -> Fit:
    def fit(room: int, left: int) -> tuple[int, int]:
        return (min(left, max_units), packet) if room >= packet else (0, 0)

    return fit


def write_qwords() -> Fit:
    def fit(room: int, left: int) -> tuple[int, int]:
        n = min(left, (floor16(room) - WRITE_QWORDS_FIXED) // 8)
        return (n, pad(WRITE_QWORDS_FIXED + 8 * n)) if n >= 1 else (0, 0)

    return fit


def buffers_needed(dma: int, units: int, fit: Fit, tail: int = 0) -> int:
    buffers, room, done = 1, dma, 0
    while done < units:
        n, size = fit(room, units - done)
        if n == 0:
            if room == dma:
                raise ValueError(f"a {dma}-byte buffer holds no packet")
            buffers, room = buffers + 1, dma
            continue
        room -= size
        done += n
    if tail > room:
        buffers += 1
    return buffers


def single_pass_size(units: int, fit: Fit, tail: int = 0) -> int:
    """The smallest buffer (a multiple of 16) that holds the whole operation."""
    size = 0
    done = 0
    while done < units:
        n, packet = fit(1 << 40, units - done)
        size += packet
        done += n
    return size + tail


def primes_up_to(n: int) -> list[int]:
    sieve = bytearray([1]) * (n + 1)
    sieve[:2] = b"\x00\x00"
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return [i for i in range(n + 1) if sieve[i]]
