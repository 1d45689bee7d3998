"""Making room: the mechanism's side of the seam, where the eviction policy is consulted.

The residency manager hands over the allocations it allows as victims (never pinned, never one the request
needs); here the policy vetoes some, the rest form the roster -- offered allocations first, lowest offer
priority first (their content is dropped, not copied: ``D3DKMTOfferAllocations``), then the others as the
policy ranks them -- and the policy's plan is carried out with the two callbacks the manager gives: evict one
victim, and try to take the range (anywhere, or at the plan's hole).

Each victim leaves with who chose it and why (decision 0140): the policy's name and its
:func:`~wddmsim.vidmm.policy.interface.explanation`, asked just before the victim leaves; an offered victim is
the mechanism's choice (no policy name), by the offer rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wddmsim.core.errors import WddmsimError
from wddmsim.vidmm.policy.interface import (
    EvictionPolicy,
    RoomPlan,
    RoomRequest,
    SegmentView,
    VidMmAllocation,
    explanation,
)

Allocate = Callable[[int | None], int | None]
"""Take the range: anywhere the allocator finds (None) or at this offset; the offset taken, or None."""
Evict = Callable[[VidMmAllocation, str, str], None]
"""Evict one victim: ``(victim, policy, reason)`` -- the name of the policy that chose it ("" for the mechanism's
own rule) and why (decision 0140)."""


class PolicyError(WddmsimError):
    """A policy broke a rule of the seam (it chose a victim the mechanism did not offer)."""


def make_room(
    space: SegmentView,
    request: RoomRequest,
    candidates: Sequence[VidMmAllocation],
    policy: EvictionPolicy,
    *,
    free_bytes: int,
    allocate: Allocate,
    evict: Evict,
) -> int | None:
    """The offset of a range for ``request`` in ``space``, made by evicting some of ``candidates``; None (with
    what was evicted gone) if the policy's plan gives no room."""
    allowed = [v for v in candidates if policy.may_evict(v, request)]
    if sum(v.size for v in allowed) + free_bytes < request.size:
        return None  # not even every allowed victim would do: evict nothing
    offered = sorted((v for v in allowed if v.offered is not None), key=lambda v: (v.offered, v.last_use))
    roster = offered + policy.order([v for v in allowed if v.offered is None])
    plan = policy.scan(space, request, roster)
    _check(policy, plan, roster)
    leave = _explained(evict, policy, roster, len(offered))
    if plan.hole is None:
        return _one_by_one(plan.victims, space.id, allocate, leave)
    for victim in plan.victims:
        if _still_in(victim, space.id):
            leave(victim)
    offset = allocate(plan.hole)
    if offset is not None:
        return offset
    return _one_by_one(roster, space.id, allocate, leave)  # the plan was wrong: evict until it fits


def _explained(
    evict: Evict, policy: EvictionPolicy, roster: Sequence[VidMmAllocation], offered: int
) -> Callable[[VidMmAllocation], None]:
    """``evict`` with who chose each victim and why, worked out just before it leaves (the policy's state is
    then what decided, not what the eviction makes of it)."""
    rank = {id(v): i for i, v in enumerate(roster)}

    def one(victim: VidMmAllocation) -> None:
        i = rank[id(victim)]
        if i < offered:
            offer = victim.offered.name if victim.offered is not None else "?"
            evict(victim, "", f"offered ({offer}): its content is dropped before any ranked victim")
            return
        evict(victim, policy.name, explanation(policy, victim, i - offered + 1, len(roster) - offered))

    return one


def _one_by_one(
    victims: Sequence[VidMmAllocation], segment: int, allocate: Allocate, evict: Callable[[VidMmAllocation], None]
) -> int | None:
    """Evict in order until the allocator finds room (each victim frees a hole only as large as itself)."""
    for victim in victims:
        if not _still_in(victim, segment):
            continue  # gone already (the plan named it, or a move it caused took it)
        evict(victim)
        offset = allocate(None)
        if offset is not None:
            return offset
    return None


def _still_in(a: VidMmAllocation, segment: int) -> bool:
    return a.placement is not None and a.placement.segment_id == segment


def _check(policy: EvictionPolicy, plan: RoomPlan, roster: Sequence[VidMmAllocation]) -> None:
    allowed = {id(v) for v in roster}
    for victim in plan.victims:
        if id(victim) not in allowed:
            raise PolicyError(
                f"eviction policy {policy.name!r} chose {victim!r}, which is not among the victims allowed "
                "(pinned, needed by the same request, vetoed, or in another segment)"
            )
