"""``residency-library``: the D3D12 Residency Starter Library's algorithm, from its public description.

An application (an engine) hands each command list's residency set to the library before executing it; the
library (steps as ``policies-and-clients.md`` lists them):

1. marks every object of the set used -- its last sync point is this frame's, it goes to the back of the LRU;
2. trims the objects whose sync point has completed and that have gone unused for longer than a grace period,
   which shrinks as the process nears its budget (``MAX_GRACE_FRAMES`` with no pressure, none at the budget);
3. makes the set's missing objects resident in batches that fit ``(local + non-local budget) - (local +
   non-local usage)`` (``QueryVideoMemoryInfo``), each ``MakeResident`` followed by a wait for its paging fence;
4. when the rest does not fit: evicts the least recently used objects (all of an older frame's sync points have
   completed -- the frame loop waits for its GPU work) until it does, and repeats;
5. when nothing is left to trim, makes the rest resident anyway (``CantTrimFurther``) and leaves VidMm to page;
6. registers for the OS's trim notification and trims when asked; and, as engines do, sets its own budget to 0
   when the application loses the foreground (releasing everything it may) and restores it on return.

Its promise, checked after every frame (:meth:`ResidencyLibrary.check`): the process never exceeds its budget by
more than one batch -- the last one it made resident -- plus the application's own plumbing it never trims; or,
when the frame alone needs more than the budget, it holds nothing but the frame and its plumbing (decision 0185).
"""

from __future__ import annotations

from typing import Final

from wddmsim.ddi.residency import D3DKMT_TRIMNOTIFICATION
from wddmsim.scenarios.clients.base import GROUPS, Client, Host, least_recent
from wddmsim.scenarios.held import Resource

MAX_GRACE_FRAMES: Final = 8
"""Frames an unused object stays resident with no pressure at all."""


class ResidencyLibrary(Client):
    """The residency manager of a D3D12 engine."""

    name = "residency-library"

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self.own_budget: int | None = None
        """The engine's own cap on its budget (0 in the background); None: the OS's budget."""
        self.last_batch = 0
        """Bytes of the last batch made resident this frame (the allowance of the budget promise)."""
        self.trimmed_on_notice = 0
        self.working: list[Resource] = []
        """The frame's residency set (what it may not trim before the frame's work)."""

    def setup(self) -> None:
        self.host.register_trim_notification(self.on_trim)

    # --- the budget ---------------------------------------------------------------------------------------

    def budget(self) -> tuple[int, int]:
        """(budget, usage) over both segment groups, the budget capped by the engine's own."""
        budget = usage = 0
        for group in GROUPS:
            b, u = self.host.budget(group)
            budget += b
            usage += u
        if self.own_budget is not None:
            budget = min(budget, self.own_budget)
        return budget, usage

    def grace(self, budget: int, usage: int) -> int:
        """Frames an unused object may stay: ``MAX_GRACE_FRAMES`` x (1 - pressure), pressure = usage / budget."""
        pressure = 1.0 if budget <= 0 else min(1.0, usage / budget)
        return int(MAX_GRACE_FRAMES * (1.0 - pressure))

    def _unused(self, working: list[Resource]) -> list[Resource]:
        return [r for r in self.host.resources if r.resident and r not in working]

    # --- a frame --------------------------------------------------------------------------------------------

    def prepare(self, working: list[Resource], frame: int) -> list[Resource]:
        self.last_batch = 0
        self.working = working
        budget, usage = self.budget()
        grace = self.grace(budget, usage)
        stale = [r for r in self._unused(working) if frame - r.last_use > grace]
        if stale:
            self.host.evict(stale)
        todo = [r for r in working if not r.resident]
        refused: list[Resource] = []
        while todo:
            budget, usage = self.budget()
            room = budget - usage
            batch = self._batch(todo, room)
            if batch and self.host.make_resident(batch):
                self.last_batch = sum(r.size for r in batch)
                for r in batch:
                    r.last_use = frame
                todo = todo[len(batch) :]
                continue
            need = max(sum(r.size for r in todo) - room, batch[0].size if batch else 1)
            victims = least_recent(self._unused(working), need)
            if victims:
                self.host.evict(victims)
                continue
            # Nothing left to trim: the rest anyway, over the budget -- VidMm pages (refused only over capacity).
            if self.host.make_resident(todo, cant_trim=True):
                self.last_batch = sum(r.size for r in todo)
            else:
                refused = todo
            break
        for r in working:
            if r not in refused:
                r.last_use = frame
        for r in refused:
            working.remove(r)
        return refused

    @staticmethod
    def _batch(todo: list[Resource], room: int) -> list[Resource]:
        """The longest prefix of ``todo`` that fits ``room`` bytes."""
        batch: list[Resource] = []
        for r in todo:
            if r.size > room:
                break
            batch.append(r)
            room -= r.size
        return batch

    def check(self, frame: int) -> str:
        budget, usage = self.budget()
        pinned = sum(r.size for r in self.host.pinned())
        over = usage - budget
        if over <= self.last_batch + pinned:
            return ""
        kept = sum(r.size for r in self._unused(self.working))
        if not kept:
            return ""  # nothing left to trim: the frame alone is over the budget (a budget of 0, decision 0185)
        return (
            f"usage {usage:#x} exceeds the budget {budget:#x} by {over:#x}: more than the last batch "
            f"({self.last_batch:#x}) and the plumbing ({pinned:#x}), keeping {kept:#x} the frame does not use"
        )

    # --- what the OS and the user do -----------------------------------------------------------------------

    def on_focus(self, foreground: bool) -> None:
        """Engines give their memory to the foreground application: their own budget 0 while in the background."""
        self.own_budget = None if foreground else 0
        if not foreground:
            self.trim_to_budget()

    def on_trim(self, notification: D3DKMT_TRIMNOTIFICATION) -> None:
        """The OS's trim notification: evict the least recently used until back within the budget (at least the
        bytes asked for with ``TrimToBudget``); ``PeriodicTrim``: everything unused for a grace period."""
        flags = notification.Flags
        if flags.PeriodicTrim:
            budget, usage = self.budget()
            stale = [r for r in self._unused([]) if self.host.frames_done - r.last_use > self.grace(budget, usage)]
            if stale:
                self.host.evict(stale)
                self.trimmed_on_notice += sum(r.size for r in stale)
        if flags.TrimToBudget:
            self.trim_to_budget(notification.NumBytesToTrim)

    def trim_to_budget(self, at_least: int = 0) -> None:
        budget, usage = self.budget()
        need = max(at_least, usage - budget)
        if need <= 0:
            return
        chosen = least_recent(self._unused([]), need)
        if chosen:
            self.host.evict(chosen)
            self.trimmed_on_notice += sum(r.size for r in chosen)
