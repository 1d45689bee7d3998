"""What ``UpdateGpuVirtualAddress`` refuses: every rule of one call, checked whole before anything changes.

The call's own fields (:func:`check_header`), each operation by its type (:func:`check_operation`: the payload
``OperationType`` selects, dispatched exhaustively), and the one-reserved-range rule across the call
(:func:`check_one_region`).  Each check returns the work that applies the operation (:class:`.regions.UpdateStep`);
:mod:`.update` queues and applies it (wddm-spec.md section 3.4; decisions 0016, 0024).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, assert_never

from wddmsim.core.addresses import GpuVa
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.va import (
    D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION,
    D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    D3DDDICB_UPDATEGPUVIRTUALADDRESS,
    UpdateOperationPayload,
)
from wddmsim.ddi.va import D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION_TYPE as UpdateType
from wddmsim.vidmm.allocation import VidMmAllocation
from wddmsim.vidmm.vaspace.checks import bad, u64
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, Kind, Region, UpdateStep, VaMapping

AllocationOf = Callable[[HANDLE, str], VidMmAllocation]
"""The calling process's allocation of a handle, refused naming the argument otherwise."""


PAYLOADS: Final[dict[int, type[UpdateOperationPayload]]] = {
    UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP,
    UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP: D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP,
    UpdateType.D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY: D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY,
}
"""The union member each ``OperationType`` selects."""

_ADDRESS_FIELDS: Final = (
    "BaseAddress",
    "SizeInBytes",
    "SourceAddress",
    "DestAddress",
    "AllocationOffsetInBytes",
    "AllocationSizeInBytes",
)


def _payload(name: str, op: D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION) -> UpdateOperationPayload:
    """The union member ``OperationType`` selects, refused when it is not the one given."""
    expected = PAYLOADS.get(op.OperationType)
    if expected is None or not isinstance(op.payload, expected):
        raise bad(
            f"{name}.OperationType",
            op.OperationType,
            "must be MAP (0), UNMAP (1), COPY (2) or MAP_PROTECT (3), with its union member",
        )
    return op.payload


def _check_addresses(name: str, p: UpdateOperationPayload) -> None:
    """Every address, size and offset of the operation a 4 KB-aligned UINT64; the size not zero."""
    for field_name in _ADDRESS_FIELDS:
        if hasattr(p, field_name):
            value = getattr(p, field_name)
            u64(f"{name}.{field_name}", value)
            if value % PAGE_SIZE:
                raise bad(f"{name}.{field_name}", value, "must be 4 KB aligned")
    if p.SizeInBytes == 0:
        raise bad(f"{name}.SizeInBytes", 0, "must not be zero")


def _reserved_region(space: GpuVaSpace, argument: str, at: int, size: int) -> Region:
    """The range obtained from Reserve that ``[at, at + size)`` lies in (a range obtained by Map does not do)."""
    region = space.region_at(at, size)
    if region is None or region.from_map:
        raise bad(argument, at, "the range must lie in one range obtained from Reserve")
    return region


def _map_protection(
    name: str, p: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP | D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT, region: Region
) -> tuple[bool, bool, int]:
    """(Write, Execute, driver protection) of the pieces a MAP or MAP_PROTECT maps."""
    if isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT):
        prot = p.Protection
        if prot.Reserved or prot.SystemUseOnly or prot.Zero or prot.NoAccess:
            raise bad(f"{name}.Protection", prot.Value, "MAP_PROTECT takes Write and Execute only")
        u64(f"{name}.DriverProtection", p.DriverProtection)
        return bool(prot.Write), bool(prot.Execute), p.DriverProtection
    # Decision 0016: a plain MAP is read-write and inherits the reservation's driver protection.
    return True, False, region.driver_protection


def check_header(args: D3DDDICB_UPDATEGPUVIRTUALADDRESS) -> None:
    """The call's own fields: reserved ones zero, ``FenceValue + 1`` a UINT64, a count that matches."""
    if args.Reserved0 or args.Reserved1 or args.Flags.Reserved:
        raise bad("Reserved0", args.Reserved0 or args.Reserved1 or args.Flags.Value, "reserved fields must be zero")
    u64("FenceValue", args.FenceValue)
    if args.FenceValue + 1 >= 1 << 64:
        raise bad("FenceValue", args.FenceValue, "FenceValue + 1 must still be a UINT64")
    if args.NumOperations != len(args.Operations) or not args.Operations:
        raise bad(
            "NumOperations", args.NumOperations, f"must be positive and match Operations ({len(args.Operations)})"
        )


