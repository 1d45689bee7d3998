"""A pinned copy of earlier code, installed once into its own environment, to time whole runs against (issue 24).

Whole-run speed has no same-process baseline (the simulator is the thing timed), so the whole-run benchmarks run
the same command under two installations, one after the other in the same benchmark run: this checkout, and
:data:`BASELINE_COMMIT` -- the code as it was when the goal "twice as fast" was set.  The baseline is exported
from this checkout's git history (``git archive``), installed with ``pip`` into a virtual environment under the
cache directory (``$WDDMSIM_BENCH_CACHE``, else ``$XDG_CACHE_HOME/wddmsim``, else ``~/.cache/wddmsim``) and kept
there: later benchmark runs reuse it.  Without git history (an installed package) there is no baseline and the
benchmark says why instead of a ratio.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import venv
from pathlib import Path
from typing import Final

BASELINE_COMMIT: Final = "e1df244"
"""main when issue 24 set the whole-run goals (ratio >= 2.0 against it)."""


class NoBaseline(Exception):
    """The baseline cannot be installed here (no git history, no network for its dependencies ...)."""


def cache_dir() -> Path:
    given = os.environ.get("WDDMSIM_BENCH_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wddmsim"


def _repository() -> Path:
    """The git checkout this package was installed from (editable installs: the source tree's root)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / ".git").exists():
            return parent
    raise NoBaseline("this installation is not a git checkout: no history to export the baseline from")


def _files_only(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """Regular files and directories of the archive (a stray link in old history is left out)."""
    if member.issym() or member.islnk():
        return None
    return tarfile.data_filter(member, path)


def baseline_python(commit: str = BASELINE_COMMIT) -> Path:
    """The interpreter of the environment holding ``commit``'s package, installing it the first time."""
    root = cache_dir() / f"baseline-{commit}"
    python = root / "venv" / "bin" / "python"
    if (root / "ready").exists() and python.exists():
        return python
    repo = _repository()
    source = root / "src"
    source.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as archive:
        done = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", commit], stdout=archive, stderr=subprocess.PIPE
        )
        if done.returncode != 0:
            raise NoBaseline(f"git archive {commit}: {done.stderr.decode(errors='replace').strip()}")
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(source, filter=_files_only)
    venv.EnvBuilder(with_pip=True, clear=True).create(root / "venv")
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(source)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    if done.returncode != 0:
        raise NoBaseline(f"pip install of {commit} failed: {done.stdout.decode(errors='replace')[-400:]}")
    (root / "ready").write_text(commit)
    return python


def this_python() -> Path:
    return Path(sys.executable)
