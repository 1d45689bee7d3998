"""The reference GPU's tiled ("swizzled") surface layout, declared once.

A 2D surface of ``rows`` rows of ``pitch`` bytes is stored linear (row after row) or tiled: tiles of
``TILE_WIDTH`` bytes x ``TILE_HEIGHT`` rows (4 KiB), tiles in row-major order, each tile's rows contiguous.  A
*tile row* (``TILE_HEIGHT`` rows) occupies the same contiguous ``pitch * TILE_HEIGHT`` bytes in both layouts,
which is what lets a transfer be split at tile-row boundaries without changing the result.
"""

from __future__ import annotations

from typing import Final

from wddmsim.core.pointer import ByteArray

TILE_WIDTH: Final = 128
TILE_HEIGHT: Final = 32
TILE_SIZE: Final = TILE_WIDTH * TILE_HEIGHT


def check_surface(pitch: int, size: int) -> str | None:
    """Why a ``(pitch, size)`` region cannot be (un)tiled, or ``None`` if it can."""
    if pitch <= 0 or pitch % TILE_WIDTH:
        return f"pitch {pitch} is not a positive multiple of the tile width {TILE_WIDTH}"
    if size % (pitch * TILE_HEIGHT):
        return f"size {size:#x} is not a whole number of tile rows ({pitch * TILE_HEIGHT:#x} bytes each)"
    return None


def tile(linear: ByteArray, pitch: int) -> ByteArray:
    """Linear bytes -> tiled bytes (a new array)."""
    rows = linear.shape[0] // pitch
    shaped = linear.reshape(rows // TILE_HEIGHT, TILE_HEIGHT, pitch // TILE_WIDTH, TILE_WIDTH)
    out: ByteArray = shaped.transpose(0, 2, 1, 3).reshape(-1).copy()
    return out


def untile(tiled: ByteArray, pitch: int) -> ByteArray:
    """Tiled bytes -> linear bytes (a new array)."""
    rows = tiled.shape[0] // pitch
    shaped = tiled.reshape(rows // TILE_HEIGHT, pitch // TILE_WIDTH, TILE_HEIGHT, TILE_WIDTH)
    out: ByteArray = shaped.transpose(0, 2, 1, 3).reshape(-1).copy()
    return out


def tiled_offset(linear_offset: int, pitch: int) -> int:
    """Where byte ``linear_offset`` of the linear image lives in the tiled image."""
    row, col = divmod(linear_offset, pitch)
    tile_row, row_in_tile = divmod(row, TILE_HEIGHT)
    tile_col, col_in_tile = divmod(col, TILE_WIDTH)
    tiles_per_row = pitch // TILE_WIDTH
    return (tile_row * tiles_per_row + tile_col) * TILE_SIZE + row_in_tile * TILE_WIDTH + col_in_tile
