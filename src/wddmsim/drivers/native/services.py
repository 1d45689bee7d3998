"""The kernel services a native driver calls (``WDDMSIM_KERNEL_SERVICES``), and the MDLs it is handed.

The bridge hands the driver MDLs in the WDK's x64 layout (:class:`MdlImages`: the 48-byte header and the PFN
array right after it, so ``MmGetMdlPfnArray`` is the header plus one).  ``MmGetSystemAddressForMdlSafe`` on an
MDL without a system view calls :meth:`KernelServices.map_locked_pages`, which maps the MDL's scattered pages
of simulated system memory contiguously into this process (``SystemMemory.alias``): a write through the view is
a write to the pages.  The view is recorded in the MDL as Windows does (``MappedSystemVa`` with
``MDL_MAPPED_TO_SYSTEM_VA``) and lives until the driver unmaps it or the bridge lets the MDL go.

Every callback catches its own failures: an exception must never unwind through C.  A failed mapping returns
NULL, as ``MmMapLockedPagesSpecifyCache`` does; what went wrong is kept in :attr:`KernelServices.breaches`.
"""

from __future__ import annotations

import ctypes
import sys
from collections import deque
from collections.abc import Callable
from typing import Final, final

import numpy as np

from wddmsim.ddi.memory import MDL
from wddmsim.drivers.native import kernel
from wddmsim.drivers.native.library import KERNEL_SERVICES, NativeLibrary
from wddmsim.drivers.native.watchdog import Watchdog
from wddmsim.hw.hostmap import HostView
from wddmsim.hw.memory import SystemMemory

LOG_LINES: Final = 1000
IDLE_IMAGES: Final = 16
"""Images no pending buffer holds, kept (views unmapped) for the next build that names the same MDL."""


@final
class _Image:
    __slots__ = ("address", "holds", "mdl", "storage", "views")

    def __init__(self, mdl: MDL, storage: ctypes.Array[ctypes.c_char]) -> None:
        self.mdl = mdl
        """Held so its ``id`` stays unique while the image lives."""
        self.storage = storage
        self.address = ctypes.addressof(storage)
        self.views: list[HostView] = []
        self.holds = 0
        """Submitted paging buffers built with this image that have not retired."""


