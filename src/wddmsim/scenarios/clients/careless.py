"""``careless``: what an application that ignores its budget does (the contrast of issue 23)."""

from __future__ import annotations

from wddmsim.scenarios.clients.base import Client, bring
from wddmsim.scenarios.held import Resource


class Careless(Client):
    """Keeps everything it ever used in its residency set: each frame's newcomers are made resident with
    ``CantTrimFurther`` (over the budget: VidMm makes the room, evicting whoever its policy picks), and it
    evicts its own only when VidMm refuses even that (over the group's capacity).  It never registers for trim
    notifications and never looks at its budget."""

    name = "careless"

    def prepare(self, working: list[Resource], frame: int) -> list[Resource]:
        return bring(self.host, working, frame, cant_trim_first=True)
