"""Policies -- which allocations leave a segment, where room is made, where allocations go (decisions D7, 0065).

Microsoft does not document how VidMm picks victims or places allocations.  The residency manager keeps the
mechanism (who may be a victim at all, what a move costs and how it is built); the policies decide within it,
through two interfaces (:mod:`~wddmsim.vidmm.policy.interface`):

* an **eviction policy** ranks the candidates, may veto one (TTM's ``eviction_valuable``), chooses where room is
  made (a scan over the segment's ranges, after drm_mm's eviction scan), and is told of every use, placement,
  eviction and free, so that it may keep state of its own;
* a **placement policy** gives the ladder of segments and victim classes to try (as data), where in a segment a
  range is carved, and where a victim some residency list still needs is demoted.

Policies are registered by name in :mod:`~wddmsim.vidmm.policy.registry`, the one list the CLI, the scenario
files and :class:`~wddmsim.vidmm.config.VidMmConfig` read; ``module:Class`` names one from outside the package.
Each shipped policy is a module of its own that imports only the interface (an import-linter contract).

Shipped eviction policies: ``priority-lru`` (the default: unreferenced first, then lower priority, then least
recently used), ``lru``, ``fifo``, ``random`` (seeded; the baseline), ``clock`` (second
chance), ``mru``, ``lfu`` (with aging), ``arc`` (scan-resistant, adaptive: decision 0141), ``gds``
(GreedyDual-Size, size-aware), ``scan`` (priority-lru ranking, room made
at the cheapest contiguous hole) and ``opt`` (alias ``min``: Belady's MIN, clairvoyant: given the recorded
uses of a run).
Placement policies: ``ladder`` (the default) and ``near-first``.
"""

from __future__ import annotations

from wddmsim.vidmm.policy.arc import Arc
from wddmsim.vidmm.policy.clock import Clock
from wddmsim.vidmm.policy.fifo import Fifo
from wddmsim.vidmm.policy.gds import GreedyDualSize
from wddmsim.vidmm.policy.interface import (
    BaseEviction,
    BasePlacement,
    EvictionPolicy,
    InsertMode,
    PlacementPolicy,
    RoomPlan,
    RoomRequest,
    Rung,
    SegmentView,
    VictimClass,
)
from wddmsim.vidmm.policy.ladder import Ladder, NearFirst
from wddmsim.vidmm.policy.lfu import Lfu
from wddmsim.vidmm.policy.lru import Lru
from wddmsim.vidmm.policy.mru import Mru
from wddmsim.vidmm.policy.offline import Belady, UseRecorder
from wddmsim.vidmm.policy.priority_lru import PriorityLru
from wddmsim.vidmm.policy.registry import EVICTION, PLACEMENT, eviction_policy, placement_policy
from wddmsim.vidmm.policy.room import PolicyError, make_room
from wddmsim.vidmm.policy.scan import ScanLru
from wddmsim.vidmm.policy.seeded_random import RandomPolicy

__all__ = [
    "EVICTION",
    "PLACEMENT",
    "Arc",
    "BaseEviction",
    "BasePlacement",
    "Belady",
    "Clock",
    "EvictionPolicy",
    "Fifo",
    "GreedyDualSize",
    "InsertMode",
    "Ladder",
    "Lfu",
    "Lru",
    "Mru",
    "NearFirst",
    "PlacementPolicy",
    "PolicyError",
    "PriorityLru",
    "RandomPolicy",
    "RoomPlan",
    "RoomRequest",
    "Rung",
    "ScanLru",
    "SegmentView",
    "UseRecorder",
    "VictimClass",
    "eviction_policy",
    "make_room",
    "placement_policy",
    "policy_named",
]


def policy_named(name: str) -> EvictionPolicy:
    """The registered eviction policy ``name`` (kept for callers of the first version)."""
    return eviction_policy(name)
