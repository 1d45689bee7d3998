"""What a pluggable executor may do to the GPU: the services table it is handed with each buffer it runs.

An *executor* (:class:`~.engine.Executor`) carries out a submitted buffer in its own command format -- a
driver's software command log, say -- instead of the engine's decoder.  It reaches the machine only through a
:class:`GpuServices`: local memory by GPU physical address (and as one flat host range), system RAM by bus
address, the aperture's page table, a 64-bit store at any GPU address (monitored fences), the MMU's page-table
memory and its TLB.  Every access is bounds-checked: a bad one raises :class:`GpuServiceError`, a bus error
that names the argument, its value and the rule, and changes nothing; unless the executor handles it, the
engine faults on it like on any bad packet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

import numpy as np

from wddmsim.hw.aperture import Aperture, gart_entry
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.memory import LocalMemory, PhysicalMemory, SystemMemory
from wddmsim.hw.memsys import MemorySystem, write_runs
from wddmsim.hw.mmu import Mmu, Run
from wddmsim.hw.pte import PTE_SIZE, TablePointer, Target

RunResolver = Callable[[int, int, AccessKind], list[Run]]
"""Resolves a packet address word to runs in the engine's current address space (``Engine._runs``)."""
SignalLine = Callable[[int], None]
"""Raises the engine's SIGNAL interrupt with a value."""

_U64: Final = (1 << 64) - 1


class GpuServiceError(GpuFault):
    """A services call the hardware cannot carry out: ``<argument>=<value>: <rule>`` (a bus error)."""

    def __init__(self, call: str, argument: str, value: int, rule: str, *, access: AccessKind) -> None:
        super().__init__(FaultKind.BUS_ERROR, value, f"{call}: {argument}={value:#x}: {rule}", access=access)
        self.call = call
        self.argument = argument
        self.value = value
        self.rule = rule


