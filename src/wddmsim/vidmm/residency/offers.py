"""``D3DKMTOfferAllocations`` and ``D3DKMTReclaimAllocations2``: content VidMm may drop under pressure until it is
reclaimed (with ``AllowDecommit``, its pages too).
"""

from __future__ import annotations

from typing import final

from wddmsim.ddi.base import HANDLE, NO_FENCE
from wddmsim.ddi.driver import SystemMemoryServices
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.residency import (
    D3DDDI_OFFER_PRIORITY,
    D3DDDI_RECLAIM_RESULT,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import HRESULT, NTSTATUS, DdiError
from wddmsim.vidmm.allocation import Content, VidMmAllocation
from wddmsim.vidmm.move_kinds import MoveCause
from wddmsim.vidmm.objects import ObjectTable
from wddmsim.vidmm.paging.stream import PagingStream
from wddmsim.vidmm.residency.checks import bad, is_integer, reserved
from wddmsim.vidmm.residency.placement import Placer
from wddmsim.vidmm.residency.servicing import PagingService
from wddmsim.vidmm.residency.waits import Waits


@final
class Offers:
    """Offer and reclaim."""

    def __init__(
        self,
        objects: ObjectTable,
        placement: Placer,
        servicing: PagingService,
        waits: Waits,
        mm: SystemMemoryServices,
        paging: PagingStream,
        *,
        system_chunk: int,
    ) -> None:
        self.objects = objects
        self.placement = placement
        self.servicing = servicing
        self.waits = waits
        self.mm = mm
        self.paging = paging
        self.system_chunk = system_chunk

    def offer(self, args: D3DKMT_OFFERALLOCATIONS) -> None:
        """``D3DKMTOfferAllocations``: VidMm may drop the content under pressure until reclaimed."""
        device = self.objects.device(args.hDevice)
        reserved("Flags", args.Flags)
        offerable = {int(p) for p in D3DDDI_OFFER_PRIORITY} - {D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_NONE}
        if not is_integer(args.Priority) or args.Priority not in offerable:
            raise bad(
                "Priority",
                args.Priority,
                "must be LOW (1) .. AUTO (4): D3DDDI_OFFER_PRIORITY_NONE must not be used when offering",
            )
        self.servicing.service()
        if args.NumAllocations != len(args.HandleList) or not args.HandleList:
            raise bad(
                "NumAllocations", args.NumAllocations, f"must be positive and match HandleList ({len(args.HandleList)})"
            )
        listed = [self.objects.allocation(h, f"HandleList[{i}]") for i, h in enumerate(args.HandleList)]
        for i, a in enumerate(listed):
            if a.device is not device:
                raise bad(f"HandleList[{i}]", a.handle, "belongs to another device")
            if a.offered is not None:
                raise bad(f"HandleList[{i}]", a.handle, "is already offered")
            if a.handle in args.HandleList[:i]:
                raise bad(f"HandleList[{i}]", a.handle, "lists the allocation twice")
            if a.lock is not None or a.pin_count:
                raise bad(f"HandleList[{i}]", a.handle, "is locked (or pinned): unlock it before offering it")
        for a in listed:
            a.offered = args.Priority
            a.allow_decommit = bool(args.Flags.AllowDecommit)
        if args.Flags.OfferImmediately:
            for a in listed:
                self.placement.drop_offered(a)
            self.paging.flush()

    def reclaim(self, args: D3DKMT_RECLAIMALLOCATIONS2) -> HRESULT:
        """``D3DKMTReclaimAllocations2``: OK, DISCARDED or NOT_COMMITTED per allocation; pages in what a
        residency list holds."""
        queue = self.objects.queue(args.hPagingQueue)
        self.servicing.service()
        if args.NumAllocations != len(args.HandleList) or not args.HandleList:
            raise bad(
                "NumAllocations", args.NumAllocations, f"must be positive and match HandleList ({len(args.HandleList)})"
            )
        listed = [self.objects.allocation(h, f"HandleList[{i}]") for i, h in enumerate(args.HandleList)]
        for i, a in enumerate(listed):
            if a.offered is None:
                raise bad(f"HandleList[{i}]", a.handle, "is not offered")
        fresh = self._commit_backing([a for a in listed if a.backing is None])
        results: list[D3DDDI_RECLAIM_RESULT] = []
        self.placement.moved = False
        for a in listed:
            if a.handle in fresh:
                a.backing = fresh[a.handle]
                a.content = Content.ZERO
                results.append(D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_NOT_COMMITTED)
            elif a.content == Content.DISCARDED:
                # Undefined for the application; zeros for everyone else (no stale byte is ever shown).  A copy
                # into the backing store still queued (an Evict nobody waited for) runs first, or it would land
                # over the zeros.
                assert a.backing is not None
                self.servicing.paging_done(a, wait=True)
                self.mm.write(a.backing, 0, bytes(a.size))
                a.content = Content.ZERO
                results.append(D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_DISCARDED)
            else:
                results.append(D3DDDI_RECLAIM_RESULT.D3DDDI_RECLAIM_RESULT_OK)
            a.offered = None
            a.allow_decommit = False
        protected = {a.handle for a in listed}
        for a in listed:
            if a.residency_count and a.placement is None:
                self.placement.place(a, protected, cause=MoveCause.PRESSURE)
        args.pResults = results
        args.PagingFenceValue = self.waits.signal(queue) if self.placement.moved else NO_FENCE
        return HRESULT.E_PENDING if self.placement.moved else HRESULT.S_OK

    def _commit_backing(self, allocations: list[VidMmAllocation]) -> dict[HANDLE, MDL]:
        """Fresh backing stores for ``allocations``, all or none (``STATUS_NO_MEMORY``, nothing kept)."""
        fresh: dict[HANDLE, MDL] = {}
        try:
            for a in allocations:
                fresh[a.handle] = self.mm.allocate_pages_for_mdl(a.size, chunk=self.system_chunk)
        except (MemoryError, ValueError) as error:
            for mdl in fresh.values():
                self.mm.free_pages(mdl)
            raise DdiError(
                NTSTATUS.STATUS_NO_MEMORY, f"no system memory to recommit offered allocations: {error}"
            ) from None
        return fresh
