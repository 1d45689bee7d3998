"""TOML a user hands wddmsim: every way a file can be wrong is one refusal naming the setting, the file and the
rule (``core.tomlfile``, shared by scenario files and adapter descriptions)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wddmsim.core import tomlfile
from wddmsim.core.errors import ConfigurationError

DIGITS = sys.get_int_max_str_digits()


def test_a_valid_file_reads_as_its_document(tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    path.write_text('name = "n"\n[adapter]\nvram = "64MiB"\n', encoding="utf-8")
    assert tomlfile.read(path, "SCENARIO", str(path)) == {"name": "n", "adapter": {"vram": "64MiB"}}


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (b'name = "\xff"\n', "is not UTF-8 text (byte 8): TOML is UTF-8"),
        (b"name = \n", "is not valid TOML: Invalid value (at line 1, column 8)"),
        (f"v = {'9' * (DIGITS + 1)}\n".encode(), f"is not valid TOML: an integer of more than {DIGITS} digits"),
        (("v = " + "[" * 5000 + "]" * 5000 + "\n").encode(), "is not valid TOML: nested too deeply to read"),
    ],
    ids=["not UTF-8", "syntax", "too many digits", "too deep"],
)
def test_a_bad_file_is_refused_naming_the_setting_the_file_and_the_rule(
    tmp_path: Path, content: bytes, rule: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError) as caught:
        tomlfile.read(path, "--adapter", str(path))
    assert str(caught.value) == f"--adapter={str(path)!r}: {rule}"
    assert (caught.value.setting, caught.value.value, caught.value.rule) == ("--adapter", str(path), rule)


def test_a_file_that_cannot_be_read_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"SCENARIO='d': cannot be read: Is a directory"):
        tomlfile.read(tmp_path, "SCENARIO", "d")
