"""CPU access to allocations: ``pfnLockCb`` / ``pfnUnlockCb`` and ``pfnLock2Cb`` / ``pfnUnlock2Cb``.

What it models (seed 004 "Mapping Virtual Addresses to a Memory Segment"; wddm-spec.md sections 4.4-4.6):

- A lock gives the process a CPU *view* of the allocation (``pData``), reserved at the first lock and kept until the
  allocation is destroyed, so the address never changes.  Where the view points follows the allocation:
  a CPU-visible memory segment is reached linearly through the PCI BAR (bus address = ``CpuTranslatedAddress`` +
  the allocation's segment offset); an aperture segment through the system pages it maps; system memory
  directly, without the driver.
- Before the view points into a segment, VidMm calls ``DxgkDdiAcquireSwizzlingRange`` so the CPU sees the bytes
  exactly as they will look in system memory after an unswizzling eviction.  VidMm arbitrates the
  ``NumberOfSwizzlingRanges`` ranges among allocations (cached per allocation and ``PrivateDriverData``);
  ``UNAVAILABLE`` makes it release a range in use and retry, ``UNSUPPORTED`` makes it give up; giving up evicts
  the allocation to system memory (unswizzled) and maps that -- or fails with ``D3DERR_NOTAVAILABLE`` under
  ``DonotEvict``.
- An allocation evicted while locked keeps its address: the transfer unswizzles (``SpecialLockTransfer`` for
  alternate-VA locks), then the view is rotated onto the backing pages (``MmRotatePhysicalView``).  While locked
  it can enter only aperture segments, which map those same pages.
- Swizzled allocations (the driver's ``Swizzled`` flag, WDDM 1.x) have their swizzle state tracked: a backing
  store unswizzled for the CPU is swizzled again when paged back in, and is never mapped into an aperture for
  the GPU as it is.
- ``pfnLock2Cb`` (WDDM 2.x): no synchronisation, no swizzling ranges; allocations in a CPU-visible segment are
  reached through the BAR, others through their system pages.

Decisions the documents leave open are in docs/decisions/0030-cpu-locks.md.  The argument rules are in
:mod:`.lock_rules`, the swizzling-range arbiter in :mod:`.swizzle`.

Why over 400 lines: the four lock calls share the view's life (placed, rotated on a move, dropped), which is one
state machine; cutting it further would split a transition from the state it changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

from wddmsim.core.addresses import CpuVa
from wddmsim.core.events import EventLog
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.ddi.lock import (
    D3DDDICB_LOCK,
    D3DDDICB_LOCK2,
    D3DDDICB_LOCK2FLAGS,
    D3DDDICB_LOCKFLAGS,
    D3DDDICB_UNLOCK,
    D3DDDICB_UNLOCK2,
)
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_READPHYSICAL, DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL
from wddmsim.ddi.status import HRESULT, DdiError, InvalidArgument
from wddmsim.vidmm.allocation import Content, CpuLock, VidMmAllocation
from wddmsim.vidmm.cpu.rules import check_lock
from wddmsim.vidmm.cpu.swizzle import HeldRange, SwizzlingRanges
from wddmsim.vidmm.device import Device
from wddmsim.vidmm.events import CpuLockEvent
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.moves.causes import STAY, LeaveHow, unswizzles
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.ports import LockResidency
from wddmsim.vidmm.segments import Segments, SegmentSpace


class LockRefused(DdiError):
    """A lock the documents answer with a status other than ``E_INVALIDARG`` (nothing changed)."""


def _bad(argument: str, value: object, rule: str) -> InvalidArgument:
    return InvalidArgument(argument, value, rule, HRESULT.E_INVALIDARG)


@final
class AllocationLocks:
    """The CPU locks of allocations (``pfnLockCb``, ``pfnLock2Cb``, ``pfnUnlockCb``, ``pfnUnlock2Cb``; decision
    0091): the lock calls, the swizzling-range arbiter, and the hooks that keep views right across moves."""

    def __init__(
        self,
        driver: KernelModeDriver,
        objects: ObjectTable,
        residency: LockResidency,
        paging: PagingStream,
        segments: Segments,
        events: EventLog,
        *,
        swizzling_ranges: int,
        segment_model: bool,
        gpu_busy: Callable[[Device], bool],
        gpu_idle: Callable[[Device], None],
    ) -> None:
        self.driver = driver
        self.objects = objects
        self.residency = residency
        self.paging = paging
        self.segments = segments
        self.events = events
        self.segment_model = segment_model
        """WDDM 1.x: swizzling ranges, ``UseAlternateVA``, synchronising locks."""
        self.swizzling = SwizzlingRanges(driver, segments, swizzling_ranges, evict=self._evict_for_range)
        """The ``NumberOfSwizzlingRanges`` ranges, as VidMm arbitrates them."""
        self._gpu_busy = gpu_busy
        self._gpu_idle = gpu_idle
        self.evictions = 0
        """Allocations evicted because of a lock (a fallback, or a stolen range under a running lock)."""

    # --- pfnLockCb ---------------------------------------------------------------------------------------

    def lock(self, device: Device, args: D3DDDICB_LOCK) -> HRESULT:
        """``pfnLockCb``: ``args.pData`` receives the CPU address of the allocation's first byte."""
        a = self._lockable(device, args.hAllocation, "hAllocation")
        flags = args.Flags
        check_lock(
            a,
            args,
            segment_model=self.segment_model,
            sync_may_be_ignored=lambda: self._sync_may_be_ignored(a),
            aperture_only=lambda: self._aperture_only(a),
        )
        self.residency.service()  # the paging worker catches up: the lock sees where the allocation really is
        if a.lock is not None:
            return self._relock(a, args)
        if not self._synchronise(a, flags):
            return HRESULT.D3DERR_WASSTILLDRAWING
        lock = CpuLock(flags=flags, private_data=args.PrivateDriverData)
        status = self._place_view(a, lock, args)
        if status != HRESULT.S_OK:
            return status
        self._grant(a, lock, args.Flags.ReadOnly)
        args.pData = self._view(a)
        self._emit(a, "lock", lock)
        return HRESULT.S_OK

    def _relock(self, a: VidMmAllocation, args: D3DDDICB_LOCK) -> HRESULT:
        """A second lock of a locked allocation: same address, counted -- unless a rule forbids it."""
        held = a.lock
        assert held is not None
        f = args.Flags
        if held.lock2:
            raise _bad("hAllocation", a.handle, "is locked with pfnLock2Cb: unlock it with pfnUnlock2Cb first")
        if held.flags.UseAlternateVA:
            raise _bad("hAllocation", a.handle, "is locked with UseAlternateVA and cannot be locked again")
        if held.swizzling_range is not None:
            raise _bad("hAllocation", a.handle, "is locked through a swizzling range: unlock it before locking again")
        if f.AcquireAperture and not held.flags.AcquireAperture:
            raise _bad("Flags.AcquireAperture", 1, "the allocation is locked without AcquireAperture")
        held.count += 1
        args.pData = self._view(a)
        self._emit(a, "relock", held)
        return HRESULT.S_OK

    def _synchronise(self, a: VidMmAllocation, f: D3DDDICB_LOCKFLAGS) -> bool:
        """Wait until the GPU is done with ``a`` -- or, with ``DonotWait``, say it is not (False).

        VidMm's own paging of ``a`` is waited for whatever the flags (decision 0058): ``IgnoreSync`` and
        ``IgnoreReadSync`` skip the wait for the application's rendering, never for a move VidMm queued, which
        would otherwise land on (or over) the bytes the view shows."""
        if not self.residency.paging_done(a, wait=bool(f.Discard or not f.DonotWait)):
            return False
        if f.Discard:  # IgnoreSync and DonotWait have no effect with Discard
            self._wait_idle(a)
            return True
        if f.IgnoreSync and f.DonotWait:  # IgnoreSync is honoured only with DonotWait
            return True
        if not self._busy(a):
            return True
        if f.DonotWait:
            self.residency.poll()  # time passes between polls: a client retrying the lock sees the GPU finish
            return False
        self._wait_idle(a)
        return True

    def _busy(self, a: VidMmAllocation) -> bool:
        return not self.residency.published(a) or self._gpu_busy(a.device)

    def _wait_idle(self, a: VidMmAllocation) -> None:
        self._gpu_idle(a.device)
        self.residency.settle()

    # --- where the view points -----------------------------------------------------------------------------

    def _place_view(self, a: VidMmAllocation, lock: CpuLock, args: D3DDDICB_LOCK) -> HRESULT:
        """Make ``a`` CPU-reachable as linear bytes and point its view there (the three cases of "Locking
        Swizzled Allocations")."""
        space = self._space(a)
        swizzled_bits = a.content == Content.DATA and not a.backing_linear
        if a.swizzled and ((space is None and swizzled_bits) or (space is not None and space.aperture)):
            # Swizzled bits in system memory, or behind an aperture: only the GPU can unswizzle them, from a
            # memory segment -- page it into one first, then as an allocation in a memory segment.
            if not self.residency.bring_into_memory(a, cause=MoveCause.LOCK):
                raise LockRefused(
                    HRESULT.E_OUTOFMEMORY,
                    f"hAllocation={int(a.handle):#x}: its swizzled bits need a memory segment to be unswizzled, "
                    "and none can take it",
                )
            space = self._space(a)
        if space is None:
            if a.swizzled:
                a.backing_linear = True  # zeros, or unswizzled bits: the CPU writes linear bytes there now
            return self._on_pages(a, lock)
        if space.aperture:
            self._coherent(a, space, read=True)
            return self._on_pages(a, lock)
        if not space.cpu_visible:
            return self._fallback(a, lock, args, f"segment {space.id} is not CPU-visible")
        needs_range = a.swizzled or (args.Flags.AcquireAperture and bool(self.swizzling.slots))
        if needs_range:
            status = self.swizzling.acquire(a, lock, args)
            if status is not None:
                return self._fallback(a, lock, args, status)
        return self._on_bus(a, lock)

    def _on_pages(self, a: VidMmAllocation, lock: CpuLock) -> HRESULT:
        assert a.backing is not None
        lock.on_bus = False
        a.device.process.cpu.map_view_pages(self._view(a), a.backing.pfns)
        return HRESULT.S_OK

    def _on_bus(self, a: VidMmAllocation, lock: CpuLock) -> HRESULT:
        space = self._space(a)
        assert space is not None
        assert a.placement is not None
        lock.on_bus = True
        bus = space.descriptor.CpuTranslatedAddress + a.placement.offset  # linear access through the PCI aperture
        a.device.process.cpu.map_view_bus(self._view(a), bus)
        return HRESULT.S_OK

    def _fallback(self, a: VidMmAllocation, lock: CpuLock, args: D3DDDICB_LOCK, why: str) -> HRESULT:
        """The allocation cannot be made CPU-accessible where it is: evict it to system memory and map that.

        A refusal changes nothing (decision 0236): the ranges the allocation holds from earlier locks stay held and
        cached, so they are given back only once the eviction is granted -- just before it, in the order the
        eviction's own ``before_leave`` would give them back."""
        if args.Flags.DonotEvict:
            raise LockRefused(
                HRESULT.D3DERR_NOTAVAILABLE, f"hAllocation={int(a.handle):#x}: {why}, and DonotEvict forbids eviction"
            )
        if a.pin_count:
            raise LockRefused(
                HRESULT.D3DDDIERR_CANTEVICTPINNEDALLOCATION,
                f"hAllocation={int(a.handle):#x}: {why}, and it is pinned so it cannot be evicted",
            )
        if not (args.Flags.LockEntire or args.NumPages):
            raise LockRefused(
                HRESULT.D3DERR_NOTAVAILABLE,
                f"hAllocation={int(a.handle):#x}: {why}; locking it in system memory needs LockEntire or a page list",
            )
        self.swizzling.release_all(a)
        if a.placement is not None:
            self.residency.evict_for_cpu(a, discard=bool(args.Flags.Discard))
            self.evictions += 1
        return self._on_pages(a, lock)

    # --- swizzling ranges (vidmm/cpu/swizzle.py) ------------------------------------------------------------------

    @property
    def ranges(self) -> list[HeldRange | None]:
        """Who holds each swizzling range (None: free)."""
        return self.swizzling.slots

    def _evict_for_range(self, owner: VidMmAllocation) -> None:
        """A range is taken from an allocation locked through it: it goes to system memory first (unswizzled), its
        view rotated there, so its application keeps reading and writing the same bytes at the same address."""
        self.residency.evict_for_cpu(owner, discard=False)  # releases its ranges on the way out
        self.evictions += 1

    def _coherent(self, a: VidMmAllocation, space: SegmentSpace, *, read: bool) -> None:
        """AGP/CPU coherency (``ReadPhysical`` / ``WritePhysical``, segment model): before the CPU reads pages the
        GPU reached through the aperture, a GPU read of them drains the GPU's writes on that path; after the CPU
        wrote them, a GPU write (of the bytes already there) orders the CPU's writes before the GPU's next use."""
        if not self.segment_model:
            return
        assert a.placement is not None
        address = space.base + a.placement.offset
        paging = self.paging
        if read:
            paging.build(DXGK_BUILDPAGINGBUFFER_READPHYSICAL(SegmentId=space.id, PhysicalAddress=address))
        else:
            paging.build(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL(SegmentId=space.id, PhysicalAddress=address))
        self.residency.settle()

    # --- pfnUnlockCb ------------------------------------------------------------------------------------------

    def unlock(self, device: Device, args: D3DDDICB_UNLOCK) -> HRESULT:
        """``pfnUnlockCb``: one unlock per listed allocation; at zero the view is taken away (its address stays
        reserved for the next lock)."""
        if args.NumAllocations != len(args.phAllocations) or not args.phAllocations:
            raise _bad(
                "NumAllocations",
                args.NumAllocations,
                f"must be positive and match phAllocations ({len(args.phAllocations)})",
            )
        listed = [self._owned(device, h, f"phAllocations[{i}]") for i, h in enumerate(args.phAllocations)]
        counts: dict[int, int] = {}
        for i, a in enumerate(listed):
            counts[a.handle] = counts.get(a.handle, 0) + 1
            if a.lock is None or a.lock.lock2:
                raise _bad(f"phAllocations[{i}]", a.handle, "is not locked with pfnLockCb")
            if counts[a.handle] > a.lock.count:
                raise _bad(f"phAllocations[{i}]", a.handle, "is unlocked more times than it was locked")
        for a in listed:
            self._drop(a)
        return HRESULT.S_OK

    def _drop(self, a: VidMmAllocation) -> None:
        lock = a.lock
        assert lock is not None
        lock.count -= 1
        if lock.count:
            return
        space = self._space(a)
        if space is not None and space.aperture and not lock.flags.ReadOnly:
            self._coherent(a, space, read=False)
        a.lock = None
        assert a.cpu_view is not None
        a.device.process.cpu.unmap_view(a.cpu_view)
        self._emit(a, "unlock", lock)

    # --- pfnLock2Cb / pfnUnlock2Cb (WDDM 2.x) ------------------------------------------------------------------

    def lock2(self, device: Device, args: D3DDDICB_LOCK2) -> HRESULT:
        """``pfnLock2Cb``: the user-mode driver synchronises and renames itself; VidMm only maps."""
        if self.segment_model:
            raise _bad("pfnLock2Cb", 1, "is a WDDM 2.0 callback: a WDDM 1.x driver's runtime locks with pfnLockCb")
        if not isinstance(args.Flags, D3DDDICB_LOCK2FLAGS):
            raise _bad("Flags", type(args.Flags).__name__, "must be a D3DDDICB_LOCK2FLAGS")
        if args.Flags.Value:
            raise _bad("Flags", args.Flags.Value, "every D3DDDICB_LOCK2FLAGS bit is reserved and must be zero")
        a = self._lockable(device, args.hAllocation, "hAllocation")
        if a.lock is not None:
            if not a.lock.lock2:
                raise _bad("hAllocation", a.handle, "is locked with pfnLockCb: unlock it with pfnUnlockCb first")
            a.lock.count += 1
            args.pData = self._view(a)
            return HRESULT.S_OK
        # No synchronisation with rendering (the user-mode driver's part), but VidMm's own queued moves of the
        # allocation run first: the view must show the bytes last written (decision 0058).
        self.residency.paging_done(a, wait=True)
        space = self._space(a)
        if a.flags.Cached and space is not None and not space.aperture:
            # A cached CPU view of local memory would not be coherent: such allocations lock only from an
            # aperture segment or while not resident.
            self.residency.evict_for_cpu(a, discard=False)
            self.evictions += 1
            space = None
        lock = CpuLock(flags=D3DDDICB_LOCKFLAGS(), lock2=True)
        if space is not None and not space.aperture and not space.cpu_visible:
            if not self._has_aperture(a):
                raise _bad(
                    "hAllocation",
                    a.handle,
                    "is CPU-visible but placed in a segment the CPU cannot see, and its segments include no aperture",
                )
            self.residency.evict_for_cpu(a, discard=False)
            self.evictions += 1
            space = None
        if space is None or space.aperture:
            self._on_pages(a, lock)
        else:
            self._on_bus(a, lock)
        self._grant(a, lock, read_only=False)
        args.pData = self._view(a)
        self._emit(a, "lock2", lock)
        return HRESULT.S_OK

    def unlock2(self, device: Device, args: D3DDDICB_UNLOCK2) -> HRESULT:
        """``pfnUnlock2Cb``."""
        a = self._owned(device, args.hAllocation, "hAllocation")
        if a.lock is None or not a.lock.lock2:
            raise _bad("hAllocation", args.hAllocation, "is not locked with pfnLock2Cb")
        self._drop(a)
        return HRESULT.S_OK

    # --- shared steps ----------------------------------------------------------------------------------------

    def _owned(self, device: Device, handle: HANDLE, argument: str) -> VidMmAllocation:
        if device.removed is not None:
            raise DdiError(
                HRESULT.D3DDDIERR_DEVICEREMOVED, f"hDevice={int(device.handle):#x} was removed: {device.removed}"
            )
        a = self.objects.allocation(handle, argument)
        if a.device is not device:
            raise _bad(argument, handle, "belongs to another device")  # only the creator may lock
        return a

    def _lockable(self, device: Device, handle: HANDLE, argument: str) -> VidMmAllocation:
        a = self._owned(device, handle, argument)
        if not a.flags.CpuVisible:
            raise _bad(argument, handle, "was not created CpuVisible: only CPU-visible allocations can be locked")
        if a.offered is not None:
            raise _bad(argument, handle, "is offered: reclaim it before locking")
        return a

    def _grant(self, a: VidMmAllocation, lock: CpuLock, read_only: bool) -> None:
        a.lock = lock
        if not read_only:
            # The CPU may write: the bytes are data now, and a copy kept in the backing store is stale unless the
            # view shows the backing store itself.
            a.content = Content.DATA
            if lock.on_bus:
                a.backing_current = False
                a.clean_start = False  # a CPU write to the placement: NotWrittenTo speaks of the GPU only

    def _view(self, a: VidMmAllocation) -> CpuVa:
        if a.cpu_view is None:
            a.cpu_view = a.device.process.cpu.reserve_view(a.size)
        return a.cpu_view

    def _space(self, a: VidMmAllocation) -> SegmentSpace | None:
        return None if a.placement is None else self.segments.get(a.placement.segment_id)

    def _aperture_only(self, a: VidMmAllocation) -> bool:
        spaces = [self.segments.get(s) for s in self.segments.ids_in(a.usable_set)]
        return all(s.aperture for s in spaces)

    def _has_aperture(self, a: VidMmAllocation) -> bool:
        return any(self.segments.get(s).aperture for s in self.segments.ids_in(a.usable_set))

    def _sync_may_be_ignored(self, a: VidMmAllocation) -> bool:
        return self._has_aperture(a) and not a.swizzled

    def _emit(self, a: VidMmAllocation, action: str, lock: CpuLock) -> None:
        events = self.events
        events.emit(
            CpuLockEvent(
                time=events.clock.now,
                allocation=a.handle,
                action=action,
                address=a.cpu_view or 0,
                target="bus" if lock.on_bus else "pages",
                count=lock.count if a.lock is not None else 0,
            )
        )

    # --- a move observer of the residency core (MoveObserver, decision 0060) -----------------------------------

    def before_leave(self, a: VidMmAllocation, cause: MoveCause) -> LeaveHow:
        """An allocation leaves its segment: give its ranges back, and say how to transfer it -- unswizzled when
        the CPU will look at the system copy (a lock, or a lock in force), through the alternate VA's
        ``SpecialLockTransfer`` when it is locked that way.  An adapter reset's loss moves nothing: nothing to do."""
        if cause is MoveCause.RESET:
            return STAY
        special = None
        lock = a.lock
        if lock is not None and lock.flags.UseAlternateVA and lock.swizzling_range is not None:
            special = (lock.swizzling_range, lock.private_data)
        self.swizzling.release_all(a)
        unswizzle = a.swizzled and (lock is not None or unswizzles(cause))
        return LeaveHow(unswizzle=unswizzle, special=special)

    def after_leave(self, a: VidMmAllocation) -> None:
        """The move that took ``a`` out of its segment is built: once it has run, a view on the BAR is rotated
        onto the backing store, which now holds the same bytes in the same order."""
        lock = a.lock
        if lock is None or not lock.on_bus:
            return
        self.residency.settle()
        self._on_pages(a, lock)
        self._emit(a, "rotate", lock)

    def may_enter(self, a: VidMmAllocation, space: SegmentSpace) -> bool:
        """Whether ``space`` may receive ``a`` now."""
        if a.swizzled and a.backing_linear and a.content == Content.DATA and space.aperture:
            return False  # unswizzled bits are swizzled again on the way into a memory segment, never mapped
        if a.lock is not None and not a.lock.on_bus:
            return space.aperture  # the view shows the backing pages: only an aperture keeps them the content
        return True

    def abandon(self, a: VidMmAllocation) -> None:
        """The allocation's process is gone with it locked: the view is taken away whatever the lock count (no one
        will read it; the content goes with the allocation, so no coherency operation is issued)."""
        lock = a.lock
        if lock is None:
            return
        a.lock = None
        if a.cpu_view is not None:
            a.device.process.cpu.unmap_view(a.cpu_view)
        self._emit(a, "unlock", lock)

    def after_enter(self, a: VidMmAllocation) -> None:
        """Views of a placed allocation are set up by the lock that wants them."""

    def may_forget(self, a: VidMmAllocation) -> None:
        """A locked allocation is not destroyed."""
        if a.lock is not None:
            raise _bad("hAllocation", a.handle, "is locked: unlock it before destroying it")

    def forget(self, a: VidMmAllocation) -> None:
        """Before ``a`` is destroyed: its ranges go back and its view's address is released."""
        self.swizzling.release_all(a)
        if a.cpu_view is not None:
            a.device.process.cpu.free_view(a.cpu_view)
            a.cpu_view = None
