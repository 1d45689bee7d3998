"""``trim-to-share``: the workload's client before issue 23 (decision 0170 keeps it, named, as the default)."""

from __future__ import annotations

from wddmsim.scenarios.clients.base import GROUPS, Client, least_recent
from wddmsim.scenarios.held import Resource


class TrimToShare(Client):
    """Makes each frame's working set resident; after the frame, ``QueryVideoMemoryInfo`` and ``Evict`` of the
    least recently used until the process is back under ``resident_target`` x its share (``Budget`` divided
    among the workload's processes) in each segment group.  It does not register for trim notifications."""

    name = "trim-to-share"

    def finish(self, working: list[Resource], frame: int) -> None:
        w = self.host.config.workload
        for group in GROUPS:
            budget, usage = self.host.budget(group)
            over = usage - int(budget * w.resident_target / w.processes)
            if over <= 0:
                continue
            candidates = [r for r in self.host.resources if r.resident and r.group == group and r not in working]
            chosen = least_recent(candidates, over)
            if chosen:
                self.host.evict(chosen)