def check_operation(
    space: GpuVaSpace, i: int, op: D3DDDI_UPDATEGPUVIRTUALADDRESS_OPERATION, allocation_of: AllocationOf
) -> UpdateStep:
    """Every rule of operation ``i``, before anything changes; returns the work that applies it."""
    name = f"Operations[{i}]"
    p = _payload(name, op)
    _check_addresses(name, p)
    match p:
        case D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY():
            return _check_copy(space, name, p)
        case D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP():
            return _check_unmap(space, name, p)
        case D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP() | D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT():
            return _check_map(space, name, p, allocation_of)
        case _:
            assert_never(p)


def _check_copy(space: GpuVaSpace, name: str, p: D3DDDI_UPDATEGPUVIRTUALADDRESS_COPY) -> UpdateStep:
    """COPY: source and destination each in one range obtained from Reserve."""
    source = _reserved_region(space, f"{name}.SourceAddress", p.SourceAddress, p.SizeInBytes)
    dest = _reserved_region(space, f"{name}.DestAddress", p.DestAddress, p.SizeInBytes)
    return UpdateStep(p.DestAddress, p.SizeInBytes, dest, source=p.SourceAddress, source_region=source)


def _check_unmap(space: GpuVaSpace, name: str, p: D3DDDI_UPDATEGPUVIRTUALADDRESS_UNMAP) -> UpdateStep:
    """UNMAP: the range, in one reserved range, goes to exactly one of the Zero and NoAccess states."""
    region = _reserved_region(space, f"{name}.BaseAddress", p.BaseAddress, p.SizeInBytes)
    if p.Protection.Zero == p.Protection.NoAccess or p.Protection.Write or p.Protection.Execute:
        raise bad(f"{name}.Protection", p.Protection.Value, "UNMAP takes exactly one of Zero and NoAccess")
    state = Kind.ZERO if p.Protection.Zero else Kind.NO_ACCESS
    pages = p.SizeInBytes // PAGE_SIZE
    piece = VaMapping(space, region, GpuVa(p.BaseAddress), pages, state, driver_protection=region.driver_protection)
    return UpdateStep(p.BaseAddress, p.SizeInBytes, region, (piece,))


def _check_map(
    space: GpuVaSpace,
    name: str,
    p: D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP | D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT,
    allocation_of: AllocationOf,
) -> UpdateStep:
    """MAP and MAP_PROTECT: the range in one reserved range, the allocation's range (repeated every
    ``AllocationSizeInBytes``) inside the allocation, and the protection each piece is mapped with."""
    region = _reserved_region(space, f"{name}.BaseAddress", p.BaseAddress, p.SizeInBytes)
    a = allocation_of(p.hAllocation, f"{name}.hAllocation")
    unit = p.AllocationSizeInBytes or p.SizeInBytes
    if p.AllocationSizeInBytes and p.SizeInBytes % p.AllocationSizeInBytes:
        raise bad(
            f"{name}.SizeInBytes",
            p.SizeInBytes,
            f"must be a multiple of AllocationSizeInBytes={p.AllocationSizeInBytes:#x}",
        )
    if p.AllocationOffsetInBytes + unit > a.size:
        raise bad(
            f"{name}.AllocationOffsetInBytes",
            p.AllocationOffsetInBytes,
            f"{unit:#x} bytes from it leave the {a.size:#x}-byte allocation",
        )
    write, execute, driver = _map_protection(name, p, region)
    pieces = tuple(
        VaMapping(
            space,
            region,
            GpuVa(p.BaseAddress + k * unit),
            unit // PAGE_SIZE,
            Kind.ALLOCATION,
            a,
            p.AllocationOffsetInBytes // PAGE_SIZE,
            write,
            execute,
            driver,
        )
        for k in range(p.SizeInBytes // unit)
    )
    plain = not isinstance(p, D3DDDI_UPDATEGPUVIRTUALADDRESS_MAP_PROTECT)
    return UpdateStep(p.BaseAddress, p.SizeInBytes, region, pieces, pool=a, plain_map=plain)


def check_one_region(space: GpuVaSpace, steps: list[UpdateStep]) -> None:
    """Per call: every mapped range and copy destination in one reserved range; copy sources in one."""
    for label, addresses in (
        ("BaseAddress", [s.address for s in steps]),
        ("SourceAddress", [s.source for s in steps if s.source is not None]),
    ):
        regions = {id(space.region_at(a, PAGE_SIZE)) for a in addresses}
        if len(regions) > 1:
            raise bad(f"Operations[*].{label}", addresses[0], "all ranges of one call must lie in one reserved range")
