"""``DxgkDdiRender`` and ``DxgkDdiPatch`` of the simple driver.

User mode writes the GPU's own packets with every address word zero and one patch location per address word
(``scenarios/gpu.py`` ``ListGpu``).  Render copies the packets into the DMA buffer, checking each one:

- a packet that does not decode: ``STATUS_ILLEGAL_INSTRUCTION``; a buffer cut inside a packet or a
  ``CommandLength`` that is not the buffer's: ``STATUS_INVALID_USER_BUFFER``;
- anything but NOP, SYNC, FILL and a COPY between two patched words: ``STATUS_PRIVILEGED_INSTRUCTION`` -- as is an
  address word with no patch location, or one whose bytes leave the allocation its slot names;
- a patch location naming no slot or a slot that is not this driver's allocation: ``STATUS_INVALID_HANDLE``;
  one that is not alone on an 8-byte word, points at no address word, or writes through a slot not marked
  ``WriteOperation``: ``STATUS_INVALID_PARAMETER``.

Patch writes each slot's ``PhysicalAddress + AllocationOffset`` at its word; only then may the buffer name physical
memory (the driver wrote every address in it).
"""

from __future__ import annotations

import struct
from typing import Final

from wddmsim.ddi.render import D3DDDI_PATCHLOCATIONLIST, DXGK_ALLOCATIONLIST, DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.drivers.simple.allocations import AllocationTable
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address

_WORD: Final = struct.Struct("<Q")
_COPY_SRC, _COPY_DST, _FILL_DST = 8, 16, 8
"""Where a COPY's source and destination words and a FILL's destination word sit in the packet."""

Reference = tuple[int, int, bool]
"""An address word of a packet: ``(its offset in the command buffer, bytes reached through it, written?)``."""


def _references(packet: cmd.Packet, at: int) -> list[Reference]:
    match packet:
        case cmd.Nop() | cmd.Sync():
            return []
        case cmd.Fill():
            return [(at + _FILL_DST, packet.size, True)]
        case cmd.Copy() if not (packet.src_pages or packet.dst_pages or packet.transform):
            return [(at + _COPY_SRC, packet.size, False), (at + _COPY_DST, packet.size, True)]
        case _:
            raise DdiError(
                NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION,
                f"DxgkDdiRender: the {type(packet).__name__} at {at:#x} is not for user mode",
            )


def render(allocations: AllocationTable, args: DXGKARG_RENDER) -> NTSTATUS:
    """``DxgkDdiRender`` from ``MultipassOffset``: ``INSUFFICIENT_DMA_BUFFER`` when the DMA buffer is full.  A
    refusal raises :class:`DdiError` with the status and leaves ``args`` as it was (but DMA-buffer bytes)."""
    if args.CommandLength != len(args.pCommand) or args.CommandLength % cmd.PACKET_ALIGNMENT:
        raise DdiError(
            NTSTATUS.STATUS_INVALID_USER_BUFFER,
            f"DxgkDdiRender: CommandLength={args.CommandLength:#x} must be the buffer's {len(args.pCommand):#x} bytes",
        )
    patches = _patches_by_word(args.pPatchLocationListIn, args.PatchLocationListInSize)
    out: list[D3DDDI_PATCHLOCATIONLIST] = []
    dma = args.pDmaBuffer.bytes(args.DmaSize)
    offset, written = args.MultipassOffset, 0
    while offset < args.CommandLength:
        packet = _decode(args.pCommand, offset, args.CommandLength)
        if written + packet.length > args.DmaSize:
            if written == 0:
                raise DdiError(NTSTATUS.STATUS_INVALID_USER_BUFFER, "DxgkDdiRender: a packet exceeds the DMA buffer")
            break
        dma[written : written + packet.length] = args.pCommand[offset : offset + packet.length]
        for word, size, write in _references(packet, offset):
            patch = patches.pop(word, None)
            if patch is None:
                raise DdiError(
                    NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION, f"DxgkDdiRender: the address word at {word:#x} is unpatched"
                )
            _check(allocations, args.pAllocationList, patch, size, write)
            at = written + word - offset
            dma[at : at + 8] = bytes(8)  # user mode's value never reaches the GPU: Patch writes the word
            out.append(
                D3DDDI_PATCHLOCATIONLIST(
                    AllocationIndex=patch.AllocationIndex,
                    SlotId=patch.SlotId,
                    DriverId=patch.DriverId,
                    AllocationOffset=patch.AllocationOffset,
                    PatchOffset=at,
                )
            )
        written += packet.length
        offset += packet.length
    if offset == args.CommandLength and patches:
        raise DdiError(
            NTSTATUS.STATUS_INVALID_PARAMETER,
            f"DxgkDdiRender: the patch location at {min(patches):#x} is no address word",
        )
    args.pPatchLocationListOut.extend(out)
    args.pDmaBuffer = args.pDmaBuffer + written
    args.MultipassOffset = offset
    if offset < args.CommandLength:
        return NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
    return NTSTATUS.STATUS_SUCCESS


