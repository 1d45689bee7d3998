"""Build C and C++ code against the shipped header (``wddmsim/ddk.h``) with the compilers on this machine.

For the layout test, the tests and benchmarks of drivers built as native libraries, and a user checking their build: :func:`find_compilers` lists the C
and C++ compilers present (gcc, g++, clang, clang++; ``cc``/``c++`` when the named ones are missing), each of
which builds an executable or a shared library with the flags the header promises to compile cleanly under:
``-std=c11`` / ``-std=c++17`` with ``-Wall -Wextra -Werror -pedantic``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from wddmsim.drivers.native.include import include_dir

STRICT_FLAGS: Final = ("-Wall", "-Wextra", "-Werror", "-pedantic")
"""Warnings as errors: the header must add none."""
STANDARD: Final = {"c": "-std=c11", "c++": "-std=c++17"}
SUFFIX: Final = {"c": ".c", "c++": ".cpp"}
Language = Literal["c", "c++"]
_CANDIDATES: Final[tuple[tuple[str, Language], ...]] = (
    ("gcc", "c"),
    ("clang", "c"),
    ("g++", "c++"),
    ("clang++", "c++"),
)
_FALLBACKS: Final[tuple[tuple[str, Language], ...]] = (("cc", "c"), ("c++", "c++"))


class CompileError(Exception):
    """The compiler refused a source: the message holds its command line and its diagnostics."""


@dataclass(frozen=True, slots=True)
class Compiler:
    """One compiler and the language it builds."""

    name: str
    path: str
    language: Language

    def flags(self, extra: tuple[str, ...] = ()) -> list[str]:
        """The command-line flags; ``extra`` comes before the shipped include directory, so it can shadow it."""
        return [STANDARD[self.language], *STRICT_FLAGS, *extra, f"-I{include_dir()}"]

    def _run(self, source: str, out: Path, mode: list[str], extra: tuple[str, ...]) -> Path:
        src = out.with_suffix(SUFFIX[self.language])
        src.write_text(source, encoding="utf-8")
        command = [self.path, *self.flags(extra), *mode, "-o", str(out), str(src)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CompileError(f"{' '.join(command)}\n{done.stderr}")
        return out

    def executable(self, source: str, out: Path, extra: tuple[str, ...] = ()) -> Path:
        """Build ``source`` into the program ``out``."""
        return self._run(source, out, [], extra)

    def shared_library(self, source: str, out: Path, extra: tuple[str, ...] = ()) -> Path:
        """Build ``source`` into the shared library ``out`` (``-shared -fPIC``), as a user builds a driver."""
        return self._run(source, out, ["-shared", "-fPIC"], extra)

    def object_file(self, source: str, out: Path, extra: tuple[str, ...] = ()) -> Path:
        return self._run(source, out, ["-c"], extra)


def find_compilers() -> list[Compiler]:
    """The C and C++ compilers on ``PATH`` (both gcc and clang when present)."""
    found = [Compiler(name, path, lang) for name, lang in _CANDIDATES if (path := shutil.which(name))]
    for name, lang in _FALLBACKS:
        if not any(c.language == lang for c in found) and (path := shutil.which(name)):
            found.append(Compiler(name, path, lang))
    return found
