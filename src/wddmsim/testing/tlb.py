"""Reliability-plan I4 (TLB coherence): no page goes back to use while a translation to it may still be used.

The plan states it as an order per page -- ``pte_clear < tlb_flush_done < gpu_fence_signal <= page_free`` -- and
this module checks each link where it can be observed:

- *PTE cleared and flush done before work can use the page*: a stale translation (:meth:`Mmu.stale_translations`:
  a valid cached entry the page tables in memory no longer give) may exist only while paging work is still to come
  that holds the flush -- a move updates PTEs and flushes within the paging stream, in order, and a process's other
  work may run meanwhile (that VA's allocation has left; its range is not written for a new owner before the flush,
  which comes first in the same stream).  Paging work is still to come while a paging engine has work, while a
  stream holds operations it has not submitted, and while an operation waits half-way: one that did not fit waits
  for a buffer, or the CPU waits for the GPU before writing page-table entries, while what was submitted before --
  the PTE change the flush follows -- runs (:attr:`PagingStream.unfinished`).  So whenever there is none -- as the paging engine completes its last buffer,
  and as any process DMA buffer starts -- nothing may be stale in an application's address space
  (:func:`check_tlb` is the same check on demand).  The system paging process's own space is exempt: its tables
  are written by the CPU when a move is built (forced CPU_VIRTUAL) and the flush follows in the same operation, so
  a wait in between -- for room, say -- can leave the engine idle with the flush not built yet; every move flushes
  its scratch range before using it (decision D5, ``vidmm/moves/scratch.py``), and no other engine runs in that space.
- *Fences signalled before the range is left*: when an allocation leaves its range (``VidMmEvict``), no GPU work
  of its device is in flight.

That every valid PTE points into a live allocation mapped there (I3) is :func:`~.invariants.check_page_tables`.
"""

from __future__ import annotations

from wddmsim.core.events import Event
from wddmsim.ddi.base import HANDLE
from wddmsim.hw.events import DmaBufferCompleted, DmaBufferStarted
from wddmsim.hw.pte import TablePointer, Target
from wddmsim.system import Adapter
from wddmsim.vidmm.events import VidMmEvict
from wddmsim.vidmm.paging.stream import PagingStream


def check_tlb(adapter: Adapter) -> list[str]:
    """Stale translations of applications' address spaces in the TLB; call once the engines have run what was
    submitted."""
    busy = [e.name for e in adapter.gpu.engines if e.pending] + (["VidMm's paging streams"] * _unfinished(adapter))
    if busy:
        return [f"check_tlb needs idle engines; {', '.join(busy)} still have work"]
    return [f"root {root}: VA {va:#x}: {what}" for root, va, what in _stale(adapter)]


def _stale(adapter: Adapter) -> list[tuple[TablePointer, int, str]]:
    """Stale translations of every root but the system paging process's."""
    own = _paging_root(adapter)
    return [item for item in adapter.gpu.mmu.stale_translations() if item[0] != own]


def _paging_root(adapter: Adapter) -> TablePointer | None:
    process = adapter.vidmm.paging_process
    if process is None:
        return None
    address = process.root_address
    return TablePointer(Target.LOCAL, adapter.vidmm.spaces.get(address.SegmentId).base + address.SegmentOffset)


def _streams(adapter: Adapter) -> list[PagingStream]:
    """VidMm's paging streams: the system paging process's and each paging companion's."""
    vidmm = adapter.vidmm
    companions = [] if vidmm.va is None else [c.stream for c in vidmm.va.updates.companions.values()]
    return [vidmm.paging, *companions]


def _unfinished(adapter: Adapter) -> bool:
    """Whether VidMm has paging work still to come without a new request: built and not submitted, or being
    built -- an operation that did not fit waits for a buffer while what it submitted before runs."""
    return any(stream.unfinished for stream in _streams(adapter))


class TlbWatch:
    """Subscribes to an adapter's event log and records every breach of I4 as it happens."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.problems: list[str] = []
        self.checked_buffers = 0
        self.checked_moves = 0
        adapter.events.subscribe(self._on)

    def _on(self, event: Event) -> None:
        paging = self.adapter.vidmm.paging.node
        if isinstance(event, DmaBufferStarted) and event.engine != paging:
            self._on_work(event)
        elif isinstance(event, DmaBufferCompleted) and event.engine == paging:
            self._on_paging_done(event)
        elif isinstance(event, VidMmEvict) and event.cause != "reset":
            self._on_leave(event)

    def _paging_idle(self) -> bool:
        """No paging work left anywhere: none on a paging engine, none built and not yet submitted, none being
        built."""
        engines = self.adapter.gpu.engines
        streams = _streams(self.adapter)
        return all(engines[s.node].pending == 0 for s in streams) and not _unfinished(self.adapter)

    def _on_work(self, event: DmaBufferStarted) -> None:
        engine = self.adapter.gpu.engines[event.engine]
        self.checked_buffers += 1
        if engine.root is None or not self._paging_idle():
            return  # the paging engine may still be running the flush: judged when it goes idle
        for _, va, what in self.adapter.gpu.mmu.stale_translations(engine.root):
            self.problems.append(
                f"work fence {event.fence} on {engine.name} starts with VA {va:#x} stale and no flush to come: {what}"
            )

    def _on_paging_done(self, event: DmaBufferCompleted) -> None:
        if not self._paging_idle():  # more paging work follows (a flush may be in it)
            return
        self.checked_buffers += 1
        for root, va, what in _stale(self.adapter):
            self.problems.append(
                f"paging fence {event.fence} left the engine idle with VA {va:#x} of {root} stale: {what}"
            )

    def _on_leave(self, event: VidMmEvict) -> None:
        vidmm = self.adapter.vidmm
        a = vidmm.residency.allocations.get(HANDLE(event.allocation))
        self.checked_moves += 1
        if a is not None and vidmm.work.busy(a.device):
            self.problems.append(
                f"allocation {event.allocation:#x} left segment {event.segment} ({event.cause}) while work of its "
                "device was in flight"
            )
