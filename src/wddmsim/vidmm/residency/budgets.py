"""Budgets per process and segment group, ``QueryVideoMemoryInfo``, and ``TrimResidencySet`` as a reference
user-mode driver would answer it (wddm-spec section 3.9).

Budgets move (decision 0169): with ``budgets = "shared"`` the OS re-shares each group whenever a process's usage,
priority, focus, reservation or imposed budget changes, or a process starts or exits
(:mod:`~wddmsim.vidmm.policy.shares`); with ``"capacity"`` (the default) every process may use the whole group
unless the OS imposes a budget.  Every change is a :class:`~wddmsim.vidmm.events.VidMmProcessBudgetChange`; a
process a change leaves over its budget is sent a trim notification (``D3DKMTRegisterTrimNotification``'s
callback) when VidMm next delivers them -- between the process's calls, never inside another's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import final

from wddmsim.core.events import EventLog
from wddmsim.ddi.residency import (
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_TRIMNOTIFICATION,
)
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.device import Device, Process
from wddmsim.vidmm.events import VidMmProcessBudgetChange, VidMmProcessPriorityChange, VidMmTrimNotification
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.policy import shares
from wddmsim.vidmm.residency.checks import bad, reserved
from wddmsim.vidmm.residency.placement import Placer
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.segments import Segments

GROUPS = tuple(D3DKMT_MEMORY_SEGMENT_GROUP)
BUDGET_MODELS = ("capacity", "shared")
TRIM_TO_BUDGET = D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True).Value


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
        events: EventLog,
        *,
        model: str = "capacity",
    ) -> None:
        if model not in BUDGET_MODELS:
            raise bad("budgets", model, f"must be one of {', '.join(BUDGET_MODELS)}")
        self.objects = objects
        self.segments = segments
        self.placement = placement
        self.servicing = servicing
        self.paging = paging
        self.events = events
        self.model = model
        self.exempt: Process | None = None
        """VidMm's own process (the system device's): outside the sharing."""
        self.pending: dict[Process, int] = {}
        """Trim notifications to deliver: process -> ``D3DDDI_TRIMRESIDENCYSET_FLAGS`` bits (TrimToBudget)."""
        self.over: set[Process] = set()
        """Processes over their budget in some group, as of the last rebalance (decision 0173)."""
        self.asked: set[Process] = set()
        """Processes the OS asked to trim (delivered even when within their budget)."""
        self._next_registration = 1

    def capacity(self, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> int:
        """Bytes of the segments in ``group``: the maximum budget."""
        return sum(s.size for s in self.segments if s.group == group)

    def usage(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> int:
        """Bytes of the process's allocations that residency lists hold, charged to ``group`` (kept as they
        change: decision 0175)."""
        return process.account.usage[group]

    def impose(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP, budget: int | None) -> None:
        """The OS sets ``process``'s budget in ``group`` outright (``None``: back to the model)."""
        if budget is not None and not (
            isinstance(budget, int) and not isinstance(budget, bool) and 0 <= budget <= self.capacity(group)
        ):
            raise bad("Budget", budget, f"must lie in [0, {self.capacity(group):#x}] (the group's capacity)")
        if budget is None:
            process.imposed.pop(group, None)
        else:
            process.imposed[group] = budget
        self.rebalance("imposed" if budget is not None else "released")

    def reserve(self, process: Process, group: D3DKMT_MEMORY_SEGMENT_GROUP, reservation: int) -> None:
        """``D3DKMTChangeVideoMemoryReservation``: at most ``AvailableForReservation``; under the shared model a
        floor of the process's budget (decision 0169)."""
        available = process.budgets[group] // 2
        if not isinstance(reservation, int) or isinstance(reservation, bool) or not 0 <= reservation <= available:
            raise bad("Reservation", reservation, f"must lie in [0, {available:#x}] (AvailableForReservation)")
        process.reservations[group] = reservation
        self.rebalance("reservation")

    def set_priority(self, process: Process, priority_class: int, foreground: bool) -> None:
        """``D3DKMTSetProcessSchedulingPriorityClass``, or the focus moving: the process's weight changes."""
        if isinstance(priority_class, bool) or not isinstance(priority_class, int) or not 0 <= priority_class <= 5:
            raise bad("Priority", priority_class, "must be a D3DKMT_SCHEDULINGPRIORITYCLASS (0 IDLE ... 5 REALTIME)")
        focus = foreground != process.foreground
        process.priority_class = priority_class
        process.foreground = foreground
        self.events.emit(
            VidMmProcessPriorityChange(
                time=self.events.clock.now,
                process=int(process.handle),
                priority_class=priority_class,
                foreground=foreground,
            )
        )
        self.rebalance("focus" if focus else "priority")

    def _sharing(self) -> list[Process]:
        return [p for p in self.objects.processes.values() if p is not self.exempt]

    def rebalance(self, cause: str) -> None:
        """Every process's budget per the model, each change an event; a process that a change leaves over its
        budget, or that went over an unchanged one, is queued a ``TrimToBudget`` notification (once per crossing:
        a process staying over its budget is not asked again until a change)."""
        processes = self._sharing()
        before, self.over = self.over, set()
        for group in GROUPS:
            capacity = self.capacity(group)
            usage = [self.usage(p, group) for p in processes]
            if self.model == "shared":
                claims = [
                    shares.Claim(
                        shares.weight(p.priority_class, p.foreground),
                        used,
                        p.reservations.get(group, 0),
                        p.imposed.get(group),
                    )
                    for p, used in zip(processes, usage, strict=True)
                ]
                wanted = shares.budgets(capacity, claims)
            else:
                wanted = [p.imposed.get(group, capacity) for p in processes]
            for p, used, budget in zip(processes, usage, wanted, strict=True):
                if used > budget:
                    self.over.add(p)
                    if p not in before:
                        self.pending.setdefault(p, TRIM_TO_BUDGET)
                previous = p.budgets.get(group, capacity)
                if budget == previous:
                    continue
                p.budgets[group] = budget
                self.events.emit(
                    VidMmProcessBudgetChange(
                        time=self.events.clock.now,
                        process=int(p.handle),
                        group=int(group),
                        budget=budget,
                        previous=previous,
                        cause=cause,
                    )
                )
                if used > budget:
                    self.pending.setdefault(p, TRIM_TO_BUDGET)

    def usage_changed(self) -> None:
        """A residency list grew or shrank: under the shared model the shares move with it (and with a budget
        imposed, who is over it may change)."""
        if self.model == "shared" or any(p.imposed for p in self._sharing()):
            self.rebalance("usage")

    def is_over(self, a: VidMmAllocation) -> bool:
        """``a``'s process is over its budget (decision 0173)."""
        return a.device.process in self.over

    # --- trim notifications (D3DKMTRegisterTrimNotification) ---------------------------------------------------

    def register_trim_notification(self, process: Process, callback: object, context: object) -> int:
        """A callback VidMm calls with a ``D3DKMT_TRIMNOTIFICATION`` when the process should trim."""
        if not callable(callback):
            raise bad("Callback", callback, "must be a PFND3DKMT_TRIMNOTIFICATIONCALLBACK")
        handle = self._next_registration
        self._next_registration += 1
        process.trim_callbacks[handle] = (callback, context)
        return handle

    def unregister_trim_notification(self, process: Process, handle: object, callback: object) -> None:
        registered = process.trim_callbacks.get(handle) if isinstance(handle, int) else None
        if registered is None or not isinstance(handle, int):
            raise bad("Handle", handle, "is not a trim-notification registration of this process")
        if registered[0] != callback:  # equal, not identical: a bound method is a new object at each access
            raise bad("Callback", callback, "is not the callback registered with this handle")
        del process.trim_callbacks[handle]

    def forget_trim_notification(self, process: Process, handle: int) -> None:
        """The registration's device was destroyed: its callback is called no more (decision 0186)."""
        process.trim_callbacks.pop(handle, None)

    def notify(self, process: Process, flags: int) -> None:
        """Queue a trim notification for ``process`` (delivered by :meth:`deliver`), asked for by the OS."""
        self.pending[process] = self.pending.get(process, 0) | flags
        self.asked.add(process)

    def deliver(self) -> list[tuple[Process, D3DKMT_TRIMNOTIFICATION, list[tuple[Callable[..., None], object]]]]:
        """The notifications due, each with the callbacks to call: the caller (the runtime, outside every
        VidMm call) calls them.  ``NumBytesToTrim`` is how far the process is over its budget now."""
        due, self.pending = self.pending, {}
        asked, self.asked = self.asked, set()
        out = []
        for process, bits_ in due.items():
            if process.handle not in self.objects.processes:
                continue  # exited before delivery
            over = max(0, self.trim_need(process))
            if not over and process not in asked:
                continue  # queued when a change left it over its budget; another change put it back within
            flags = D3DDDI_TRIMRESIDENCYSET_FLAGS.from_value(bits_)
            callbacks = list(process.trim_callbacks.values())
            self.events.emit(
                VidMmTrimNotification(
                    time=self.events.clock.now,
                    process=int(process.handle),
                    flags=bits_,
                    bytes_to_trim=over,
                    delivered=len(callbacks),
                )
            )
            out.append((process, D3DKMT_TRIMNOTIFICATION(Flags=flags, NumBytesToTrim=over), callbacks))
        return out

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
