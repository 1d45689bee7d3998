"""``DxgkDdiRender`` and ``DxgkDdiPatch`` for this GPU: user-mode command buffers made into patched DMA buffers
(WDDM 1.x, decision 0031), for any driver of it.

A user-mode driver writes the GPU's own packets, with every memory reference left as a zero address word and
described by a patch location (allocation-list slot + offset).  :func:`render` copies the packets into the DMA
buffer and refuses anything user mode may not do:

- a packet that does not decode: ``STATUS_ILLEGAL_INSTRUCTION``; a command buffer cut inside a packet:
  ``STATUS_INVALID_USER_BUFFER``;
- a packet the driver keeps for the kernel (:func:`address_words`: page-table writes, TLB invalidation, fences,
  physical reads and writes, page lists; a driver may keep more), an address word no patch location covers (a raw
  physical address), or an access past the end of the allocation a slot names: ``STATUS_PRIVILEGED_INSTRUCTION``
  -- user mode never names memory it does not own;
- a patch location outside the allocation list or naming no allocation of the driver: ``STATUS_INVALID_HANDLE``;
  one that does not point at an address word, or that writes through a slot not marked ``WriteOperation``:
  ``STATUS_INVALID_PARAMETER``.

:func:`patch` (``DxgkDdiPatch``) writes ``PhysicalAddress + AllocationOffset`` (a GPU physical address word) at
each reference; the buffer is then privileged to name physical memory, because only the driver wrote its
addresses.  Which packets user mode may send is the one policy a driver brings (``UserPackets``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol, assert_never, final

from wddmsim.ddi.render import D3DDDI_PATCHLOCATIONLIST, DXGK_ALLOCATIONLIST, DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address

_U64: Final = struct.Struct("<Q")


@dataclass(frozen=True, slots=True)
class AddressWord:
    """One address word of a packet: where it is, how many bytes the packet touches there, and whether it writes."""

    offset: int
    size: int
    write: bool


class RenderRefused(DdiError):
    """Why ``DxgkDdiRender`` refused the command buffer, with the documented status it answers."""


class _Sized(Protocol):
    @property
    def size(self) -> int: ...


class Allocations(Protocol):
    """The driver's allocations by ``hDeviceSpecificAllocation``: the size a slot's allocation has."""

    def find(self, handle: int) -> _Sized | None: ...


UserPackets = Callable[[cmd.Packet, int], list[AddressWord]]
"""A driver's rule for user-mode packets: the address words of the packet at an offset, or :class:`RenderRefused`
(``STATUS_PRIVILEGED_INSTRUCTION``) for one user mode may not send."""


def address_words(packet: cmd.Packet, offset: int) -> list[AddressWord]:
    """The address words of a user-mode packet at ``offset``; the packets the kernel keeps are refused.

    NOP, SYNC, FILL and COPY between two address words are user mode's; a COPY naming system pages, and every
    packet that writes page tables, invalidates TLBs, signals fences, touches physical addresses or leaves a
    NOTE, are the kernel's."""
    match packet:
        case cmd.Nop() | cmd.Sync():
            return []
        case cmd.Fill():
            return [AddressWord(offset + cmd.FILL_DST_WORD, packet.size, True)]
        case cmd.Copy():
            if packet.src_pages or packet.dst_pages:
                raise RenderRefused(NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION, f"COPY at {offset:#x} names system pages")
            return [
                AddressWord(offset + cmd.COPY_SRC_WORD, packet.size, False),
                AddressWord(offset + cmd.COPY_DST_WORD, packet.size, True),
            ]
        case cmd.WriteQwords() | cmd.ReadMem() | cmd.WriteMem() | cmd.Signal() | cmd.TlbInvalidate() | cmd.Note():
            raise RenderRefused(
                NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION, f"{type(packet).__name__} at {offset:#x} is for the kernel only"
            )
        case _:
            assert_never(packet)