@final
class GpuServices:
    """The GPU as one engine's executor sees it (a table of services, like the one a native executor gets)."""

    __slots__ = ("_aperture", "_local", "_mmu", "_resolve", "_signal", "_system")

    def __init__(self, memsys: MemorySystem, resolve: RunResolver, signal: SignalLine) -> None:
        self._local: LocalMemory = memsys.local
        self._system: SystemMemory = memsys.system
        self._aperture: Aperture = memsys.aperture
        self._mmu: Mmu = memsys.mmu
        self._resolve = resolve
        self._signal = signal

    # --- local memory -------------------------------------------------------------------------------------------

    @property
    def local_base(self) -> int:
        """The host address of local memory's byte 0: GPU physical ``a`` is host ``local_base + a``."""
        return self._local.host_address

    @property
    def local_size(self) -> int:
        return self._local.size

    def local_view(self, address: int, length: int) -> memoryview:
        """Local memory ``[address, address + length)`` by GPU physical address, writable, without a copy."""
        return _view("local_view", self._local, address, length, AccessKind.WRITE)

    def read_local(self, address: int, length: int) -> bytes:
        return bytes(_view("read_local", self._local, address, length, AccessKind.READ))

    def write_local(self, address: int, data: bytes | bytearray | memoryview) -> None:
        _view("write_local", self._local, address, len(data), AccessKind.WRITE)[:] = data

    # --- system memory ------------------------------------------------------------------------------------------

    def system_view(self, bus_address: int, length: int) -> memoryview:
        """System RAM ``[bus_address, bus_address + length)`` (RAM starts at bus address 0), writable, without a
        copy."""
        return _view("system_view", self._system, bus_address, length, AccessKind.WRITE)

    def read_system(self, bus_address: int, length: int) -> bytes:
        return bytes(_view("read_system", self._system, bus_address, length, AccessKind.READ))

    def write_system(self, bus_address: int, data: bytes | bytearray | memoryview) -> None:
        _view("write_system", self._system, bus_address, len(data), AccessKind.WRITE)[:] = data

    # --- the aperture -------------------------------------------------------------------------------------------

    @property
    def aperture_pages(self) -> int:
        return self._aperture.page_count

    def set_aperture_entry(self, page: int, pfn: int, *, snoop: bool = False) -> None:
        """Point aperture page ``page`` at system frame ``pfn`` (the next access through it sees the change)."""
        self._check_aperture_page("set_aperture_entry", page)
        if not 0 <= pfn < self._system.page_count:
            raise GpuServiceError(
                "set_aperture_entry",
                "pfn",
                pfn,
                f"must be a frame of RAM [0, {self._system.page_count:#x})",
                access=AccessKind.WRITE,
            )
        self._aperture.entries[page] = np.uint64(gart_entry(pfn, snoop=snoop))

    def clear_aperture_entry(self, page: int) -> None:
        """Make aperture page ``page`` invalid (an access through it is a bus error)."""
        self._check_aperture_page("clear_aperture_entry", page)
        self._aperture.entries[page] = np.uint64(0)

    def aperture_entry(self, page: int) -> int:
        self._check_aperture_page("aperture_entry", page)
        return int(self._aperture.entries[page])

    def _check_aperture_page(self, call: str, page: int) -> None:
        if not 0 <= page < self._aperture.page_count:
            raise GpuServiceError(
                call,
                "page",
                page,
                f"must be an aperture page [0, {self._aperture.page_count:#x})",
                access=AccessKind.WRITE,
            )

    # --- fences -------------------------------------------------------------------------------------------------

    def write_u64(self, address: int, value: int, *, interrupt: bool = False) -> None:
        """Store a little-endian 64-bit ``value`` at the packet address word ``address`` (any space: a monitored
        fence's GPU VA, a GPU physical or a bus address), as a SIGNAL packet does; ``interrupt`` raises the
        engine's SIGNAL interrupt with the value afterwards."""
        if not 0 <= value <= _U64:
            raise GpuServiceError("write_u64", "value", value, "must fit 64 bits", access=AccessKind.WRITE)
        if address & 7:
            raise GpuServiceError("write_u64", "address", address, "must be 8-byte aligned", access=AccessKind.WRITE)
        runs = self._resolve(address, 8, AccessKind.WRITE)  # faults (a GpuFault) name what is not mapped
        write_runs(runs, value.to_bytes(8, "little"))
        if interrupt:
            self._signal(value)

    # --- the MMU ------------------------------------------------------------------------------------------------

    def page_table_view(self, target: Target, address: int, length: int) -> memoryview:
        """Page-table memory: ``length`` bytes at ``address`` of local memory or RAM (``target``), whole
        aligned entries."""
        memory = self._mmu.memory(target)
        if address % PTE_SIZE or length % PTE_SIZE:
            raise GpuServiceError(
                "page_table_view",
                "address" if address % PTE_SIZE else "length",
                address if address % PTE_SIZE else length,
                f"page-table accesses are whole {PTE_SIZE}-byte entries",
                access=AccessKind.WRITE,
            )
        _check_range("page_table_view", memory, address, length, AccessKind.WRITE)
        return memory.view[address : address + length]

    def read_page_table(self, target: Target, address: int, length: int) -> bytes:
        return bytes(self.page_table_view(target, address, length))

    def write_page_table(self, target: Target, address: int, data: bytes | bytearray | memoryview) -> None:
        """Store entries; translations the TLB caches stay until :meth:`invalidate_tlb` (as on the hardware)."""
        self.page_table_view(target, address, len(data))[:] = data

    def invalidate_tlb(self, root: TablePointer | None = None, start: int = 0, end: int = 0) -> None:
        """Forget cached translations: of ``root`` for VAs ``[start, end]`` (``0, 0``: all of it), or of every
        address space when ``root`` is ``None``."""
        if root is None:
            self._mmu.invalidate_all()
            return
        memory = self._mmu.memory(root.target)
        if root.address % PTE_SIZE or not memory.contains(root.address, PTE_SIZE):
            raise GpuServiceError(
                "invalidate_tlb",
                "root",
                root.address,
                f"must be an aligned table address in {memory.name}",
                access=AccessKind.READ,
            )
        self._mmu.invalidate(root, start, end)


def _view(call: str, memory: PhysicalMemory, address: int, length: int, access: AccessKind) -> memoryview:
    _check_range(call, memory, address, length, access)
    return memory.view[address : address + length]


def _check_range(call: str, memory: PhysicalMemory, address: int, length: int, access: AccessKind) -> None:
    if length < 0:
        raise GpuServiceError(call, "length", length, "must not be negative", access=access)
    if not memory.contains(address, length):
        raise GpuServiceError(
            call,
            "address",
            address,
            f"[address, address + {length:#x}) must lie within {memory.name} [0, {memory.size:#x})",
            access=access,
        )
