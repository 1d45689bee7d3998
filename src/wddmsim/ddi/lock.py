"""CPU access to allocations from user mode: ``pfnLockCb`` / ``pfnUnlockCb`` (the segment model) and
``pfnLock2Cb`` / ``pfnUnlock2Cb`` (WDDM 2.x), with their C field names (wddm-spec.md section 4.5).

``pData`` is the CPU virtual address the application reads and writes through: a
:class:`~wddmsim.core.addresses.CpuVa` in the calling process's address space.  ``[out]`` fields are mutable:
VidMm writes them, as in C.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wddmsim.core.bits import BitUnion, bits, flag
from wddmsim.ddi.base import HANDLE, NULL


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_LOCKFLAGS(BitUnion):
    """``D3DDDICB_LOCKFLAGS`` (d3dukmdt.h): ReadOnly 0x1 ... IgnoreReadSync 0x400, then 21 reserved bits."""

    ReadOnly: bool = flag(0)
    WriteOnly: bool = flag(1)
    DonotWait: bool = flag(2)
    """Fail with ``D3DERR_WASSTILLDRAWING`` instead of waiting for the GPU."""
    IgnoreSync: bool = flag(3)
    """Do not check GPU use (honoured only with ``DonotWait``; aperture-placeable, unswizzled allocations only)."""
    LockEntire: bool = flag(4)
    """The whole allocation (``NumPages`` 0, ``pPages`` NULL)."""
    DonotEvict: bool = flag(5)
    """Fail with ``D3DERR_NOTAVAILABLE`` rather than evict to make the lock succeed."""
    AcquireAperture: bool = flag(6)
    """Call ``DxgkDdiAcquireSwizzlingRange`` so the CPU sees linear bytes through an unswizzling aperture."""
    Discard: bool = flag(7)
    """The content may be dropped (VidMm may rename); ``IgnoreSync``/``DonotWait`` have no effect with it."""
    NoExistingReference: bool = flag(8)
    """The runtime holds no queued reference to the allocation."""
    UseAlternateVA: bool = flag(9)
    """Lock through an alternate VA the driver may resize/move (requires ``AcquireAperture``)."""
    IgnoreReadSync: bool = flag(10)
    """Wait only for GPU writes, not reads."""
    Reserved: int = bits(11, 21)


@dataclass(slots=True, kw_only=True)
class D3DDDICB_LOCK:
    """``D3DDDICB_LOCK``: ``hAllocation`` is in/out (a ``Discard`` lock may rename), ``pData`` out."""

    hAllocation: HANDLE
    PrivateDriverData: int = 0
    """Handed to ``DxgkDdiAcquireSwizzlingRange`` (for example the MIP level); never a pointer."""
    NumPages: int = 0
    pPages: tuple[int, ...] | None = None
    """The pages to lock (indices into the allocation), when not ``LockEntire``."""
    pData: int = 0
    """[out] the CPU virtual address of the allocation's first byte."""
    Flags: D3DDDICB_LOCKFLAGS = field(default_factory=D3DDDICB_LOCKFLAGS)
    GpuVirtualAddress: int = 0
    """Reserved: must be 0."""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_UNLOCK:
    """``D3DDDICB_UNLOCK``: ``phAllocations`` lists ``NumAllocations`` locked allocations."""

    NumAllocations: int
    phAllocations: tuple[HANDLE, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_LOCK2FLAGS(BitUnion):
    """``D3DDDICB_LOCK2FLAGS``: every bit is reserved and must be zero (WDDM 2.0)."""

    Reserved: int = bits(0, 32)


@dataclass(slots=True, kw_only=True)
class D3DDDICB_LOCK2:
    """``D3DDDICB_LOCK2`` (``pfnLock2Cb``): the user-mode driver does its own renaming and synchronisation."""

    hAllocation: HANDLE = NULL
    Flags: D3DDDICB_LOCK2FLAGS = field(default_factory=D3DDDICB_LOCK2FLAGS)
    pData: int = 0
    """[out]"""


@dataclass(frozen=True, slots=True, kw_only=True)
class D3DDDICB_UNLOCK2:
    """``D3DDDICB_UNLOCK2`` (``pfnUnlock2Cb``)."""

    hAllocation: HANDLE