def render(allocations: Allocations, args: DXGKARG_RENDER, user_packets: UserPackets = address_words) -> NTSTATUS:
    """``DxgkDdiRender``: translate from ``MultipassOffset``; ``INSUFFICIENT_DMA_BUFFER`` when the buffer is full.

    ``user_packets`` is the driver's rule for what user mode may send (:func:`address_words` unless it keeps
    more for the kernel).  A refused buffer raises :class:`RenderRefused` carrying the documented status and the
    reason (the caller turns it into that status); nothing of ``args`` has changed then but bytes of the DMA
    buffer."""
    start, offset, patches = args.pDmaBuffer, args.MultipassOffset, len(args.pPatchLocationListOut)
    try:
        return _render(allocations, args, user_packets)
    except RenderRefused:
        # a refusal found after the last packet (a stray patch location) comes after the cursors moved
        args.pDmaBuffer, args.MultipassOffset = start, offset
        del args.pPatchLocationListOut[patches:]
        raise


def _render(allocations: Allocations, args: DXGKARG_RENDER, user_packets: UserPackets) -> NTSTATUS:
    command = args.pCommand
    if args.CommandLength != len(command) or args.CommandLength % cmd.PACKET_ALIGNMENT:
        raise RenderRefused(
            NTSTATUS.STATUS_INVALID_USER_BUFFER,
            f"CommandLength {args.CommandLength:#x} must be the buffer's {len(command):#x} bytes, whole packets",
        )
    by_word = _patches_by_word(args)
    written = 0
    offset = args.MultipassOffset
    out = args.pDmaBuffer.bytes(args.DmaSize)
    while offset < args.CommandLength:
        packet = _decode(command, offset, args.CommandLength)
        if written + packet.length > args.DmaSize:
            if written == 0:
                raise RenderRefused(
                    NTSTATUS.STATUS_INVALID_USER_BUFFER, f"a packet of {packet.length} bytes exceeds the DMA buffer"
                )
            break
        references = user_packets(packet, offset)
        patches = []
        for ref in references:
            patch = by_word.pop(ref.offset, None)
            if patch is None:
                raise RenderRefused(
                    NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION,
                    f"the address word at {ref.offset:#x} has no patch location (user mode names no physical memory)",
                )
            _check_reference(allocations, args.pAllocationList, patch, ref)
            patches.append(patch)
        out[written : written + packet.length] = command[offset : offset + packet.length]
        for ref, patch in zip(references, patches, strict=True):
            at = written + ref.offset - offset
            out[at : at + 8] = bytes(8)  # the driver writes it at patch time, whatever user mode put there
            args.pPatchLocationListOut.append(
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
    args.pDmaBuffer = args.pDmaBuffer + written
    args.MultipassOffset = offset
    if offset < args.CommandLength:
        return NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
    if by_word:
        first = min(by_word)
        raise RenderRefused(
            NTSTATUS.STATUS_INVALID_PARAMETER, f"the patch location at {first:#x} does not point at an address word"
        )
    return NTSTATUS.STATUS_SUCCESS


def _decode(command: bytes, offset: int, end: int) -> cmd.Packet:
    try:
        return cmd.decode(command, offset, end)
    except cmd.DecodeError as error:
        status = (
            NTSTATUS.STATUS_INVALID_USER_BUFFER
            if "past the buffer" in str(error)
            else NTSTATUS.STATUS_ILLEGAL_INSTRUCTION
        )
        raise RenderRefused(status, str(error)) from None


def _patches_by_word(args: DXGKARG_RENDER) -> dict[int, D3DDDI_PATCHLOCATIONLIST]:
    if args.PatchLocationListInSize != len(args.pPatchLocationListIn):
        raise RenderRefused(
            NTSTATUS.STATUS_INVALID_PARAMETER,
            f"PatchLocationListInSize {args.PatchLocationListInSize} for {len(args.pPatchLocationListIn)} entries",
        )
    by_word: dict[int, D3DDDI_PATCHLOCATIONLIST] = {}
    for i, patch in enumerate(args.pPatchLocationListIn):
        if patch.PatchOffset in by_word or patch.PatchOffset % 8:
            raise RenderRefused(
                NTSTATUS.STATUS_INVALID_PARAMETER,
                f"patch location {i}: PatchOffset {patch.PatchOffset:#x} is not a lone word",
            )
        by_word[patch.PatchOffset] = patch
    return by_word


def _check_reference(
    allocations: Allocations, slots: list[DXGK_ALLOCATIONLIST], patch: D3DDDI_PATCHLOCATIONLIST, ref: AddressWord
) -> None:
    if not 0 <= patch.AllocationIndex < len(slots):
        raise RenderRefused(
            NTSTATUS.STATUS_INVALID_HANDLE,
            f"patch location at {ref.offset:#x} names slot {patch.AllocationIndex} of {len(slots)}",
        )
    slot = slots[patch.AllocationIndex]
    allocation = allocations.find(slot.hDeviceSpecificAllocation)
    if allocation is None:
        raise RenderRefused(
            NTSTATUS.STATUS_INVALID_HANDLE, f"slot {patch.AllocationIndex} is not this driver's allocation"
        )
    if patch.AllocationOffset < 0 or patch.AllocationOffset + ref.size > allocation.size:
        raise RenderRefused(
            NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION,
            f"{ref.size:#x} bytes at offset {patch.AllocationOffset:#x} leave the {allocation.size:#x}-byte allocation "
            f"of slot {patch.AllocationIndex}",
        )
    if ref.write and not slot.WriteOperation:
        raise RenderRefused(
            NTSTATUS.STATUS_INVALID_PARAMETER,
            f"the packet writes slot {patch.AllocationIndex}, not marked WriteOperation",
        )


def patch(args: DXGKARG_PATCH) -> None:
    """``DxgkDdiPatch``: the physical address of every reference of the submitted range."""
    buf = args.pDmaBuffer.bytes(args.DmaBufferSize)
    end = args.PatchLocationListSubmissionStart + args.PatchLocationListSubmissionLength
    for location in args.pPatchLocationList[args.PatchLocationListSubmissionStart : end]:
        slot = args.pAllocationList[location.AllocationIndex]
        if slot.SegmentId == 0:
            raise RenderRefused(
                NTSTATUS.STATUS_INVALID_PARAMETER, f"slot {location.AllocationIndex} is not resident: nothing to patch"
            )
        word = hw_address(Space.GPU_PHYS, slot.PhysicalAddress + location.AllocationOffset)
        _U64.pack_into(buf, location.PatchOffset, word)


@final
class PatchedBuffers:
    """The DMA buffers ``DxgkDdiPatch`` wrote every address of, until ``DxgkDdiSubmitCommand`` submits them once:
    only those (and paging buffers) may name physical memory.

    A buffer patched and never submitted is forgotten with its context (``DxgkDdiDestroyContext``), on
    ``DxgkDdiResetFromTimeout`` and when the GPU loses its memory: otherwise a later buffer at the same address --
    the user's again, since ``DxgkDdiRender`` rewrote it -- would inherit the privilege, and every buffer a reset
    dropped would stay in the set for the life of the adapter.
    """

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: set[tuple[int, int]] = set()
        """``(hContext, address)`` of each patched buffer not yet submitted: read on every submission (empty: no
        lookup to make), changed only through the methods below."""

    def mark(self, hContext: int, address: int) -> None:
        """``DxgkDdiPatch`` of the buffer at ``address`` in ``hContext``."""
        self.keys.add((hContext, address))

    def take(self, hContext: int, address: int) -> bool:
        """``DxgkDdiSubmitCommand``: whether the buffer was patched; a submission uses the patch up."""
        if not self.keys:  # nothing patched (every paging submission): no key to build
            return False
        key = (hContext, address)
        patched = key in self.keys
        self.keys.discard(key)
        return patched

    def forget_context(self, hContext: int) -> None:
        """``DxgkDdiDestroyContext``: the context's buffers go with it."""
        self.keys = {key for key in self.keys if key[0] != hContext}

    def clear(self) -> None:
        """``DxgkDdiResetFromTimeout``, or a power-down that lost the GPU's memory: no patched buffer will run."""
        self.keys.clear()

    def __len__(self) -> int:
        return len(self.keys)


__all__ = [
    "AddressWord",
    "Allocations",
    "PatchedBuffers",
    "RenderRefused",
    "UserPackets",
    "address_words",
    "patch",
    "render",
]
