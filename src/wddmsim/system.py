"""The composition root: one adapter, wired -- hardware, OS services, reference driver, VidMm, and the user-mode
runtime over it.

Nothing else builds these objects together; tests, benchmarks and the command line all start here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import final

from wddmsim.api.runtime import Runtime
from wddmsim.core.clock import Clock
from wddmsim.core.events import EventLog
from wddmsim.ddi.driver import KernelModeDriver
from wddmsim.hw.gpu import Gpu, GpuConfig
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.driver import ReferenceDriver
from wddmsim.ntos.mm import MemoryManager
from wddmsim.vidmm.manager import VideoMemoryManager, VidMmConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemConfig:
    gpu: GpuConfig = field(default_factory=GpuConfig)
    driver: DriverConfig = field(default_factory=DriverConfig)
    vidmm: VidMmConfig = field(default_factory=VidMmConfig)


@final
class Adapter:
    """Everything of one simulated adapter, on one clock and one event log."""

    def __init__(self, config: SystemConfig | None = None, *, wrap_driver: DriverWrapper | None = None) -> None:
        self.config = config or SystemConfig()
        self.clock = Clock()
        self.events = EventLog(self.clock)
        self.gpu = Gpu(self.config.gpu, clock=self.clock, events=self.events)
        self.mm = MemoryManager(self.gpu.system, self.gpu.bar)
        self.driver = ReferenceDriver(self.gpu, self.config.driver)
        self.ddi: KernelModeDriver = self.driver if wrap_driver is None else wrap_driver(self.driver)
        """The driver as VidMm sees it: the reference driver, or a wrapper around it (test doubles)."""
        self.vidmm = VideoMemoryManager(self.ddi, self.mm, self.clock, self.events, self.config.vidmm)
        self.runtime = Runtime(self.vidmm)
        """The user-mode surface: processes open it, their devices call the runtime callbacks."""


DriverWrapper = Callable[[ReferenceDriver], KernelModeDriver]


def build_adapter(config: SystemConfig | None = None, *, wrap_driver: DriverWrapper | None = None) -> Adapter:
    return Adapter(config, wrap_driver=wrap_driver)
