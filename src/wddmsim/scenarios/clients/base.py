"""What a residency client is, and what it may ask of its application (:class:`Host`)."""

from __future__ import annotations

from typing import Protocol

from wddmsim.ddi.residency import D3DKMT_MEMORY_SEGMENT_GROUP, D3DKMT_TRIMNOTIFICATION
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.held import LOCAL, NON_LOCAL, Resource

GROUPS = (LOCAL, NON_LOCAL)


class Host(Protocol):
    """The application a client manages residency for: its resources and the calls it may make."""

    config: ScenarioConfig
    resources: list[Resource]
    frames_done: int

    def pinned(self) -> list[Resource]:
        """The application's own plumbing (staging, readback, tile pool): resident from setup to exit."""
        ...

    def make_resident(self, listed: list[Resource], *, cant_trim: bool = False) -> bool:
        """``MakeResident`` of ``listed`` (then a wait for its paging fence); False: ``E_OUTOFMEMORY``."""
        ...

    def evict(self, listed: list[Resource]) -> None:
        """``Evict`` of ``listed``; they leave the residency set."""
        ...

    def budget(self, group: D3DKMT_MEMORY_SEGMENT_GROUP) -> tuple[int, int]:
        """``QueryVideoMemoryInfo``: (Budget, CurrentUsage) of ``group``."""
        ...

    def register_trim_notification(self, callback: object) -> None:
        """``D3DKMTRegisterTrimNotification`` for the application's device."""
        ...

    def problem(self, step: str, operation: str, detail: str) -> None:
        """Something the application could not do as planned: a failed check of the run."""
        ...


class Client:
    """Base of the residency clients: the working set made resident before a frame, nothing after."""

    name = ""

    def __init__(self, host: Host) -> None:
        self.host = host

    def setup(self) -> None:
        """After the application created its resources, before its first frame."""

    def prepare(self, working: list[Resource], frame: int) -> list[Resource]:
        """Make ``working`` resident for ``frame``; returns those VidMm refused (no GPU work may name them)."""
        return bring(self.host, working, frame)

    def finish(self, working: list[Resource], frame: int) -> None:
        """After the frame's GPU work."""

    def on_focus(self, foreground: bool) -> None:
        """The application gained or lost the foreground."""

    def on_trim(self, notification: D3DKMT_TRIMNOTIFICATION) -> None:
        """The OS asked the application to trim (only if the client registered for it)."""

    def check(self, frame: int) -> str:
        """After the frame: a broken promise of the client's, described ("" if none)."""
        return ""


def bring(host: Host, working: list[Resource], frame: int, *, cant_trim_first: bool = False) -> list[Resource]:
    """The working set resident: MakeResident of the newcomers; refused, trim the rest and retry, then try with
    ``CantTrimFurther``.  Still refused, the newcomers leave ``working`` (no GPU work may name them: their VAs
    would fault) and are returned.  ``cant_trim_first``: ask with ``CantTrimFurther`` at once (over the budget)."""
    new = [r for r in working if not r.resident]
    refused: list[Resource] = []
    if new and not host.make_resident(new, cant_trim=cant_trim_first):
        others = [r for r in host.resources if r.resident and r not in working]
        if others:
            host.evict(others)
        if not host.make_resident(new) and not host.make_resident(new, cant_trim=True):
            refused = new
            for r in new:
                working.remove(r)
    for r in working:
        r.last_use = frame
    return refused


def least_recent(candidates: list[Resource], need: int) -> list[Resource]:
    """The least recently used of ``candidates`` whose sizes first reach ``need`` bytes (all, if they do not)."""
    chosen: list[Resource] = []
    for r in sorted(candidates, key=lambda r: r.last_use):
        if need <= 0:
            break
        chosen.append(r)
        need -= r.size
    return chosen
