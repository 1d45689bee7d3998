"""The terminal every command prints on: the one place that makes wddmsim's rich ``Console`` (decision 0241), and
the one rule for the text a user or an installed package chose when it reaches that terminal (decision 0247).

Rich reads ``:name:`` in printed text as an emoji code by default.  wddmsim prints names its users chose (a
scenario, an allocation, a ``module:Class`` policy) and technical text full of colons; they print as written.
Turning the codes off also spares every command the import of rich's emoji table.

A terminal acts on some characters instead of showing them: an escape sequence recolours, retitles or links, a
carriage return overwrites the line, a bidirectional override reorders what follows.  Text wddmsim did not write
(a scenario's name, a path, a capture's allocation names, an edited event log, a driver's description) reaches
the terminal through :func:`shown`, which writes each such character out as a visible escape (``\\x1b``,
``\\u202e``); :func:`plain` is the same as rich ``Text``, never read as markup.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.text import Text

_ACTED_ON = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1 (0x9b is a CSI on some terminals)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks, embeddings, overrides and isolates
    "\ud800-\udfff]"  # lone surrogates: bytes that were not UTF-8 (a path, a log line), unprintable as they are
)
_UNDECODED = range(0xDC80, 0xDD00)
"""Lone surrogates Python's ``surrogateescape`` makes of the bytes 0x80-0xff that did not decode."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code in _UNDECODED:
        return f"\\x{code - 0xDC00:02x}"  # the byte as it was in the name or the file
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object) -> str:
    """``text`` as it prints on a terminal: every character a terminal would act on (controls but tab and
    newline, bidirectional controls) or could not encode (a lone surrogate) written out as an escape."""
    return _ACTED_ON.sub(_escape, str(text))


def plain(text: object, style: str = "") -> Text:
    """``text`` (shown) as rich ``Text``: for table cells, titles and lines that hold words wddmsim did not write."""
    return Text(shown(text), style=style)


def terminal(*, stderr: bool = False, **options: Any) -> Console:
    """A console on stdout (or stderr) that prints ``:x:`` as ``:x:``; ``options`` go to ``Console`` as they are."""
    return Console(stderr=stderr, emoji=False, highlight=False, **options)


__all__ = ["plain", "shown", "terminal"]
