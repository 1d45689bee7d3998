"""Residency clients: how an application decides what its devices keep resident (issue 23, decision 0170).

What this layer models: the user-mode half of residency, which WDDM 2.x leaves to the application (D3D12) or its
runtime.  Every client speaks only ``MakeResident``, ``Evict``, ``QueryVideoMemoryInfo`` and the trim
notification; they differ in what they ask for and when:

- :class:`~.share.TrimToShare` (``trim-to-share``): makes each frame's working set resident and, after the frame,
  trims the least recently used back under its share of the budget (the workload's client before issue 23);
- :class:`~.library.ResidencyLibrary` (``residency-library``): the algorithm of the D3D12 Residency Starter
  Library, written from its public description: LRU by last use, a grace period that shrinks with pressure,
  MakeResident in batches that fit ``budget - usage``, trimming the least recently used until the rest fits, and
  the rest made resident anyway when nothing is left to trim; it answers trim notifications and gives its memory
  back when it loses the foreground;
- :class:`~.careless.Careless` (``careless``): ignores budgets and notifications; evicts only when VidMm refuses
  even with ``CantTrimFurther``.
"""

from __future__ import annotations

from wddmsim.scenarios.clients.base import Client, Host, bring
from wddmsim.scenarios.clients.careless import Careless
from wddmsim.scenarios.clients.library import ResidencyLibrary
from wddmsim.scenarios.clients.share import TrimToShare

CLIENTS: dict[str, type[Client]] = {
    "trim-to-share": TrimToShare,
    "residency-library": ResidencyLibrary,
    "careless": Careless,
}


def make_client(name: str, host: Host) -> Client:
    """The client named ``name`` (one of :data:`CLIENTS`) for the application ``host``."""
    return CLIENTS[name](host)


__all__ = ["CLIENTS", "Careless", "Client", "Host", "ResidencyLibrary", "TrimToShare", "bring", "make_client"]