@final
class MdlImages:
    """C images of the DDI's MDLs, by identity, and the host views mapped through them.

    An image -- and every ``MmGetSystemAddressForMdlSafe`` view of it -- lives while a paging buffer built with it
    may still run: from the ``DxgkDdiBuildPagingBuffer`` call that first hands it to the driver, through the
    ``DxgkDdiSubmitCommand`` of that buffer, until the buffer's fence completes (:meth:`retire`).  A driver's
    software log may hold the view's address; its executor dereferences it when the buffer runs.  Then the image
    goes, and its views are unmapped (VidMm frees an MDL's pages only once the work using them has completed,
    decision 0057, so a view never outlives its pages).  An adapter reset lets every image go (:meth:`clear`).

    An image no buffer holds any more is *idle*: its views are unmapped and its header says so, but the C MDL
    itself is kept -- up to :data:`IDLE_IMAGES`, least recently used first out -- because VidMm hands the same MDL
    to many builds in a row (a paging stream), and making the image again for each cost the C driver a fifth of
    its paging rate.  Only images a pending buffer holds count as alive (:meth:`count`).
    """

    __slots__ = ("_by_address", "_by_id", "_idle", "_unsubmitted", "pending", "views")

    def __init__(self) -> None:
        self._by_id: dict[int, _Image] = {}
        self._by_address: dict[int, _Image] = {}
        self._idle: dict[int, _Image] = {}
        """Idle images by MDL identity, least recently idle first (also in ``_by_id``)."""
        self._unsubmitted: dict[int, _Image] = {}
        """Images handed to the driver since the last paging submission: they belong to the next one."""
        self.pending: list[tuple[int, int, tuple[_Image, ...]]] = []
        """``(node, fence, images)`` of each submitted paging buffer not known to have completed (empty: nothing for
        :meth:`retire` to do, which a caller may test without the call)."""
        self.views: dict[int, HostView] = {}
        """Live views by the address handed to the driver."""

    def image(self, mdl: MDL) -> int:
        """The address of ``mdl``'s C image (made on first use); it belongs to the paging buffer being built."""
        key = id(mdl)
        found = self._by_id.get(key)
        if found is None or found.mdl is not mdl:
            found = self._make(mdl)
        elif self._idle:
            self._idle.pop(key, None)
        self._unsubmitted[key] = found
        return found.address

    def _make(self, mdl: MDL) -> _Image:
        stale = self._by_id.get(id(mdl))
        if stale is not None:  # an idle image of an MDL that is gone, whose id a new one took
            self._idle.pop(id(mdl), None)
            del self._by_id[id(mdl)]
            self._drop(stale)
        pfns = np.ascontiguousarray(mdl.pfns, dtype=np.uint64)
        storage = ctypes.create_string_buffer(kernel.mdl_size(len(pfns)))
        header = kernel.MDL.from_buffer(storage)
        header.Size = min(kernel.mdl_size(len(pfns)), 0x7FFF)  # CSHORT: a large MDL's size does not fit, as on Windows
        header.MdlFlags = kernel.MDL_PAGES_LOCKED
        header.ByteCount = mdl.ByteCount & 0xFFFFFFFF
        header.ByteOffset = mdl.ByteOffset
        ctypes.memmove(ctypes.addressof(storage) + ctypes.sizeof(kernel.MDL), pfns.ctypes.data, pfns.nbytes)
        image = _Image(mdl, storage)
        self._by_id[id(mdl)] = image
        self._by_address[ctypes.addressof(storage)] = image
        return image

    def at(self, address: int) -> _Image | None:
        return self._by_address.get(address)

    # --- lifetime: pending paging buffers -----------------------------------------------------------------------

    def submitted(self, node: int, fence: int) -> None:
        """A paging buffer went to ``node`` with ``fence``: the images built into it live until the fence does."""
        if not self._unsubmitted:
            return
        images = tuple(self._unsubmitted.values())
        self._unsubmitted.clear()
        for image in images:
            image.holds += 1
        self.pending.append((node, fence, images))

    def retire(self, completed: Callable[[int], int]) -> None:
        """Let go of the images of every submitted buffer whose fence ``completed(node)`` has reached."""
        if not self.pending:
            return  # the common case: the buffer before was retired already
        kept = []
        for node, fence, images in self.pending:
            if completed(node) < fence:
                kept.append((node, fence, images))
                continue
            for image in images:
                image.holds -= 1
                self._drop_if_unused(image)
        self.pending = kept

    def _drop_if_unused(self, image: _Image) -> None:
        key = id(image.mdl)
        if image.holds == 0 and key not in self._unsubmitted and self._by_id.get(key) is image:
            if image.views:
                self._unmap_views(image)
            self._idle[key] = image
            if len(self._idle) > IDLE_IMAGES:
                oldest = next(iter(self._idle))
                del self._by_id[oldest]
                self._drop(self._idle.pop(oldest))

    def _unmap_views(self, image: _Image) -> None:
        """Unmap every view of ``image`` and say so in its header, as ``MmUnmapLockedPages`` does: a later
        ``MmGetSystemAddressForMdlSafe`` maps afresh instead of returning an address no longer mapped."""
        if not image.views:
            return  # nothing mapped: the header names no view (MmUnmapLockedPages cleared any it did)
        for view in image.views:
            self.views.pop(view.address, None)
            view.close()
        image.views.clear()
        header = kernel.MDL.from_buffer(image.storage)
        header.MappedSystemVa = None
        header.MdlFlags = int(header.MdlFlags) & ~kernel.MDL_MAPPED_TO_SYSTEM_VA & 0xFFFF

    def _drop(self, image: _Image) -> None:
        del self._by_address[ctypes.addressof(image.storage)]
        self._unmap_views(image)

    def clear(self) -> None:
        """Every image and view goes (an adapter reset: no buffer will run any more; or the adapter goes)."""
        for image in self._by_id.values():
            self._drop(image)
        self._by_id.clear()
        self._idle.clear()
        self._unsubmitted.clear()
        self.pending.clear()
        for view in self.views.values():
            view.close()
        self.views.clear()

    def abandon(self) -> tuple[object, ...]:
        """Forget every image and view without unmapping any: what a call the watchdog abandoned may still use
        (the caller keeps the result alive for good)."""
        kept = (tuple(self._by_id.values()), tuple(self.views.values()))
        self._by_id.clear()
        self._by_address.clear()
        self._idle.clear()
        self._unsubmitted.clear()
        self.pending.clear()
        self.views.clear()
        return kept

    def count(self) -> int:
        """Images alive: held by a pending buffer or handed to the one being built (the driver may still read
        them).  Idle ones, bounded by :data:`IDLE_IMAGES`, are a cache and not counted."""
        return len(self._by_id) - len(self._idle)

    def idle(self) -> int:
        """Idle images kept for reuse (at most :data:`IDLE_IMAGES`)."""
        return len(self._idle)

    def live_views(self) -> int:
        return sum(1 for view in self.views.values() if not view.closed)


