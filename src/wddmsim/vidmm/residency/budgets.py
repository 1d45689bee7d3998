"""Budgets per process and segment group, ``QueryVideoMemoryInfo``, and ``TrimResidencySet`` as a reference
user-mode driver would answer it (wddm-spec section 3.9).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

from wddmsim.ddi.residency import (
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_QUERYVIDEOMEMORYINFO,
)
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, Process
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.checks import bad, reserved
from wddmsim.vidmm.residency.placement import Placer
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.segments import Segments

GROUPS = tuple(D3DKMT_MEMORY_SEGMENT_GROUP)


@final
class Budgets:
    """What each process may keep resident, what it does, and the trim that brings it back."""

    def __init__(
        self,
        objects: ObjectTable,
        segments: Segments,
        placement: Placer,
        servicing: PagingService,
        paging: PagingStream,
    ) -> None:
        self.objects = objects
        self.segments = segments
        self.placement = placement
        self.servicing = servicing
        self.paging = paging

    def capacity(self, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> int:
        """Bytes of the segments in ``group``: the maximum budget."""
        return sum(s.size for s in self.segments if s.group == group)

    def usage(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> int:
        """Bytes of the process's allocations that residency lists hold, charged to ``group`` (kept as they
        change: decision 0175)."""
        return process.account.usage[group]

    def set_budget(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP, budget: int) -> None:
        """Impose a budget (the OS does so under pressure): at most the group's capacity."""
        if not 0 <= budget <= self.capacity(group):
            raise bad("Budget", budget, f"must lie in [0, {self.capacity(group):#x}] (the group's capacity)")
        process.budgets[group] = budget

    def query_video_memory_info(self, args: D3DKMT_QUERYVIDEOMEMORYINFO) -> None:
        """``D3DKMTQueryVideoMemoryInfo``: Budget, CurrentUsage, CurrentReservation, AvailableForReservation."""
        process = self.objects.processes.get(args.hProcess)
        if process is None:
            raise bad("hProcess", args.hProcess, "is not a live process")
        try:
            group = D3DKMT_MEMORY_SEGMENT_GROUP(args.MemorySegmentGroup)
        except ValueError:
            raise bad("MemorySegmentGroup", args.MemorySegmentGroup, "must be LOCAL (0) or NON_LOCAL (1)") from None
        args.Budget = process.budgets[group]
        args.CurrentUsage = self.usage(process, group)
        args.CurrentReservation = process.reservations.get(group, 0)
        args.AvailableForReservation = args.Budget // 2

    def over_budget(self, device: Device, wanted: Iterable[VidMmAllocation], hard: bool) -> int:
        """Bytes by which adding ``wanted`` to the residency lists exceeds the budget (hard: the capacity)."""
        process = device.process
        worst = 0
        for group in GROUPS:
            new = sum(a.size for a in wanted if a.group == group and a.residency_count == 0)
            if not new:
                continue
            limit = self.capacity(group) if hard else process.budgets[group]
            worst = max(worst, self.usage(process, group) + new - limit)
        return worst

    def trim_need(self, process: Process) -> int:
        return max(self.usage(process, g) - process.budgets[g] for g in GROUPS)

    def trim_residency_set(self, device: Device, args: D3DDDIARG_TRIMRESIDENCYSET) -> int:
        """What a reference user-mode driver does when VidMm calls ``pfnTrimResidencySet``: evicts (drops from
        the list and pages out) per the flags; returns the bytes trimmed."""
        if self.objects.devices.get(device.handle) is not device:
            raise bad("hDevice", int(device.handle), "is not a live device")
        flags = args.TrimFlags
        reserved("TrimFlags", flags)
        if not isinstance(args.NumBytesToTrim, int) or not 0 <= args.NumBytesToTrim < 1 << 64:
            raise bad("NumBytesToTrim", args.NumBytesToTrim, "must be a UINT64")
        self.servicing.service()
        if flags.PeriodicTrim and flags.RestartPeriodicTrim:
            raise bad("TrimFlags", flags.Value, "RestartPeriodicTrim is not valid with PeriodicTrim")
        listed = sorted(
            (a for a in self.objects.allocations.values() if a.device is device and a.residency_count),
            key=lambda a: a.last_use,
        )
        trimmed = 0
        if flags.RestartPeriodicTrim:
            device.periodic_trim_fence = self.placement.clock
            return 0
        if flags.PeriodicTrim:
            for a in listed:
                if a.last_use <= device.periodic_trim_fence:
                    trimmed += self._trim(a)
            device.periodic_trim_fence = self.placement.clock
        if flags.TrimToBudget:
            for a in listed:
                if trimmed >= args.NumBytesToTrim:
                    break
                if a.residency_count:
                    trimmed += self._trim(a)
        self.paging.flush()
        return trimmed

    def _trim(self, a: VidMmAllocation) -> int:
        a.residency_count = 0
        if a.placement is not None:
            self.placement.leave(a, cause=MoveCause.TRIM)
        return a.size
