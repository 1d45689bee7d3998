"""``DxgkDdiRender`` and ``DxgkDdiPatch`` of the simple driver: the kit's (:mod:`wddmsim.drivers.kit.render`,
decision 0031), with one packet more kept from user mode.

User mode writes the GPU's own packets with every address word zero and one patch location per address word
(``scenarios/gpu.py`` ``ListGpu``).  This driver takes from user mode what the kit does -- NOP, SYNC, FILL and a
COPY between two patched words -- except a COPY that transforms its bytes (tiling or untiling): the driver has no
swizzled surfaces (decision 0075), so a transforming COPY is ``STATUS_PRIVILEGED_INSTRUCTION`` as the kernel's
packets are.  The statuses of every other refusal are the kit's.
"""

from __future__ import annotations

from wddmsim.ddi.render import DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.kit import render as kit
from wddmsim.drivers.simple.allocations import AllocationTable
from wddmsim.hw import commands as cmd


def _user_packets(packet: cmd.Packet, at: int) -> list[kit.AddressWord]:
    """The kit's rule, and no transforming COPY (this driver lays every resource out linearly)."""
    if isinstance(packet, cmd.Copy) and packet.transform:
        raise kit.RenderRefused(
            NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION,
            f"COPY at {at:#x} transforms its bytes ({packet.transform.name}): this driver has no swizzled surfaces",
        )
    return kit.address_words(packet, at)


def render(allocations: AllocationTable, args: DXGKARG_RENDER) -> NTSTATUS:
    """``DxgkDdiRender`` from ``MultipassOffset``: ``INSUFFICIENT_DMA_BUFFER`` when the DMA buffer is full.  A
    refusal raises :class:`~wddmsim.drivers.kit.render.RenderRefused` with the status and leaves ``args`` as it
    was (but DMA-buffer bytes)."""
    return kit.render(allocations, args, _user_packets)


def patch(args: DXGKARG_PATCH) -> None:
    """``DxgkDdiPatch``: the physical address of every reference in the submitted range."""
    kit.patch(args)


__all__ = ["patch", "render"]
