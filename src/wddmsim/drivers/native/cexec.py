"""A C executor named by an adapter description: ``[executor] kind = "c"`` (issue 21 item 3(b); decisions 0103,
0111).

The library's ``WDDMSIM_EXECUTE_PAGING_BUFFER`` entry is called once per paging buffer, on the clock, with a
``WDDMSIM_GPU_SERVICES`` table whose callbacks are Python functions over hw's
:class:`~wddmsim.hw.services.GpuServices`, and a ``WDDMSIM_PAGING_SUBMISSION`` describing the submitted range and
its private data.  Every callback bounds-checks and returns an NTSTATUS -- nothing raises through C.  A failing
services call, or a return other than ``STATUS_SUCCESS``, faults the engine with the reason named.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Final, final

import numpy as np

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.pte import DXGK_PTE_DTYPE
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.native.adapter_desc import SEGMENT_APERTURE, AdapterDescBlock
from wddmsim.drivers.native.executor import (
    PFN_WDDMSIM_CLEAR_APERTURE_PAGE,
    PFN_WDDMSIM_EXECUTE_PAGING_BUFFER,
    PFN_WDDMSIM_FLUSH_TLB,
    PFN_WDDMSIM_READ_LOCAL,
    PFN_WDDMSIM_READ_PAGE_TABLE,
    PFN_WDDMSIM_READ_SYSTEM,
    PFN_WDDMSIM_SET_APERTURE_PAGE,
    PFN_WDDMSIM_SIGNAL_FENCE_PHYSICAL,
    PFN_WDDMSIM_SIGNAL_FENCE_VIRTUAL,
    PFN_WDDMSIM_WRITE_LOCAL,
    PFN_WDDMSIM_WRITE_PAGE_TABLE,
    PFN_WDDMSIM_WRITE_SYSTEM,
    WDDMSIM_GPU_SERVICES,
    WDDMSIM_GPU_SERVICES_VERSION,
    WDDMSIM_PAGING_SUBMISSION,
    WDDMSIM_PAGING_SUBMISSION_VERSION,
)
from wddmsim.drivers.native.gpumaps import GpuMaps, Refused, Segment
from wddmsim.drivers.native.kernel import PFN_WDDMSIM_LOG
from wddmsim.drivers.native.library import NativeLibrary
from wddmsim.drivers.native.marshal import address_of
from wddmsim.drivers.native.watchdog import DriverTimedOut, LibraryLost, Watchdog
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.faults import GpuFault
from wddmsim.hw.pte import PTE_SIZE
from wddmsim.hw.services import GpuServices

_OK: Final = int(NTSTATUS.STATUS_SUCCESS)
_BAD: Final = int(NTSTATUS.STATUS_INVALID_PARAMETER)
_UNSUCCESSFUL: Final = int(NTSTATUS.STATUS_UNSUCCESSFUL)


class ExecutorFailed(Exception):
    """The C executor reported a failure (its status, or the first services call that failed)."""


def _status_name(raw: int) -> str:
    raw &= 0xFFFFFFFF
    return NTSTATUS(raw).name if raw in NTSTATUS._value2member_map_ else f"{raw:#010x}"


@final
class CExecutor:
    """``hw.engine.Executor`` over a library's ``WDDMSIM_EXECUTE_PAGING_BUFFER`` (see the module docstring)."""

    def __init__(
        self, library: NativeLibrary, symbol: str, adapter: AdapterDescBlock, watchdog: Watchdog | None = None
    ) -> None:
        entry = library.function(symbol)
        if entry is None:
            raise ConfigurationError("executor.symbol", symbol, f"is not exported by {library.path.name}")
        self.symbol = symbol
        self._entry = PFN_WDDMSIM_EXECUTE_PAGING_BUFFER(address_of(entry))
        self._segments = {
            int(s.SegmentId): (int(s.BaseAddress), int(s.Size))
            for s in adapter.segments[: adapter.desc.SegmentCount]
            if not int(s.Flags) & SEGMENT_APERTURE
        }
        self._maps = GpuMaps(
            [
                Segment(int(s.SegmentId), int(s.BaseAddress), int(s.Size), bool(int(s.Flags) & SEGMENT_APERTURE))
                for s in adapter.segments[: adapter.desc.SegmentCount]
            ],
            aperture_base=int(adapter.desc.ApertureBase),
            system_size=int(adapter.desc.SystemMemorySize),
        )
        self.watchdog = watchdog or Watchdog(None)
        """Bounds each call in wall time (decision 0132)."""
        self._services: GpuServices | None = None
        self._failure: str | None = None
        self._keep: list[object] = []  # the ctypes callbacks must outlive every call
        self.table = WDDMSIM_GPU_SERVICES(
            Version=WDDMSIM_GPU_SERVICES_VERSION, Size=ctypes.sizeof(WDDMSIM_GPU_SERVICES)
        )
        self._install()
        self.calls = 0

    def _install(self) -> None:
        def wrap(kind: type, name: str, body: Callable[..., None]) -> object:
            def callback(*args: object) -> int:
                return self._guard(name, body, args[1:])

            made = kind(callback)
            self._keep.append(made)
            return made

        t = self.table
        t.ReadLocal = wrap(PFN_WDDMSIM_READ_LOCAL, "ReadLocal", self._read_local)
        t.WriteLocal = wrap(PFN_WDDMSIM_WRITE_LOCAL, "WriteLocal", self._write_local)
        t.ReadSystem = wrap(PFN_WDDMSIM_READ_SYSTEM, "ReadSystem", self._read_system)
        t.WriteSystem = wrap(PFN_WDDMSIM_WRITE_SYSTEM, "WriteSystem", self._write_system)
        t.SignalFencePhysical = wrap(PFN_WDDMSIM_SIGNAL_FENCE_PHYSICAL, "SignalFencePhysical", self._fence_physical)
        t.SignalFenceVirtual = wrap(PFN_WDDMSIM_SIGNAL_FENCE_VIRTUAL, "SignalFenceVirtual", self._fence_virtual)
        t.SetAperturePage = wrap(PFN_WDDMSIM_SET_APERTURE_PAGE, "SetAperturePage", self._set_aperture_page)
        t.ClearAperturePage = wrap(PFN_WDDMSIM_CLEAR_APERTURE_PAGE, "ClearAperturePage", self._clear_aperture_page)
        t.ReadPageTable = wrap(PFN_WDDMSIM_READ_PAGE_TABLE, "ReadPageTable", self._read_page_table)
        t.WritePageTable = wrap(PFN_WDDMSIM_WRITE_PAGE_TABLE, "WritePageTable", self._write_page_table)
        t.FlushTlb = wrap(PFN_WDDMSIM_FLUSH_TLB, "FlushTlb", self._flush_tlb)
        log = PFN_WDDMSIM_LOG(lambda _context, _level, _text: None)
        self._keep.append(log)
        t.Log = log

    # --- one paging buffer --------------------------------------------------------------------------------------

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> int | None:
        """Run the C entry over a copy of the submitted range and of the private data."""
        dma = ctypes.create_string_buffer(bytes(buffer), max(len(buffer), 1))
        private = ctypes.create_string_buffer(bytes(private_data or b""), max(len(private_data or b""), 1))
        submission = WDDMSIM_PAGING_SUBMISSION(
            Version=WDDMSIM_PAGING_SUBMISSION_VERSION,
            Size=ctypes.sizeof(WDDMSIM_PAGING_SUBMISSION),
            pDmaBuffer=ctypes.addressof(dma),
            DmaBufferSize=len(buffer),
            StartOffset=0,
            EndOffset=len(buffer),
            DmaBufferPrivateDataSize=len(private_data or b""),
            pDmaBufferPrivateData=ctypes.addressof(private),
        )
        self.table.LocalMemoryBase = services.local_base
        self.table.LocalMemorySize = services.local_size
        self._services, self._failure = services, None
        entry, table, described = self._entry, ctypes.byref(self.table), ctypes.byref(submission)
        try:
            raw = self.watchdog.call(self.symbol, lambda: int(entry(table, described)), dma, private, submission)
        except (DriverTimedOut, LibraryLost) as lost:  # the engine faults naming it; VidMm resets the adapter
            raise ExecutorFailed(str(lost)) from None
        finally:
            self._services = None
        raw &= 0xFFFFFFFF
        self.calls += 1
        if self._failure is not None:
            raise ExecutorFailed(f"{self.symbol}: {self._failure}")
        if raw != _OK:
            raise ExecutorFailed(f"{self.symbol} returned {_status_name(raw)}")
        return None

    # --- the services (each returns an NTSTATUS; the first failure is kept for the fault's reason) ---------------

    def _guard(self, name: str, body: Callable[..., None], args: tuple[object, ...]) -> int:
        with self.watchdog.lock:  # a call the watchdog abandoned changes nothing any more
            if self.watchdog.lost is not None:
                return _UNSUCCESSFUL
            return self._serve(name, body, args)

    def _serve(self, name: str, body: Callable[..., None], args: tuple[object, ...]) -> int:
        try:
            body(*args)
        except _Refused as refused:
            return self._fail(name, str(refused), refused.status)
        except Refused as refused:
            return self._fail(name, str(refused), _BAD)
        except GpuFault as fault:
            return self._fail(name, fault.reason if hasattr(fault, "reason") else str(fault), _BAD)
        except Exception as error:  # nothing may raise through C: any other error is a refused call
            return self._fail(name, f"{type(error).__name__}: {error}", _BAD)
        return _OK

    def _fail(self, name: str, reason: str, status: int) -> int:
        if self._failure is None:
            self._failure = f"services call {name} failed: {reason} ({_status_name(status)})"
        return status

    def _gpu(self) -> GpuServices:
        assert self._services is not None, "services are called only during an execution"
        return self._services

    def _local(self, segment_id: int, address: int, length: int) -> int:
        """GPU physical address of ``[address, address + length)`` of memory segment ``segment_id``."""
        found = self._segments.get(segment_id)
        if found is None:
            raise _Refused(f"SegmentId={segment_id}: must be a memory segment {sorted(self._segments)}")
        base, size = found
        if not (base <= address and address + length <= base + size):
            raise _Refused(f"SegmentAddress={address:#x}+{length:#x}: must lie in [{base:#x}, {base + size:#x})")
        return address

    def _read_local(self, segment_id: int, address: int, out: int, length: int) -> None:
        data = self._gpu().read_local(self._local(segment_id, address, length), length)
        ctypes.memmove(out, data, length)

    def _write_local(self, segment_id: int, address: int, source: int, length: int) -> None:
        self._gpu().write_local(self._local(segment_id, address, length), ctypes.string_at(source, length))

    def _read_system(self, address: int, out: int, length: int) -> None:
        ctypes.memmove(out, self._gpu().read_system(address, length), length)

    def _write_system(self, address: int, source: int, length: int) -> None:
        self._gpu().write_system(address, ctypes.string_at(source, length))

    def _fence_physical(self, segment_id: int, address: int, value: int) -> None:
        space = Space.SYSTEM if segment_id == 0 else Space.GPU_PHYS
        where = address if segment_id == 0 else self._local(segment_id, address, 8)
        self._gpu().write_u64(hw_address(space, where), value, interrupt=True)

    def _fence_virtual(self, address: int, value: int) -> None:
        self._gpu().write_u64(hw_address(Space.GPU_VA, address), value, interrupt=True)

    # --- the aperture and the MMU (decision 0128): arguments checked by GpuMaps before anything changes ------------

    def _set_aperture_page(self, segment_id: int, page_index: int, pfn: int, flags: int) -> None:
        """``SetAperturePage``: page ``page_index`` of an aperture segment -> system page ``pfn``, snooped when
        ``MapApertureFlags.CacheCoherent`` is set (the GART entry the reference GPU's WRITE_QWORDS would store)."""
        page = self._maps.aperture_page(segment_id, page_index)
        snoop = self._maps.cache_coherent(flags)
        self._gpu().set_aperture_entry(page, pfn, snoop=snoop)  # refuses a pfn outside RAM, naming it

    def _clear_aperture_page(self, segment_id: int, page_index: int) -> None:
        """``ClearAperturePage``: the entry holds no page (an access through it is a bus error)."""
        self._gpu().clear_aperture_entry(self._maps.aperture_page(segment_id, page_index))

    def _read_page_table(self, segment_id: int, offset: int, start: int, count: int, entries: object) -> None:
        """``ReadPageTable``: ``count`` entries from ``start`` of the table at ``(segment_id, offset)``, as
        ``DXGK_PTE``; ``Entries`` is written only when every entry translates."""
        address = _entries_pointer(entries, count)
        if not count:
            return
        target, where = self._maps.entries(segment_id, offset, start, count)
        words = np.frombuffer(self._gpu().read_page_table(target, where, count * PTE_SIZE), dtype="<u8")
        out = np.zeros(count, dtype=DXGK_PTE_DTYPE)
        for i, word in enumerate(words.tolist()):
            out[i] = self._maps.to_dxgk(start + i, word)
        ctypes.memmove(address, out.tobytes(), out.nbytes)

    def _write_page_table(self, segment_id: int, offset: int, start: int, count: int, entries: object) -> None:
        """``WritePageTable``: ``count`` ``DXGK_PTE`` s into the table at ``(segment_id, offset)`` from ``start``,
        translated as the reference driver translates ``UpdatePageTable``; all or none are stored.  The TLB keeps
        what it cached until ``FlushTlb``, as on the hardware."""
        address = _entries_pointer(entries, count)
        if not count:
            return
        target, where = self._maps.entries(segment_id, offset, start, count)
        given = np.frombuffer(ctypes.string_at(address, count * DXGK_PTE_DTYPE.itemsize), dtype=DXGK_PTE_DTYPE)
        words = np.array(
            [self._maps.to_hardware(i, int(e["Flags"]), int(e["PageAddress"])) for i, e in enumerate(given)],
            dtype="<u8",
        )
        self._gpu().write_page_table(target, where, words.tobytes())

    def _flush_tlb(self, segment_id: int, offset: int, start: int, end: int) -> None:
        """``FlushTlb``: forget the translations cached under the root at ``(segment_id, offset)`` for VAs
        ``[start, end]``; ``start == end == 0`` means the whole address space."""
        if start > end:
            raise _Refused(f"StartVirtualAddress={start:#x}: must not exceed EndVirtualAddress={end:#x}")
        self._gpu().invalidate_tlb(self._maps.table(segment_id, offset, ("RootSegmentId", "RootOffset")), start, end)


def _entries_pointer(entries: object, count: int) -> int:
    """The address ``Entries`` holds; NULL is refused unless ``Count`` is 0."""
    address = ctypes.cast(entries, ctypes.c_void_p).value if isinstance(entries, ctypes._Pointer) else None
    if count and not address:
        raise _Refused(f"Entries=NULL: must point at Count={count} DXGK_PTEs")
    return address or 0


class _Refused(Exception):
    def __init__(self, rule: str, status: int = _BAD) -> None:
        super().__init__(rule)
        self.status = status


__all__ = ["CExecutor", "ExecutorFailed"]
