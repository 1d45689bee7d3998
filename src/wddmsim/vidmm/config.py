"""``VidMmConfig``: what the composition root (:class:`~wddmsim.vidmm.manager.VideoMemoryManager`) is told beyond
what the driver reports -- paging-buffer rotation, the scratch area, the policies, deferred paging."""

from __future__ import annotations

from dataclasses import dataclass

from wddmsim.vidmm.policy import EvictionPolicy, PlacementPolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class VidMmConfig:
    """VidMm's own settings: paging buffers, the paging context, and what tests and sweeps override."""

    paging_buffers: int = 4
    """How many paging buffers rotate (a new one is used only after its previous fence passed)."""
    paging_context: int = 1
    """``hSystemContext``: the driver's system context for paging."""
    paging_buffer_size: int | None = None
    """Override the driver's ``PagingBufferSize`` (tests sweep it)."""
    scratch_size: int = 16 * 1024 * 1024
    """The system paging process's scratch area (GpuMmu): content moves through it in chunks of half of it."""
    physical_moves: bool = False
    """Move content with physical ``Transfer``/``Fill`` even on a GpuMmu driver (decision 0014)."""
    eviction_policy: str | EvictionPolicy = "stable"
    """The eviction policy: a name of :data:`wddmsim.vidmm.policy.registry.EVICTION`, ``module:Class``, or a
    policy object (an offline policy built with a recorded run's uses)."""
    placement_policy: str | PlacementPolicy = "free-first"
    """The placement policy: a name of :data:`wddmsim.vidmm.policy.registry.PLACEMENT`, ``module:Class``, or an
    object."""
    budgets: str = "capacity"
    """How the OS sets budgets (decision 0169): ``capacity`` (each process may use the whole group unless the OS
    imposes a budget) or ``shared`` (re-shared by priority, focus and usage under pressure)."""
    deferred_paging: bool = True
    """``MakeResident`` is admitted at the call and serviced by the paging worker, highest queue priority first
    (decision 0043); False services each request within its call (queue priorities then change nothing)."""