@final
class KernelServices:
    """One adapter's ``WDDMSIM_KERNEL_SERVICES`` table and the state behind it."""

    def __init__(self, system: SystemMemory, watchdog: Watchdog | None = None) -> None:
        self.system = system
        self.watchdog = watchdog or Watchdog(None)
        """A callback from a call the watchdog abandoned is refused (the library is lost, decision 0132)."""
        self.images = MdlImages()
        self.views = self.images.views
        """Live views by the address handed to the driver."""
        self.breaches: list[str] = []
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.bugcheck: tuple[int, int, int, int, int] | None = None
        self._callbacks = (
            kernel.PFN_WDDMSIM_MAP_LOCKED_PAGES(self._map),
            kernel.PFN_WDDMSIM_UNMAP_LOCKED_PAGES(self._unmap),
            kernel.PFN_WDDMSIM_LOG(self._log),
            kernel.PFN_WDDMSIM_BUGCHECK(self._bugcheck),
        )
        self.table = kernel.WDDMSIM_KERNEL_SERVICES(
            Version=kernel.WDDMSIM_KERNEL_SERVICES_VERSION,
            Size=ctypes.sizeof(kernel.WDDMSIM_KERNEL_SERVICES),
            Context=None,
            MapLockedPagesSpecifyCache=self._callbacks[0],
            UnmapLockedPages=self._callbacks[1],
            Log=self._callbacks[2],
            BugCheck=self._callbacks[3],
        )

    def attach(self, library: NativeLibrary) -> bool:
        """Point the library's ``WddmsimKernelServices`` at this table (False: built without wddmsim/ddk.h)."""
        address = library.variable_address(KERNEL_SERVICES)
        if address is None:
            return False
        ctypes.c_void_p.from_address(address).value = ctypes.addressof(self.table)
        return True

    # --- MmMapLockedPagesSpecifyCache / MmUnmapLockedPages --------------------------------------------------

    def map_locked_pages(self, address: int) -> HostView:
        """A contiguous view of the MDL at ``address`` (its header and PFN array read from memory)."""
        header = kernel.MDL.from_address(address)
        offset, count = int(header.ByteOffset), int(header.ByteCount)
        pages = -(-(offset + count) // kernel.PAGE_SIZE)
        array = (ctypes.c_uint64 * pages).from_address(address + ctypes.sizeof(kernel.MDL))
        view = self.system.alias(list(array), offset, count)
        header.MappedSystemVa = view.address
        header.MdlFlags = (int(header.MdlFlags) | kernel.MDL_MAPPED_TO_SYSTEM_VA) & 0xFFFF
        self.views[view.address] = view
        image = self.images.at(address)
        if image is not None:
            image.views.append(view)
        return view

    def _map(self, _context: object, mdl: ctypes._Pointer[kernel.MDL], *_rest: object) -> int | None:
        with self.watchdog.lock:
            if self.watchdog.lost is not None:
                return None  # the library is lost: the mapping fails
            return self._map_locked(mdl)

    def _map_locked(self, mdl: ctypes._Pointer[kernel.MDL]) -> int | None:
        try:
            address = ctypes.cast(mdl, ctypes.c_void_p).value
            if not address:
                self.breaches.append("MmMapLockedPagesSpecifyCache: a NULL MDL")
                return None
            return self.map_locked_pages(address).address
        except Exception as error:  # never unwind through C: the mapping fails, as on Windows
            self.breaches.append(f"MmMapLockedPagesSpecifyCache: {type(error).__name__}: {error}")
            return None

    def _unmap(self, _context: object, base: int | None, mdl: ctypes._Pointer[kernel.MDL]) -> None:
        with self.watchdog.lock:
            if self.watchdog.lost is None:
                self._unmap_locked(base, mdl)

    def _unmap_locked(self, base: int | None, mdl: ctypes._Pointer[kernel.MDL]) -> None:
        try:
            view = self.views.pop(base or 0, None)
            if view is None:
                self.breaches.append(
                    f"MmUnmapLockedPages({base or 0:#x}): not a view MmMapLockedPagesSpecifyCache gave"
                )
                return
            view.close()
            address = ctypes.cast(mdl, ctypes.c_void_p).value
            image = self.images.at(address or 0)
            if image is not None and view in image.views:
                image.views.remove(view)
            if address:
                header = kernel.MDL.from_address(address)
                if header.MappedSystemVa == base:
                    header.MappedSystemVa = None
                    header.MdlFlags = int(header.MdlFlags) & ~kernel.MDL_MAPPED_TO_SYSTEM_VA & 0xFFFF
        except Exception as error:  # never unwind through C
            self.breaches.append(f"MmUnmapLockedPages: {type(error).__name__}: {error}")

    def _log(self, _context: object, level: int, text: bytes | None) -> None:
        self.log.append((text or b"").decode("utf-8", "replace").rstrip("\n"))

    def _bugcheck(self, _context: object, code: int, p1: int, p2: int, p3: int, p4: int) -> None:
        self.bugcheck = (code, p1, p2, p3, p4)
        # The driver stops the machine: C aborts the process when this returns.  Say why first.
        print(
            f"wddmsim: the driver called KeBugCheckEx({code:#x}, {p1:#x}, {p2:#x}, {p3:#x}, {p4:#x}); "
            "the process stops, as a machine would",
            file=sys.stderr,
            flush=True,
        )

    def live_views(self) -> int:
        return sum(1 for view in self.views.values() if not view.closed)

    def close(self) -> None:
        self.images.clear()


__all__ = ["KernelServices", "MdlImages"]
