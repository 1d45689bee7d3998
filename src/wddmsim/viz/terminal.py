"""The terminal every command prints on: the one place that makes wddmsim's rich ``Console`` (decision 0241).

Rich reads ``:name:`` in printed text as an emoji code by default.  wddmsim prints names its users chose (a
scenario, an allocation, a ``module:Class`` policy) and technical text full of colons; they print as written.
Turning the codes off also spares every command the import of rich's emoji table.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console


def terminal(*, stderr: bool = False, **options: Any) -> Console:
    """A console on stdout (or stderr) that prints ``:x:`` as ``:x:``; ``options`` go to ``Console`` as they are."""
    return Console(stderr=stderr, emoji=False, highlight=False, **options)
