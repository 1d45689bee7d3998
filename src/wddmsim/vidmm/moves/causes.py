"""The move-observer protocol (what must hear of every move of an allocation), and what a move's cause means to
the move itself: whether a victim is demoted to an aperture, whether its system copy must be linear.

The causes and destinations themselves are in :mod:`wddmsim.vidmm.move_kinds`, a leaf the policy interface may import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, assert_never

from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.segments import SegmentSpace


def demotes(cause: MoveCause) -> bool:
    """Whether a victim of this cause that some residency list still needs goes to an aperture when there is room
    (it stays GPU-accessible); every other cause takes it to its backing store."""
    match cause:
        case MoveCause.PRESSURE:
            return True
        case (
            MoveCause.EVICT
            | MoveCause.TRIM
            | MoveCause.OFFER
            | MoveCause.DESTROY
            | MoveCause.RESET
            | MoveCause.POWER
            | MoveCause.LOCK
            | MoveCause.COMPACT
        ):
            return False
        case _:
            assert_never(cause)


def unswizzles(cause: MoveCause) -> bool:
    """Whether the move exists for the CPU's sake (its view of the system copy must be linear)."""
    match cause:
        case MoveCause.LOCK:
            return True
        case (
            MoveCause.PRESSURE
            | MoveCause.EVICT
            | MoveCause.TRIM
            | MoveCause.OFFER
            | MoveCause.DESTROY
            | MoveCause.RESET
            | MoveCause.POWER
            | MoveCause.COMPACT
        ):
            return False
        case _:
            assert_never(cause)


@dataclass(frozen=True, slots=True)
class LeaveHow:
    """How the transfer out of a range is built, as an observer asks for it."""

    unswizzle: bool = False
    """The system copy must be linear (the CPU will look at it)."""
    special: tuple[int, int] | None = None
    """``(RangeId, PrivateDriverData)`` of an alternate-VA lock: the transfer is a ``SpecialLockTransfer``."""


STAY = LeaveHow()
"""An observer with nothing to ask of the transfer."""


class MoveObserver(Protocol):
    """What must hear of every move of an allocation so that its views stay right: GPU VA mappings, CPU views,
    the work in flight that uses it (decision 0060).  The residency core calls each hook on every observer, in the
    order the observers were handed to it."""

    def may_enter(self, a: VidMmAllocation, space: SegmentSpace) -> bool:
        """Whether ``space`` may receive ``a`` now (every observer must agree)."""
        ...

    def before_leave(self, a: VidMmAllocation, cause: MoveCause) -> LeaveHow:
        """``a`` is about to leave its range: after this, no view of the observer's reaches the range (the next
        operation in the stream may reuse it)."""
        ...

    def after_leave(self, a: VidMmAllocation) -> None:
        """The move out of the range is built (and, for a demoted victim, before it enters the aperture)."""
        ...

    def after_enter(self, a: VidMmAllocation) -> None:
        """``a`` arrived in a new range: views point there."""
        ...

    def may_forget(self, a: VidMmAllocation) -> None:
        """Refuse -- raise the documented error, changing nothing -- if ``a`` cannot be destroyed now."""
        ...

    def forget(self, a: VidMmAllocation) -> None:
        """``a`` is being destroyed (every observer agreed): its views go."""
        ...


def merge(hows: list[LeaveHow]) -> LeaveHow:
    """One transfer for all observers: unswizzled if any asks, through the first special range asked for."""
    special = next((h.special for h in hows if h.special is not None), None)
    return LeaveHow(unswizzle=any(h.unswizzle for h in hows), special=special)
