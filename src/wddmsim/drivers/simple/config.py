"""What can be tuned in the simple driver: where its paging buffers live, their size, and its largest packet."""

from __future__ import annotations

from dataclasses import dataclass

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import PAGE_SIZE, KiB, MiB
from wddmsim.drivers.package import DriverModel, DriverSettings


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleDriverConfig:
    paging_buffer_size: int = 64 * KiB
    """``DXGK_QUERYSEGMENTOUT4.PagingBufferSize``."""
    paging_buffers_in_aperture: bool = False
    """Report the aperture segment as ``PagingBufferSegmentId`` (0, the default: contiguous system memory)."""
    max_copy_bytes: int = 16 * MiB
    """The most bytes one COPY or FILL packet moves (a bound on non-preemptible work)."""

    @property
    def model(self) -> DriverModel:
        """The only model this driver presents."""
        return DriverModel.WDDM1

    def validate(self) -> None:
        if self.paging_buffer_size < PAGE_SIZE or self.paging_buffer_size % PAGE_SIZE:
            raise ConfigurationError(
                "paging_buffer_size", self.paging_buffer_size, f"must be a positive multiple of {PAGE_SIZE}"
            )
        if self.max_copy_bytes < PAGE_SIZE or self.max_copy_bytes % PAGE_SIZE:
            raise ConfigurationError(
                "max_copy_bytes", self.max_copy_bytes, f"must be a positive multiple of {PAGE_SIZE}"
            )


def configure(settings: DriverSettings) -> SimpleDriverConfig:
    """A scenario file's driver keys as this driver's configuration; a GpuMmu model is refused."""
    if settings.model != DriverModel.WDDM1:
        raise ConfigurationError(
            "driver_model", settings.model.value, "the simple driver presents the WDDM 1.x segment model only"
        )
    config = SimpleDriverConfig(
        paging_buffer_size=settings.paging_buffer_size, paging_buffers_in_aperture=settings.paging_buffers_in_aperture
    )
    config.validate()
    return config
