"""Whose code raised an exception: wddmsim's, a library's, or the user's own.

Users bring code that wddmsim loads by name and calls on its hot paths: eviction and placement policies
(``--policy module:Class``), scenario clients, Python driver packages (``--driver module:NAME``).  A fault in that
code is the user's to fix, and the command line says so in one line naming the file, line and function
(decision 0231); a fault in wddmsim or in a library it calls is a bug to report, shown with its whole traceback.
Wrapping every call into user code would cost the hot paths; reading the traceback once, when the exception
arrives, costs nothing until then.
"""

from __future__ import annotations

import functools
import re
import sys
from types import TracebackType
from typing import Final, NamedTuple

LIBRARIES: Final = frozenset(sys.stdlib_module_names) | {
    "_pytest",
    "click",
    "dask",
    "distributed",
    "hypothesis",
    "matplotlib",
    "numpy",
    "pluggy",
    "pytest",
    "rich",
    "wddmsim",
}
"""Top-level packages whose frames are never the user's own code: the standard library and wddmsim's
dependencies (a user's code may call them; a fault they raise then blames the user's frame that called them).
:func:`libraries` adds what the installed dependencies (extras and their own requirements too) provide."""

_NAME: Final = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


@functools.cache
def libraries() -> frozenset[str]:
    """:data:`LIBRARIES` and the top-level packages of every installed distribution wddmsim requires, directly or
    not, extras included (scipy, pyarrow, dask's tornado ...): a fault they raise is never the user's own code.
    Worked out once, when an exception is first read (``importlib.metadata`` is imported then: at start-up it
    would cost every command tens of milliseconds)."""
    import importlib.metadata

    required: set[str] = set()
    pending = ["wddmsim"]
    while pending:
        name = _normal(pending.pop())
        if name in required:
            continue
        required.add(name)
        try:
            requirements = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed (or wddmsim run from a source tree): LIBRARIES is the list
        pending.extend(m.group(1) for m in map(_NAME.match, requirements) if m is not None)
    provided = importlib.metadata.packages_distributions()
    tops = {top for top, dists in provided.items() if any(_normal(d) in required for d in dists)}
    return LIBRARIES | tops


class Culprit(NamedTuple):
    """The innermost frame of the user's own code an exception passed through."""

    module: str
    function: str
    filename: str
    lineno: int

    def __str__(self) -> str:
        return f"{self.module}.{self.function} ({self.filename}:{self.lineno})"


def _package(module: str) -> str:
    return module.partition(".")[0]


def user_code(error: BaseException) -> Culprit | None:
    """The innermost frame of code that is neither wddmsim's nor a library's, among the frames the exception
    passed through after wddmsim last called out (None: wddmsim or a library raised it, or it never left wddmsim).

    Only frames inner to the innermost wddmsim frame count: a fault in a user's module that wddmsim called back
    is the user's; a fault in wddmsim while a user's script drives it (the user's frames outermost) is not.
    """
    frames: list[tuple[str, str, str, int]] = []
    tb: TracebackType | None = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((str(tb.tb_frame.f_globals.get("__name__", "")), code.co_name, code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    inner = 0
    for index, (module, *_rest) in enumerate(frames):
        if _package(module) == "wddmsim":
            inner = index + 1
    if inner == 0:
        return None  # never inside wddmsim: not a fault of code it called
    exempt = libraries()
    for module, function, filename, lineno in reversed(frames[inner:]):
        if module and not _library(module, filename, exempt):
            return Culprit(module, function, filename, lineno)
    return None


def _library(module: str, filename: str, exempt: frozenset[str]) -> bool:
    """Whether a frame is a library's: its top-level package is one -- and, for a standard-library name, its file
    lies in the standard library (a user's own ``profile.py`` or ``tabnanny.py`` on ``sys.path`` is the user's)."""
    top = _package(module)
    if top not in exempt:
        return False
    if top not in sys.stdlib_module_names:
        return True
    return filename.startswith(("<", *_stdlib_dirs()))  # "<frozen ...>": built in


@functools.cache
def _stdlib_dirs() -> tuple[str, ...]:
    """The standard library's directory (as found and resolved), ending in a path separator: where ``os`` lies, not
    ``platstdlib``, which in a virtual environment is the environment's own ``lib``."""
    import os

    where = os.path.dirname(os.__file__)
    return tuple({os.path.join(where, ""), os.path.join(os.path.realpath(where), "")})
