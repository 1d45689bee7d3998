"""The documents stay true: every code path and test named in docs/conformance.md exists, README's commands run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
CONFORMANCE = (ROOT / "docs" / "conformance.md").read_text()


def _rows() -> list[str]:
    return [line for line in CONFORMANCE.splitlines() if re.match(r"^\| \d+ \|", line)]


def test_the_conformance_table_has_all_100_checklist_items_once() -> None:
    numbers = [int(line.split("|")[1]) for line in _rows()]
    assert numbers == list(range(1, 101))


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r.split("|")[1].strip())
def test_every_file_and_test_the_conformance_table_names_exists(row: str) -> None:
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)]
    status, code, tests = cells[3], cells[4], cells[5]
    assert status in {"done", "partial", "not yet", "out of scope"}
    if status == "done":
        assert tests, "a done item names its test"
    for path in re.findall(r"\b([a-z_]+/[a-z_/]+\.py)\b", code):
        assert (ROOT / "src" / "wddmsim" / path).exists(), path
    for path, names in re.findall(r"\b([a-z_]+(?:/[a-z_]+)*/test_[a-z_]+\.py)((?:::[A-Za-z0-9_]+(?:, )?)*)", tests):
        source = (ROOT / "tests" / path).read_text()
        for name in re.findall(r"::([A-Za-z0-9_]+)", names):
            assert f"def {name}(" in source, f"{path}::{name}"


def test_readme_gives_the_two_fresh_machine_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e . && .venv/bin/wddmsim run" in readme
    assert "pip install -e '.[dev]' && .venv/bin/pytest" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pytest" in ci and "wddmsim run" in ci


def test_no_merge_conflict_markers_were_committed() -> None:
    """A merge that left ``<<<<<<<`` lines in a document or a source file is caught here, not by a reader."""
    files = [*ROOT.glob("docs/**/*.md"), ROOT / "README.md", *ROOT.glob("src/**/*.py"), *ROOT.glob("tests/**/*.py")]
    marked = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "======="
    ]
    assert not marked, marked
