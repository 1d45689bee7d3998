"""The simple driver's segments: three, numbered in an order of its own (decision 0075).

1. ``aperture`` -- the aperture (GART) window, linear, CPU-visible through the system pages it maps;
2. ``local`` -- local memory the CPU cannot see, from the end of the BAR to the aperture table;
3. ``visible`` -- local memory behind the PCI BAR, ``CpuTranslatedAddress`` = the BAR's bus address.

The aperture table at the top of local memory is the hardware's and is never reported.  The reference driver
numbers the same memories 1 = visible, 2 = local, 3 = aperture; this driver's order proves VidMm assumes none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4, DXGK_SEGMENTFLAGS
from wddmsim.ddi.status import InvalidArgument
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.gpu import GpuConfig

APERTURE: Final = 1
LOCAL: Final = 2
VISIBLE: Final = 3


@dataclass(frozen=True, slots=True)
class Segment:
    segment_id: int
    name: str
    base: int
    """``BaseAddress``: the GPU physical address of offset 0 (segment addresses are ``base + offset``)."""
    size: int
    aperture: bool = False
    cpu_translated: int = 0

    @property
    def cpu_visible(self) -> bool:
        return self.aperture or bool(self.cpu_translated)

    def descriptor(self) -> DXGK_SEGMENTDESCRIPTOR4:
        """``DXGK_SEGMENTDESCRIPTOR4``.  Nothing is claimed preserved across power states: the driver does not know
        what the board keeps, so VidMm saves every memory segment before D3."""
        return DXGK_SEGMENTDESCRIPTOR4(
            Flags=DXGK_SEGMENTFLAGS(
                Aperture=self.aperture,
                CpuVisible=self.cpu_visible,
                CacheCoherent=self.aperture,
                LocalBudgetGroup=not self.aperture,
                NonLocalBudgetGroup=self.aperture,
            ),
            BaseAddress=self.base,
            Size=self.size,
            CommitLimit=self.size,
            CpuTranslatedAddress=self.cpu_translated,
        )


@final
class SegmentLayout:
    """The three segments of one GPU, and the checks that a segment range lies inside one."""

    def __init__(self, gpu: GpuConfig) -> None:
        top = gpu.aperture_table_offset
        self.segments = (
            Segment(APERTURE, "aperture", gpu.aperture_base, gpu.aperture_size, aperture=True),
            Segment(LOCAL, "local", gpu.bar_size, top - gpu.bar_size),
            Segment(VISIBLE, "visible", 0, gpu.bar_size, cpu_translated=gpu.bar_bus_base),
        )
        self.hidden_base = top
        """Where the hardware's aperture table begins: local memory above it is never reported."""

    def get(self, segment_id: int, argument: str) -> Segment:
        if not 1 <= segment_id <= len(self.segments):
            raise InvalidArgument(argument, segment_id, f"the driver reports segments 1..{len(self.segments)}")
        return self.segments[segment_id - 1]

    def memory(self, segment_id: int, argument: str) -> Segment:
        segment = self.get(segment_id, argument)
        if segment.aperture:
            raise InvalidArgument(argument, segment_id, "must be a memory segment (2 or 3), not the aperture")
        return segment

    def word(self, segment_id: int, address: int, size: int, argument: str) -> int:
        """The packet address word of ``size`` bytes at segment address ``address`` (checked to lie inside)."""
        segment = self.get(segment_id, f"{argument}.SegmentId")
        if address < segment.base or address + size > segment.base + segment.size or size < 0:
            raise InvalidArgument(
                f"{argument}.SegmentAddress",
                address,
                f"{size:#x} bytes from it leave segment {segment_id} [{segment.base:#x}, {segment.base + segment.size:#x})",
            )
        return hw_address(Space.GPU_PHYS, address)

    def local_ranges(self) -> tuple[tuple[int, int], ...]:
        return tuple((s.base, s.base + s.size) for s in self.segments if not s.aperture)