def _decode(command: bytes, offset: int, end: int) -> cmd.Packet:
    try:
        return cmd.decode(command, offset, end)
    except cmd.DecodeError as error:
        cut = "past the buffer" in str(error)
        status = NTSTATUS.STATUS_INVALID_USER_BUFFER if cut else NTSTATUS.STATUS_ILLEGAL_INSTRUCTION
        raise DdiError(status, f"DxgkDdiRender: {error}") from None


def _patches_by_word(listed: tuple[D3DDDI_PATCHLOCATIONLIST, ...], size: int) -> dict[int, D3DDDI_PATCHLOCATIONLIST]:
    if size != len(listed):
        raise DdiError(
            NTSTATUS.STATUS_INVALID_PARAMETER, f"DxgkDdiRender: PatchLocationListInSize={size} for {len(listed)}"
        )
    by_word: dict[int, D3DDDI_PATCHLOCATIONLIST] = {}
    for i, patch in enumerate(listed):
        if patch.PatchOffset % 8 or patch.PatchOffset in by_word:
            raise DdiError(
                NTSTATUS.STATUS_INVALID_PARAMETER,
                f"DxgkDdiRender: patch location {i} (PatchOffset={patch.PatchOffset:#x}) is not alone on a word",
            )
        by_word[patch.PatchOffset] = patch
    return by_word


def _check(
    allocations: AllocationTable,
    slots: list[DXGK_ALLOCATIONLIST],
    patch: D3DDDI_PATCHLOCATIONLIST,
    size: int,
    write: bool,
) -> None:
    index = patch.AllocationIndex
    if not 0 <= index < len(slots):
        raise DdiError(NTSTATUS.STATUS_INVALID_HANDLE, f"DxgkDdiRender: slot {index} of {len(slots)}")
    allocation = allocations.find(slots[index].hDeviceSpecificAllocation)
    if allocation is None:
        raise DdiError(NTSTATUS.STATUS_INVALID_HANDLE, f"DxgkDdiRender: slot {index} is not this driver's allocation")
    if patch.AllocationOffset < 0 or patch.AllocationOffset + size > allocation.size:
        raise DdiError(
            NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION,
            f"DxgkDdiRender: {size:#x} bytes at {patch.AllocationOffset:#x} leave slot {index}'s {allocation.size:#x}",
        )
    if write and not slots[index].WriteOperation:
        raise DdiError(
            NTSTATUS.STATUS_INVALID_PARAMETER, f"DxgkDdiRender: slot {index} is written but not WriteOperation"
        )


def patch(args: DXGKARG_PATCH) -> None:
    """``DxgkDdiPatch``: the physical address of every reference in the submitted range."""
    dma = args.pDmaBuffer.bytes(args.DmaBufferSize)
    first = args.PatchLocationListSubmissionStart
    for location in args.pPatchLocationList[first : first + args.PatchLocationListSubmissionLength]:
        slot = args.pAllocationList[location.AllocationIndex]
        if slot.SegmentId == 0:
            raise DdiError(
                NTSTATUS.STATUS_INVALID_PARAMETER, f"DxgkDdiPatch: slot {location.AllocationIndex} is not resident"
            )
        word = hw_address(Space.GPU_PHYS, slot.PhysicalAddress + location.AllocationOffset)
        _WORD.pack_into(dma, location.PatchOffset, word)
