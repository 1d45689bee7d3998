"""A policy that raises at the first placement: a run of a sweep that fails with an exception."""

from __future__ import annotations

from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.policy.interface import BaseEviction, Range


class Exploding(BaseEviction):
    def placed(self, a: VidMmAllocation, where: Range) -> None:
        raise RuntimeError("exploding policy: no placement today")
