"""Typed moves: why an allocation leaves its range (:class:`MoveCause`) and where it is or goes
(:class:`Destination`).

A leaf: it imports nothing of VidMm's, so the policy interface may hand a cause to a policy (``evicted``, a
``RoomRequest``) without a policy reaching into the moving machinery (decision 0065).  What a cause means to a move
(``demotes``, ``unswizzles``) and the move-observer protocol stay in :mod:`wddmsim.vidmm.moves.causes`.

The values are the strings the ``VidMmEvict`` event and the inspector have always carried (ETW's ``VidMmEvict``
reasons), so event logs read the same; code dispatches on the members, exhaustively (``assert_never``), so a new
cause or destination is a type error wherever it is not handled.
"""

from __future__ import annotations

from enum import Enum


class MoveCause(Enum):
    """Why an allocation leaves its range (``VidMmEvict.cause``)."""

    PRESSURE = "pressure"
    """Room for another placement (a victim the policy ranked)."""
    EVICT = "evict"
    """``Evict`` dropped the last residency reference."""
    TRIM = "trim"
    """``TrimResidencySet``."""
    OFFER = "offer"
    """An offered allocation's content dropped (under pressure or ``OfferImmediately``)."""
    DESTROY = "destroy"
    """The allocation is destroyed (its content is not copied)."""
    RESET = "reset"
    """An adapter reset lost the memory segments (decision D6)."""
    POWER = "power"
    """Out of a range a power transition purges (decision 0045)."""
    LOCK = "lock"
    """To make a CPU lock succeed, or a range taken from a lock."""
    COMPACT = "compact"
    """Its device's residency list is packed anew so that all of it fits before a context runs (decision 0172)."""


class Destination(Enum):
    """Where an allocation is, or where a move out of a range took it (``VidMmEvict.destination``)."""

    MEMORY = "memory"
    """A memory segment (local video memory)."""
    APERTURE = "aperture"
    """An aperture segment: the GPU reaches the backing store's pages through it."""
    SYSTEM = "system"
    """Its backing store only (segment 0, decision D4)."""
    DISCARDED = "discarded"
    """Nowhere: the content was dropped on the way out."""
    LOST = "lost"
    """The segment's bytes were lost by an adapter reset; the backing store holds what was last paged out."""
