"""Where scenarios come from: the built-in TOML files shipped in ``scenarios/builtin/``, or a TOML file of the
user's, with command-line overrides applied on top.

``tour`` is not a workload but the paging tour (:mod:`wddmsim.scenarios.tour`): every paging operation driven
directly and checked one by one; the command line runs it under that name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from wddmsim.core import tomlfile
from wddmsim.core.errors import ConfigurationError
from wddmsim.scenarios.config import ScenarioConfig, apply_overrides, from_dict
from wddmsim.scenarios.sizing import scaled_to_vram

BUILTIN: Final = ("default", "stress", "uploads", "tiles", "focus-loss", "newcomer", "careless")
"""The workload scenarios shipped with wddmsim (``wddmsim run NAME``)."""
TOUR: Final = "tour"


def builtin_text(name: str) -> str:
    """The TOML text of built-in scenario ``name`` (a starting point for your own file)."""
    if name not in BUILTIN:
        raise ConfigurationError("SCENARIO", name, f"built-in scenarios are {', '.join(BUILTIN)} (and {TOUR})")
    # The package is installed as files (never zipped): a path beside this module, without importlib.resources'
    # own imports (zipfile among them), which cost a plain run more than reading the file.
    return (Path(__file__).with_name("builtin") / f"{name}.toml").read_text(encoding="utf-8")


def load(spec: str | None = None, overrides: Mapping[str, object] | None = None) -> ScenarioConfig:
    """A checked configuration: built-in scenario or TOML file ``spec`` (default: ``default``), overridden."""
    name = spec or "default"
    if name in BUILTIN:
        text = builtin_text(name)
    else:
        path = Path(name)
        if not path.is_file():
            raise ConfigurationError(
                "SCENARIO",
                name,
                f"is neither a built-in scenario ({', '.join(BUILTIN)}, {TOUR}) nor a TOML file",
            )
        text = tomlfile.read_text(path, "SCENARIO", name)
        name = path.stem
    doc = tomlfile.parse(text, "SCENARIO", spec)
    given = dict(overrides or {})
    if "adapter.vram" in given:
        given = scaled_to_vram(doc, given, name)
    return from_dict(apply_overrides(doc, given), name=name)


def describe() -> list[tuple[str, str]]:
    """``(name, description)`` of every built-in scenario."""
    return [(name, load(name).description) for name in BUILTIN]
