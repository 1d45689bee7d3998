"""The simulated GPU and its platform, wired together (no behaviour of its own).

Address map (defaults from design.md section 9; every figure is :class:`GpuConfig`):

* GPU physical ``[0, local_size)`` is local memory; the top ``aperture_table_size`` bytes of it hold the
  aperture table (hidden from the OS by the driver);
* GPU physical ``[aperture_base, aperture_base + aperture_size)`` is the aperture;
* bus ``[0, system_size)`` is host RAM; bus ``[bar_bus_base, bar_bus_base + bar_size)`` is the BAR onto
  local memory ``[0, bar_size)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import final

from wddmsim.core.clock import Clock
from wddmsim.core.errors import ConfigurationError
from wddmsim.core.events import EventLog
from wddmsim.core.units import GiB, MiB, TiB, align_up
from wddmsim.hw.aperture import GART_ENTRY_SIZE, Aperture
from wddmsim.hw.bar import PciBar
from wddmsim.hw.cost import CostModel
from wddmsim.hw.engine import Engine, Interrupt
from wddmsim.hw.memory import LocalMemory, SystemMemory
from wddmsim.hw.memsys import MemorySystem
from wddmsim.hw.mmu import Mmu, MmuLayout

PAGING_ENGINE = 0
COMPUTE_ENGINE = 1
POWER_LOSS_PATTERN = 0xDEAD_10CC
"""What local memory reads after losing power: never a value a test could mistake for kept content."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuConfig:
    """The simulated GPU's sizes and places: local memory, the BAR, system RAM, the aperture, its engines."""

    local_size: int = 256 * MiB
    bar_size: int = 64 * MiB
    bar_bus_base: int = 1 * TiB
    system_size: int = 16 * GiB
    aperture_base: int = 16 * TiB
    aperture_size: int = 512 * MiB
    mmu_index_bits: tuple[int, ...] = (9, 9, 9, 9)
    """Index bits per page-table level, leaf first (4 levels x 9 bits: a 48-bit VA)."""
    dual_pte: bool = True
    """Level-1 entries point at a 4 KB-page and a 64 KB-page leaf table at once."""
    gpu_page_shift: int = 12
    """The hardware page of 4 KB-kind leaf tables: 12 (4 KiB), 14 (16 KiB) ..."""
    caches_invalid_translations: bool = True
    detile_windows: int = 4
    engines: tuple[str, ...] = ("paging", "compute")
    cost: CostModel = field(default_factory=CostModel)
    vram_kept_in_standby: bool = False
    """Local memory keeps its contents in standby (self-refresh); False: a discrete card loses power in S3."""
    vram_kept_in_hibernate: int = 0
    """Bytes of local memory, from address 0, that keep their contents in hibernate (RAM the platform keeps);
    only with ``vram_kept_in_standby``."""

    @property
    def aperture_table_size(self) -> int:
        return align_up((self.aperture_size // 4096) * GART_ENTRY_SIZE, 64 * 1024)

    @property
    def aperture_table_offset(self) -> int:
        return self.local_size - self.aperture_table_size

    def validate(self) -> None:
        unit = 64 * 1024
        for name in ("local_size", "bar_size", "system_size", "aperture_size"):
            value = getattr(self, name)
            if value <= 0 or value % unit:
                raise ConfigurationError(name, value, "must be a positive multiple of 64 KiB")
        if self.bar_size > self.local_size - self.aperture_table_size:
            raise ConfigurationError("bar_size", self.bar_size, "the BAR cannot be larger than usable local memory")
        if self.aperture_base < self.local_size:
            raise ConfigurationError("aperture_base", self.aperture_base, "must lie above local memory")
        if self.bar_bus_base < self.system_size:
            raise ConfigurationError("bar_bus_base", self.bar_bus_base, "must lie above system RAM")
        try:
            MmuLayout(self.mmu_index_bits, dual_pte=self.dual_pte, gpu_page_shift=self.gpu_page_shift)
        except ValueError as error:
            raise ConfigurationError("mmu_index_bits", self.mmu_index_bits, str(error)) from None
        if not self.engines:
            raise ConfigurationError("engines", self.engines, "at least the paging engine")
        kept = self.vram_kept_in_hibernate
        if not 0 <= kept <= self.local_size or kept % unit:
            raise ConfigurationError("vram_kept_in_hibernate", kept, "must be a multiple of 64 KiB within local memory")
        if kept and not self.vram_kept_in_standby:
            raise ConfigurationError(
                "vram_kept_in_hibernate", kept, "memory kept in hibernate is kept in standby too (vram_kept_in_standby)"
            )


@final
class Gpu:
    """Memories, BAR, aperture, MMU and engines of one adapter, on one clock and one event log."""

    def __init__(
        self, config: GpuConfig | None = None, *, clock: Clock | None = None, events: EventLog | None = None
    ) -> None:
        self.config = cfg = config or GpuConfig()
        cfg.validate()
        self.clock = Clock() if clock is None else clock
        self.events = EventLog(self.clock) if events is None else events
        self.local = LocalMemory("local memory", cfg.local_size)
        self.system = SystemMemory("system memory", cfg.system_size)
        self.bar = PciBar(cfg.bar_bus_base, cfg.bar_size, self.local, 0, cfg.detile_windows)
        self.aperture = Aperture(cfg.aperture_base, cfg.aperture_size, self.local, cfg.aperture_table_offset)
        layout = MmuLayout(cfg.mmu_index_bits, dual_pte=cfg.dual_pte, gpu_page_shift=cfg.gpu_page_shift)
        self.mmu = Mmu(layout, self.local, self.system, caches_invalid=cfg.caches_invalid_translations)
        self.memsys = MemorySystem(self.local, self.system, self.aperture, self.mmu)
        self._handler: Callable[[Interrupt], None] | None = None
        self.interrupts: list[Interrupt] = []
        self.engines = [
            Engine(i, name, self.clock, self.memsys, cfg.cost, self.events, self._raise)
            for i, name in enumerate(cfg.engines)
        ]

    def set_interrupt_handler(self, handler: Callable[[Interrupt], None]) -> None:
        """Connect the interrupt line (the driver's interrupt service routine)."""
        self._handler = handler

    def _raise(self, interrupt: Interrupt) -> None:
        if self._handler is None:
            self.interrupts.append(interrupt)
        else:
            self._handler(interrupt)

    def reset(self) -> None:
        """Adapter reset: every engine stops; the MMU forgets every translation.  Memory keeps its bytes."""
        for engine in self.engines:
            engine.reset()
        self.mmu.invalidate_all()

    def lost_in(self, hibernate: bool) -> tuple[int, int]:
        """The range of local memory whose contents a power-down loses: ``[start, local_size)``."""
        cfg = self.config
        if not cfg.vram_kept_in_standby:
            return 0, cfg.local_size
        return (cfg.vram_kept_in_hibernate if hibernate else cfg.local_size), cfg.local_size

    def power_down(self, hibernate: bool) -> None:
        """The adapter loses power (D3 for a standby, or a hibernate): engines stop, the MMU forgets every
        translation, and local memory that is not kept reads :data:`POWER_LOSS_PATTERN` afterwards."""
        self.reset()
        start, end = self.lost_in(hibernate)
        self.local.fill(start, end - start, POWER_LOSS_PATTERN)
