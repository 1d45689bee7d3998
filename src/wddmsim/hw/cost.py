"""How long the GPU takes: a per-packet overhead plus bytes over the bandwidth of the path they take.

Deterministic by construction (integer nanoseconds from the packet alone).  The figures are configuration,
defaulting to design.md section 9: local memory 1 TB/s, PCIe 25 GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class CostModel:
    """How long the simulated GPU takes: a fixed cost per packet, bandwidths by where bytes go, a fence's sync."""

    packet_overhead_ns: int = 100
    local_bandwidth: float = 1e12
    """Bytes per second for local-memory to local-memory moves and fills."""
    pcie_bandwidth: float = 25e9
    """Bytes per second for anything that crosses PCIe (system RAM, the aperture)."""
    sync_ns: int = 500
    """A full barrier: drain and flush."""

    def transfer_ns(self, size: int, *, crosses_pcie: bool) -> int:
        bandwidth = self.pcie_bandwidth if crosses_pcie else self.local_bandwidth
        return self.packet_overhead_ns + int(size * 1e9 / bandwidth)
