"""Where the shipped C headers are: ``wddmsim include-dir`` prints :func:`include_dir` for a compiler's ``-I``."""

from __future__ import annotations

from pathlib import Path

_INCLUDE = Path(__file__).resolve().parent / "include"


def include_dir() -> Path:
    """The directory to pass to the compiler with ``-I``: it holds ``wddmsim/ddk.h`` and the WDK-name shims
    (``d3dkmddi.h``, ``ntddk.h``, ``wdm.h``, ``ntstatus.h`` ...) so unmodified driver code finds its includes."""
    return _INCLUDE


def header_path() -> Path:
    """``wddmsim/ddk.h`` itself."""
    return _INCLUDE / "wddmsim" / "ddk.h"
