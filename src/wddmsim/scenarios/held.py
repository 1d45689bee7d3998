"""A resource as its application holds it: its handle, its lock view, and where it stands in the application's
residency set (shared by the application and its residency client)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP
from wddmsim.scenarios.workload import Placement, ResourceSpec

LOCAL: Final = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL
NON_LOCAL: Final = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL


@dataclass(slots=True, eq=False)
class Resource:
    """A resource as its application holds it.  Compared by identity: each is the one record of its allocation
    (its handle is its own), and the residency clients' ``r in working`` is asked thousands of times a run."""

    spec: ResourceSpec
    handle: HANDLE
    view: int = 0
    """``pData`` of its locks (the address stays for the allocation's life)."""
    held: bool = False
    """Locked for the whole run."""
    last_use: int = -1
    """The last frame that used it; -1: not in the residency set."""
    written: bool = False
    """Written since it was last made resident (an Evict of it may not say ``NotWrittenTo``)."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def size(self) -> int:
        return self.spec.size

    @property
    def resident(self) -> bool:
        """In the application's residency set (its device's residency list holds it)."""
        return self.last_use >= 0

    @property
    def group(self) -> D3DKMT_MEMORY_SEGMENT_GROUP:
        return NON_LOCAL if self.spec.placement == Placement.APERTURE else LOCAL
