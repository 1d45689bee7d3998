"""What the VA services refuse from their arguments alone (before any state is read): a refusal names the
argument, its value and the rule, with ``E_INVALIDARG`` (decision 0016)."""

from __future__ import annotations

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.ddi.va import (
    D3DDDI_MAPGPUVIRTUALADDRESS,
    D3DDDI_RESERVEGPUVIRTUALADDRESS,
    D3DDDICB_FREEGPUVIRTUALADDRESS,
    D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE,
)
from wddmsim.ddi.va import D3DDDIGPUVIRTUALADDRESS_RESERVATION_TYPE as Reservation
from wddmsim.vidmm.vaspace.tables import VA_ALIGNMENT


def bad(argument: str, value: object, rule: str) -> InvalidArgument:
    """A user-mode refusal: ``E_INVALIDARG`` (decision 0016)."""
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def u64(argument: str, value: int) -> None:
    """Python integers do not wrap: a value outside [0, 2^64) is refused, never masked."""
    if not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise bad(argument, value, "must be a UINT64 (0 <= value < 2^64)")


def check_reserve_arguments(args: D3DDDI_RESERVEGPUVIRTUALADDRESS) -> None:
    """``ReserveGpuVirtualAddress``: UINT64 fields, 64 KB alignment, a size, a reservation type user mode may ask."""
    for name in ("BaseAddress", "MinimumAddress", "MaximumAddress", "Size", "DriverProtection"):
        u64(name, getattr(args, name))
    for name in ("BaseAddress", "MinimumAddress", "MaximumAddress", "Size"):
        if getattr(args, name) % VA_ALIGNMENT:
            raise bad(name, getattr(args, name), "must be a multiple of 64 KB")
    if args.Size == 0:
        raise bad("Size", 0, "must not be zero")
    if args.ReservationType not in (
        Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_NO_ACCESS,
        Reservation.D3DDDIGPUVIRTUALADDRESS_RESERVE_ZERO,
    ):
        raise bad(
            "ReservationType",
            args.ReservationType,
            "must be RESERVE_NO_ACCESS (0) or RESERVE_ZERO (1); NO_COMMIT is for the system",
        )


def check_map_arguments(args: D3DDDI_MAPGPUVIRTUALADDRESS) -> None:
    """``MapGpuVirtualAddress``: widths, reserved fields, the protection, 4 KB alignment of the addresses, an
    empty size."""
    for name in (
        "BaseAddress",
        "MinimumAddress",
        "MaximumAddress",
        "OffsetInPages",
        "SizeInPages",
        "DriverProtection",
        "Reserved1",
    ):
        u64(name, getattr(args, name))
    if args.Reserved0 or args.Reserved1:
        raise bad("Reserved0" if args.Reserved0 else "Reserved1", args.Reserved0 or args.Reserved1, "must be zero")
    check_map_protection(args.Protection)
    for name in ("BaseAddress", "MinimumAddress", "MaximumAddress"):
        if getattr(args, name) % PAGE_SIZE:
            raise bad(name, getattr(args, name), "must be 4 KB aligned")
    if args.SizeInPages == 0:
        raise bad("SizeInPages", 0, "must not be zero")


def check_map_protection(p: D3DDDIGPUVIRTUALADDRESS_PROTECTION_TYPE) -> None:
    """``MapGpuVirtualAddress``'s ``Protection``: no reserved bits, nothing for the system only, Zero and
    NoAccess exclusive and without Write or Execute."""
    if p.Reserved:
        raise bad("Protection", p.Value, "reserved bits must be zero")
    if p.SystemUseOnly:
        raise bad("Protection.SystemUseOnly", 1, "is not for user mode")
    if p.Zero and p.NoAccess:
        raise bad("Protection", p.Value, "Zero and NoAccess exclude each other")
    if (p.Zero or p.NoAccess) and (p.Write or p.Execute):
        raise bad("Protection", p.Value, "Zero and NoAccess take no Write or Execute")


def check_free_arguments(args: D3DDDICB_FREEGPUVIRTUALADDRESS) -> None:
    """``FreeGpuVirtualAddress``: a 4 KB-aligned UINT64 base and size."""
    u64("BaseAddress", args.BaseAddress)
    u64("Size", args.Size)
    if args.BaseAddress % PAGE_SIZE or args.Size % PAGE_SIZE:
        raise bad(
            "BaseAddress" if args.BaseAddress % PAGE_SIZE else "Size",
            args.BaseAddress if args.BaseAddress % PAGE_SIZE else args.Size,
            "must be 4 KB aligned",
        )
