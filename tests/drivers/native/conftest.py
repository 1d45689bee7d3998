"""Building the example drivers of ``examples/drivers`` once per session, as a user builds theirs."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from wddmsim.testing.cc import Compiler, find_compilers

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "drivers"
REFGPU = EXAMPLES / "refgpu" / "refgpu_paging.c"

BuildDriver = Callable[..., Path]


def c_compiler() -> Compiler | None:
    return next((c for c in find_compilers() if c.language == "c"), None)


@pytest.fixture(scope="session")
def build_driver(tmp_path_factory: pytest.TempPathFactory) -> BuildDriver:
    """``build_driver(source, NAME=value, ...)``: the shared library built from ``source`` with those macros
    (cached: one build per source and macro set)."""
    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    built: dict[tuple[Path, tuple[tuple[str, str], ...]], Path] = {}
    where = tmp_path_factory.mktemp("drivers")

    def build(source: Path = REFGPU, **defines: object) -> Path:
        key = (source, tuple(sorted((k, str(v)) for k, v in defines.items())))
        if key not in built:
            name = "_".join([source.stem, *(f"{k}{v}" for k, v in key[1])])
            if len(name) > 120:  # long initializers would pass the file-name limit: a digest names them instead
                name = f"{source.stem}_{hashlib.sha256(name.encode()).hexdigest()[:16]}"
            flags = ("-O2", *(f"-D{k}={v}" for k, v in key[1]))
            built[key] = compiler.shared_library(source.read_text(encoding="utf-8"), where / f"lib{name}.so", flags)
        return built[key]

    return build
