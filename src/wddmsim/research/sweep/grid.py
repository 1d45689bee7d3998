"""The runs of a sweep: a grid of scenario settings times seeds, each run named by a hash of what it runs.

A run is a pure function of (scenario, seed, settings), so its id -- the first 16 hex digits of the SHA-256 of
that triple as canonical JSON -- names its result for good: a rerun of the sweep finds it and skips it
(decision 0151).  The settings hashed are the canonical dotted keys (``policy`` is ``adapter.policy``), so
spelling a key either way names the same run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from wddmsim.core.errors import ConfigurationError
from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import parse_override

ALIASES: Final = {"policy": "adapter.policy", "placement": "adapter.placement"}
"""Short grid keys -> the scenario setting they stand for."""


def canonical(key: str) -> str:
    """The scenario setting a grid or ``--set`` key names."""
    return ALIASES.get(key, key)


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run of a sweep: the scenario, its seed and every setting (fixed ones and the grid point), keyed as the
    user wrote them."""

    scenario: str
    seed: int
    settings: Mapping[str, object]

    @property
    def overrides(self) -> dict[str, object]:
        """The scenario overrides this run applies (canonical keys, the seed included)."""
        return {**{canonical(k): v for k, v in self.settings.items()}, "seed": self.seed}

    @property
    def id(self) -> str:
        key = {"scenario": self.scenario, "seed": self.seed, "settings": _canonical_settings(self.settings)}
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "seed": self.seed, "settings": dict(self.settings)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunSpec:
        return cls(str(data["scenario"]), int(data["seed"]), dict(data["settings"]))


def _canonical_settings(settings: Mapping[str, object]) -> dict[str, object]:
    return {canonical(k): v for k, v in settings.items()}


@dataclass(frozen=True, slots=True)
class Plan:
    """A sweep: the scenario, the grid (key -> values, in the order given), the seeds and the fixed settings."""

    scenario: str
    grid: Mapping[str, Sequence[object]]
    seeds: Sequence[int]
    fixed: Mapping[str, object]

    def runs(self) -> list[RunSpec]:
        """Every run, in grid order: the first key varies slowest, the seed fastest."""
        keys = list(self.grid)
        points = itertools.product(*(self.grid[k] for k in keys))
        return [
            RunSpec(self.scenario, seed, {**self.fixed, **dict(zip(keys, point, strict=True))})
            for point in points
            for seed in self.seeds
        ]

    def manifest(self) -> dict[str, Any]:
        """``sweep.json``."""
        return {
            "scenario": self.scenario,
            "grid": {k: list(v) for k, v in self.grid.items()},
            "seeds": list(self.seeds),
            "settings": dict(self.fixed),
            "version": 1,
        }

    def validate(self) -> None:
        """Load the scenario at every grid point (cheap: no run): the first bad key or value raises a
        :class:`ConfigurationError` naming the option that gave it (``--grid KEY`` or ``--set KEY``)."""
        for spec in self.runs()[:: max(len(self.seeds), 1)]:
            try:
                catalog.load(self.scenario, spec.overrides)
            except ConfigurationError as error:
                raise self._named(error) from None

    def _named(self, error: ConfigurationError) -> ConfigurationError:
        """``error`` naming the command-line option that set its key, when one did."""
        for option, keys in (("--grid", self.grid), ("--set", self.fixed)):
            for key in keys:
                if error.setting == canonical(key) or error.setting.startswith(canonical(key) + "."):
                    return ConfigurationError(f"{option} {key}", error.value, error.rule)
        return error


def parse_grid(texts: Sequence[str]) -> dict[str, list[object]]:
    """``--grid KEY=V1,V2,...`` (repeatable) -> key -> values, each value read as ``--set`` reads one."""
    grid: dict[str, list[object]] = {}
    for text in texts:
        key, sep, raw = text.partition("=")
        key = key.strip()
        values = [v.strip() for v in raw.split(",")]
        if not sep or not key or not all(values):
            raise ConfigurationError("--grid", text, "must be KEY=V1,V2,... with no empty value, e.g. policy=lru,clock")
        if key == "seed":
            raise ConfigurationError("--grid", text, "seeds are given with --seeds N or --seed-list, not --grid")
        if key in grid or canonical(key) in map(canonical, grid):
            raise ConfigurationError("--grid", text, f"{key} is already a grid key")
        parsed = [parse_override(f"{key}={v}")[1] for v in values]
        if len(set(map(repr, parsed))) != len(parsed):
            raise ConfigurationError("--grid", text, "a value is repeated")
        grid[key] = parsed
    return grid


def parse_fixed(texts: Sequence[str], grid: Mapping[str, object]) -> dict[str, object]:
    """``--set KEY=VALUE`` (repeatable); a key may not also be a grid key nor the seed."""
    fixed: dict[str, object] = {}
    gridded = {canonical(k) for k in grid}
    for text in texts:
        key, value = parse_override(text)
        if key == "seed":
            raise ConfigurationError("--set", text, "seeds are given with --seeds N or --seed-list, not --set")
        if canonical(key) in gridded:
            raise ConfigurationError("--set", text, f"{key} is a grid key too")
        fixed[key] = value
    return fixed


def parse_seeds(count: int | None, listed: str | None) -> list[int]:
    """``--seeds N`` (seeds 1..N; 1 is every scenario's default seed) or ``--seed-list 1,2,5``; default: [1]."""
    if count is not None and listed is not None:
        raise ConfigurationError("--seed-list", listed, "give --seeds or --seed-list, not both")
    if listed is not None:
        try:
            seeds = [int(s) for s in listed.split(",")]
        except ValueError:
            raise ConfigurationError(
                "--seed-list", listed, "must be integers separated by commas, e.g. 1,2,5"
            ) from None
        if any(not 0 <= s < 1 << 63 for s in seeds) or len(set(seeds)) != len(seeds):
            raise ConfigurationError("--seed-list", listed, "seeds must be distinct, between 0 and 2**63 - 1")
        return seeds
    if count is None:
        return [1]
    if count < 1:
        raise ConfigurationError("--seeds", count, "must be at least 1")
    return list(range(1, count + 1))


__all__ = ["ALIASES", "Plan", "RunSpec", "canonical", "parse_fixed", "parse_grid", "parse_seeds"]
