"""Whose code raised (decision 0231): a fault in a user's own policy, client or driver is one line naming its file,
line and function, exit 1; a fault in wddmsim or a library it calls keeps its whole traceback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from wddmsim.cli import TRACEBACK_VARIABLE, main
from wddmsim.core.blame import Culprit, libraries, user_code
from wddmsim.core.units import parse_size

POLICY = """\
from wddmsim.vidmm.policy import Lru


class Boom(Lru):
    calls = 0

    def used(self, a):
        Boom.calls += 1
        if Boom.calls > 20:
            raise ZeroDivisionError("the policy's own bug")
        return super().used(a)


class NumpyBoom(Lru):
    def used(self, a):
        through_numpy(-1)


def through_numpy(size):
    return np.zeros(size)  # a library raising on the user's argument


class ScipyBoom(Lru):
    def used(self, a):
        from scipy.optimize import linprog

        linprog([1], A_ub=[[1, 2]], b_ub=[1])  # an optional dependency raising on the user's argument


import numpy as np
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "my_policies.py"
    path.write_text(POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("my_policies", None)  # the next test's module is another file


def _run(*extra: str) -> list[str]:
    return ["run", "default", "--seed", "1", "--set", "workload.frames=3", "--policy", "my_policies:Boom", *extra]


def test_a_fault_in_a_users_policy_is_one_line_naming_its_place(user_module: Path) -> None:
    result = CliRunner().invoke(main, _run())
    assert result.exit_code == 1
    line = POLICY.splitlines().index('            raise ZeroDivisionError("the policy\'s own bug")') + 1
    assert result.output.splitlines()[-1] == (
        f"error: my_policies.used ({user_module}:{line}) raised ZeroDivisionError: the policy's own bug -- a fault "
        f"in code wddmsim loaded by name (a policy, client or driver), not in wddmsim; {TRACEBACK_VARIABLE}=1 shows "
        "the whole traceback"
    )
    assert "Traceback" not in result.output


def test_the_whole_traceback_when_asked_for(user_module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TRACEBACK_VARIABLE, "1")
    result = CliRunner().invoke(main, _run())
    assert isinstance(result.exception, ZeroDivisionError)
    assert "error: my_policies.used" not in result.output


def _raised(call: object, *args: object, match: str) -> BaseException:
    with pytest.raises(ValueError, match=match) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_wddmsims_own_fault_is_not_blamed_on_anyone() -> None:
    """Raised inside wddmsim, with the test's frames outermost: the user's script drives wddmsim, it is not
    called back by it."""
    assert user_code(_raised(parse_size, "12 parsecs", match="parsecs")) is None


def test_an_exception_that_never_entered_wddmsim_is_not_blamed() -> None:
    assert user_code(_raised(np.zeros, -1, match="negative dimensions")) is None


def test_a_library_fault_under_user_code_blames_the_users_frame(user_module: Path) -> None:
    """wddmsim -> the user's policy -> numpy, which raises: the culprit is the user's frame that called numpy."""
    result = CliRunner().invoke(main, [*_run()[:-1], "my_policies:NumpyBoom"])
    assert result.exit_code == 1
    line = POLICY.splitlines().index("    return np.zeros(size)  # a library raising on the user's argument") + 1
    assert result.output.splitlines()[-1].startswith(
        f"error: my_policies.through_numpy ({user_module}:{line}) raised ValueError: negative dimensions"
    )


def test_an_optional_dependencys_fault_under_user_code_blames_the_users_frame(user_module: Path) -> None:
    """scipy (the research extra) is a library too: its frames are not the user's, the policy's frame is."""
    result = CliRunner().invoke(main, [*_run()[:-1], "my_policies:ScipyBoom"])
    assert result.exit_code == 1
    line = (
        POLICY.splitlines().index(
            "        linprog([1], A_ub=[[1, 2]], b_ub=[1])  # an optional dependency raising on the user's argument"
        )
        + 1
    )
    assert result.output.splitlines()[-1].startswith(
        f"error: my_policies.used ({user_module}:{line}) raised ValueError: Invalid input for linprog"
    )


def test_the_libraries_are_every_installed_dependency_direct_or_not() -> None:
    """The extras' packages and their own requirements (dask's distributed needs tornado) are libraries."""
    assert {"numpy", "scipy", "pyarrow", "pandas", "distributed", "tornado"} <= libraries()
    assert "my_policies" not in libraries()


def test_a_culprit_reads_as_module_function_and_place() -> None:
    assert str(Culprit("pkg.mod", "used", "/x/pkg/mod.py", 7)) == "pkg.mod.used (/x/pkg/mod.py:7)"


def test_the_command_line_does_not_read_package_metadata_until_an_exception_arrives() -> None:
    """``importlib.metadata`` costs every command tens of milliseconds at start-up: imported only by
    :func:`~wddmsim.core.blame.libraries`."""
    probe = "import sys, wddmsim.cli; print('importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


STDLIB_NAMED = """\
import json

from wddmsim.vidmm.policy import Lru


class Boom(Lru):
    def used(self, a):
        raise ZeroDivisionError("a stdlib-named module's own bug")


class Parses(Lru):
    def used(self, a):
        json.loads("not json")  # the real standard library raising on the user's argument
"""


@pytest.fixture
def stdlib_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A user's module named like a standard-library one nothing has imported (``tabnanny``), first on the path."""
    assert "tabnanny" not in sys.modules
    path = tmp_path / "tabnanny.py"
    path.write_text(STDLIB_NAMED)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("tabnanny", None)


def test_a_users_module_named_like_a_stdlib_one_is_still_the_users(stdlib_named: Path) -> None:
    """Its frames are not the standard library's: their file lies outside it, so the fault is one line."""
    result = CliRunner().invoke(main, [*_run()[:-1], "tabnanny:Boom"])
    assert result.exit_code == 1
    line = STDLIB_NAMED.splitlines().index('        raise ZeroDivisionError("a stdlib-named module\'s own bug")') + 1
    assert result.output.splitlines()[-1].startswith(
        f"error: tabnanny.used ({stdlib_named}:{line}) raised ZeroDivisionError: a stdlib-named module's own bug"
    )
    assert "Traceback" not in result.output


def test_the_real_standard_library_under_such_a_module_is_still_a_library(stdlib_named: Path) -> None:
    result = CliRunner().invoke(main, [*_run()[:-1], "tabnanny:Parses"])
    assert result.exit_code == 1
    line = (
        STDLIB_NAMED.splitlines().index(
            '        json.loads("not json")  # the real standard library raising on the user\'s argument'
        )
        + 1
    )
    assert result.output.splitlines()[-1].startswith(
        f"error: tabnanny.used ({stdlib_named}:{line}) raised JSONDecodeError: Expecting value"
    )
