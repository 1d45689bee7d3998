"""The one place policies are named: the CLI (``--policy``, ``--placement``, ``run --list``), the scenario files
(``adapter.policy``, ``adapter.placement``) and :class:`~wddmsim.vidmm.config.VidMmConfig` all read it.

A name is a registered one, or ``module:Class`` for a policy from outside the package: the module is imported
as Python imports any module (from ``sys.path``: ``PYTHONPATH=. wddmsim run --policy mypkg.clock:Clock``, or
``python -m wddmsim ...`` from the folder that holds ``mypkg``), the class is called without arguments, and
the object must implement the protocol.  Every refusal is a
:class:`~wddmsim.core.errors.ConfigurationError` naming the setting, the value and the rule.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from wddmsim.core.errors import ConfigurationError
from wddmsim.vidmm.policy.arc import Arc
from wddmsim.vidmm.policy.clock import Clock
from wddmsim.vidmm.policy.fifo import Fifo
from wddmsim.vidmm.policy.gds import GreedyDualSize
from wddmsim.vidmm.policy.interface import EvictionPolicy, PlacementPolicy
from wddmsim.vidmm.policy.ladder import Ladder, NearFirst
from wddmsim.vidmm.policy.lfu import Lfu
from wddmsim.vidmm.policy.lru import Lru
from wddmsim.vidmm.policy.mru import Mru
from wddmsim.vidmm.policy.offline import Belady
from wddmsim.vidmm.policy.priority_lru import PriorityLru
from wddmsim.vidmm.policy.scan import ScanLru
from wddmsim.vidmm.policy.seeded_random import RandomPolicy


@dataclass(frozen=True, slots=True)
class Entry:
    """One registered policy."""

    name: str
    summary: str
    factory: Callable[[], object] | None
    """None: an offline policy, built by whoever holds the recorded future."""


ALIAS_OF_OPT: Final = "min"
"""The first name of the clairvoyant policy, still accepted (decision 0161)."""

EVICTION: Final[dict[str, Entry]] = {
    e.name: e
    for e in (
        Entry(PriorityLru.name, "unreferenced first, then lower priority, then least recently used", PriorityLru),
        Entry(Lru.name, "unreferenced first, then least recently used", Lru),
        Entry(Fifo.name, "unreferenced first, then paged in longest ago", Fifo),
        Entry(RandomPolicy.name, "unreferenced first, then a seeded shuffle", RandomPolicy),
        Entry(Clock.name, "unreferenced first, then lower priority, then CLOCK (second chance)", Clock),
        Entry(Mru.name, "unreferenced first, then lower priority, then most recently used", Mru),
        Entry(Lfu.name, "unreferenced first, then lower priority, then least frequently used (aged)", Lfu),
        Entry(Arc.name, "unreferenced first, then lower priority, then ARC (scan-resistant, adaptive)", Arc),
        Entry(
            GreedyDualSize.name,
            "unreferenced first, then lower priority, then GreedyDual-Size (size-aware)",
            GreedyDualSize,
        ),
        Entry(ScanLru.name, "priority-lru ranking; room made at the cheapest contiguous hole (drm_mm scan)", ScanLru),
        Entry(Belady.name, "clairvoyant: evicts what is used furthest ahead (a recorded run gives the future)", None),
        Entry(ALIAS_OF_OPT, f"alias of {Belady.name} (Belady's MIN)", None),
    )
}
"""Eviction policies by name (``--policy``, ``adapter.policy``, ``VidMmConfig.eviction_policy``)."""

PLACEMENT: Final[dict[str, Entry]] = {
    e.name: e
    for e in (
        Entry(Ladder.name, "preferred group, then the other, evicting listed allocations last (default)", Ladder),
        Entry(NearFirst.name, "evict anyone in the preferred group before using the other", NearFirst),
    )
}
"""Placement policies by name (``--placement``, ``adapter.placement``, ``VidMmConfig.placement_policy``)."""

EVICTION_MEMBERS: Final = ("order", "may_evict", "scan", "used", "placed", "evicted", "freed")
PLACEMENT_MEMBERS: Final = ("rungs", "insert_mode", "demotion")
DEFAULT_EVICTION: Final = PriorityLru.name
DEFAULT_PLACEMENT: Final = Ladder.name
_EXTERNAL = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


def offline(name: str) -> bool:
    """Whether ``name`` is a registered offline policy (it needs the recorded uses of a run)."""
    entry = EVICTION.get(name)
    return entry is not None and entry.factory is None


def canonical(name: str) -> str:
    """``name``, or the registered name it is an alias of (``min`` -> ``opt``)."""
    return Belady.name if name == ALIAS_OF_OPT else name


def eviction_policy(spec: str | EvictionPolicy, setting: str = "eviction_policy") -> EvictionPolicy:
    """The eviction policy ``spec`` names (or ``spec`` itself, a policy object a program built)."""
    if isinstance(spec, str) and offline(spec):
        raise ConfigurationError(
            setting,
            spec,
            "is an offline policy: it needs the uses of a recorded run (wddmsim run and wddmsim replay record "
            "them first; a program passes Belady(future))",
        )
    policy = spec if not isinstance(spec, str) else _named(spec, EVICTION, setting, "known policies")
    if isinstance(policy, EvictionPolicy):
        return policy
    raise _not_a(policy, EVICTION_MEMBERS, setting, spec, "an eviction policy")


def placement_policy(spec: str | PlacementPolicy, setting: str = "placement_policy") -> PlacementPolicy:
    """The placement policy ``spec`` names (or ``spec`` itself)."""
    policy = spec if not isinstance(spec, str) else _named(spec, PLACEMENT, setting, "known placement policies")
    if isinstance(policy, PlacementPolicy):
        return policy
    raise _not_a(policy, PLACEMENT_MEMBERS, setting, spec, "a placement policy")


def valid_eviction_name(value: str, setting: str) -> bool:
    """For a scenario setting: True for a registered name; a ``module:Class`` is loaded and checked (an error
    naming ``setting``); False for anything else (the setting's rule is reported)."""
    if value in EVICTION:
        return True
    if _EXTERNAL.match(value):
        eviction_policy(value, setting)
        return True
    return False


def valid_placement_name(value: str, setting: str) -> bool:
    if value in PLACEMENT:
        return True
    if _EXTERNAL.match(value):
        placement_policy(value, setting)
        return True
    return False


def names(table: dict[str, Entry]) -> str:
    """The registered names, sorted, for rules and help texts."""
    return ", ".join(sorted(table))


def _named(name: str, table: dict[str, Entry], setting: str, known: str) -> object:
    entry = table.get(name)
    if entry is not None and entry.factory is not None:
        return entry.factory()
    if not _EXTERNAL.match(name):
        raise ConfigurationError(setting, name, f"{known}: {names(table)} (or module:Class)")
    return _construct(_load(name, setting), name, setting)


def _load(name: str, setting: str) -> Callable[[], object]:
    module_name, _, attribute = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigurationError(
            setting, name, f"module {module_name} cannot be imported ({error}): is its folder on PYTHONPATH?"
        ) from None
    except Exception as error:  # the user's module failed while importing: say so, not a traceback
        raise ConfigurationError(
            setting, name, f"module {module_name} failed to import: {type(error).__name__}: {error}"
        ) from None
    found = getattr(module, attribute, None)
    if found is None or not callable(found):
        raise ConfigurationError(setting, name, f"module {module_name} has no class {attribute}")
    factory: Callable[[], object] = found
    return factory


def _construct(factory: Callable[[], object], name: str, setting: str) -> object:
    try:
        return factory()
    except Exception as error:  # a policy from outside: its constructor's failure is the user's to read
        raise ConfigurationError(
            setting, name, f"{name}() failed (a policy is built without arguments): {type(error).__name__}: {error}"
        ) from None


def _not_a(policy: object, members: tuple[str, ...], setting: str, value: object, what: str) -> ConfigurationError:
    missing = [m for m in members if not callable(getattr(policy, m, None))]
    if not isinstance(getattr(policy, "name", None), str):
        missing.insert(0, "name")
    return ConfigurationError(
        setting,
        value,
        f"{type(policy).__name__} is not {what}: it lacks {', '.join(missing)} "
        "(subclass wddmsim.vidmm.policy.interface.BaseEviction or BasePlacement)",
    )
