"""Swizzling ranges (segment model): the ``NumberOfSwizzlingRanges`` CPU apertures through which a lock sees a
swizzled allocation linear, arbitrated least recently used first (``DxgkDdiAcquireSwizzlingRange``,
``DxgkDdiReleaseSwizzlingRange``).  A range is cached per ``(allocation, PrivateDriverData)`` until taken back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import final

from wddmsim.ddi.allocation import DXGKARG_ACQUIRESWIZZLINGRANGE, DXGKARG_RELEASESWIZZLINGRANGE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.lock import D3DDDICB_LOCK
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError, InvalidArgument
from wddmsim.vidmm.allocation import CpuLock, VidMmAllocation
from wddmsim.vidmm.segments import Segments

_RANGE_STATUSES = (
    NTSTATUS.STATUS_SUCCESS,
    NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNAVAILABLE,
    NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED,
)


@dataclass(slots=True)
class HeldRange:
    """One of the ``NumberOfSwizzlingRanges`` ranges, as VidMm arbitrates them."""

    allocation: VidMmAllocation
    private_data: int
    used: int


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


@final
class SwizzlingRanges:
    """Which allocation holds each range, and the driver calls that hand them out and take them back."""

    def __init__(
        self,
        driver: KernelModeDriver,
        segments: Segments,
        count: int,
        *,
        evict: Callable[[VidMmAllocation], None],
    ) -> None:
        self.driver = driver
        self.segments = segments
        self.slots: list[HeldRange | None] = [None] * count
        self._use = 0
        self._evict = evict
        """Takes an allocation locked through a range to system memory (the range is taken from it)."""

    def acquire(self, a: VidMmAllocation, lock: CpuLock, args: D3DDDICB_LOCK) -> str | None:
        """Hold a swizzling range for ``(a, PrivateDriverData)``; None on success, else why not."""
        private = args.PrivateDriverData
        if private in a.ranges:  # cached per (allocation, PrivateDriverData)
            self._touch(a.ranges[private])
            lock.swizzling_range = a.ranges[private] if a.swizzled else None
            return None
        if not self.slots:
            return "the driver has no swizzling ranges"
        while True:
            slot = self._free_slot()
            if slot is None:
                return "every swizzling range is in use and none could be released"
            status = self._call_acquire(a, slot, args)
            if status == NTSTATUS.STATUS_SUCCESS:
                self.slots[slot] = HeldRange(a, private, self._use)
                a.ranges[private] = slot
                self._touch(slot)
                lock.swizzling_range = slot if a.swizzled else None
                return None
            if status == NTSTATUS.STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED:
                return "DxgkDdiAcquireSwizzlingRange answered UNSWIZZLING_APERTURE_UNSUPPORTED"
            # UNAVAILABLE: release a range in use and try again (a free slot was not enough for the hardware).
            if self._steal(exclude=a) is None:
                return "DxgkDdiAcquireSwizzlingRange answered UNSWIZZLING_APERTURE_UNAVAILABLE with every range free"

    def _call_acquire(self, a: VidMmAllocation, slot: int, args: D3DDDICB_LOCK) -> NTSTATUS:
        assert a.placement is not None
        space = self.segments.get(a.placement.segment_id)
        requested = space.descriptor.CpuTranslatedAddress + a.placement.offset
        call = DXGKARG_ACQUIRESWIZZLINGRANGE(
            hAllocation=a.handle,
            PrivateDriverData=args.PrivateDriverData,
            RangeId=slot,
            SegmentId=space.id,
            RangeSize=a.size,
            CPUTranslatedAddress=requested,
        )
        try:
            status = NTSTATUS(self.driver.acquire_swizzling_range(call))
        except InvalidArgument as refused:
            # The driver refused the lock's private data (a MIP level the surface does not have, say): the caller
            # of pfnLockCb hears E_INVALIDARG with the argument the driver named (decision 0051).
            raise _bad(refused.argument, refused.value, refused.rule) from None
        if status not in _RANGE_STATUSES:
            raise DdiError(status, f"DxgkDdiAcquireSwizzlingRange returned {status.name}, not a documented status")
        moved = call.CPUTranslatedAddress != requested or call.RangeSize != a.size
        if status == NTSTATUS.STATUS_SUCCESS and moved and not args.Flags.UseAlternateVA:
            raise DdiError(
                NTSTATUS.STATUS_INVALID_PARAMETER,
                "DxgkDdiAcquireSwizzlingRange moved or resized the range without UseAlternateVA "
                f"(CPUTranslatedAddress {requested:#x} -> {call.CPUTranslatedAddress:#x})",
            )
        return status

    def _free_slot(self) -> int | None:
        for slot, held in enumerate(self.slots):
            if held is None:
                return slot
        return self._steal(exclude=None)

    def _steal(self, exclude: VidMmAllocation | None) -> int | None:
        """Release the least recently used range (not one of ``exclude``'s); returns its slot.

        If its allocation is locked through it, the allocation is evicted first (unswizzled) and its view rotated
        onto system memory, so the other application keeps reading and writing the same bytes at the same address.
        """
        held = [(r.used, slot, r) for slot, r in enumerate(self.slots) if r is not None and r.allocation is not exclude]
        if not held:
            return None
        _, slot, victim = min(held)
        owner = victim.allocation
        if owner.lock is not None and owner.lock.on_bus and owner.placement is not None:
            self._evict(owner)  # releases its ranges on the way out
        else:
            self.release(owner, victim.private_data)
        return slot

    def release(self, a: VidMmAllocation, private: int) -> None:
        """``DxgkDdiReleaseSwizzlingRange`` for one ``RangeId`` only (never all of an allocation's at once)."""
        slot = a.ranges.pop(private)
        self.slots[slot] = None
        self.driver.release_swizzling_range(
            DXGKARG_RELEASESWIZZLINGRANGE(hAllocation=a.handle, PrivateDriverData=private, RangeId=slot)
        )
        if a.lock is not None and a.lock.swizzling_range == slot:
            a.lock.swizzling_range = None

    def release_all(self, a: VidMmAllocation) -> None:
        for private in list(a.ranges):
            self.release(a, private)

    def _touch(self, slot: int) -> None:
        self._use += 1
        held = self.slots[slot]
        if held is not None:
            held.used = self._use
