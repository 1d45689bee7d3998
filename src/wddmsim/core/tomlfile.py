"""TOML a user hands wddmsim -- a scenario, an adapter description -- read with every way it can be wrong refused
by rule: a :class:`~wddmsim.core.errors.ConfigurationError` naming the setting, the file and what is wrong, never a
traceback (a file that is not UTF-8, a syntax error, an integer past Python's digit limit, nesting past the
reader's depth)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

from wddmsim.core.errors import ConfigurationError


def read_text(path: Path, setting: str, value: object) -> str:
    """The text of a TOML file (TOML is UTF-8: a file that is not is refused naming the byte)."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigurationError(setting, value, f"is not UTF-8 text (byte {error.start}): TOML is UTF-8") from None
    except OSError as error:
        raise ConfigurationError(setting, value, f"cannot be read: {error.strerror or error}") from None


def parse(text: str, setting: str, value: object) -> dict[str, Any]:
    """The document ``text`` holds, or the refusal saying why it is not valid TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(setting, value, f"is not valid TOML: {error}") from None
    except ValueError:  # an integer literal Python will not convert (its default limit is 4300 digits)
        rule = f"is not valid TOML: an integer of more than {sys.get_int_max_str_digits()} digits"
        raise ConfigurationError(setting, value, rule) from None
    except RecursionError:  # tables or arrays nested past the reader's depth
        raise ConfigurationError(setting, value, "is not valid TOML: nested too deeply to read") from None


def read(path: Path, setting: str, value: object) -> dict[str, Any]:
    """:func:`parse` of :func:`read_text`."""
    return parse(read_text(path, setting, value), setting, value)


__all__ = ["parse", "read", "read_text"]
