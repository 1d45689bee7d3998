"""The rules of ``pfnLockCb``'s arguments (``D3DDDICB_LOCKFLAGS`` and ``D3DDDICB_LOCK``, wddm-spec 4.5): a lock that
breaks one is refused with ``E_INVALIDARG`` naming the argument, and nothing changes."""

from __future__ import annotations

from collections.abc import Callable

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.lock import D3DDDICB_LOCK, D3DDDICB_LOCKFLAGS
from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.vidmm.allocation import VidMmAllocation


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


def _check_uint(argument: str, value: object, bits: int) -> None:
    """A C ``UINT`` field: an int (not a bool) in ``0 .. 2**bits - 1``."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << bits:
        raise _bad(argument, value, f"must be a {bits}-bit unsigned integer")


def _check_range(f: D3DDDICB_LOCKFLAGS, args: D3DDDICB_LOCK) -> None:
    """``pfnLockCb`` locks ``LockEntire`` or a page list; without either, only an acquired aperture says what is
    locked -- otherwise ``D3DERR_NOTAVAILABLE`` (the documented status), whatever the allocation's placement
    (decision 0051)."""
    if not (f.LockEntire or args.NumPages or args.pPages or f.AcquireAperture):
        raise InvalidArgument(
            "Flags.LockEntire",
            0,
            "neither LockEntire nor a page list (NumPages, pPages) nor AcquireAperture says what to lock",
            HRESULT.D3DERR_NOTAVAILABLE,
        )


def check_lock(
    a: VidMmAllocation,
    args: D3DDDICB_LOCK,
    *,
    segment_model: bool,
    sync_may_be_ignored: Callable[[], bool],
    aperture_only: Callable[[], bool],
) -> None:
    """The rules of ``D3DDDICB_LOCKFLAGS`` and ``D3DDDICB_LOCK`` (wddm-spec 4.5); E_INVALIDARG, nothing changed."""
    f = args.Flags
    if not isinstance(f, D3DDDICB_LOCKFLAGS):
        raise _bad("Flags", type(f).__name__, "must be a D3DDDICB_LOCKFLAGS")
    if f.Reserved:
        raise _bad("Flags.Reserved", f.Reserved, "must be zero")
    _check_uint("PrivateDriverData", args.PrivateDriverData, 32)
    _check_uint("NumPages", args.NumPages, 32)
    if args.pPages is not None and not isinstance(args.pPages, (tuple, list)):
        raise _bad("pPages", type(args.pPages).__name__, "must be NULL or a list of page indices")
    if a.lock is not None and a.lock.flags.ReadOnly and not a.lock.lock2 and not f.ReadOnly:
        raise _bad("Flags.ReadOnly", 0, "the allocation is locked ReadOnly: unlock it before locking it to write")
    if f.ReadOnly and f.WriteOnly:
        raise _bad("Flags", f.Value, "ReadOnly and WriteOnly together are invalid")
    if f.IgnoreSync and f.AcquireAperture:
        raise _bad("Flags", f.Value, "IgnoreSync and AcquireAperture together are invalid")
    if f.UseAlternateVA and not f.AcquireAperture:
        raise _bad("Flags.UseAlternateVA", 1, "indicates an acquired aperture: AcquireAperture must be set too")
    if f.UseAlternateVA and not (segment_model and a.flags.UseAlternateVA):
        raise _bad("Flags.UseAlternateVA", 1, "needs a WDDM 1.x allocation the driver created with UseAlternateVA")
    if (f.IgnoreSync or f.IgnoreReadSync) and not sync_may_be_ignored():
        raise _bad(
            "Flags.IgnoreSync" if f.IgnoreSync else "Flags.IgnoreReadSync",
            1,
            "only for allocations that can be placed in an aperture segment and are not swizzled",
        )
    if f.AcquireAperture and aperture_only():
        raise _bad("Flags.AcquireAperture", 1, "the allocation can only live in an aperture segment")
    if args.GpuVirtualAddress:
        raise _bad("GpuVirtualAddress", args.GpuVirtualAddress, "is reserved and must be 0")
    pages = a.size // PAGE_SIZE
    if f.LockEntire:
        if args.NumPages or args.pPages is not None:
            raise _bad("NumPages", args.NumPages, "LockEntire locks the whole allocation: NumPages 0, pPages NULL")
    elif args.pPages is not None or args.NumPages:
        listed = args.pPages or ()
        if args.NumPages != len(listed):
            raise _bad("NumPages", args.NumPages, f"must match pPages ({len(listed)} entries)")
        for i, page in enumerate(listed):
            if not isinstance(page, int) or not 0 <= page < pages:
                raise _bad(f"pPages[{i}]", page, f"the allocation has pages 0..{pages - 1}")
    _check_range(f, args)
    if a.lock is None and f.DonotWait and not f.Discard and a.ranges and a.swizzled:
        raise _bad("Flags.DonotWait", 1, "no no-overwrite lock while the allocation holds a swizzling range")
