"""The argument checks the residency calls share (user-mode callbacks: ``E_INVALIDARG`` naming the argument)."""

from __future__ import annotations

from wddmsim.vidmm.objects import bad

__all__ = ["bad", "checked_fence_value", "is_integer", "reserved"]


def reserved(argument: str, flags: object) -> None:
    """The reserved bits of a ``*_FLAGS`` union must be zero (they may mean something in a later WDDM)."""
    reserved = getattr(flags, "Reserved", None)
    if not isinstance(reserved, int) or isinstance(reserved, bool):
        raise bad(argument, type(flags).__name__, "is not this call's flags union")
    if reserved:
        raise bad(f"{argument}.Reserved", reserved, "must be zero")


def is_integer(value: object) -> bool:
    """A C integer: an ``int`` that is not a ``bool`` (nor None, a float, a string ...)."""
    return isinstance(value, int) and not isinstance(value, bool)


def checked_fence_value(value: object) -> int:
    """A monitored-fence value is a UINT64: checked before any work is done for the wait."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
        raise bad("FenceValue", value, "must be a UINT64")
    return value
