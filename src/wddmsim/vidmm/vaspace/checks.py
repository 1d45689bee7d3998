"""Argument checks shared by the VA services: a refusal names the argument, its value and the rule."""

from __future__ import annotations

from wddmsim.ddi.status import HRESULT, InvalidArgument


def bad(argument: str, value: object, rule: str) -> InvalidArgument:
    """A user-mode refusal: ``E_INVALIDARG`` (decision 0016)."""
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def u64(argument: str, value: int) -> None:
    """Python integers do not wrap: a value outside [0, 2^64) is refused, never masked."""
    if not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise bad(argument, value, "must be a UINT64 (0 <= value < 2^64)")
