"""System-space mappings of locked pages for native code: ``MmMapLockedPagesSpecifyCache`` and
``MmUnmapLockedPages``.

A driver written in C reaches an MDL's bytes through a CPU pointer (``MmGetSystemAddressForMdlSafe``).  Here that
pointer is a real host address: the MDL's scattered frames mapped again, contiguously, over the RAM's memory file
(:meth:`wddmsim.hw.memory.SystemMemory.alias`), so the driver's stores land in the simulated frames.  The table
of live mappings lets an unmap of an address never handed out be refused with a status instead of crashing, and
lets a teardown see (and undo) the mappings a driver forgot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from wddmsim.ddi.memory import MDL
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.hw.memory import AliasUnsupported, HostView, HostViewError, SystemMemory


@final
@dataclass(frozen=True, slots=True, eq=False)
class LockedPagesMapping:
    """One live ``MmMapLockedPagesSpecifyCache`` result: the MDL it maps and the host view behind the address."""

    mdl: MDL
    view: HostView

    @property
    def address(self) -> int:
        return self.view.address


@final
class LockedPageViews:
    """The live system-space mappings of MDLs, keyed by the address handed out."""

    def __init__(self, ram: SystemMemory) -> None:
        self.ram = ram
        self._live: dict[int, LockedPagesMapping] = {}

    def __len__(self) -> int:
        return len(self._live)

    def map(self, mdl: MDL) -> int:
        """``MmMapLockedPagesSpecifyCache(Mdl, KernelMode, MmCached, NULL, FALSE, ...)``: the host address of the
        MDL's first byte, in a virtually contiguous view of its pages (view start + ``ByteOffset``).

        Where the WDK returns ``NULL`` this raises :class:`DdiError` (the native bridge turns it into ``NULL``):
        ``STATUS_INVALID_PARAMETER`` for an MDL that describes no bytes, ``STATUS_NOT_SUPPORTED`` where the
        platform cannot alias RAM.
        """
        if mdl.ByteCount <= 0:
            raise InvalidArgument("MemoryDescriptorList", repr(mdl), "describes no bytes (ByteCount is 0)")
        try:
            view = self.ram.alias(mdl.pfns, mdl.ByteOffset, mdl.ByteCount)
        except HostViewError as error:
            raise InvalidArgument("MemoryDescriptorList", repr(mdl), str(error)) from None
        except AliasUnsupported as error:
            raise DdiError(NTSTATUS.STATUS_NOT_SUPPORTED, f"MmMapLockedPagesSpecifyCache: {error}") from None
        self._live[view.address] = LockedPagesMapping(mdl, view)
        return view.address

    def unmap(self, address: int, mdl: MDL) -> None:
        """``MmUnmapLockedPages(BaseAddress, Mdl)``: undo :meth:`map`.

        An address that is not a live mapping, or one made for another MDL, is refused with
        ``STATUS_INVALID_PARAMETER`` naming the argument (Windows bug-checks); nothing changes.
        """
        mapping = self._live.get(address)
        if mapping is None:
            raise InvalidArgument("BaseAddress", address, "is not a live mapping made by MmMapLockedPagesSpecifyCache")
        if mapping.mdl is not mdl:
            raise InvalidArgument(
                "MemoryDescriptorList", repr(mdl), f"is not the MDL mapped at {address:#x} ({mapping.mdl!r} is)"
            )
        del self._live[address]
        mapping.view.close()

    def mapping_at(self, address: int) -> LockedPagesMapping | None:
        """The live mapping handed out as ``address``, if any."""
        return self._live.get(address)

    def release_all(self) -> list[str]:
        """Unmap every live mapping (a teardown): one line per mapping that was still live, i.e. leaked."""
        leaked = [
            f"MmMapLockedPagesSpecifyCache mapping at {address:#x} of {mapping.mdl!r} was never unmapped"
            for address, mapping in self._live.items()
        ]
        for mapping in self._live.values():
            mapping.view.close()
        self._live.clear()
        return leaked
